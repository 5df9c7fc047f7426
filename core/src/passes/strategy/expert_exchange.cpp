// shardlab-expert-exchange: the sharding constraints a JAX mixture-of-
// experts layer writes around its experts (GShard, MaxText), so that the
// tokens go to their experts' devices and back by all-to-all.
//
// With the experts split over an axis and nothing else said, propagation
// carries that axis from the expert weights back through the dispatched
// tokens into the dispatch mask's expert dim, where the batch already holds
// it: the tokens are then gathered over the axis (every device sees every
// token of its group) instead of exchanged. A JAX program pins both sides
// of the exchange; this pass does the same where the module's arguments
// are sharded (before propagation).
//
// Rules, for the mesh axis A (option `axis`):
//
// 1. An expert matmul is a dot_general with batching dims whose rhs is a
//    view of an entry argument (argument_trace.h) whose sharding holds A on
//    the dim behind one of those batching dims (the expert dim E), and
//    whose lhs is not an argument's view (the routed tokens are computed;
//    a dispatch einsum reading the batch as written is not one). Its
//    result is on the expert side, E its dim of that batching dim; so is
//    whatever elementwise ops compute from expert-side values (same dims),
//    and the result of a dot_general batched over the E of an expert-side
//    operand (a weight's gradient: the tokens times the experts' output
//    gradient). These are the per-expert dots.
// 2. Into the experts: an operand of a per-expert dot that is neither on
//    the expert side nor a weight (the dispatched tokens, the gradient the
//    combine's transpose gives) is read through two constraints: its E
//    closed and replicated, then E on A; every other dim open. Between
//    them the partitioner moves A from the tokens' batch to E: an
//    all-to-all. The first keeps A off the dispatch mask.
// 3. Out of the experts: an expert-side operand of any other dot_general
//    (the combine, the dispatch's transpose: they contract E) is read
//    through E on A, then E closed and replicated: the all-to-all back.
//
// Worked example (8 tokens in 4 groups, 4 experts of capacity 2, A =
// "expert" of 2 devices, the batch over ["data", "expert"]):
//
//   %xe = dot_general %dispatch, %x, batching [0] x [0] ...  // [G4, E4, C2, H]
//   %h  = dot_general %xe, %w1, batching [1] x [0] ...       // %w1
//   [{"expert"}, {}, {}] %y  = dot_general %a, %w2, batching [0] x [0] ... //
//   [E4, G4, C2, H] %o  = dot_general %dispatch, %y, batching [0] x [1] ...
//
// %h reads %xe through [{?}, {}, {?}, {?}] then [{?}, {"expert"}, {?},
// {?}]; %o reads %y through [{"expert"}, {?}, {?}, {?}] then [{}, {?},
// {?}, {?}]. Without them the groups of %x are gathered over "expert".
#include "passes/strategy/argument_trace.h"
#include "passes/strategy/strategy_passes.h"

#include "ir/op_properties.h"
#include "passes/pass_utils.h"
#include "rules/rules_internal.h"
#include "rules/stablehlo_attrs.h"
#include "shardlab/ir/sharding_access.h"

#include <algorithm>
#include <unordered_map>

namespace shardlab {
namespace {

// The expert dim E on each operand and the result of a dot_general that
// works per expert (-1 on an operand that is an expert weight's view).
struct ExpertDims {
  int64_t operand[2] = {-1, -1};
  int64_t result = -1;
};

bool holdsAxis(const DimSharding &dim, const std::string &axis) {
  return std::any_of(dim.axes.begin(), dim.axes.end(),
                     [&](const AxisRef &a) { return a.name == axis; });
}

class Exchange {
public:
  Exchange(Module &module, Operation &entry, std::string axis)
      : module_(module), entry_(entry), tracer_(module, entry),
        axis_(std::move(axis)) {}

  // Finds the expert dots and the expert side (rule 1); false when there
  // are no expert matmuls.
  bool find() {
    bool any = false;
    walk(entry_, [&](Operation &op) {
      if (std::optional<ExpertDims> dims = expertMatmul(op)) {
        any = true;
        record(op, *dims);
      } else if (std::optional<ExpertDims> batched = perExpert(op)) {
        record(op, *batched);
      } else if (op.numResults() == 1 && isElementwise(op)) {
        for (size_t i = 0; i < op.numOperands(); ++i)
          if (auto e = side_.find(op.operand(i)); e != side_.end()) {
            side_[op.result(0)] = e->second;
            break;
          }
      }
    });
    return any;
  }

  // Rules 2 and 3.
  void constrain() {
    struct Read {
      Operation *op;
      size_t operand;
      int64_t expert_dim;
      bool to_experts;
    };
    std::vector<Read> reads;
    walk(entry_, [&](Operation &op) {
      if (!op.is("stablehlo.dot_general") || op.numOperands() != 2)
        return;
      auto dot = dots_.find(&op);
      for (size_t i = 0; i < 2; ++i) {
        if (dot != dots_.end()) {
          if (dot->second.operand[i] >= 0 && !side_.count(op.operand(i)))
            reads.push_back({&op, i, dot->second.operand[i], true});
        } else if (auto e = side_.find(op.operand(i)); e != side_.end()) {
          reads.push_back({&op, i, e->second, false});
        }
      }
    });
    for (const Read &r : reads)
      readThrough(*r.op, r.operand, r.expert_dim, r.to_experts);
  }

private:
  void record(Operation &op, const ExpertDims &dims) {
    dots_.emplace(&op, dims);
    side_[op.result(0)] = dims.result;
  }

