// The evaluator: runs a function's body op by op, with the values of the
// enclosing scopes visible inside regions; control flow (call, while, if,
// case) and reductions run their regions; everything else is one of the op
// families of ops.h.
#include "indexing.h"
#include "ir/op_properties.h"
#include "ops.h"

#include "rules/stablehlo_attrs.h"
#include "shardlab/interpreter/shards.h"
#include "shardlab/ir/sharding_access.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace shardlab::interpreter {
namespace {

using detail::Operands;
using detail::opError;

/// What a run counts, whatever the devices.
struct RunTotals {
  std::vector<CheckResult> checks;
  int64_t ops_run = 0;
  int64_t elements = 0;
  int64_t work = 0;
  bool over_budget = false;
};

/// The values of one op result, one tensor per lane (device) that runs
/// the block.
using Lanes = std::vector<Tensor>;

/// Values of one scope, for the lanes that run it; lookups fall back to
/// the enclosing scopes. A region that one device runs alone (a reducer's
/// body) is a scope of one lane inside the scope of all of them; a branch
/// some devices take is a scope of those.
struct Scope {
  const Scope *parent = nullptr;
  std::vector<size_t> parent_lane; ///< each lane's lane in `parent`
  std::vector<int64_t> devices;    ///< each lane's device (partition id)
  std::unordered_map<const Value *, Lanes> values;
  size_t lanes() const { return devices.size(); }
  const Tensor *find(const Value *v, size_t lane) const {
    for (const Scope *s = this; s; s = s->parent) {
      if (auto it = s->values.find(v); it != s->values.end())
        return &it->second[lane];
      if (s->parent)
        lane = s->parent_lane[lane];
    }
    return nullptr;
  }
  /// A scope of `lanes` of this one (indices into this scope's lanes).
  Scope child(const std::vector<size_t> &lanes) const {
    Scope c;
    c.parent = this;
    c.parent_lane = lanes;
    for (size_t l : lanes)
      c.devices.push_back(devices[l]);
    return c;
  }
};

class Evaluator {
public:
  Evaluator(Module &module, const RunOptions &options, RunTotals &out,
            int64_t num_devices)
      : module_(module), options_(options), out_(out),
        num_devices_(num_devices) {}

  /// Runs `func` on every lane of `devices`; `args` is [argument][lane].
  Result<std::vector<Lanes>> callFunction(Operation &func,
                                          const std::vector<Lanes> &args,
                                          const std::vector<int64_t> &devices) {
    if (!func.numRegions() || func.region(0).empty())
      return opError(func, "function has no body");
    if (++depth_ > 256)
      return opError(func, "calls nested more than 256 deep");
    Scope scope;
    scope.devices = devices;
    Result<std::vector<Lanes>> r =
        runBlock(func.region(0).front(), args, std::move(scope));
    --depth_;
    return r;
  }

private:
  Result<std::vector<Lanes>>
  runBlock(Block &block, const std::vector<Lanes> &args, Scope scope) {
    if (args.size() != block.numArguments())
      return makeError("block of " + std::to_string(block.numArguments()) +
                       " arguments called with " + std::to_string(args.size()));
    for (size_t i = 0; i < args.size(); ++i)
      scope.values[block.argument(i)] = args[i];
    for (Operation &op : block) {
      if (isBlockReturn(op)) {
        std::vector<Lanes> results;
        for (size_t i = 0; i < op.numOperands(); ++i) {
          Lanes lanes;
          for (size_t l = 0; l < scope.lanes(); ++l) {
            const Tensor *t = scope.find(op.operand(i), l);
            if (!t)
              return opError(op, "operand " + std::to_string(i) + " unknown");
            lanes.push_back(*t);
          }
          results.push_back(std::move(lanes));
        }
        return results;
      }
      Result<bool> ran = runOp(op, scope);
      if (!ran)
        return ran.error();
    }
    return makeError("block ends without a return");
  }

  /// The operands of `op` on each lane: [lane][operand].
  Result<std::vector<Operands>> operandsOf(Operation &op, const Scope &scope) {
    std::vector<Operands> in(scope.lanes());
    for (size_t l = 0; l < scope.lanes(); ++l)
      for (size_t i = 0; i < op.numOperands(); ++i) {
        const Tensor *t = scope.find(op.operand(i), l);
        if (!t)
          return opError(op, "operand " + std::to_string(i) +
                                 " has no value (defined by an op not run)");
        in[l].push_back(t);
      }
    return in;
  }

