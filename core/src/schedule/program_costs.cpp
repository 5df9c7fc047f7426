// Op costs for the per-device program: XLA's approximate estimator, or the
// cost model (GEMM table, fusion roofline, collective table inside a node,
// S-curve across nodes), each with an explanation.
#include "ir/op_properties.h"
#include "passes/pass_utils.h"
#include "program_internal.h"

#include <set>
#include <string_view>

namespace shardlab::schedule::detail {
namespace {

// XLA's ApproximateLatencyEstimator costs. Its kLowCost (1) is for
// instructions that are not fusions; every compute op here stands for the
// fusion XLA would form around it, so only the medium and high costs apply.
constexpr double kMediumCost = 1000, kHighCost = 5000;

bool isMatmulLike(const Operation &op) {
  return op.is("stablehlo.dot_general") || op.is("stablehlo.dot") ||
         op.is("stablehlo.convolution");
}

cost::CollectiveOp toCostOp(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllGather:
    return cost::CollectiveOp::AllGather;
  case CollectiveKind::ReduceScatter:
    return cost::CollectiveOp::ReduceScatter;
  case CollectiveKind::AllToAll:
    return cost::CollectiveOp::AllToAll;
  case CollectiveKind::CollectivePermute:
    return cost::CollectiveOp::CollectivePermute;
  default:
    return cost::CollectiveOp::AllReduce;
  }
}

std::vector<int64_t> dimsOf(const Attr *dims, const char *key) {
  const Attr *a = dims ? dims->get(key) : nullptr;
  return a && a->kind == AttrKind::DenseArray ? a->ints()
                                              : std::vector<int64_t>{};
}

} // namespace

bool isNopOp(const Operation &op) {
  static const std::set<std::string_view> kNops = {
      "stablehlo.constant",
      "stablehlo.reshape",
      "stablehlo.bitcast_convert",
      "stablehlo.get_tuple_element",
      "stablehlo.tuple",
      "stablehlo.optimization_barrier",
      "func.return",
      "stablehlo.return",
      "sdy.return",
      "sdy.sharding_constraint",
      "sdy.reshard",
      "sdy.propagation_barrier",
      "sdy.data_flow_edge",
      "sdy.sharding_group",
      "sdy.sharded_to_unreduced",
      "sdy.replicated_to_unreduced",
      "sdy.constant"};
  return kNops.count(op.name) > 0;
}

bool isFreeCustomCall(const Operation &op) {
  const std::string_view target = customCallTarget(op);
  return target == "Sharding" || target == "SPMDFullToShardShape" ||
         target == "SPMDShardToFullShape" || target == "X64Combine" ||
         target == "X64SplitLow" || target == "X64SplitHigh" ||
         target == "annotate_device_placement" ||
         target.rfind("xla.sdy.", 0) == 0;
}

bool isGemmCustomCall(const Operation &op) {
  const std::string_view target = customCallTarget(op);
  return target == "__cublas$gemm" || target == "__cublas$lt$matmul" ||
         target == "__cublas$lt$matmul$f8";
}

bool isCheckCustomCall(const Operation &op) {
  return customCallTarget(op).rfind("check.", 0) == 0;
}

} // namespace shardlab::schedule::detail

namespace shardlab::schedule {

Result<std::shared_ptr<const CostTables>>
makeCostTables(const ProgramOptions &options) {
  if (options.hardware.hbm_bytes_per_s <= 0)
    return makeError("the real estimator needs a hardware preset");
  auto tables = std::make_shared<CostTables>();
  const cost::PerfTable *table = options.table;
  if (!table) {
    tables->owned_table =
        std::make_shared<cost::PerfTable>(cost::presetTable(options.hardware));
    table = tables->owned_table.get();
  }
  cost::CollectiveInterpolatorOptions copts;
  copts.devices_per_partition = options.sol.gpus_per_node;
  auto coll = cost::CollectiveInterpolator::create(*table, copts);
  if (coll.ok())
    tables->collectives = std::make_shared<cost::CollectiveInterpolator>(*coll);
  // Per dtype key, no dtype fallback (a dot of a dtype the table lacks takes
  // the roofline, said so), never below the kernel-launch floor.
  cost::MatmulOptions gemm_options;
  gemm_options.min_time_us = options.hardware.kernel_launch_us;
  auto gemm = cost::MatmulInterpolator::create(*table, gemm_options);
  if (gemm.ok())
    tables->gemms = std::make_shared<cost::MatmulInterpolator>(*gemm);
  for (const cost::GemmEntry &g : table->gemms) {
    const std::array<int64_t, 4> p = {g.b, g.m, g.k, g.n};
    auto [it, fresh] = tables->gemm_bounds.try_emplace(
        cost::gemmDtypeKey(g), detail::GemmBounds{p, p});
    for (size_t i = 0; i < 4 && !fresh; ++i) {
      it->second.lo[i] = std::min(it->second.lo[i], p[i]);
      it->second.hi[i] = std::max(it->second.hi[i], p[i]);
    }
  }
  return std::shared_ptr<const CostTables>(std::move(tables));
}

} // namespace shardlab::schedule

