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
#include "shardlab/support/result.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::cost {

enum class CollectiveOp {
  AllReduce,
  AllReduceStart,
  AllGather,
  AllGatherStart,
  ReduceScatter,
  AllToAll,
  CollectivePermute,
  CollectivePermuteStart,
  Send,
  Recv,
};
std::string_view toText(CollectiveOp op);
Result<CollectiveOp> parseCollectiveOp(std::string_view text);
/// all-reduce-start -> all-reduce, all-gather-start -> all-gather, ...
CollectiveOp asyncToSync(CollectiveOp op);
/// All-reduce(-start) and reduce-scatter accumulate (tables key on dtype).
bool requiresAccumulation(CollectiveOp op);
bool isPermute(CollectiveOp op);

/// Byte sizes of a collective's data operand and (non-tuple) result.
struct CollectiveShapes {
  int64_t operand_bytes = 0;
  int64_t output_bytes = 0;
};
/// XLA's bytes_transferred: output bytes (AR, AG, A2A), input bytes (RS),
/// operand bytes (permute, send/recv).
int64_t bytesTransferred(CollectiveOp op, const CollectiveShapes &s);
/// XLA's bytes_accessed (HBM traffic) for a group of `group_size` devices.
int64_t hbmBytesAccessed(CollectiveOp op, const CollectiveShapes &s,
                         int64_t group_size);

/// What the collective interpolator needs to know about one op.
struct CollectiveQuery {
  CollectiveOp op = CollectiveOp::AllReduce;
  std::string dtype;
  int64_t bytes = 0; // BytesTransferred
  ReplicaGroups groups;
  SourceTargetPairs pairs; // collective-permute only
};

enum class TableInterpolation {
  Nearest,  // user-supplied tables (XLA: EuclideanNNInterpolator)
  GridSnap, // default tables (XLA: EuclideanComplementInterpolator)
};

struct CollectiveInterpolatorOptions {
  int64_t devices_per_partition = 8; // GPUs per NVLink domain
  TableInterpolation interpolation = TableInterpolation::Nearest;
  SnapRule snap_rule = SnapRule::StoredCoordinate;
  EstimateMode mode = EstimateMode::Compatible;
};

/// Accurate-mode throughput over one (op, comm type) plane of (bytes,
/// devices) -> B/s points: per device count, the monotone log-throughput
/// curve over log(bytes), precomputed once; queries do not allocate
/// (unless `used` is given) and take O(log n).
class AccurateThroughputIndex {
public:
  struct Slice {
    int64_t devices = 0;
    double log_devices = 0;
    std::vector<int64_t> bytes; // ascending
    std::vector<double> log_bytes, log_tp;
  };
  static AccurateThroughputIndex
  build(const std::vector<std::pair<GridPoint<2>, double>> &points);
  bool empty() const { return slices_.empty(); }
  /// Interpolated throughput (B/s); 0 for an empty index or bytes <= 0.
  double throughput(int64_t bytes, int64_t devices,
                    std::vector<Neighbour> *used = nullptr) const;

private:
  std::vector<Slice> slices_; // ascending devices
};

class CollectiveInterpolator {
public:
  /// Builds the exact and fallback maps from a table's collective entries.
  static Result<CollectiveInterpolator>
  create(const PerfTable &table, const CollectiveInterpolatorOptions &opts);
  /// Estimated time; an error when no table key covers the query.
  Result<Estimate> estimateTime(const CollectiveQuery &query) const;

private:
  struct Exact;
  struct Fallback;

public:
  /// The table plane a query resolves to (exact key, else fallback key and
  /// group size): resolve once per collective, then TimeUs for any size.
  /// Points into this interpolator: valid while it lives (and across a
  /// move), not for a copy.
  struct Resolved {
    const Exact *exact = nullptr;
    const Fallback *fallback = nullptr;
    int64_t devices = 0;
    std::string key;
  };
  Result<Resolved> resolve(const CollectiveQuery &query) const;
  /// Time in us of `bytes` through a resolved query, without explanation;
  /// does not allocate (except for an error message). Same value as
  /// EstimateTime for a query with these bytes.
  Result<double> timeUs(const Resolved &resolved, int64_t bytes) const;

private:
  // max_bytes: the largest message measured. A nearest-neighbour query
  // beyond it is made at it: the same point XLA's raw-coordinate distance
  // picks, except past ~3 GB, where that distance overflows int64 and every
  // point ties (the first, often the smallest message, would win).
  struct Exact {
    std::optional<NearestNeighbourInterpolator<int64_t, 1>> nearest;
    std::optional<GridSnapInterpolator<int64_t, 1>> snap;
    int64_t max_bytes = 0;
  };
  struct Fallback {
    std::optional<NearestNeighbourInterpolator<int64_t, 2>> nearest;
    std::optional<GridSnapInterpolator<int64_t, 2>> snap;
    int64_t max_bytes = 0;
    std::vector<std::pair<GridPoint<2>, double>> points; // while building
    AccurateThroughputIndex accurate;                    // accurate mode
  };
  explicit CollectiveInterpolator(CollectiveInterpolatorOptions o)
      : options_(o) {}
  void addEntry(const CollectiveEntry &e, CollectiveOp op,
                const std::string *exact_key);
  Exact newExact() const;
  Fallback newFallback() const;
  Result<std::string> queryExactKey(const CollectiveQuery &q) const;
  Result<double> throughputOf(const Resolved &r, int64_t bytes,
                              std::vector<Neighbour> *used) const;

  CollectiveInterpolatorOptions options_;
  std::map<std::string, Exact> exact_;
  std::map<std::string, Fallback> fallback_;
};

/// Accurate-mode throughput: piecewise-linear in (log bytes, log devices)
/// over a (bytes, devices) -> B/s point set; saturating beyond the largest
/// size, constant time below the smallest; monotone non-decreasing in bytes.
/// Builds the index for one query (use AccurateThroughputIndex to reuse).
double
accurateThroughput(const std::vector<std::pair<GridPoint<2>, double>> &points,
                   int64_t bytes, int64_t devices,
                   std::vector<Neighbour> *used = nullptr);

} // namespace shardlab::cost