  Result<std::vector<Type>> resultTypes(Operation &op) {
    std::vector<Type> types;
    for (size_t i = 0; i < op.numResults(); ++i) {
      Type t = op.result(i)->type;
      if (!t || !t->isRankedTensor() || !t->hasStaticShape())
        return opError(op, "result " + std::to_string(i) +
                               " is not a static tensor (dynamic shapes are "
                               "not run by the interpreter)");
      if (!elementLayout(t->element).supported() &&
          !uniformQuant(t->element->text))
        return opError(op, "element type " + t->element->text +
                               " is not run by the interpreter");
      types.push_back(t);
    }
    return types;
  }

  /// Binds `results` ([result][lane]) to the op's results.
  Result<bool> bind(Operation &op, Scope &scope,
                    Result<std::vector<Lanes>> results) {
    if (!results)
      return results.error();
    if (results->size() != op.numResults())
      return opError(op, "produced " + std::to_string(results->size()) +
                             " results for " + std::to_string(op.numResults()));
    for (size_t i = 0; i < results->size(); ++i) {
      for (const Tensor &t : (*results)[i])
        out_.elements += t.size();
      scope.values[op.result(i)] = std::move((*results)[i]);
    }
    return true;
  }

  Result<bool> countWork(Operation &op, const std::vector<Operands> &in,
                         const std::vector<Type> &types) {
    if (in.empty())
      return true;
    out_.work += detail::opWork(op, in[0], types) * int64_t(in.size());
    if (options_.max_work <= 0 || out_.work <= options_.max_work)
      return true;
    out_.over_budget = true;
    return opError(op, "the run passes its budget of " +
                           std::to_string(options_.max_work) +
                           " units of work here (elements and multiply-adds)");
  }

  Result<bool> runOp(Operation &op, Scope &scope) {
    if (++out_.ops_run > options_.max_ops)
      return opError(op, "more than " + std::to_string(options_.max_ops) +
                             " ops run (a loop that does not end?)");
    Result<std::vector<Operands>> in = operandsOf(op, scope);
    if (!in)
      return in.error();
    Result<std::vector<Type>> types = resultTypes(op);
    if (!types)
      return types.error();
    if (Result<bool> within = countWork(op, *in, *types); !within)
      return within.error();
    return bind(op, scope, evaluateOnLanes(op, *in, *types, scope));
  }

  // Control flow and collectives run on all lanes together (a collective
  // needs every member's operand; a loop's body may hold collectives);
  // every other op runs on each lane alone.
  Result<std::vector<Lanes>> evaluateOnLanes(Operation &op,
                                             const std::vector<Operands> &in,
                                             const std::vector<Type> &types,
                                             const Scope &scope) {
    const std::string_view name = op.name;
    if (name == "func.call" || name == "call")
      return call(op, in, scope);
    if (name == "stablehlo.while")
      return loop(op, in, scope);
    if (name == "stablehlo.if" || name == "stablehlo.case")
      return branch(op, in, scope);
    if (name == "sdy.manual_computation")
      return manualComputation(op, in, scope);
    // A named computation is its body called in place (Shardy inlines it
    // on export); its body's values are per lane like the caller's.
    if (name == "sdy.named_computation")
      return regionResults(op, 0, byOperand(in, op.numOperands()),
                           scope.child(allLanes(scope)));
    if (isStableHloCollective(op)) {
      Result<std::vector<Lanes>> results =
          detail::collective(op, in, types, scope.devices, num_devices_,
                             [this, &op, &scope](size_t lane) {
                               return regionCombiner(op, scope, lane);
                             });
      if (results && options_.on_collective)
        options_.on_collective(collectiveStep(op, in, *results, scope));
      return results;
    }
    std::vector<Lanes> results(types.size());
    for (size_t l = 0; l < scope.lanes(); ++l) {
      Result<std::vector<Tensor>> r = evaluate(op, in[l], types, scope, l);
      if (!r)
        return r.error();
      if (r->size() != types.size())
        return opError(op, "produced " + std::to_string(r->size()) +
                               " results for " + std::to_string(types.size()));
      for (size_t i = 0; i < r->size(); ++i)
        results[i].push_back(std::move((*r)[i]));
    }
    return results;
  }

