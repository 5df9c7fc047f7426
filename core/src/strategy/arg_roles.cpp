// Roles of the entry function's arguments (see arg_roles.h).
#include "strategy/arg_roles.h"

#include "ir/op_properties.h"
#include "passes/pass_utils.h"
#include "passes/strategy/argument_trace.h"
#include "passes/strategy/layer_loops.h"

#include "rules/rules_internal.h"
#include "rules/stablehlo_attrs.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"
#include "strategy/optimizer_state.h"
#include "strategy/plan.h"

#include <algorithm>
#include <unordered_map>

namespace shardlab::strategy {
namespace {

using rules::shapeOf;

using Trace = ArgumentTrace;
using Tracer = ArgumentTracer;

std::string positionText(const Operation &op) {
  return std::to_string(op.loc.line) + ":" + std::to_string(op.loc.col);
}

// The argument dims among `dims` with size > 1, outermost first.
std::vector<int64_t> splittable(std::vector<int64_t> dims,
                                const std::vector<int64_t> &shape) {
  std::erase_if(dims, [&](int64_t d) {
    return d < 0 || d >= int64_t(shape.size()) || shape[size_t(d)] <= 1;
  });
  std::sort(dims.begin(), dims.end());
  return dims;
}

/// The weight's (operand 1's) contracting dims of a matmul-like op: a
/// dot_general without batching dims, or a convolution (the kernel's input
/// feature); nullopt for any other op. Operand 0 is its input.
std::optional<std::vector<int64_t>> weightContractingDims(Operation &op) {
  if (op.is("stablehlo.dot_general") && op.numOperands() == 2) {
    const Attr *attr = rules::findAttr(op, "dot_dimension_numbers");
    auto dims = attr ? rules::dotDims(*attr) : std::nullopt;
    if (!dims || !dims->lhs_batching.empty())
      return std::nullopt;
    return dims->rhs_contracting;
  }
  if (op.is("stablehlo.convolution") && op.numOperands() == 2) {
    const Attr *attr = rules::findAttr(op, "dimension_numbers");
    auto dims = attr && attr->kind == AttrKind::Opaque
                    ? rules::parseConvDims(attr->text)
                    : std::nullopt;
    if (!dims)
      return std::nullopt;
    return std::vector<int64_t>{dims->kernel_input_feature};
  }
  return std::nullopt;
}

/// The dims operand 1 of a dot_general contracts (batched or not).
std::vector<int64_t> rhsContractingDims(Operation &op) {
  const Attr *attr = rules::findAttr(op, "dot_dimension_numbers");
  auto dims = attr ? rules::dotDims(*attr) : std::nullopt;
  return dims ? dims->rhs_contracting : std::vector<int64_t>{};
}

/// The weight's (operand 1's) batching dims of a dot_general that has
/// them, when its input is not an argument itself: a mixture of experts'
/// expert matmul; nullopt for any other op.
std::optional<std::vector<int64_t>> weightBatchingDims(Operation &op) {
  if (!op.is("stablehlo.dot_general") || op.numOperands() != 2)
    return std::nullopt;
  const Attr *attr = rules::findAttr(op, "dot_dimension_numbers");
  auto dims = attr ? rules::dotDims(*attr) : std::nullopt;
  if (!dims || dims->rhs_batching.empty())
    return std::nullopt;
  return dims->rhs_batching;
}

enum class Parallel { None, Column, Row };

/// Which Megatron split the matmul producing a value used, following
/// elementwise ops back through their first operand.
class ProducerKinds {
public:
  explicit ProducerKinds(const std::unordered_map<Operation *, Parallel> &ops)
      : ops_(ops) {}

