// Internal pieces of buildProgram (program*.cpp only): local tensors and
// the op coster that wraps the cost model.
#pragma once

#include "shardlab/cost/gemm_model.h"
#include "shardlab/schedule/program.h"

#include <array>
#include <map>
#include <memory>
#include <optional>

namespace shardlab::schedule::detail {

/// A value as one device sees it.
struct LocalTensor {
  std::vector<int64_t> shape;
  std::string dtype;
  int64_t bytes = 0;
  int64_t elements = 0;
};
LocalTensor localTensor(Value *value);

struct OpCost {
  double cost_us = 0;
  std::string explanation;
  /// Set when a GEMM's shape lies outside the measured grid of its dtype
  /// (`m=8192 above 4096`): its rate is the grid edge's; or a collective's
  /// message is larger than any in its table: its throughput is the
  /// largest's.
  std::string extrapolated;
  /// Set when no model could cost a collective (why): it then takes the
  /// time XLA's SolLatencyEstimator falls back to, its wrapped
  /// estimator's kHighLatency.
  std::string failed;
  /// Set when a GEMM's dtype key is not in the table and it was costed at
  /// its operands' key (`bf16xbf16->f32 at bf16xbf16->bf16's rates`).
  std::string substituted;
  /// Set when the GEMM table could not cost a GEMM (its dtype key, and
  /// why): it was costed by the roofline at the datasheet peak.
  std::string untabled;
  /// Set on a fused attention call: its softmax between the GEMMs
  /// (`softmax of 1.34e+08 scores`), priced by a measured factor or not at
  /// all (ProgramOptions::fused_attention).
  std::string attention_softmax;
  /// Nothing above is set: the tables priced the op as it is.
  bool pricedAsIs() const {
    return extrapolated.empty() && substituted.empty() && untabled.empty() &&
           attention_softmax.empty();
  }
};

/// The measured GEMM grid of one dtype key: smallest and largest b, m, k, n.
struct GemmBounds {
  std::array<int64_t, 4> lo{}, hi{};
};

} // namespace shardlab::schedule::detail

namespace shardlab::schedule {

/// What makeCostTables makes (shardlab/schedule/program.h): the analytical
/// table when none was given, and the interpolators on the table.
struct CostTables {
  std::shared_ptr<const cost::PerfTable> owned_table;
  std::shared_ptr<const cost::CollectiveInterpolator> collectives;
  std::shared_ptr<const cost::MatmulInterpolator> gemms;
  std::map<std::string, detail::GemmBounds> gemm_bounds;
};

} // namespace shardlab::schedule

namespace shardlab::schedule::detail {

/// A collective as the coster needs it.
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::None;
  std::vector<std::vector<int64_t>> groups;
  std::vector<std::pair<int64_t, int64_t>> pairs; // permute only
  std::string dtype;
  int64_t operand_bytes = 0, output_bytes = 0;
};

/// Costs ops in the chosen estimator mode; holds the interpolators.
class Coster {
public:
  static Result<Coster> create(const ProgramOptions &options);
  bool approximate() const {
    return options_.estimator == EstimatorMode::Approximate;
  }
  double plainLatency() const { return approximate() ? 1.0 : 0.0; }
  /// Whether costs carry their explanation text (ProgramOptions::explain).
  bool explain() const { return options_.explain; }
  OpCost compute(const Module &module, Operation &op) const;
  /// A kernel of several fused ops: a GEMM (and its epilogue) by the GEMM
  /// table, any other by the roofline on its boundary bytes.
  OpCost kernel(const Module &module, const fusion::Kernel &kernel) const;
  /// Transfer time plus what went into it (filled into `info`).
  OpCost collective(const CollectiveCall &call, CollectiveInfo &info) const;

private:
  OpCost roofline(double flops, int64_t read, int64_t written,
                  const std::string &dtype, const std::string &why) const;
  OpCost dot(const Module &module, Operation &op) const;
  /// A GEMM from the table (its operands' key where the table lacks a
  /// 16-bit GEMM's f32 result), or why the table cannot cost it.
  Result<OpCost> tableGemm(const cost::GemmDims &dims, const LocalTensor &lhs,
                           const LocalTensor &rhs,
                           const LocalTensor &out) const;
  /// bf16 x bf16 -> f32 (or f16): a GEMM the tensor cores run at its
  /// operands' rate, whatever its result type.
  static bool widensHalfOperands(const std::string &lhs, const std::string &rhs,
                                 const std::string &out);
  OpCost flashAttention(const Module &module, Operation &op) const;
  /// "" when the GEMM lies in its dtype's measured grid, else which of
  /// b, m, k, n lie outside it.
  std::string outsideGrid(const cost::GemmDims &dims, const std::string &lhs,
                          const std::string &rhs, const std::string &out) const;
  OpCost realCollective(const CollectiveCall &call, CollectiveInfo &info) const;
  ProgramOptions options_;
  std::shared_ptr<const CostTables> tables_; // null in approximate mode
};

/// One assumption line per value (up to 10, then a count) whose sharding
/// does not divide a dimension: the per-device program pads it.
std::vector<std::string> paddingAssumptions(Module &module);

/// The assumption line for ops costed outside what a table measured (op ->
/// why: GEMMs outside the grid, collectives past the largest message),
/// `head` first, then the first three ops.
std::string
extrapolationLine(const std::string &head,
                  const std::map<std::string, std::string> &extrapolated);

bool isNopOp(const Operation &op);
/// The custom_call targets that only carry sharding or bookkeeping through
/// XLA (@Sharding, @SPMDFullToShardShape, @xla.sdy.*): free.
bool isFreeCustomCall(const Operation &op);
/// Targets whose kernels are GEMMs (cuBLAS / cuBLASLt calls in XLA dumps),
/// costed like a dot of their operands.
bool isGemmCustomCall(const Operation &op);
/// The StableHLO reference interpreter's assertions (`@check.expect_eq`,
/// `@check.expect_close`, ...), as StableHLO's test data writes them: a
/// comparison of their operands, costed by the fusion roofline.
bool isCheckCustomCall(const Operation &op);

/// A dense integer attribute: its tensor shape and row-major values.
struct DenseInts {
  std::vector<int64_t> shape;
  std::vector<int64_t> values;
};
/// nullopt unless `attr` is a dense<...> literal of integers (not hex).
std::optional<DenseInts> denseInts(const Attr *attr);
/// The kind of a stablehlo collective (kNone for other ops).
CollectiveKind stablehloCollectiveKind(const Operation &op);
/// What a stablehlo collective moves: groups from `replica_groups` (empty:
/// all `num_devices`), pairs from `source_target_pairs`, bytes from its
/// (per-device) types. nullopt for other ops.
std::optional<CollectiveCall> stablehloCollectiveCall(const Module &module,
                                                      Operation &op,
                                                      int64_t num_devices);
/// Highest device id named by a stablehlo collective's groups or pairs
/// (-1 when none): the device count of a module without a mesh.
int64_t maxStablehloDeviceId(Module &module);

} // namespace shardlab::schedule::detail
