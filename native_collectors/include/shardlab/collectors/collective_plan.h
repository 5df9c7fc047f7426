// The collective sweep: options (parsed from the command line), the device
// groups each point runs on, and the ordered list of points. Pure: no CUDA,
// so `--dry-run` and the unit tests use exactly what a real run measures.
#pragma once

#include "shardlab/collectors/bandwidth.h"
#include "shardlab/collectors/flags.h"
#include "shardlab/cost/device_groups.h"
#include "shardlab/cost/perf_table.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardlab::collectors {

/// Source -> target pattern of a collective-permute inside a group.
enum class PermutePattern {
  OneWay, // first half sends to second half
  Ring,   // i -> i+1 mod s
  Mutual, // pairwise exchange 2j <-> 2j+1
};

struct CollectiveOptions {
  int64_t min_bytes = 1024;
  int64_t max_bytes = int64_t{2} << 30;
  double step_factor = 2;
  int64_t iters = 20;
  int64_t warmup = 5;
  int64_t check = 1; // 0 = do not check results
  std::vector<std::string> dtypes = {"f32"};
  std::vector<CollOp> ops = {CollOp::AllReduce, CollOp::AllGather,
                             CollOp::ReduceScatter, CollOp::AllToAll,
                             CollOp::CollectivePermute};
  std::vector<int64_t> group_sizes = {2, 4, 8};
  /// Explicit replica-group specs ("[2,4]<=[8]", "{{0,4},{1,5}}", ...);
  /// empty = contiguous groups of each size in group_sizes, plus on several
  /// nodes the world group and XLA's [D,N]<=[N,D]T(1,0) (one GPU per node).
  std::vector<std::string> groups;
  std::vector<PermutePattern> permutes = {
      PermutePattern::OneWay, PermutePattern::Ring, PermutePattern::Mutual};
  int64_t ngpus = 0;          // GPUs driven by this process; 0 = all visible
  int64_t nodes = 1;          // --dry-run only: nodes of the planned job
  int64_t partition_size = 0; // GPUs per NVLink domain; 0 = GPUs per node
  std::string out = "collectives.shardlab.json";
  bool overwrite = false, dry_run = false, help = false, quiet = false;
  bool version = false;
};

/// Parses the collective collector's flags (see collectiveHelp()).
Result<CollectiveOptions>
parseCollectiveOptions(const std::vector<std::string> &args);
std::string collectiveHelp();

/// The ranks of a job: world size, ranks per node, NVLink partition size.
struct Topology {
  int64_t world = 1;
  int64_t ranks_per_node = 1;
  int64_t partition_size = 1;
};

/// One way to cut the world into equal groups; all groups run concurrently.
struct GroupSet {
  int64_t group_size = 0;
  cost::ReplicaGroups groups;
  std::vector<std::vector<int64_t>> lists; // expanded, ranks < world
  std::string text;                        // canonical spelling
};

/// The group specs used when CollectiveOptions::groups is empty.
std::vector<std::string> defaultGroupSpecs(const Topology &topo,
                                           const std::vector<int64_t> &sizes);
/// Parses and checks specs: groups of equal size >= 2, disjoint, ranks
/// below the world size; the same expanded groups are listed once.
Result<std::vector<GroupSet>>
parseGroupSets(const Topology &topo, const std::vector<std::string> &specs);

/// min, min*f, ... <= max, rounded to whole bytes, unique, ascending.
std::vector<int64_t> sizeSweep(int64_t min_bytes, int64_t max_bytes,
                               double factor);

/// Source -> target pairs (positions inside one group of `s`).
cost::SourceTargetPairs permutePairs(PermutePattern p, int64_t s);

/// One measurement: an op on a group set, dtype and size.
struct CollectivePoint {
  CollOp op = CollOp::AllReduce;
  std::string dtype;
  int64_t requested_bytes = 0;
  RankCounts counts;
  size_t group_set = 0; // index into CollectivePlan::group_sets
  std::optional<PermutePattern> permute;
  cost::SourceTargetPairs pairs; // in-group positions (permute only)
  std::optional<cost::CommType> comm_type;
  std::optional<cost::PermuteType> permute_type;
  std::string key; // identity shared with table entries (resume)
};

struct CollectivePlan {
  Topology topo;
  std::vector<GroupSet> group_sets;
  std::vector<CollectivePoint> points; // ordered by group set
  std::vector<std::string> notes;      // skipped combinations, and why
};

/// Enumerates the sweep for a job of `topo`.
Result<CollectivePlan> planCollectives(const CollectiveOptions &opts,
                                       const Topology &topo);
/// The point's table entry skeleton (op, kind, dtype, bytes, groups).
cost::CollectiveEntry entryFor(const CollectivePlan &plan,
                               const CollectivePoint &p);
/// Identity of an entry; equal for a point and the entry it produced.
std::string collectiveEntryKey(const cost::CollectiveEntry &e);
/// Human-readable plan (what --dry-run prints).
std::string formatCollectivePlan(const CollectivePlan &plan,
                                 const CollectiveOptions &opts);

/// Largest send and receive buffer (bytes) any point needs on one rank.
std::pair<int64_t, int64_t> maxBufferBytes(const CollectivePlan &plan);

/// Bytes of one element of a collective dtype (f32, bf16, f16, s32), 0 if
/// the collectors do not support it.
int64_t collectiveDtypeBytes(std::string_view dtype);

} // namespace shardlab::collectors