  // The expressed-type tensor type of a quantized one (same shape).
  Type expressedType(Type quantized, const UniformQuant &q) {
    TypeContext &types = module_.ctx().types;
    return types.rankedTensor(quantized->shape, types.element(q.expressed));
  }

  Tensor dequantize(const Tensor &q) {
    const UniformQuant &p = *q.quant();
    Tensor out = Tensor::zeros(expressedType(q.type(), p));
    // In the expressed type (f32): (q - zero_point) * scale.
    const float scale = float(p.scale);
    for (int64_t i = 0; i < out.size(); ++i)
      out.setReal(i, double(float(q.integer(i) - p.zero_point) * scale));
    return out;
  }

  Tensor quantize(const Tensor &x, Type result) {
    Tensor out = Tensor::zeros(result);
    const UniformQuant &p = *out.quant();
    const float scale = float(p.scale);
    for (int64_t i = 0; i < out.size(); ++i) {
      const double v = std::nearbyint(double(float(x.real(i)) / scale)) +
                       double(p.zero_point);
      // A NaN converts to the integer 0, as XLA converts a NaN float to an
      // integer (the quantized result of 0 / 0 in the corpus says so).
      const double clamped = std::isnan(v)
                                 ? 0.0
                                 : std::min(std::max(v, double(p.storage_min)),
                                            double(p.storage_max));
      out.setInteger(i, uint64_t(int64_t(clamped)));
    }
    return out;
  }

  // An op with quantized operands or results runs on the dequantized
  // values; its quantized results are quantized again.
  Result<std::vector<Tensor>>
  dequantizeOpQuantize(Operation &op, const Operands &in,
                       const std::vector<Type> &types, const Scope &scope,
                       size_t lane) {
    std::vector<Tensor> expressed;
    expressed.reserve(in.size());
    Operands plain;
    for (const Tensor *t : in) {
      if (t->quant()) {
        expressed.push_back(dequantize(*t));
        plain.push_back(&expressed.back());
      } else {
        plain.push_back(t);
      }
    }
    std::vector<Type> plain_types;
    for (Type t : types) {
      const std::optional<UniformQuant> q = uniformQuant(t->element->text);
      plain_types.push_back(q ? expressedType(t, *q) : t);
    }
    Result<std::vector<Tensor>> r =
        evaluatePlain(op, plain, plain_types, scope, lane);
    if (!r)
      return r.error();
    for (size_t i = 0; i < r->size() && i < types.size(); ++i)
      if (uniformQuant(types[i]->element->text))
        (*r)[i] = quantize((*r)[i], types[i]);
    return r;
  }

  Result<std::vector<Tensor>> evaluate(Operation &op, const Operands &in,
                                       const std::vector<Type> &types,
                                       const Scope &scope, size_t lane) {
    const std::string_view name = op.name;
    if (name == "stablehlo.uniform_quantize" && in.size() == 1 &&
        types.size() == 1)
      return one(
          quantize(in[0]->quant() ? dequantize(*in[0]) : *in[0], types[0]));
    if (name == "stablehlo.uniform_dequantize" && in.size() == 1 &&
        in[0]->quant())
      return one(dequantize(*in[0]));
    bool quantized = false;
    for (const Tensor *t : in)
      quantized = quantized || t->quant();
    for (Type t : types)
      quantized = quantized || uniformQuant(t->element->text);
    if (quantized)
      return dequantizeOpQuantize(op, in, types, scope, lane);
    return evaluatePlain(op, in, types, scope, lane);
  }