  Parallel of(Value *value, int depth = 0) {
    for (; value && !value->isBlockArgument() && depth < kMaxTraceSteps;
         ++depth) {
      Operation &op = *value->defining_op;
      if (auto known = ops_.find(&op); known != ops_.end())
        return known->second;
      if (op.is("stablehlo.dot_general")) {
        // Attention's batched matmuls: split like their inputs' heads.
        for (size_t i = 0; i < op.numOperands(); ++i)
          if (of(op.operand(i), depth + 1) == Parallel::Column)
            return Parallel::Column;
        return Parallel::None;
      }
      if (op.numOperands() == 0)
        return Parallel::None;
      value = op.operand(0);
    }
    return Parallel::None;
  }

private:
  const std::unordered_map<Operation *, Parallel> &ops_;
};

/// An argument's first use as a matmul weight, in argument dims.
struct WeightUse {
  Operation *op = nullptr;
  std::vector<int64_t> contracting, others;
  Parallel parallel = Parallel::None;
};

/// Seeds and weights from the matmuls and gathers (rule 1).
struct Evidence {
  std::vector<bool> seed;
  std::vector<std::string> seed_reason;
  std::vector<WeightUse> weight_use; ///< per argument
  /// Per argument: its dims an expert matmul batches over (empty: none).
  std::vector<std::vector<int64_t>> expert_dims;
};

Evidence collectEvidence(Module &module, Operation &entry, size_t num_args) {
  Evidence e{std::vector<bool>(num_args, false),
             std::vector<std::string>(num_args),
             std::vector<WeightUse>(num_args),
             std::vector<std::vector<int64_t>>(num_args)};
  Tracer tracer(module, entry);
  std::unordered_map<Operation *, Parallel> op_kinds;
  ProducerKinds producers(op_kinds);
  // The matmul `op` reading `weight`: its Megatron split (column unless its
  // input comes from a column-parallel one), and the weight's first use
  // (its `contracting` dims, the others but `skipped` ones).
  auto record = [&](Operation &op, const Trace &weight,
                    const std::vector<int64_t> &contracting,
                    const std::vector<int64_t> &skipped) {
    Parallel kind = producers.of(op.operand(0)) == Parallel::Column
                        ? Parallel::Row
                        : Parallel::Column;
    op_kinds[&op] = kind;
    WeightUse &first = e.weight_use[size_t(weight.arg)];
    if (first.op)
      return;
    first.op = &op;
    first.parallel = kind;
    for (size_t d = 0; d < weight.dims.size(); ++d) {
      if (std::count(skipped.begin(), skipped.end(), int64_t(d)))
        continue;
      (std::count(contracting.begin(), contracting.end(), int64_t(d))
           ? first.contracting
           : first.others)
          .push_back(weight.dims[d]);
    }
  };
  walk(module.op(), [&](Operation &op) {
    if (op.is("stablehlo.gather") && op.numOperands() == 2) {
      Trace indices = tracer.trace(op.operand(1));
      if (indices.arg >= 0 && !e.seed[size_t(indices.arg)]) {
        e.seed[size_t(indices.arg)] = true;
        e.seed_reason[size_t(indices.arg)] =
            "indices of the gather at " + positionText(op);
      }
      return;
    }
    if (std::optional<std::vector<int64_t>> batching = weightBatchingDims(op)) {
      // Attention's batched matmuls read two activations; an expert matmul
      // reads a weight (an argument) with the tokens routed to it.
      Trace weight = tracer.trace(op.operand(1));
      if (weight.arg >= 0 && tracer.trace(op.operand(0)).arg < 0 &&
          e.expert_dims[size_t(weight.arg)].empty()) {
        for (int64_t d : *batching)
          if (d >= 0 && size_t(d) < weight.dims.size() &&
              weight.dims[size_t(d)] >= 0)
            e.expert_dims[size_t(weight.arg)].push_back(weight.dims[size_t(d)]);
        // Each expert's matmul splits as Megatron's does (the expert dim
        // aside): column-parallel first, row-parallel after.
        record(op, weight, rhsContractingDims(op), *batching);
      }
      return;
    }
    std::optional<std::vector<int64_t>> contracting = weightContractingDims(op);
    if (!contracting)
      return;
    Trace input = tracer.trace(op.operand(0));
    Trace weight = tracer.trace(op.operand(1));
    if (input.arg >= 0 && weight.arg >= 0 && !e.seed[size_t(input.arg)]) {
      e.seed[size_t(input.arg)] = true;
      e.seed_reason[size_t(input.arg)] = "input of the " +
                                         std::string(op.name.substr(10)) +
                                         " at " + positionText(op);
    }
    if (weight.arg >= 0)
      record(op, weight, *contracting, {});
  });
  return e;
}

/// The dimension of a data argument that holds its batch: the first that
/// no `dynamic_slice` takes one index of at a time (at a computed start),
/// of size > 1 unless a later one is (a batch of one sequence). A loop
/// over micro-batches slices its leading dimension so (tokens [M, b, s]:
/// the batch is b; with b = 1 still b, the sequence after it, which only
/// SP and CP split).
int64_t batchDimOf(Operation &entry, Value *arg) {
  const std::vector<int64_t> shape = shapeOf(arg);
  std::vector<bool> indexed(shape.size(), false);
  walk(entry, [&](Operation &op) {
    if (!op.is("stablehlo.dynamic_slice") || op.numOperands() == 0 ||
        op.operand(0) != arg)
      return;
    const Attr *sizes = op.attrs.get("slice_sizes");
    if (!sizes)
      return;
    // One index at a time, at a computed start (the loop's counter; a
    // constant start takes a fixed slice).
    const std::vector<int64_t> &size = sizes->ints();
    for (size_t d = 0; d < size.size() && d < shape.size(); ++d) {
      Value *start = d + 1 < op.numOperands() ? op.operand(d + 1) : nullptr;
      const bool constant = start && start->defining_op &&
                            start->defining_op->is("stablehlo.constant");
      indexed[d] = indexed[d] || (size[d] == 1 && !constant);
    }
  });
  int64_t first = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (indexed[d])
      continue;
    if (shape[d] > 1)
      return first >= 0 ? first : int64_t(d);
    if (first < 0)
      first = int64_t(d);
  }
  return 0;
}

/// Rule 2: which arguments the batch reaches, and in which dimension.
Result<std::vector<int64_t>> probeBatch(const Module &loaded,
                                        const std::vector<bool> &seed) {
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = copyModule(loaded);
  Operation *entry = module->mainFunc();
  Plan probe;
  probe.mesh = {MeshAxis{"probe", 2}};
  Block &body = entry->region(0).front();
  probe.args.resize(body.numArguments());
  for (size_t i = 0; i < body.numArguments(); ++i) {
    probe.args[i].resize(shapeOf(body.argument(i)).size());
    if (seed[i] && !probe.args[i].empty())
      probe.args[i][size_t(batchDimOf(*entry, body.argument(i)))] = {"probe"};
  }
  if (Status applied = applyPlan(*module, *entry, probe); !applied)
    return applied.error();
  Result<PassPipeline> pipeline = buildNamedPipeline("pipeline");
  if (!pipeline || !runPassPipeline(*module, *pipeline, diags))
    return makeError("propagation failed");
  std::vector<int64_t> batch(body.numArguments(), -1);
  for (size_t i = 0; i < body.numArguments(); ++i)
    if (const TensorSharding *s = getSharding(body.argument(i)))
      for (size_t d = 0; d < s->dims.size() && batch[i] < 0; ++d)
        for (const AxisRef &axis : s->dims[d].axes)
          if (axis.name == "probe")
            batch[i] = int64_t(d);
  return batch;
}

/// Optimizer state (Adam's moments, a gradient accumulator) is updated
/// elementwise with its weight: sharded any other way, every update
/// reshards it (all-to-alls and permutes, the state gathered). Optimizer
/// state takes the Megatron and expert dims of the first weight of its
/// shape, so every candidate splits it as it splits that weight.
void shardLikeTheirWeights(std::vector<ArgAnalysis> &args) {
  for (ArgAnalysis &state : args) {
    if (!state.optimizer_state)
      continue;
    for (const ArgAnalysis &weight : args)
      if (&weight != &state && weight.info.role == ArgRole::Parameter &&
          weight.info.shape == state.info.shape &&
          !(weight.row_dims.empty() && weight.column_dims.empty() &&
            weight.expert_dims.empty())) {
        state.row_dims = weight.row_dims;
        state.column_dims = weight.column_dims;
        state.row_parallel = weight.row_parallel;
        state.expert_dims = weight.expert_dims;
        state.info.reason = "optimizer state, split like " + weight.info.name +
                            " (its shape; no matmul depends on it)";
        break;
      }
  }
}

// The layer loops a pipeline would split, from the global module (trip
// counts and stacked shapes are those of the per-device program).
LayerStack layerStackOf(Operation &entry) {
  const LayerLoops loops = findLayerLoops(entry);
  LayerStack stack{loops.layers, loops.trips, loops.micro_batches, loops.error};
  if (stack.error.empty() && !loops.micro_batch_loop)
    stack.error = loops.no_micro_batches + ", which a pipeline needs";
  return stack;
}

} // namespace

