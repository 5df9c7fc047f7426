// The partition check (partition_check.h): global run, partitioning,
// simulated devices, assembly, comparison.
#include "shardlab/partition_check/partition_check.h"

#include "ir/op_properties.h"
#include "partition_check/random_shardings.h"
#include "passes/pass_utils.h"
#include "sharding/device_layout.h"

#include "sharding/sharding_utils.h"
#include "shardlab/interpreter/shards.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/sharding/format.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace shardlab::partition_check {
namespace {

using interpreter::Tensor;

constexpr const char *kMeshName = "shardlab_check_mesh";

Outcome notRun(Outcome out, std::string stage, std::string message) {
  out.status = Status::NotRun;
  out.stage = std::move(stage);
  out.message = std::move(message);
  return out;
}

Outcome mismatch(Outcome out, std::string stage, std::string message) {
  out.status = Status::Mismatch;
  out.stage = std::move(stage);
  out.message = std::move(message);
  return out;
}

std::string diagnosticsText(const DiagnosticEngine &diags) {
  std::string text;
  for (const Diagnostic &d : diags.diagnostics())
    if (d.severity == Severity::Error)
      text += (text.empty() ? "" : "; ") + std::to_string(d.loc.line) + ":" +
              std::to_string(d.loc.col) + ": " + d.message;
  return text.empty() ? "failed without a diagnostic" : text;
}

Operation *entryOf(Module &module, const std::string &entry) {
  return interpreter::findEntry(module, entry);
}

std::string valueName(Value *value) {
  std::ostringstream s;
  if (value->isBlockArgument())
    s << "argument " << value->index;
  else
    s << value->defining_op->name << " at line "
      << value->defining_op->loc.line;
  return s.str();
}

// Shards `value` where the computation reads it: an argument by its
// sharding; another value (a constant, the result of @inputs()) through a
// sharding_constraint that every op but the checks reads instead.
void shardInput(Module &module, Value *value, const TensorSharding &sharding) {
  Context &ctx = module.ctx();
  if (value->isBlockArgument()) {
    setSharding(value, sharding, ctx);
    return;
  }
  std::vector<OpOperand *> uses;
  for (OpOperand *use = value->firstUse(); use; use = use->next_use)
    if (!detail::isCheck(*use->owner))
      uses.push_back(use);
  Operation *def = value->defining_op;
  auto op =
      makeOp(ctx, "sdy.sharding_constraint", {value}, {value->type}, def->loc);
  op->attrs.set(ctx.intern("sharding"), ctx.attrs.sharding(sharding));
  Operation *constraint =
      def->parentBlock()->insertBefore(def->nextInBlock(), std::move(op));
  for (OpOperand *use : uses)
    use->set(constraint->result(0));
}

// Every check reads its operands whole: a replicated sharding_constraint
// on each, so that each device checks the full value. A check is an
// assertion: it is marked as having an effect, so that the pipeline does
// not drop one whose result is unused (`check.eq` without
// has_side_effect is dead code to MLIR, and to Shardy).
void replicateCheckOperands(Module &module, Operation &entry,
                            const std::string &mesh_name) {
  Context &ctx = module.ctx();
  std::vector<Operation *> checks;
  for (Operation &op : entry.region(0).front())
    if (detail::isCheck(op))
      checks.push_back(&op);
  for (Operation *check : checks) {
    if (check->is("stablehlo.custom_call"))
      check->attrs.set(ctx.intern("has_side_effect"), ctx.attrs.boolean(true));
    for (size_t i = 0; i < check->numOperands(); ++i) {
      Value *value = check->operand(i);
      if (!value->type || !value->type->isRankedTensor())
        continue;
      MeshRef mesh_ref;
      mesh_ref.symbol = mesh_name;
      const TensorSharding replicated =
          fullyClosedSharding(mesh_ref, value->type->shape.size());
      auto op = makeOp(ctx, "sdy.sharding_constraint", {value}, {value->type},
                       check->loc);
      op->attrs.set(ctx.intern("sharding"), ctx.attrs.sharding(replicated));
      Operation *constraint =
          check->parentBlock()->insertBefore(check, std::move(op));
      check->setOperand(i, constraint->result(0));
    }
  }
}

// The module's own mesh (its first `sdy.mesh` with axes), if it has one:
// random shardings go on it, so that they and the shardings the module
// keeps (its results', its constraints') speak of the same devices.
std::optional<std::pair<std::string, Mesh>> ownMesh(Module &module) {
  for (Operation &op : module.body())
    if (op.is("sdy.mesh"))
      if (const Attr *m = op.attrs.get("mesh");
          m && m->kind == AttrKind::Mesh && !m->mesh().axes.empty())
        return std::make_pair(op.attrs.get("sym_name")->str(), m->mesh());
  return std::nullopt;
}

// Random shardings on the module's inputs, over its own mesh or a random
// one it gets; records both in `out`.
void randomize(Module &module, Operation &entry, uint64_t seed,
               int64_t max_devices, Outcome &out) {
  detail::Random random(seed);
  std::optional<std::pair<std::string, Mesh>> own = ownMesh(module);
  const std::string name = own ? own->first : kMeshName;
  const Mesh mesh = own ? own->second : detail::randomMesh(random, max_devices);
  if (!own)
    insertMeshOp(module, module.body().front(), kMeshName, mesh);
  out.mesh = meshToString(mesh);
  for (Value *value : detail::shardableInputs(entry)) {
    const TensorSharding sharding =
        detail::randomSharding(random, mesh, name, value->type->shape);
    shardInput(module, value, sharding);
    out.shardings.push_back(valueName(value) + ": " +
                            shardingBodyToString(sharding));
  }
  replicateCheckOperands(module, entry, name);
}

// The mesh of the per-device program: that of any argument or result
// sharding, else of the first sdy.mesh.
const Mesh *programMesh(Module &module, Operation &entry) {
  Block &body = entry.region(0).front();
  for (size_t i = 0; i < body.numArguments(); ++i)
    if (const TensorSharding *s = getSharding(body.argument(i)))
      if (const Mesh *mesh = lookupMesh(module, *s))
        return mesh;
  for (size_t i = 0; i < funcNumResults(entry); ++i)
    if (const TensorSharding *s = getFuncResultSharding(entry, i))
      if (const Mesh *mesh = lookupMesh(module, *s))
        return mesh;
  for (Operation &op : module.body())
    if (op.is("sdy.mesh"))
      if (const Attr *m = op.attrs.get("mesh"); m && m->kind == AttrKind::Mesh)
        return &m->mesh();
  return nullptr;
}

// Where each device's box of a value of local type `local` starts.
Result<std::vector<std::vector<int64_t>>>
boxes(Module &module, const TensorSharding *sharding, Type local,
      const std::vector<int64_t> &devices) {
  const Mesh *mesh = sharding ? lookupMesh(module, *sharding) : nullptr;
  if (!sharding || !mesh) // replicated: every device holds it whole
    return std::vector<std::vector<int64_t>>(
        devices.size(), std::vector<int64_t>(local->shape.size(), 0));
  return interpreter::shardOffsetsOnDevices(*sharding, *mesh, devices,
                                            local->shape);
}

// Whether each device holds an input with unreduced axes (summed) whole:
// one device of each group along them does, the others hold zeros, so that
// the partial sums add up to the input.
std::vector<int64_t> sumOwners(Module &module, const TensorSharding *sharding,
                               const std::vector<int64_t> &devices) {
  std::vector<int64_t> owners(devices.size(), 1);
  const Mesh *mesh = sharding ? lookupMesh(module, *sharding) : nullptr;
  if (!mesh || sharding->unreduced.empty() ||
      sharding->unreduced_kind != ReductionKind::Sum)
    return owners;
  const std::vector<int64_t> index =
      shardIndexByDevice(*mesh, sharding->unreduced);
  for (size_t d = 0; d < devices.size(); ++d)
    owners[d] = index.at(size_t(devices[d])) == 0;
  return owners;
}

// The arguments of every device: its shard of each global input.
Result<std::vector<std::vector<Tensor>>>
deviceArguments(Module &module, Operation &entry,
                const std::vector<Tensor> &inputs,
                const std::vector<int64_t> &devices) {
  std::vector<std::vector<Tensor>> args(devices.size());
  Block &body = entry.region(0).front();
  for (size_t i = 0; i < body.numArguments(); ++i) {
    Value *arg = body.argument(i);
    Result<std::vector<std::vector<int64_t>>> at =
        boxes(module, getSharding(arg), arg->type, devices);
    if (!at)
      return at.error();
    const std::vector<int64_t> owners =
        sumOwners(module, getSharding(arg), devices);
    for (size_t d = 0; d < devices.size(); ++d)
      args[d].push_back(
          owners[d] ? interpreter::shardOf(inputs[i], arg->type, (*at)[d])
                    : Tensor::zeros(arg->type));
  }
  return args;
}

// `a` combined with `b` by an unreduced sharding's reduction.
double combine(ReductionKind kind, double a, double b) {
  switch (kind) {
  case ReductionKind::Max:
    return std::max(a, b);
  case ReductionKind::Min:
    return std::min(a, b);
  case ReductionKind::Sum:
    break;
  }
  return a + b;
}

// A result with unreduced axes holds partial results on the devices along
// them (partial sums, maxima or minima): each device's shard becomes its
// group's reduced.
void reduceUnreduced(Module &module, const TensorSharding *sharding,
                     const std::vector<int64_t> &devices,
                     std::vector<Tensor> &shards) {
  const Mesh *mesh = sharding ? lookupMesh(module, *sharding) : nullptr;
  if (!mesh || sharding->unreduced.empty())
    return;
  const ReductionKind kind = sharding->unreduced_kind;
  std::map<int64_t, size_t> position;
  for (size_t d = 0; d < devices.size(); ++d)
    position[devices[d]] = d;
  for (const std::vector<int64_t> &group :
       deviceGroups(*mesh, sharding->unreduced)) {
    Tensor reduced = shards[position.at(group.front())];
    for (size_t g = 1; g < group.size(); ++g) {
      const Tensor &part = shards[position.at(group[g])];
      for (int64_t i = 0; i < reduced.size(); ++i) {
        reduced.setReal(i, combine(kind, reduced.real(i), part.real(i)));
        if (reduced.isComplex())
          reduced.setImag(i, combine(kind, reduced.imag(i), part.imag(i)));
      }
    }
    for (int64_t device : group)
      shards[position.at(device)] = reduced;
  }
}

// The largest finite magnitude of a float or complex tensor (1 at least).
double scaleOf(const Tensor &t) {
  double scale = 1e-30;
  for (int64_t i = 0; i < t.size(); ++i)
    for (double v : {t.real(i), t.isComplex() ? t.imag(i) : 0.0})
      if (std::isfinite(v))
        scale = std::max(scale, std::fabs(v));
  return scale;
}

bool closeEnough(double a, double b, double tolerance) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b))
    return a == b;
  return std::fabs(a - b) <= tolerance;
}