  Result<std::vector<Tensor>> evaluatePlain(Operation &op, const Operands &in,
                                            const std::vector<Type> &types,
                                            const Scope &scope, size_t lane) {
    const std::string_view name = op.name;
    if (name == "stablehlo.constant" || name == "sdy.constant")
      return constant(op, types);
    if (name == "stablehlo.partition_id" || name == "stablehlo.replica_id")
      return deviceId(op, types,
                      name == "stablehlo.partition_id" ? scope.devices[lane]
                                                       : 0);
    if (keepsValues(op, in, types))
      return copies(in);
    if (name == "stablehlo.custom_call")
      return customCall(op, in, types, scope.devices[lane]);
    if (name.substr(0, 6) == "check.") // the check dialect's own ops
      return check(op, name, in, types, scope.devices[lane]);
    if (name == "stablehlo.reduce")
      return detail::reduce(op, in, types, regionCombiner(op, scope, lane));
    if (name == "stablehlo.scatter")
      return detail::scatter(op, in, types, regionCombiner(op, scope, lane));
    if (name == "stablehlo.reduce_window")
      return detail::reduceWindow(op, in, types,
                                  regionCombiner(op, scope, lane));
    if (name == "stablehlo.sort")
      return detail::sort(op, in, types, regionCombiner(op, scope, lane));
    if (name == "stablehlo.select_and_scatter" && types.size() == 1)
      return one(detail::selectAndScatter(op, in, types[0],
                                          regionCombiner(op, scope, lane, 0),
                                          regionCombiner(op, scope, lane, 1)));
    if (name == "chlo.top_k" && in.size() == 1)
      return detail::topK(op, *in[0], types);
    if (name == "stablehlo.reduce_precision" && types.size() == 1)
      return one(detail::reducePrecision(op, *in[0], types[0]));
    if (name == "stablehlo.gather" && types.size() == 1)
      return one(detail::gather(op, in, types[0]));
    if (name == "stablehlo.optimization_barrier")
      return copies(in);
    if (name == "sdy.sharding_group") // a propagation hint with no result
      return std::vector<Tensor>{};
    if (types.size() == 1) {
      if (auto r = detail::elementwise(op, in, types[0]))
        return one(std::move(*r));
      if (auto r = detail::shapeOp(op, in, types[0]))
        return one(std::move(*r));
      if (name == "stablehlo.dot_general" || name == "stablehlo.dot")
        return one(detail::dotGeneral(op, in, types[0]));
      if (name == "stablehlo.convolution")
        return one(detail::convolution(op, in, types[0]));
      if (name == "stablehlo.fft")
        return one(detail::fft(op, *in[0], types[0]));
      if (name == "stablehlo.triangular_solve" && in.size() == 2)
        return one(detail::triangularSolve(op, *in[0], *in[1], types[0]));
    }
    if (name == "stablehlo.rng_bit_generator" && in.size() == 1)
      return detail::rngBitGenerator(op, *in[0], types);
    return opError(op, "not run by the interpreter");
  }

  // Ops whose results are their operands in a global run: Shardy's
  // constraints, reshards and propagation markers, and the collectives that
  // in the global view only move a value to another sharding (all_gather,
  // all_slice, all_to_all, collective_permute; not all_reduce and
  // reduce_scatter, whose operand holds partial sums the global view does
  // not). XLA's memory-space annotations (MoveToHost, MoveToDevice) move a
  // value and its sharding annotation (Sharding) describes one; neither
  // changes it. Each result's type must be its operand's: in a per-device
  // program a collective changes the shape, and is not this.
  static bool keepsValues(const Operation &op, const Operands &in,
                          const std::vector<Type> &types) {
    static constexpr std::string_view kKept[] = {
        "sdy.sharding_constraint", "sdy.reshard",
        "sdy.data_flow_edge",      "sdy.func_data_flow_edge",
        "sdy.propagation_barrier", "sdy.all_gather",
        "sdy.all_slice",           "sdy.all_to_all",
        "sdy.collective_permute"};
    const std::string_view target = customCallTarget(op);
    const bool kept = std::find(std::begin(kKept), std::end(kKept), op.name) !=
                          std::end(kKept) ||
                      target == "MoveToHost" || target == "MoveToDevice" ||
                      target == "Sharding";
    if (!kept || in.size() != types.size())
      return false;
    for (size_t i = 0; i < in.size(); ++i)
      if (in[i]->type() != types[i])
        return false;
    return true;
  }

  static Result<std::vector<Tensor>> one(Result<Tensor> r) {
    if (!r)
      return r.error();
    return std::vector<Tensor>{std::move(*r)};
  }

  static Result<std::vector<Tensor>> copies(const Operands &in) {
    std::vector<Tensor> out;
    for (const Tensor *t : in)
      out.push_back(*t);
    return out;
  }

  Result<std::vector<Tensor>> constant(Operation &op,
                                       const std::vector<Type> &types) {
    const Attr *value = rules::findAttr(op, "value");
    if (!value || value->kind != AttrKind::DenseElements || types.size() != 1)
      return opError(op, "no dense `value`");
    const DenseReader reader = value->denseReader();
    if (!reader.valid())
      return opError(op, "a literal of this type is not run by the "
                         "interpreter");
    return std::vector<Tensor>{detail::fromLiteral(reader, types[0])};
  }

