// shardlab-context-ring: context parallelism as JAX's ring attentions
// write it (Liu et al., "Ring Attention", 2023; MaxText's and Megatron's
// context parallelism): each device keeps its share of the queries and
// passes its keys and values round a ring of the devices of one mesh axis.
//
// The sequence through attention is not a sharding Shardy can propagate:
// a fused attention call needs its whole key sequence on each device (its
// sharding rule says need_replication), so with the sequence split
// propagation gathers the keys and every device computes the attention of
// the whole sequence. A ring is a program; this pass writes it, before
// propagation, into the module whose data the plan splits by sequence.
//
// Rules, for the mesh axis A of C devices (option `axis`):
//
// 1. A fused attention call is a stablehlo.custom_call to cuDNN's fused
//    attention (`__cudnn$fmha...`, as jax.nn.dot_product_attention with
//    implementation="cudnn" lowers) in JAX's BTNH layout: operands q
//    [B, T, N, D], k and v [B, S, Nkv, D]; the forward returns o [B, T,
//    N, D] and the softmax statistics [B, N, T] (f32); the backward
//    (`...Backward`) reads q, k, v, the statistics, dO and o and returns
//    dq, dk and dv. Further results (cuDNN's workspace) must be unused. T
//    and S must divide by C.
// 2. Each call becomes an sdy.manual_computation over A alone: every
//    operand and result has its sequence dim (T or S) on A, closed, and
//    every other dim open, so that the other axes (the batch's, the
//    heads') still propagate through it. The body sees T/C queries and
//    S/C keys.
// 3. The body calls the attention C times, once per key chunk: after each
//    call but the last, k and v go to the next device along A by
//    collective_permute (device i sends to i+1 mod C, the other axes
//    fixed). The call keeps its backend_config, mask included: a causal
//    call on each chunk costs half a chunk, so the C calls cost what a
//    load-balanced causal ring costs, T S / (2 C) per device (its values
//    are not causal attention's: each chunk masks by its own positions;
//    without a mask the ring computes what the call does, which the
//    interpreter checks, tests/unit/context_ring_test.cpp). Its sharding
//    rule, where it has one, takes the local factor sizes.
// 4. Forward: the chunks' outputs merge by their statistics: with l and
//    l' the log-sum-exps, m = max(l, l'), a = exp(l - m), b = exp(l' - m),
//    the statistics become m + log(a + b) and the output o a/(a+b) + o'
//    b/(a+b) (the weights broadcast over D).
// 5. Backward: with the whole step's statistics and o, each chunk's dq
//    adds up here; its dk and dv travel with k and v and add up on the way
//    (each device adds its chunk's share), and one permute more takes them
//    home: 2 (C - 1) + 2 permutes of a key chunk's size.
//
// Worked example (A = "context" of 2 devices; q, k, v 8x512x8x32 bf16):
//
//   %o:3 = stablehlo.custom_call @"__cudnn$fmhaSoftmax"(%q, %k, %v) ...
//
// becomes
//
//   %r:2 = sdy.manual_computation(%q, %k, %v)
//       in_shardings=[<@mesh, [{?}, {"context"}, {?}, {?}]>, ...x3]
//       out_shardings=[<@mesh, [{?}, {"context"}, {?}, {?}]>,
//                      <@mesh, [{?}, {?}, {"context"}]>]
//       manual_axes={"context"} (%lq: 8x256x8x32, %lk, %lv) {
//     %a:3 = custom_call @"__cudnn$fmhaSoftmax"(%lq, %lk, %lv) ...
//     %k1 = collective_permute %lk [[0, 1], [1, 0]]  (%v1 the same)
//     %b:3 = custom_call @"__cudnn$fmhaSoftmax"(%lq, %k1, %v1) ...
//     ... merge %a#0, %a#1 with %b#0, %b#1 (rule 4) ...
//     sdy.return %o, %l
//   }
#include "passes/strategy/strategy_passes.h"

#include "ir/op_properties.h"
#include "passes/export/local_builder.h"
#include "passes/pass_utils.h"
#include "rules/registry.h"
#include "rules/rules_internal.h"
#include "sharding/device_layout.h"