// "" when `got` equals `want` (bit for bit, or for floats within a few
// units of the format's precision relative to the larger of the tensor's
// largest value and `floor`: a sum split across devices adds in another
// order); else where not.
std::string compare(const Tensor &want, const Tensor &got, double floor,
                    bool &exact) {
  if (want.shape() != got.shape())
    return "shapes differ";
  const bool floating = want.isFloat() || want.isComplex();
  const FloatFormat *format = want.layout().float_format;
  const double tolerance =
      floating && format ? std::max(scaleOf(want), floor) *
                               std::ldexp(1.0, -int(format->fraction_bits) + 5)
                         : 0.0;
  for (int64_t i = 0; i < want.size(); ++i)
    for (unsigned p = 0; p < want.parts(); ++p) {
      if (want.bits(i, p) == got.bits(i, p))
        continue;
      exact = false;
      const double a = p ? want.imag(i) : want.real(i);
      const double b = p ? got.imag(i) : got.real(i);
      if (floating && closeEnough(a, b, tolerance))
        continue;
      std::ostringstream s;
      s.precision(9);
      s << "element " << i << ": global " << a << ", partitioned " << b;
      return s.str();
    }
  return "";
}

// `fraction` of the largest value among the float results (0 when none).
double toleranceFloor(const std::vector<Tensor> &results, double fraction) {
  if (fraction <= 0)
    return 0;
  double largest = 0;
  for (const Tensor &t : results)
    if (t.isFloat() || t.isComplex())
      largest = std::max(largest, scaleOf(t));
  return fraction * largest;
}