  // partition_id / replica_id: this device's id, as the result type.
  static Result<std::vector<Tensor>>
  deviceId(Operation &op, const std::vector<Type> &types, int64_t id) {
    if (types.size() != 1 || types[0]->rank() != 0)
      return opError(op, "expected one scalar result");
    Tensor t = Tensor::zeros(types[0]);
    t.setInteger(0, uint64_t(id));
    return std::vector<Tensor>{std::move(t)};
  }

  // [lane][operand] -> [operand][lane].
  static CollectiveStep collectiveStep(const Operation &op,
                                       const std::vector<Operands> &in,
                                       const std::vector<Lanes> &results,
                                       const Scope &scope) {
    CollectiveStep step;
    step.op = &op;
    step.devices = scope.devices;
    for (size_t l = 0; l < scope.lanes(); ++l) {
      std::vector<Tensor> before, after;
      for (const Tensor *t : in[l])
        before.push_back(*t);
      for (const Lanes &result : results)
        after.push_back(result[l]);
      step.before.push_back(std::move(before));
      step.after.push_back(std::move(after));
    }
    return step;
  }

  static std::vector<Lanes> byOperand(const std::vector<Operands> &in,
                                      size_t count) {
    std::vector<Lanes> out(count);
    for (const Operands &lane : in)
      for (size_t i = 0; i < count && i < lane.size(); ++i)
        out[i].push_back(*lane[i]);
    return out;
  }

  Result<std::vector<Lanes>>
  call(Operation &op, const std::vector<Operands> &in, const Scope &scope) {
    const Attr *callee = op.attrs.get("callee");
    if (!callee)
      callee = op.props().get("callee");
    Operation *func = callee ? module_.lookupSymbol(callee->str()) : nullptr;
    if (!func)
      return opError(op, "callee not found");
    return callFunction(*func, byOperand(in, op.numOperands()), scope.devices);
  }

  Result<std::vector<Tensor>> customCall(Operation &op, const Operands &in,
                                         const std::vector<Type> &types,
                                         int64_t device) {
    const Attr *target = rules::findAttr(op, "call_target_name");
    const std::string name = target && target->kind == AttrKind::String
                                 ? target->str()
                                 : std::string();
    if (isFusedAttention(op)) {
      Result<std::vector<Tensor>> out = detail::fusedAttention(op, in, types);
      if (!out)
        return opError(op, out.error().message);
      return out;
    }
    if (name.substr(0, 6) != "check.")
      return opError(op,
                     "custom_call @" + name + " is not run by the interpreter");
    return check(op, name, in, types, device);
  }

  // A check (custom call or op): recorded; check.eq also returns whether
  // it held.
  Result<std::vector<Tensor>> check(Operation &op, std::string_view name,
                                    const Operands &in,
                                    const std::vector<Type> &types,
                                    int64_t device) {
    std::optional<CheckResult> check = detail::runCheck(op, name, in);
    if (!check)
      return opError(op, std::string(name) + " is not run by the interpreter");
    check->device = num_devices_ > 1 ? device : -1;
    const bool passed = check->passed;
    out_.checks.push_back(std::move(*check));
    std::vector<Tensor> results;
    for (Type t : types) { // check.eq returns whether it held
      Tensor r = Tensor::zeros(t);
      for (int64_t i = 0; i < r.size(); ++i)
        r.setInteger(i, passed);
      results.push_back(std::move(r));
    }
    return results;
  }

  /// Runs region `region` of `op` on the lanes of `scope`; `args` is
  /// [argument][lane].
  Result<std::vector<Lanes>> regionResults(Operation &op, size_t region,
                                           const std::vector<Lanes> &args,
                                           Scope scope) {
    if (op.numRegions() <= region || op.region(region).empty())
      return opError(op, "region " + std::to_string(region) + " missing");
    return runBlock(op.region(region).front(), args, std::move(scope));
  }

  static std::vector<size_t> allLanes(const Scope &scope) {
    std::vector<size_t> lanes(scope.lanes());
    for (size_t l = 0; l < lanes.size(); ++l)
      lanes[l] = l;
    return lanes;
  }