namespace shardlab::schedule::detail {

Result<Coster> Coster::create(const ProgramOptions &options) {
  Coster c;
  c.options_ = options;
  c.options_.cost_tables = nullptr; // held once, in tables_
  if (c.approximate())
    return c;
  if (options.cost_tables) {
    c.tables_ = options.cost_tables;
    return c;
  }
  Result<std::shared_ptr<const CostTables>> made = makeCostTables(options);
  if (!made)
    return made.error();
  c.tables_ = *made;
  return c;
}

OpCost Coster::roofline(double flops, int64_t read, int64_t written,
                        const std::string &dtype,
                        const std::string &why) const {
  cost::FusionQuery q;
  q.flops = flops;
  q.bytes_read = read;
  q.bytes_written = written;
  q.dtype = dtype.empty() ? "f32" : dtype;
  auto est = cost::fusionRooflineEstimate(options_.hardware, q);
  if (!est.ok())
    return {0, "roofline failed: " + est.error().message};
  if (!explain())
    return {est->time_us, {}};
  return {est->time_us, why + cost::toText(*est)};
}

OpCost Coster::dot(const Module &module, Operation &op) const {
  const LocalTensor lhs = localTensor(op.operand(0));
  const LocalTensor rhs = localTensor(op.operand(1));
  const LocalTensor out = localTensor(op.result(0));
  const Attr *dims = op.attrs.get("dot_dimension_numbers");
  std::vector<int64_t> lc = dimsOf(dims, "lhs_contracting_dimensions"),
                       rc = dimsOf(dims, "rhs_contracting_dimensions");
  if (!dims && lhs.shape.size() >= 1 && rhs.shape.size() >= 1) {
    lc = {int64_t(lhs.shape.size()) - 1};
    rc = {0};
  }
  auto gd = cost::extractGemmDims(lhs.shape, rhs.shape,
                                  dimsOf(dims, "lhs_batching_dimensions"), lc,
                                  dimsOf(dims, "rhs_batching_dimensions"), rc);
  if (!gd.ok())
    return roofline(
        double(out.elements), lhs.bytes + rhs.bytes, out.bytes, out.dtype,
        "dot dims unknown (" + gd.error().message + "); roofline on " +
            std::to_string(lhs.bytes + rhs.bytes) + " B\n");
  const double flops = 2.0 * double(gd->b * gd->m * gd->k * gd->n);
  std::string why = "no GEMM table";
  if (tables_ && tables_->gemms) {
    Result<OpCost> c = tableGemm(*gd, lhs, rhs, out);
    if (c.ok())
      return *c;
    why = c.error().message;
  }
  // The peak is the operands' (tensor cores), not the result's.
  OpCost c = roofline(flops, lhs.bytes + rhs.bytes, out.bytes, lhs.dtype,
                      why + "; roofline\n");
  c.untabled = lhs.dtype + "x" + rhs.dtype + "->" + out.dtype;
  return c;
}

Result<OpCost> Coster::tableGemm(const cost::GemmDims &dims,
                                 const LocalTensor &lhs, const LocalTensor &rhs,
                                 const LocalTensor &out) const {
  cost::GemmQuery q{dims, lhs.dtype, rhs.dtype, out.dtype};
  auto est = tables_->gemms->estimateTime(q);
  std::string substituted;
  int64_t extra_bytes = 0;
  if (!est.ok() && widensHalfOperands(lhs.dtype, rhs.dtype, out.dtype)) {
    // 16-bit operands, f32 result (JAX's preferred_element_type, the weight
    // gradient written into an f32 buffer): the tensor cores run at the
    // operands' rate; the wider result only writes more bytes.
    q.out_dtype = lhs.dtype;
    est = tables_->gemms->estimateTime(q);
    extra_bytes = out.bytes - 2 * out.elements; // f32 over 16-bit
    substituted = lhs.dtype + "x" + rhs.dtype + "->" + out.dtype + " at " +
                  lhs.dtype + "x" + rhs.dtype + "->" + lhs.dtype + "'s rates";
  }
  if (!est.ok())
    return est.error();
  const double extra_us =
      double(extra_bytes) / options_.hardware.hbm_bytes_per_s * 1e6;
  OpCost c{est->time_us + extra_us,
           explain() ? cost::toText(*est) : std::string(),
           {}};
  c.extrapolated = outsideGrid(dims, lhs.dtype, rhs.dtype, q.out_dtype);
  c.substituted = substituted;
  if (!c.extrapolated.empty() && explain())
    c.explanation += "extrapolated: " + c.extrapolated +
                     " (the rate of the measured grid's edge)\n";
  if (!substituted.empty() && explain())
    c.explanation += "no " + lhs.dtype + "x" + rhs.dtype + "->" + out.dtype +
                     " in the table: " + substituted +
                     ", + the wider result's " + std::to_string(extra_bytes) +
                     " B more written at HBM bandwidth (" +
                     std::to_string(extra_us) + " us)\n";
  return c;
}

bool Coster::widensHalfOperands(const std::string &lhs, const std::string &rhs,
                                const std::string &out) {
  return lhs == rhs && (lhs == "bf16" || lhs == "f16") && out == "f32";
}

std::string Coster::outsideGrid(const cost::GemmDims &dims,
                                const std::string &lhs, const std::string &rhs,
                                const std::string &out) const {
  cost::GemmEntry probe;
  probe.lhs_dtype = lhs;
  probe.rhs_dtype = rhs;
  probe.out_dtype = out;
  const auto it = tables_->gemm_bounds.find(cost::gemmDtypeKey(probe));
  if (it == tables_->gemm_bounds.end())
    return "";
  const std::array<int64_t, 4> p = {dims.b, dims.m, dims.k, dims.n};
  const char *names[] = {"b", "m", "k", "n"};
  std::string out_of_grid;
  for (size_t i = 0; i < 4; ++i) {
    const bool above = p[i] > it->second.hi[i], below = p[i] < it->second.lo[i];
    if (!above && !below)
      continue;
    out_of_grid += (out_of_grid.empty() ? "" : ", ") + std::string(names[i]) +
                   "=" + std::to_string(p[i]) +
                   (above ? " above " : " below ") +
                   std::to_string(above ? it->second.hi[i] : it->second.lo[i]);
  }
  return out_of_grid;
}

// cuDNN's fused attention as JAX calls it on GPU (`__cudnn$fmhaSoftmax`,
// `...Backward`), operands in JAX's BTNH layout: q [B, T, N, D], k and v
// [B, S, N_kv, D]. Its time is that of the GEMMs it fuses, priced by the
// GEMM table as batched GEMMs of B*N: forward Q.K^T (T x S x D) and P.V
// (T x D x S); backward five of them (Q.K^T again, dV, dP, dQ, dK), 2.5x.
// A causal mask (mask_type CAUSAL in its backend_config) skips half. The
// softmax between the GEMMs (an exponential, the running max and sum and
// conversions per score, on the CUDA cores and special-function units) has
// no price of its own: how much of it hides under the tensor cores' work
// differs by kernel and architecture. A measured factor
// (ProgramOptions::fused_attention) scales the GEMMs' price to the call's
// measured time; without one the softmax is unpriced and the report says so.
// Example: forward GEMMs priced 1.00 ms, factor 1.3: the call takes 1.30 ms.
OpCost Coster::flashAttention(const Module &module, Operation &op) const {
  const LocalTensor q = localTensor(op.numOperands() ? op.operand(0) : nullptr);
  const LocalTensor k =
      localTensor(op.numOperands() > 1 ? op.operand(1) : nullptr);
  if (q.shape.size() != 4 || k.shape.size() != 4)
    return {};
  const int64_t b = q.shape[0] * q.shape[2], t = q.shape[1], s = k.shape[1],
                d = q.shape[3];
  const bool backward = isFusedAttentionBackward(op);
  const bool causal = isCausalAttention(op);
  const double share = (backward ? 2.5 : 1.0) * (causal ? 0.5 : 1.0);
  double gemm_us = 0;
  std::string extrapolated;
  for (const cost::GemmDims &dims :
       {cost::GemmDims{b, t, d, s}, cost::GemmDims{b, t, s, d}}) {
    if (extrapolated.empty())
      extrapolated = outsideGrid(dims, q.dtype, q.dtype, q.dtype);
    double us = 0;
    if (tables_ && tables_->gemms)
      if (auto est =
              tables_->gemms->estimateTime({dims, q.dtype, q.dtype, q.dtype}))
        us = est->time_us;
    if (!(us > 0)) {
      const double flops = 2.0 * double(dims.b) * double(dims.m) *
                           double(dims.k) * double(dims.n);
      us = roofline(flops, 0, 0, q.dtype, "").cost_us;
    }
    gemm_us += us;
  }
  int64_t read = 0, written = 0;
  for (size_t i = 0; i < op.numOperands(); ++i)
    read += localTensor(op.operand(i)).bytes;
  for (size_t i = 0; i < op.numResults(); ++i)
    written += localTensor(op.result(i)).bytes;
  const OpCost memory = roofline(0, read, written, q.dtype, "");
  const auto &measured = options_.fused_attention;
  const double factor = !measured ? 1.0
                                  : (backward ? measured->backward_slowdown
                                              : measured->forward_slowdown);
  const double us = std::max(gemm_us * share * factor, memory.cost_us);
  OpCost cost{us, {}, extrapolated};
  char scores[64];
  std::snprintf(scores, sizeof scores, "softmax of %.3g scores",
                double(b) * double(t) * double(s) * (causal ? 0.5 : 1.0));
  cost.attention_softmax = scores;
  if (!explain())
    return cost;
  char text[320];
  std::snprintf(text, sizeof text,
                "flash attention (cuDNN): batched GEMMs of %lld x (%lld x "
                "%lld x %lld)%s%s; GEMM table %.3f us x %.2f; memory %.3f us\n",
                (long long)b, (long long)t, (long long)s, (long long)d,
                backward ? ", backward (5 GEMMs)" : ", forward (2 GEMMs)",
                causal ? ", causal (half)" : "", gemm_us, share,
                memory.cost_us);
  cost.explanation = text;
  if (!measured) {
    cost.explanation += "softmax between the GEMMs not priced\n";
    return cost;
  }
  std::snprintf(text, sizeof text,
                "x %.3g the GEMMs' price for the whole call (softmax "
                "included), from ",
                factor);
  cost.explanation += text + measured->source + "\n";
  return cost;
}

OpCost Coster::compute(const Module &module, Operation &op) const {
  if (!approximate() && isFusedAttention(op))
    if (OpCost c = flashAttention(module, op); c.cost_us > 0)
      return c;
  if (approximate()) {
    if (isMatmulLike(op))
      return {kHighCost,
              "approximate: kHighCost (convolution / output fusion)"};
    return {kMediumCost, "approximate: kMediumCost (loop fusion)"};
  }
  if (op.is("stablehlo.dot_general") || op.is("stablehlo.dot") ||
      (isGemmCustomCall(op) && op.numOperands() >= 2 && op.numResults() >= 1))
    return dot(module, op);
  int64_t read = 0;
  for (size_t i = 0; i < op.numOperands(); ++i)
    read += localTensor(op.operand(i)).bytes;
  LocalTensor out;
  int64_t written = 0;
  for (size_t i = 0; i < op.numResults(); ++i) {
    out = localTensor(op.result(i));
    written += out.bytes;
  }
  double flops = double(out.elements);
  if (op.is("stablehlo.convolution") && op.numOperands() > 1) {
    const LocalTensor rhs = localTensor(op.operand(1));
    const int64_t features = rhs.shape.empty() ? 1 : rhs.shape.back();
    flops = 2.0 * double(out.elements) * double(rhs.elements) /
            double(features > 0 ? features : 1);
  }
  return roofline(flops, read, written, out.dtype, "fusion roofline\n");
}

OpCost Coster::kernel(const Module &module,
                      const fusion::Kernel &kernel) const {
  const std::string what =
      explain() ? fusion::describe(kernel) + " (" +
                      std::to_string(kernel.members.size()) + " ops)\n"
                : std::string();
  if (kernel.kind == fusion::KernelKind::Gemm) {
    for (Operation *m : kernel.members)
      if (m->is("stablehlo.dot_general") || m->is("stablehlo.dot") ||
          (isGemmCustomCall(*m) && m->numOperands() >= 2 &&
           m->numResults() >= 1)) {
        OpCost c = dot(module, *m);
        if (explain())
          c.explanation = what +
                          "epilogue and operand transposes are part of the "
                          "cuBLAS call\n" +
                          c.explanation;
        return c;
      }
  }
  const LocalTensor out =
      localTensor(kernel.root->numResults() ? kernel.root->result(0) : nullptr);
  const std::string why =
      explain() ? what + "fusion roofline on its boundary: reads " +
                      std::to_string(kernel.bytes_read) + " B, writes " +
                      std::to_string(kernel.bytes_written) + " B\n"
                : std::string();
  return roofline(kernel.flops, kernel.bytes_read, kernel.bytes_written,
                  out.dtype, why);
}

OpCost Coster::collective(const CollectiveCall &call,
                          CollectiveInfo &info) const {
  info.kind = call.kind;
  info.groups =
      std::make_shared<const std::vector<std::vector<int64_t>>>(call.groups);
  info.bytes = cost::bytesTransferred(toCostOp(call.kind),
                                      {call.operand_bytes, call.output_bytes});
  if (approximate()) {
    info.time_us = kHighCost;
    info.model = "approximate";
    return {kHighCost, "approximate: kHighLatency for an async pair"};
  }
  return realCollective(call, info);
}

OpCost Coster::realCollective(const CollectiveCall &call,
                              CollectiveInfo &info) const {
  const cost::CollectiveOp op = toCostOp(call.kind);
  const cost::ReplicaGroups groups =
      cost::ReplicaGroups::fromLists(call.groups);
  const int64_t partition = options_.sol.gpus_per_node;
  bool inter = false;
  if (call.kind == CollectiveKind::CollectivePermute) {
    auto type = cost::classifyPermute(call.pairs, partition);
    inter = type.ok() && cost::isInterPartition(*type);
    info.comm_type = type.ok() ? std::string(cost::toText(*type)) : "?";
  } else {
    auto type = cost::classifyCommType(groups, partition);
    inter = type.ok() && *type != cost::CommType::SinglePartition;
    info.comm_type = type.ok() ? std::string(cost::toText(*type)) : "?";
  }
  shardlab::Result<cost::Estimate> est = shardlab::makeError("no table");
  if (inter) {
    cost::DcnQuery q{
        op,
        info.bytes,
        cost::hbmBytesAccessed(op, {call.operand_bytes, call.output_bytes},
                               groups.group_size()),
        groups,
        call.pairs,
        0,
        /*hosts_from_device_ids=*/true};
    est = cost::dcnCollectiveEstimate(options_.sol,
                                      options_.hardware.hbm_bytes_per_s, q);
  } else if (tables_ && tables_->collectives) {
    est = tables_->collectives->estimateTime(
        {op, call.dtype, info.bytes, groups, call.pairs});
  }
  if (!est.ok() && !inter)
    est = cost::intraNodeCollectiveEstimate(options_.hardware, op, info.bytes,
                                            groups.group_size());
  if (!est.ok()) {
    info.time_us = kHighCost;
    info.model = "fallback";
    return {kHighCost,
            "no model costs it (" + est.error().message +
                "): XLA's fallback, kHighLatency",
            {},
            est.error().message};
  }
  info.time_us = est->time_us;
  info.model = est->explanation.model;
  return {est->time_us, explain() ? cost::toText(*est) : std::string(),
          est->explanation.extrapolated};
}

} // namespace shardlab::schedule::detail