// The devices' results put together and compared with the global ones.
Outcome compareResults(Module &module, Operation &entry,
                       const interpreter::RunResult &global,
                       const interpreter::DevicesRunResult &devices,
                       const std::vector<int64_t> &ids, double tolerance_floor,
                       Outcome out) {
  out.exact = true;
  const double floor = toleranceFloor(global.results, tolerance_floor);
  for (size_t r = 0; r < global.results.size(); ++r) {
    Type local = devices.results[0][r].type();
    Result<std::vector<std::vector<int64_t>>> at =
        boxes(module, getFuncResultSharding(entry, r), local, ids);
    if (!at)
      return notRun(out, "results", at.error().message);
    std::vector<Tensor> shards;
    for (size_t d = 0; d < ids.size(); ++d)
      shards.push_back(devices.results[d][r]);
    reduceUnreduced(module, getFuncResultSharding(entry, r), ids, shards);
    Result<Tensor> whole =
        interpreter::assemble(shards, *at, global.results[r].type());
    if (!whole)
      return mismatch(out, "results",
                      "result " + std::to_string(r) + ": " +
                          whole.error().message);
    const std::string differs =
        compare(global.results[r], *whole, floor, out.exact);
    if (!differs.empty())
      return mismatch(out, "results",
                      "result " + std::to_string(r) + ": " + differs);
  }
  out.status = Status::Match;
  return out;
}