  // Every device runs the loop in step (its body may hold collectives), so
  // every device must see the same condition.
  Result<std::vector<Lanes>>
  loop(Operation &op, const std::vector<Operands> &in, const Scope &scope) {
    std::vector<Lanes> state = byOperand(in, op.numOperands());
    const std::vector<size_t> lanes = allLanes(scope);
    while (true) {
      Result<std::vector<Lanes>> more =
          regionResults(op, 0, state, scope.child(lanes));
      if (!more)
        return more.error();
      if (more->size() != 1)
        return opError(op, "condition must yield one i1");
      Result<bool> go = sameOnEveryLane(op, (*more)[0], scope, "condition");
      if (!go)
        return go.error();
      if (!*go)
        return state;
      Result<std::vector<Lanes>> next =
          regionResults(op, 1, state, scope.child(lanes));
      if (!next)
        return next.error();
      state = std::move(*next);
    }
  }

  Result<bool> sameOnEveryLane(Operation &op, const Lanes &flags,
                               const Scope &scope, const char *what) {
    for (size_t l = 0; l < flags.size(); ++l) {
      if (flags[l].size() != 1)
        return opError(op, std::string(what) + " must be one i1");
      if ((flags[l].integer(0) != 0) != (flags[0].integer(0) != 0))
        return opError(op, "devices " + std::to_string(scope.devices[0]) +
                               " and " + std::to_string(scope.devices[l]) +
                               " disagree on the loop " + what);
    }
    return !flags.empty() && flags[0].integer(0) != 0;
  }

  // Each lane takes its branch; the lanes that take the same one run it
  // together (a collective inside then spans only them).
  Result<std::vector<Lanes>>
  branch(Operation &op, const std::vector<Operands> &in, const Scope &scope) {
    std::vector<std::vector<size_t>> lanes_of(op.numRegions());
    for (size_t l = 0; l < scope.lanes(); ++l) {
      if (in[l].size() != 1 || in[l][0]->size() != 1)
        return opError(op, "expected one scalar predicate or index");
      lanes_of[branchIndex(op, *in[l][0])].push_back(l);
    }
    std::vector<Lanes> results(op.numResults(), Lanes(scope.lanes()));
    for (size_t region = 0; region < lanes_of.size(); ++region) {
      if (lanes_of[region].empty())
        continue;
      Result<std::vector<Lanes>> r =
          regionResults(op, region, {}, scope.child(lanes_of[region]));
      if (!r)
        return r.error();
      if (r->size() != results.size())
        return opError(op, "branch yields the wrong number of values");
      for (size_t i = 0; i < r->size(); ++i)
        for (size_t k = 0; k < lanes_of[region].size(); ++k)
          results[i][lanes_of[region][k]] = std::move((*r)[i][k]);
    }
    return results;
  }