std::string_view toString(ArgRole role) {
  switch (role) {
  case ArgRole::Data:
    return "data";
  case ArgRole::Parameter:
    return "parameter";
  case ArgRole::Scalar:
    return "scalar";
  }
  return "?";
}

Result<ModuleAnalysis> analyzeArguments(std::string_view text) {
  DiagnosticEngine diags;
  LoadOptions load;
  load.import_gspmd = true;
  LoadedModule loaded = loadModule(text, diags, load);
  if (!loaded.module)
    return makeError(std::string("the module does not ") +
                     (loaded.failed_stage == "parse"    ? "parse"
                      : loaded.failed_stage == "verify" ? "verify"
                                                        : "import"));
  std::shared_ptr<const Module> parsed = std::move(loaded.module);
  std::unique_ptr<Module> analysed = copyModule(*parsed);
  Module &module = *analysed;
  Operation *entry = module.mainFunc();
  if (!entry || entry->numRegions() == 0 || entry->region(0).empty())
    return makeError("the module has no entry function");
  Block &body = entry->region(0).front();
  const size_t n = body.numArguments();
  Evidence evidence = collectEvidence(module, *entry, n);
  const std::vector<bool> no_matmul = reachesNoMatmul(module, *entry);
  bool any_seed = std::find(evidence.seed.begin(), evidence.seed.end(), true) !=
                  evidence.seed.end();
  std::vector<int64_t> batch(n, -1);
  if (any_seed) {
    Result<std::vector<int64_t>> probed = probeBatch(*parsed, evidence.seed);
    if (probed)
      batch = *probed;
    for (size_t i = 0; i < n; ++i)
      if (evidence.seed[i] && batch[i] < 0)
        batch[i] = batchDimOf(*entry, body.argument(i));
  }
  ModuleAnalysis result;
  result.loaded = parsed;
  for (Operation &op : module.body())
    if (op.is("sdy.mesh")) {
      result.mesh_devices = op.attrs.get("mesh")->mesh().totalSize();
      break;
    }
  std::vector<ArgAnalysis> &out = result.args;
  out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    ArgAnalysis &a = out[i];
    a.info.index = i;
    a.info.name = writtenArgumentName(module, *entry, text, i);
    a.info.shape = shapeOf(body.argument(i));
    if (a.info.shape.empty()) {
      a.info.role = ArgRole::Scalar;
      a.info.reason = "a scalar";
    } else if (!any_seed) {
      a.info.role = ArgRole::Data;
      a.batch_dim = 0;
      a.info.reason = "no matmul reads two arguments: every argument is data";
    } else if (batch[i] >= 0) {
      a.info.role = ArgRole::Data;
      a.batch_dim = batch[i];
      a.info.reason = evidence.seed[i] ? evidence.seed_reason[i]
                                       : "the batch reaches it (dimension " +
                                             std::to_string(batch[i]) + ")";
    } else {
      a.info.role = ArgRole::Parameter;
      a.expert_dims = splittable(evidence.expert_dims[i], a.info.shape);
      const WeightUse &use = evidence.weight_use[i];
      if (use.op) {
        a.row_dims = splittable(use.contracting, a.info.shape);
        a.column_dims = splittable(use.others, a.info.shape);
        a.row_parallel = use.parallel == Parallel::Row;
        a.info.reason =
            (a.expert_dims.empty()
                 ? "weight"
                 : "expert weight (dimension " +
                       std::to_string(a.expert_dims[0]) +
                       " batched with the tokens routed to it)") +
            " of the " + std::string(use.op->name.substr(10)) + " at " +
            positionText(*use.op) +
            (a.row_parallel ? " (row-parallel)" : " (column-parallel)");
      } else if (!a.expert_dims.empty()) {
        a.info.reason = "expert weight (dimension " +
                        std::to_string(a.expert_dims[0]) +
                        " batched with the tokens routed to it)";
      } else if (no_matmul[i]) {
        a.optimizer_state = true;
        a.info.reason = "optimizer state (no matmul depends on it)";
      } else {
        a.info.reason = "the batch does not reach it";
      }
    }
  }
  shardLikeTheirWeights(out);
  std::vector<bool> weights(n);
  for (size_t i = 0; i < n; ++i)
    weights[i] =
        out[i].info.role == ArgRole::Parameter && !out[i].optimizer_state;
  result.updates = updatedArguments(module, *entry, weights);
  for (size_t i = 0; i < n; ++i) {
    ArgAnalysis &a = out[i];
    const size_t rank = a.info.shape.size();
    const bool token_ids = rank == 2 && body.argument(i)->type->element &&
                           body.argument(i)->type->element->isIntegerElement();
    if (a.info.role == ArgRole::Data && a.batch_dim >= 0 &&
        size_t(a.batch_dim) + 1 < rank && (rank >= 3 || token_ids))
      a.sequence_dim = a.batch_dim + 1;
  }
  result.layers = layerStackOf(*entry);
  walk(*entry, [&](Operation &op) {
    result.fused_attention = result.fused_attention || isFusedAttention(op);
  });
  return result;
}

} // namespace shardlab::strategy