Outcome checkDevices(const interpreter::RunResult &global,
                     const interpreter::DevicesRunResult &devices,
                     Outcome out) {
  for (const interpreter::CheckResult &c : devices.checks) {
    ++out.checks_run;
    out.checks_passed += c.passed;
  }
  if (!devices.ok)
    return mismatch(out, "devices", devices.error);
  if (devices.checks.size() != global.checks.size() * size_t(out.devices))
    return mismatch(out, "checks",
                    "the devices ran " + std::to_string(devices.checks.size()) +
                        " checks, the global run " +
                        std::to_string(global.checks.size()) + " per device");
  for (size_t i = 0; i < devices.checks.size(); ++i) {
    const interpreter::CheckResult &c = devices.checks[i];
    // Each check op runs on every device in turn.
    const bool held_globally = global.checks[i / size_t(out.devices)].passed;
    if (held_globally && !c.passed)
      return mismatch(out, "checks",
                      c.op + " at line " + std::to_string(c.line) +
                          " failed on device " + std::to_string(c.device) +
                          (c.detail.empty() ? "" : ": " + c.detail));
  }
  return out;
}

// The first op that only a per-device program has: a StableHLO collective,
// partition_id or replica_id (outside a manual computation, whose body is
// per-device by design).
const Operation *perDeviceOp(Module &module) {
  const Operation *found = nullptr;
  walk(module.op(), [&](Operation &op) {
    if (!found && !insideManualComputation(op) &&
        (op.is("stablehlo.partition_id") || op.is("stablehlo.replica_id") ||
         isStableHloCollective(op)))
      found = &op;
  });
  return found;
}

} // namespace