  // sdy.manual_computation in a global run: its body is a per-device
  // program over the manual axes. Every device of the mesh runs it on its
  // shard of each operand (in_shardings over the manual axes; along the
  // free axes the value stays whole), the collectives inside spanning the
  // mesh; the results are put together by out_shardings over the manual
  // axes (devices that differ only along free axes must agree).
  //   in [{"x"}, {}] over x=4, 64x32  ->  device d gets rows 16d..16d+15
  Result<std::vector<Lanes>> manualComputation(Operation &op,
                                               const std::vector<Operands> &in,
                                               const Scope &scope) {
    if (scope.lanes() != 1)
      return opError(op, "a manual computation inside a per-device program "
                         "is not run by the interpreter");
    const Attr *ins = op.attrs.get("in_shardings");
    const Attr *outs = op.attrs.get("out_shardings");
    const Attr *axes = op.attrs.get("manual_axes");
    if (!ins || !outs || !axes || ins->kind != AttrKind::ShardingPerValue ||
        outs->kind != AttrKind::ShardingPerValue ||
        axes->kind != AttrKind::ManualAxes || op.region(0).empty())
      return opError(op, "in_shardings, out_shardings or manual_axes "
                         "unreadable");
    const auto &manual = std::get<std::vector<std::string>>(axes->payload);
    const std::vector<TensorSharding> &in_shardings = ins->shardings();
    const std::vector<TensorSharding> &out_shardings = outs->shardings();
    const Mesh *mesh = nullptr;
    for (const TensorSharding &s : in_shardings)
      mesh = mesh ? mesh : lookupMesh(module_, s);
    for (const TensorSharding &s : out_shardings)
      mesh = mesh ? mesh : lookupMesh(module_, s);
    if (!mesh)
      return opError(op, "its mesh is not found");
    const std::vector<int64_t> devices = meshDevices(*mesh);
    for (size_t d = 0; d < devices.size(); ++d)
      if (devices[d] != int64_t(d))
        return opError(op, "a mesh whose device ids are not 0..n-1");
    Block &body = op.region(0).front();
    if (in_shardings.size() != in[0].size() ||
        out_shardings.size() != op.numResults() ||
        body.numArguments() != in[0].size())
      return opError(op, "shardings and operands do not match");
    std::vector<Lanes> args(in[0].size());
    for (size_t i = 0; i < args.size(); ++i) {
      Type local = body.argument(i)->type;
      Result<std::vector<std::vector<int64_t>>> at = shardOffsetsOnDevices(
          onlyAxes(in_shardings[i], manual), *mesh, devices, local->shape);
      if (!at)
        return opError(op, at.error().message);
      for (const std::vector<int64_t> &offsets : *at)
        args[i].push_back(shardOf(*in[0][i], local, offsets));
    }
    Scope body_scope;
    body_scope.devices = devices;
    const int64_t outer_devices = num_devices_;
    num_devices_ = int64_t(devices.size());
    Result<std::vector<Lanes>> r = runBlock(body, args, std::move(body_scope));
    num_devices_ = outer_devices;
    if (!r)
      return r.error();
    std::vector<Lanes> results;
    for (size_t j = 0; j < r->size(); ++j) {
      // Every lane's result has the body's result type.
      Result<std::vector<std::vector<int64_t>>> at =
          shardOffsetsOnDevices(onlyAxes(out_shardings[j], manual), *mesh,
                                devices, (*r)[j][0].shape());
      if (!at)
        return opError(op, at.error().message);
      Result<Tensor> whole = assemble((*r)[j], *at, op.result(j)->type);
      if (!whole)
        return opError(op, "result " + std::to_string(j) + ": " +
                               whole.error().message);
      results.push_back(Lanes{std::move(*whole)});
    }
    return results;
  }

  /// `sharding` with only the axes named in `names` (the others, and the
  /// replicated and unreduced lists, dropped).
  static TensorSharding onlyAxes(const TensorSharding &sharding,
                                 const std::vector<std::string> &names) {
    TensorSharding kept = sharding;
    for (DimSharding &dim : kept.dims)
      std::erase_if(dim.axes, [&](const AxisRef &axis) {
        return std::find(names.begin(), names.end(), axis.name.view()) ==
               names.end();
      });
    kept.replicated.clear();
    kept.unreduced.clear();
    return kept;
  }

  static size_t branchIndex(Operation &op, const Tensor &selector) {
    if (op.is("stablehlo.if"))
      return selector.integer(0) != 0 ? 0 : 1;
    // case: an index out of range runs the last branch
    const int64_t index = selector.integer(0);
    return index < 0 || size_t(index) >= op.numRegions() ? op.numRegions() - 1
                                                         : size_t(index);
  }

  /// A reducer, comparator or selector region run by lane `lane` alone.
  detail::Combiner regionCombiner(Operation &op, const Scope &scope,
                                  size_t lane, size_t region = 0) {
    return [this, &op, &scope, lane, region](
               const std::vector<Tensor> &args) -> Result<std::vector<Tensor>> {
      std::vector<Lanes> lane_args;
      lane_args.reserve(args.size());
      for (const Tensor &t : args)
        lane_args.push_back(Lanes{t});
      Result<std::vector<Lanes>> r =
          regionResults(op, region, lane_args, scope.child({lane}));
      if (!r)
        return r.error();
      std::vector<Tensor> out;
      out.reserve(r->size());
      for (Lanes &l : *r)
        out.push_back(std::move(l[0]));
      return out;
    };
  }

  Module &module_;
  const RunOptions &options_;
  RunTotals &out_;
  int64_t num_devices_;
  int depth_ = 0;
};

// StableHLO's own interpreter tests name their one function after the
// test (`@cosine_op_test_bf16`); with no @main, that function is the entry.
Operation *onlyFunction(Module &module) {
  Operation *only = nullptr;
  for (Operation &op : module.body()) {
    if (!op.is("func.func"))
      continue;
    if (only)
      return nullptr;
    only = &op;
  }
  return only;
}

} // namespace