  static std::optional<rules::DotDims> dotDims(Operation &op) {
    if (!op.is("stablehlo.dot_general") || op.numOperands() != 2)
      return std::nullopt;
    const Attr *attr = rules::findAttr(op, "dot_dimension_numbers");
    return attr ? rules::dotDims(*attr) : std::nullopt;
  }

  // An expert matmul: the routed tokens (computed) times an expert weight
  // (an argument's view with the axis on the batched expert dim).
  std::optional<ExpertDims> expertMatmul(Operation &op) {
    auto dims = dotDims(op);
    if (!dims || dims->rhs_batching.empty())
      return std::nullopt;
    // As the comparer reads roles (strategy/arg_roles.h): the tokens are
    // computed, the weight is an argument's view.
    ArgumentTrace weight = tracer_.trace(op.operand(1));
    if (weight.arg < 0 || tracer_.trace(op.operand(0)).arg >= 0)
      return std::nullopt;
    Block &body = entry_.region(0).front();
    const TensorSharding *sharding =
        getSharding(body.argument(size_t(weight.arg)));
    if (!sharding)
      return std::nullopt;
    for (size_t b = 0; b < dims->rhs_batching.size(); ++b) {
      const int64_t d = dims->rhs_batching[b];
      const int64_t arg_dim = d >= 0 && size_t(d) < weight.dims.size()
                                  ? weight.dims[size_t(d)]
                                  : -1;
      if (arg_dim >= 0 && size_t(arg_dim) < sharding->dims.size() &&
          holdsAxis(sharding->dims[size_t(arg_dim)], axis_)) {
        mesh_ = sharding->mesh;
        return ExpertDims{{dims->lhs_batching[b], -1}, int64_t(b)};
      }
    }
    return std::nullopt;
  }

  // A dot_general batched over the expert dim of an expert-side operand:
  // a weight's gradient (the tokens times the experts' output gradient).
  std::optional<ExpertDims> perExpert(Operation &op) const {
    auto dims = dotDims(op);
    if (!dims)
      return std::nullopt;
    for (size_t b = 0; b < dims->lhs_batching.size(); ++b) {
      const int64_t lhs = dims->lhs_batching[b], rhs = dims->rhs_batching[b];
      auto on = [&](size_t i, int64_t d) {
        auto e = side_.find(op.operand(i));
        return e != side_.end() && e->second == d;
      };
      if (on(0, lhs) || on(1, rhs))
        return ExpertDims{{lhs, rhs}, int64_t(b)};
    }
    return std::nullopt;
  }

  // `op` reads its operand `i` through two constraints: into the experts,
  // E replicated then on the axis; out of them, the other way round. Users
  // of one value in one block share them (both expert matmuls of a gated
  // MLP read the tokens of one exchange).
  void readThrough(Operation &op, size_t i, int64_t expert_dim,
                   bool to_experts) {
    Value *value = op.operand(i);
    auto &done = to_experts ? into_ : out_;
    if (auto seen = done.find(value);
        seen != done.end() &&
        seen->second->defining_op->parentBlock() == op.parentBlock()) {
      op.setOperand(i, seen->second);
      return;
    }
    const size_t rank = rules::shapeOf(value).size();
    if (expert_dim < 0 || size_t(expert_dim) >= rank)
      return;
    auto sharding = [&](bool on_axis) {
      TensorSharding s;
      s.mesh = mesh_;
      s.dims.assign(rank, DimSharding{{}, /*closed=*/false, std::nullopt});
      s.dims[size_t(expert_dim)].closed = true;
      if (on_axis)
        s.dims[size_t(expert_dim)].axes.push_back(AxisRef{axis_, std::nullopt});
      return s;
    };
    Value *first = constraintBefore(op, value, sharding(!to_experts));
    Value *second = constraintBefore(op, first, sharding(to_experts));
    done[value] = second;
    op.setOperand(i, second);
  }

  Value *constraintBefore(Operation &op, Value *value,
                          const TensorSharding &sharding) {
    Context &ctx = module_.ctx();
    auto c =
        makeOp(ctx, "sdy.sharding_constraint", {value}, {value->type}, op.loc);
    c->attrs.set(ctx.intern("sharding"), ctx.attrs.sharding(sharding));
    return op.parentBlock()->insertBefore(&op, std::move(c))->result(0);
  }

  Module &module_;
  Operation &entry_;
  ArgumentTracer tracer_;
  std::string axis_;
  MeshRef mesh_; ///< the expert weights' mesh
  std::unordered_map<Operation *, ExpertDims> dots_; ///< per expert
  std::unordered_map<Value *, int64_t> side_;        ///< expert side: E's dim
  /// A value's exchange, by direction: the second constraint's result.
  std::unordered_map<Value *, Value *> into_, out_;
};

} // namespace

bool expertExchangePass(Module &module, const PassOptions &options,
                        DiagnosticEngine &) {
  Operation *entry = module.mainFunc();
  if (!entry)
    return markUnchanged(module);
  Exchange exchange(module, *entry, options.text("axis"));
  if (!exchange.find())
    return markUnchanged(module);
  exchange.constrain();
  return true;
}

} // namespace shardlab