namespace shardlab {
namespace {

// Where each operand and result of a fused attention call keeps its
// sequence dim (rule 1): the statistics [B, N, T] at 2, the others at 1.
struct CallLayout {
  bool backward = false;
  std::vector<size_t> operand_seq, result_seq;
  size_t results = 0; ///< the results that carry values (not the workspace)
};

std::optional<CallLayout> layoutOf(Operation &op) {
  CallLayout l;
  l.backward = isFusedAttentionBackward(op);
  if (l.backward) {
    l.operand_seq = {1, 1, 1, 2, 1, 1};
    l.result_seq = {1, 1, 1};
  } else {
    l.operand_seq = {1, 1, 1};
    l.result_seq = {1, 2};
  }
  l.results = l.result_seq.size();
  if (op.numOperands() != l.operand_seq.size() || op.numResults() < l.results)
    return std::nullopt;
  auto rankIs = [](Value *v, size_t seq) {
    return v->type->isRankedTensor() && v->type->rank() == (seq == 2 ? 3 : 4);
  };
  for (size_t i = 0; i < op.numOperands(); ++i)
    if (!rankIs(op.operand(i), l.operand_seq[i]))
      return std::nullopt;
  for (size_t i = 0; i < l.results; ++i)
    if (!rankIs(op.result(i), l.result_seq[i]))
      return std::nullopt;
  return l;
}

class ContextRing {
public:
  ContextRing(Module &module, std::string axis, DiagnosticEngine &diags)
      : module_(module), ctx_(module.ctx()), axis_(std::move(axis)),
        diags_(diags) {}

  bool run() {
    std::vector<Operation *> calls;
    for (Operation *op : opsNamed(module_, "stablehlo.custom_call"))
      if (isFusedAttention(*op))
        calls.push_back(op);
    if (calls.empty())
      return markUnchanged(module_);
    if (!findMesh(*calls.front()))
      return false;
    next_channel_ = firstFreeChannelId(module_);
    for (Operation *call : calls)
      if (!rewrite(*call))
        return false;
    return true;
  }

private:
  bool fail(Operation &at, const std::string &message) {
    diags_.error(at.loc, "shardlab-context-ring: " + message);
    return false;
  }

  // The mesh with the axis; an error at `call` when there is none.
  bool findMesh(Operation &call) {
    for (Operation &op : module_.body()) {
      const Attr *mesh = op.is("sdy.mesh") ? op.attrs.get("mesh") : nullptr;
      const Attr *name = op.attrs.get("sym_name");
      if (mesh && mesh->kind == AttrKind::Mesh && name &&
          mesh->mesh().axisIndex(axis_) >= 0) {
        mesh_ = mesh->mesh();
        mesh_name_ = name->str();
        size_ = *mesh_.axisSize(axis_);
        return true;
      }
    }
    return fail(call, "no mesh has an axis \"" + axis_ +
                          "\" (the pass's axis option) to run the ring over");
  }

  // Rule 2: the sequence dim on the axis, closed; the others open.
  TensorSharding sequenceOnAxis(size_t rank, size_t seq) const {
    TensorSharding s;
    s.mesh.symbol = mesh_name_;
    s.dims.assign(rank, DimSharding{{}, /*closed=*/false, std::nullopt});
    s.dims[seq] = DimSharding{{AxisRef{axis_, std::nullopt}}, true, {}};
    return s;
  }

  Type localType(Type global, size_t seq) const {
    std::vector<int64_t> shape = global->shape;
    shape[seq] /= size_;
    return ctx_.types.rankedTensor(shape, global->element);
  }