Operation *findEntry(Module &module, const std::string &entry) {
  Operation *func = module.lookupSymbol(entry);
  if (!func && entry == "main")
    func = onlyFunction(module);
  if (!func || !func->is("func.func") || !func->numRegions() ||
      func->region(0).empty())
    return nullptr;
  return func;
}

namespace {

// The entry function, or why there is none to run.
Result<Operation *> entryFunction(Module &module, const RunOptions &options,
                                  size_t num_args) {
  Operation *func = findEntry(module, options.entry);
  if (!func)
    return makeError("no function @" + options.entry + " to run");
  Block &body = func->region(0).front();
  if (body.numArguments() != num_args)
    return makeError(
        "@" + options.entry + " takes " + std::to_string(body.numArguments()) +
        " arguments and " + std::to_string(num_args) +
        " were given (a module whose inputs are not in it, such as one with "
        "dynamic shapes, needs them)");
  return func;
}

} // namespace

DevicesRunResult runOnDevices(Module &module,
                              const std::vector<std::vector<Tensor>> &args,
                              const RunOptions &options) {
  DevicesRunResult out;
  if (args.empty()) {
    out.error = "no devices to run on";
    return out;
  }
  const size_t num_args = args[0].size();
  for (const std::vector<Tensor> &device_args : args)
    if (device_args.size() != num_args) {
      out.error = "every device needs the same number of arguments";
      return out;
    }
  Result<Operation *> func = entryFunction(module, options, num_args);
  if (!func) {
    out.error = func.error().message;
    return out;
  }
  Block &body = (*func)->region(0).front();
  for (size_t i = 0; i < num_args; ++i) {
    Type want = body.argument(i)->type;
    if (!want || !want->isRankedTensor() || !want->hasStaticShape()) {
      out.error = "argument " + std::to_string(i) + " of @" + options.entry +
                  " is " + (want ? want->text : std::string("untyped")) +
                  ": dynamic shapes are not run by the interpreter";
      return out;
    }
  }
  for (size_t d = 0; d < args.size(); ++d)
    for (size_t i = 0; i < num_args; ++i) {
      Type want = body.argument(i)->type;
      Type got = args[d][i].type();
      if (!got || !want || got->shape != want->shape ||
          got->element != want->element) {
        out.error = "argument " + std::to_string(i) + " of device " +
                    std::to_string(d) + " is " +
                    (got ? got->text : std::string("no tensor")) + ", @" +
                    options.entry + " takes " + (want ? want->text : "?");
        return out;
      }
    }
  std::vector<Lanes> lane_args(num_args);
  std::vector<int64_t> devices;
  for (size_t d = 0; d < args.size(); ++d) {
    devices.push_back(int64_t(d));
    for (size_t i = 0; i < num_args; ++i)
      lane_args[i].push_back(args[d][i]);
  }
  RunTotals totals;
  Evaluator evaluator(module, options, totals, int64_t(args.size()));
  Result<std::vector<Lanes>> results =
      evaluator.callFunction(**func, lane_args, devices);
  out.checks = std::move(totals.checks);
  out.ops_run = totals.ops_run;
  out.elements = totals.elements;
  out.work = totals.work;
  out.over_budget = totals.over_budget;
  if (!results) {
    out.error = results.error().message;
    return out;
  }
  out.results.assign(args.size(), {});
  for (Lanes &value : *results)
    for (size_t d = 0; d < value.size(); ++d)
      out.results[d].push_back(std::move(value[d]));
  out.ok = true;
  return out;
}

RunResult run(Module &module, const std::vector<Tensor> &args,
              const RunOptions &options) {
  DevicesRunResult devices = runOnDevices(module, {args}, options);
  RunResult out;
  out.ok = devices.ok;
  out.error = std::move(devices.error);
  out.checks = std::move(devices.checks);
  out.ops_run = devices.ops_run;
  out.elements = devices.elements;
  out.work = devices.work;
  out.over_budget = devices.over_budget;
  if (devices.ok)
    out.results = std::move(devices.results[0]);
  return out;
}

RunResult run(Module &module, const RunOptions &options) {
  return run(module, {}, options);
}

} // namespace shardlab::interpreter
