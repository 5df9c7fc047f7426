// Collective ops, XLA's byte conventions for them, and the table-driven
// collective interpolator (XLA's CollectiveInterpolator): exact-key lookup
// by (op, replica groups, dtype) or permute type, then a 2-D fallback over
// (bytes, devices per group) keyed by (op, comm type); time = bytes /
// interpolated throughput. An opt-in accurate mode interpolates in log space.
#pragma once

#include "shardlab/cost/device_groups.h"
#include "shardlab/cost/estimate.h"
#include "shardlab/cost/interpolator.h"
#include "shardlab/cost/perf_table.h"
#include "shardlab/cost/result.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::cost {

enum class CollectiveOp {
  kAllReduce,
  kAllReduceStart,
  kAllGather,
  kAllGatherStart,
  kReduceScatter,
  kAllToAll,
  kCollectivePermute,
  kCollectivePermuteStart,
  kSend,
  kRecv,
};
std::string_view ToString(CollectiveOp op);
Result<CollectiveOp> ParseCollectiveOp(std::string_view text);
/// all-reduce-start -> all-reduce, all-gather-start -> all-gather, ...
CollectiveOp AsyncToSync(CollectiveOp op);
/// All-reduce(-start) and reduce-scatter accumulate (tables key on dtype).
bool RequiresAccumulation(CollectiveOp op);
bool IsPermute(CollectiveOp op);

/// Byte sizes of a collective's data operand and (non-tuple) result.
struct CollectiveShapes {
  int64_t operand_bytes = 0;
  int64_t output_bytes = 0;
};
/// XLA's bytes_transferred: output bytes (AR, AG, A2A), input bytes (RS),
/// operand bytes (permute, send/recv).
int64_t BytesTransferred(CollectiveOp op, const CollectiveShapes &s);
/// XLA's bytes_accessed (HBM traffic) for a group of `group_size` devices.
int64_t HbmBytesAccessed(CollectiveOp op, const CollectiveShapes &s,
                         int64_t group_size);

/// What the collective interpolator needs to know about one op.
struct CollectiveQuery {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::string dtype;
  int64_t bytes = 0; // BytesTransferred
  ReplicaGroups groups;
  SourceTargetPairs pairs; // collective-permute only
};

enum class TableInterpolation {
  kNearest,  // user-supplied tables (XLA: EuclideanNNInterpolator)
  kGridSnap, // default tables (XLA: EuclideanComplementInterpolator)
};

struct CollectiveInterpolatorOptions {
  int64_t devices_per_partition = 8; // GPUs per NVLink domain
  TableInterpolation interpolation = TableInterpolation::kNearest;
  SnapRule snap_rule = SnapRule::kStoredCoordinate;
  EstimateMode mode = EstimateMode::kCompatible;
};

class CollectiveInterpolator {
public:
  /// Builds the exact and fallback maps from a table's collective entries.
  static Result<CollectiveInterpolator>
  Create(const PerfTable &table, const CollectiveInterpolatorOptions &opts);
  /// Estimated time; an error when no table key covers the query.
  Result<Estimate> EstimateTime(const CollectiveQuery &query) const;

private:
  struct Exact {
    std::optional<NearestNeighbourInterpolator<int64_t, 1>> nearest;
    std::optional<GridSnapInterpolator<int64_t, 1>> snap;
  };
  struct Fallback {
    std::optional<NearestNeighbourInterpolator<int64_t, 2>> nearest;
    std::optional<GridSnapInterpolator<int64_t, 2>> snap;
    std::vector<std::pair<GridPoint<2>, double>> points; // accurate mode
  };
  explicit CollectiveInterpolator(CollectiveInterpolatorOptions o)
      : options_(o) {}
  void AddEntry(const CollectiveEntry &e, CollectiveOp op,
                const std::string *exact_key);
  Exact NewExact() const;
  Fallback NewFallback() const;
  Result<std::string> QueryExactKey(const CollectiveQuery &q) const;
  Result<Estimate> FromExact(const CollectiveQuery &q, const Exact &exact,
                             const std::string &key) const;
  Result<Estimate> FromFallback(const CollectiveQuery &q) const;

  CollectiveInterpolatorOptions options_;
  std::map<std::string, Exact> exact_;
  std::map<std::string, Fallback> fallback_;
};

/// Accurate-mode throughput: piecewise-linear in (log bytes, log devices)
/// over a (bytes, devices) -> B/s point set; saturating beyond the largest
/// size, constant time below the smallest; monotone non-decreasing in bytes.
double
AccurateThroughput(const std::vector<std::pair<GridPoint<2>, double>> &points,
                   int64_t bytes, int64_t devices,
                   std::vector<Neighbour> *used = nullptr);

} // namespace shardlab::cost