  bool rewrite(Operation &call) {
    std::optional<CallLayout> layout = layoutOf(call);
    if (!layout)
      return fail(call, "a fused attention call not in the BTNH layout "
                        "(q, k, v [B, T, N, D], statistics [B, N, T])");
    for (size_t i = layout->results; i < call.numResults(); ++i)
      if (call.result(i)->hasUses())
        return fail(call, "the fused attention's workspace result is used");
    std::vector<Type> local_in, local_out, global_out;
    std::vector<TensorSharding> in, out;
    for (size_t i = 0; i < call.numOperands(); ++i) {
      Type t = call.operand(i)->type;
      const size_t seq = layout->operand_seq[i];
      if (t->shape[seq] % size_ != 0)
        return fail(call, "its sequence of " + std::to_string(t->shape[seq]) +
                              " does not divide into " + std::to_string(size_) +
                              " chunks");
      local_in.push_back(localType(t, seq));
      in.push_back(sequenceOnAxis(t->rank(), seq));
    }
    for (size_t i = 0; i < layout->results; ++i) {
      Type t = call.result(i)->type;
      global_out.push_back(t);
      local_out.push_back(localType(t, layout->result_seq[i]));
      out.push_back(sequenceOnAxis(t->rank(), layout->result_seq[i]));
    }
    std::vector<Value *> operands;
    for (size_t i = 0; i < call.numOperands(); ++i)
      operands.push_back(call.operand(i));
    auto mc =
        makeOp(ctx_, "sdy.manual_computation", operands, global_out, call.loc);
    mc->attrs.set(ctx_.intern("in_shardings"),
                  ctx_.attrs.shardingPerValue(std::move(in)));
    mc->attrs.set(ctx_.intern("out_shardings"),
                  ctx_.attrs.shardingPerValue(std::move(out)));
    mc->attrs.set(ctx_.intern("manual_axes"),
                  ctx_.attrs.make(Attr{AttrKind::ManualAxes,
                                       std::vector<std::string>{axis_},
                                       nullptr,
                                       {}}));
    Block &body = mc->addRegion().addBlock();
    std::vector<Value *> args;
    for (Type t : local_in)
      args.push_back(body.addArgument(t, call.loc));
    Operation *ret =
        body.push_back(makeOp(ctx_, "sdy.return", {}, {}, call.loc));
    const std::vector<Value *> results =
        layout->backward ? backwardRing(call, *ret, args, local_out)
                         : forwardRing(call, *ret, args, local_out);
    ret->setOperands(results);
    Operation *ring = call.parentBlock()->insertBefore(&call, std::move(mc));
    for (size_t i = 0; i < layout->results; ++i)
      call.result(i)->replaceAllUsesWith(ring->result(i));
    eraseOp(call);
    return true;
  }

  // One call of the attention on local operands `args` (rule 3).
  std::vector<Value *> localCall(Operation &call, Operation &before,
                                 const std::vector<Value *> &args,
                                 const std::vector<Type> &local_out) {
    std::vector<Type> types = local_out;
    for (size_t i = local_out.size(); i < call.numResults(); ++i)
      types.push_back(call.result(i)->type);
    auto copy = makeOp(ctx_, "stablehlo.custom_call", args, types, call.loc);
    for (const NamedAttr &a : call.attrs.entries())
      copy->attrs.set(a.name, a.value);
    if (const Attr *rule = call.attrs.get(kShardingRuleAttr);
        rule && rule->kind == AttrKind::OpShardingRule)
      copy->attrs.set(ctx_.intern(kShardingRuleAttr),
                      ctx_.attrs.rule(localRule(rule->rule(), args, types)));
    Operation *made =
        before.parentBlock()->insertBefore(&before, std::move(copy));
    std::vector<Value *> out;
    for (size_t i = 0; i < local_out.size(); ++i)
      out.push_back(made->result(i));
    return out;
  }

  // The rule with each factor sized by the local shapes it maps.
  static OpShardingRule localRule(OpShardingRule rule,
                                  const std::vector<Value *> &args,
                                  const std::vector<Type> &types) {
    auto resize = [&](const OpShardingRule::TensorMapping &mapping, Type type) {
      for (size_t d = 0; d < mapping.size() && d < size_t(type->rank()); ++d)
        if (mapping[d].size() == 1)
          rule.factor_sizes[size_t(mapping[d][0])] = type->shape[d];
    };
    for (size_t i = 0; i < rule.operands.size() && i < args.size(); ++i)
      resize(rule.operands[i], args[i]->type);
    for (size_t i = 0; i < rule.results.size() && i < types.size(); ++i)
      resize(rule.results[i], types[i]);
    return rule;
  }