std::vector<Tensor> randomInputs(Operation &entry, uint64_t seed,
                                 double scale) {
  detail::Random random(seed ^ 0x5eedull);
  std::vector<Tensor> inputs;
  Block &body = entry.region(0).front();
  for (size_t i = 0; i < body.numArguments(); ++i) {
    Type type = body.argument(i)->type;
    if (!type || !type->isRankedTensor() || !type->hasStaticShape()) {
      inputs.emplace_back(); // the run names the argument it cannot take
      continue;
    }
    Tensor t = Tensor::zeros(type);
    for (int64_t e = 0; e < t.size(); ++e) {
      if (t.isInteger()) {
        t.setInteger(e, uint64_t(t.layout().is_bool ? random.below(2)
                                                    : random.below(11) - 5));
        continue;
      }
      t.setReal(e, scale * double(random.below(2049) - 1024) / 256.0);
      if (t.isComplex())
        t.setImag(e, scale * double(random.below(2049) - 1024) / 256.0);
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

bool readShardingsChoice(std::string_view text, Options &options) {
  if (text == "module") {
    options.seed.reset();
    return true;
  }
  constexpr std::string_view prefix = "random:";
  if (!text.starts_with(prefix) || text.size() == prefix.size() ||
      text.size() > prefix.size() + 19)
    return false;
  uint64_t seed = 0;
  for (char c : text.substr(prefix.size())) {
    if (c < '0' || c > '9')
      return false;
    seed = seed * 10 + uint64_t(c - '0');
  }
  options.seed = seed;
  return true;
}

interpreter::RunResult runGlobally(Module &module,
                                   const interpreter::RunOptions &options,
                                   uint64_t seed, double input_scale) {
  std::vector<Tensor> args;
  if (Operation *entry = entryOf(module, options.entry))
    args = randomInputs(*entry, seed, input_scale);
  return interpreter::run(module, args, options);
}

bool isInputScale(double scale) {
  int exponent = 0;
  return scale > 0 && std::isfinite(scale) &&
         std::frexp(scale, &exponent) == 0.5;
}

std::string_view statusName(Status status) {
  switch (status) {
  case Status::Match:
    return "match";
  case Status::Mismatch:
    return "mismatch";
  case Status::NotRun:
    break;
  }
  return "not run";
}

Outcome checkPartitioned(std::string_view text, const Options &options) {
  Outcome out;
  DiagnosticEngine diags;
  // A module in GSPMD form (mhlo.sharding, @Sharding custom calls) is
  // imported, as the scheduler imports it.
  LoadOptions load;
  load.import_gspmd = true;
  LoadedModule global_module = loadModule(text, diags, load);
  if (!global_module.module)
    return notRun(out, "parse", diagnosticsText(diags));
  if (const Operation *op = perDeviceOp(*global_module.module))
    return notRun(out, "parse",
                  std::to_string(op->loc.line) + ":" +
                      std::to_string(op->loc.col) + ": " +
                      std::string(op->name) +
                      ": the module is a per-device program already, with no "
                      "global run to compare with (run it with --devices N)");
  Operation *global_entry = entryOf(*global_module.module, options.entry);
  if (!global_entry)
    return notRun(out, "parse", "no function @" + options.entry);
  Block &params = global_entry->region(0).front();
  int64_t input_elements = 0;
  for (size_t i = 0; i < params.numArguments(); ++i) {
    Type t = params.argument(i)->type;
    if (!t || !t->isRankedTensor() || !t->hasStaticShape())
      return notRun(out, "global run",
                    "argument " + std::to_string(i) +
                        " is not a static tensor (dynamic shapes are not run "
                        "by the interpreter)");
    input_elements += t->numElements();
  }
  // Drawing the random inputs is work too (a training step's weights are
  // hundreds of millions of elements), counted before it starts: one
  // element takes some 60 units' time (6 million a second here; the units
  // are interpreter/work.cpp's).
  constexpr int64_t kWorkPerRandomElement = 60;
  const int64_t input_work = input_elements * kWorkPerRandomElement;
  if (options.max_work > 0 && input_work >= options.max_work)
    return notRun(out, "global run",
                  "drawing its inputs' " + std::to_string(input_elements) +
                      " random elements passes the budget of " +
                      std::to_string(options.max_work) + " units of work");
  const std::vector<Tensor> inputs = randomInputs(
      *global_entry, options.seed.value_or(0), options.input_scale);
  interpreter::RunOptions run_options;
  run_options.entry = options.entry;
  run_options.max_work =
      options.max_work > 0 ? options.max_work - input_work : 0;
  const interpreter::RunResult global =
      interpreter::run(*global_module.module, inputs, run_options);
  out.work = input_work + global.work;
  if (!global.ok)
    return notRun(out, "global run", global.error);
  for (const interpreter::CheckResult &c : global.checks) {
    ++out.global_checks_run;
    out.global_checks_passed += c.passed;
  }
  out.global = global;
  out.global_module = std::move(global_module.module);

  if (options.program && options.seed)
    return notRun(out, "partition",
                  "a given per-device program has its own shardings: not "
                  "with random ones");
  // Another tool's program is read as that tool wrote it: mhlo.sharding
  // left on it is what sdy_opt does not import (it partitioned the module as
  // unsharded), not a layout of the program's inputs.
  LoadOptions program_load = load;
  program_load.import_gspmd = !options.program;
  LoadedModule loaded = loadModule(options.program ? *options.program : text,
                                   diags, program_load);
  if (!loaded.module)
    return notRun(out, "partition", diagnosticsText(diags));
  Module &module = *loaded.module;
  Operation *entry = entryOf(module, options.entry);
  if (!entry)
    return notRun(out, "partition", "no function @" + options.entry);
  if (options.seed)
    randomize(module, *entry, *options.seed, options.max_devices, out);
  // The devices the module's mesh names, also when partitioning fails.
  if (const Mesh *mesh = entry ? programMesh(module, *entry) : nullptr)
    out.devices = int64_t(interpreter::meshDevices(*mesh).size());
  Result<PassPipeline> pipeline = buildNamedPipeline("partition");
  if (!pipeline)
    return notRun(out, "partition", pipeline.error().message);
  if (options.gpu_passes)
    for (const auto &[flag, pass_options] : gpuSteps())
      if (shardlab::Status added = appendPass(*pipeline, flag, pass_options);
          !added)
        return notRun(out, "partition", added.error().message);
  module.verify_passes = Module::VerifyPasses::EveryPass;
  std::string failed_flag;
  if (!options.program &&
      !runPassPipeline(module, *pipeline, diags, &failed_flag))
    return mismatch(out, "partition",
                    "-" + failed_flag + ": " + diagnosticsText(diags));
  if (options.after_partition)
    options.after_partition(module);
  entry = entryOf(module, options.entry);
  if (options.keep_program)
    out.program = printModule(module);
  const Mesh *mesh = entry ? programMesh(module, *entry) : nullptr;
  std::vector<int64_t> ids =
      mesh ? interpreter::meshDevices(*mesh) : std::vector<int64_t>{0};
  out.devices = int64_t(ids.size());
  // runOnDevices runs devices 0..n-1 (partition ids): a mesh may list them
  // in any order, but not skip one.
  std::sort(ids.begin(), ids.end());
  for (size_t d = 0; d < ids.size(); ++d)
    if (ids[d] != int64_t(d))
      return notRun(out, "devices", "a mesh whose device ids are not 0..n-1");
  Result<std::vector<std::vector<Tensor>>> args =
      deviceArguments(module, *entry, inputs, ids);
  if (!args)
    return notRun(out, "devices", args.error().message);
  run_options.on_collective = options.on_collective;
  // One budget for both runs: the devices get what the global run left.
  if (options.max_work > 0)
    run_options.max_work =
        std::max<int64_t>(run_options.max_work - global.work, 1);
  interpreter::DevicesRunResult devices =
      interpreter::runOnDevices(module, *args, run_options);
  out.work += devices.work;
  if (devices.over_budget)
    return notRun(out, "devices", devices.error);
  out = checkDevices(global, devices, std::move(out));
  if (out.status == Status::Mismatch)
    return out;
  return compareResults(module, *entry, global, devices, ids,
                        options.tolerance_floor, std::move(out));
}

} // namespace shardlab::partition_check