  // Each device's value to the next along the axis (rule 3).
  Value *toNext(Operation &before, Value *value) {
    LocalBuilder b(ctx_, before);
    if (!ring_pairs_)
      ring_pairs_ = b.denseMatrixAttr(
          pairsAlongAxis(mesh_, mesh_.axisIndex(axis_), 1, /*wrap=*/true));
    return b
        .create("stablehlo.collective_permute", {value}, {value->type},
                {{"channel_handle", channelHandleAttr(ctx_, next_channel_++)},
                 {"source_target_pairs", ring_pairs_}})
        ->result(0);
  }

  Value *unary(Operation &before, std::string_view name, Value *x) {
    LocalBuilder b(ctx_, before);
    return b.create(name, {x}, {x->type})->result(0);
  }

  // Rule 4.
  std::vector<Value *> forwardRing(Operation &call, Operation &ret,
                                   const std::vector<Value *> &args,
                                   const std::vector<Type> &local_out) {
    std::vector<Value *> kv = {args[1], args[2]};
    std::vector<Value *> acc = localCall(call, ret, args, local_out);
    LocalBuilder b(ctx_, ret);
    for (int64_t c = 1; c < size_; ++c) {
      kv = {toNext(ret, kv[0]), toNext(ret, kv[1])};
      std::vector<Value *> part =
          localCall(call, ret, {args[0], kv[0], kv[1]}, local_out);
      Value *m = b.binary("stablehlo.maximum", acc[1], part[1]);
      Value *wa = unary(ret, "stablehlo.exponential",
                        b.binary("stablehlo.subtract", acc[1], m));
      Value *wb = unary(ret, "stablehlo.exponential",
                        b.binary("stablehlo.subtract", part[1], m));
      Value *total = b.binary("stablehlo.add", wa, wb);
      Type o = acc[0]->type;
      auto weight = [&](Value *w) {
        Value *share = b.binary("stablehlo.divide", w, total);
        Value *narrow = b.convert(share, o->element);
        return b.broadcast(narrow, o, {0, 2, 1});
      };
      // One statement each: the ops come out in this order on every
      // compiler.
      Value *mine = b.binary("stablehlo.multiply", acc[0], weight(wa));
      Value *theirs = b.binary("stablehlo.multiply", part[0], weight(wb));
      Value *out = b.binary("stablehlo.add", mine, theirs);
      Value *log_total = unary(ret, "stablehlo.log", total);
      Value *stats = b.binary("stablehlo.add", m, log_total);
      acc = {out, stats};
    }
    return acc;
  }

  // Rule 5.
  std::vector<Value *> backwardRing(Operation &call, Operation &ret,
                                    const std::vector<Value *> &args,
                                    const std::vector<Type> &local_out) {
    std::vector<Value *> chunk = args;
    std::vector<Value *> acc = localCall(call, ret, chunk, local_out);
    LocalBuilder b(ctx_, ret);
    for (int64_t c = 1; c < size_; ++c) {
      chunk[1] = toNext(ret, chunk[1]);
      chunk[2] = toNext(ret, chunk[2]);
      acc[1] = toNext(ret, acc[1]);
      acc[2] = toNext(ret, acc[2]);
      std::vector<Value *> part = localCall(call, ret, chunk, local_out);
      for (size_t i = 0; i < 3; ++i)
        acc[i] = b.binary("stablehlo.add", acc[i], part[i]);
    }
    if (size_ > 1) {
      acc[1] = toNext(ret, acc[1]);
      acc[2] = toNext(ret, acc[2]);
    }
    return acc;
  }

  Module &module_;
  Context &ctx_;
  std::string axis_;
  DiagnosticEngine &diags_;
  Mesh mesh_;
  std::string mesh_name_;
  int64_t size_ = 1;
  int64_t next_channel_ = 1;
  const Attr *ring_pairs_ = nullptr; ///< the source_target_pairs, made once
};

} // namespace

bool contextRingPass(Module &module, const PassOptions &options,
                     DiagnosticEngine &diags) {
  return ContextRing(module, options.text("axis"), diags).run();
}

} // namespace shardlab
