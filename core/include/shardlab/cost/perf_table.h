// Performance tables (`*.shardlab.json`): measured or analytical collective
// throughputs and GEMM FLOP rates with the metadata saying where they came
// from. One versioned schema (schemas/perf_table.schema.json) for both kinds;
// loading validates every field and reports which entry and field is wrong.
#pragma once

#include "shardlab/cost/device_groups.h"
#include "shardlab/support/result.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::cost {

inline constexpr const char *kPerfTableFormat = "shardlab-perf-table";
inline constexpr int kPerfTableVersion = 1;
/// Files (and table texts) larger than this are refused before they are
/// read or parsed: 64 MiB is ~360k entries, and loading one that large
/// peaks near 0.85 GB (bench/RESULTS.md); XLA's own tables are ~116 KB.
inline constexpr int64_t kMaxPerfTableFileBytes = int64_t{64} << 20;

/// The error for a table text or file of `size` bytes over the limit.
Error tableTooLargeError(const std::string &what, int64_t size);

/// Statistics of repeated time measurements, in microseconds.
struct TimeStats {
  double median_us = 0;
  std::optional<double> min_us, max_us, mean_us, stddev_us;
  int64_t samples = 0;
};

/// One collective measurement: op, transfer scheme, size and throughput.
struct CollectiveEntry {
  std::string op; // all-reduce, all-gather, reduce-scatter, all-to-all,
                  // collective-permute
  std::optional<CommType> comm_type;       // non-permute ops
  std::optional<PermuteType> permute_type; // collective-permute
  std::string dtype;                       // "" when unknown
  int64_t bytes = 0;                       // XLA's bytes_transferred convention
  int64_t devices_per_group = 0;
  int64_t num_groups = 1;
  int64_t nodes = 1;
  std::optional<ReplicaGroups> replica_groups;
  std::optional<TimeStats> time;
  double throughput_bytes_per_s = 0;
};

/// One GEMM measurement: dims, dtypes and the achieved FLOP rate.
struct GemmEntry {
  int64_t b = 1, m = 0, n = 0, k = 0;
  std::string lhs_dtype, rhs_dtype, out_dtype;
  std::optional<TimeStats> time;
  double flop_per_s = 0;
};

/// Where a table came from.
struct TableMetadata {
  std::string source; // "measured" or "analytical"
  std::string device_name, sm_version, topology;
  int64_t gpu_count = 0;
  int64_t partition_size = 0; // GPUs per NVLink domain; 0 = unknown
  std::map<std::string, std::string> software; // driver, cuda, nccl, cublas
  std::map<std::string, double> clocks_mhz;
  std::string date, collector_name, collector_version, description;
  std::vector<std::string> collector_args;
};

/// How much a kernel and a collective slow each other while both run, as
/// measured on the table's machine (bench/gpu/overlap.py): a kernel takes
/// `compute_slowdown` times its time beside a transfer, a transfer
/// `comm_slowdown` times its time beside a kernel; each at least 1.
struct OverlapEntry {
  double compute_slowdown = 1;
  double comm_slowdown = 1;
  std::string source; ///< how it was measured
};

/// What a fused attention call (cuDNN's flash attention) takes on the
/// table's machine over the price of the GEMMs it fuses at the table's
/// rates: the softmax between them (an exponential per score on the
/// special-function units) and whatever the kernel loses or gains against
/// cuBLAS. bench/gpu/ingest.py measures it from programs.py's attention
/// programs. Example: a forward priced at 1.00 ms as its two GEMMs and
/// measured at 1.30 ms has `forward_slowdown` 1.3.
struct FusedAttentionEntry {
  double forward_slowdown = 1;
  double backward_slowdown = 1;
  std::string source; ///< how it was measured
};

struct PerfTable {
  TableMetadata metadata;
  std::vector<CollectiveEntry> collectives;
  std::vector<GemmEntry> gemms;
  std::optional<OverlapEntry> overlap;
  std::optional<FusedAttentionEntry> fused_attention;
};

/// The dtype key XLA uses for GEMM tables: "<lhs>x<rhs>-><out>".
std::string gemmDtypeKey(const GemmEntry &e);
/// Splits "<lhs>x<rhs>-><out>" into its three dtypes.
Result<std::vector<std::string>> splitGemmDtypeKey(std::string_view key);
/// Bytes per element of an XLA primitive type name (lowercase), 0 if unknown.
int64_t dtypeBytes(std::string_view dtype);

/// Parses and validates table JSON text.
Result<PerfTable> parsePerfTable(std::string_view json_text);
/// Reads, parses and validates a table file.
Result<PerfTable> loadPerfTable(const std::string &path);
/// Validates a table built in memory (same checks as the loader).
Result<bool> validatePerfTable(const PerfTable &table);
/// Serialises a table to JSON text (2-space indent).
std::string serializePerfTable(const PerfTable &table);
/// Writes a table atomically: a temporary file next to `path`, then rename.
Result<bool> writePerfTable(const PerfTable &table, const std::string &path);
/// Checks that the GEMM entries of one dtype key form a full grid over the
/// distinct b, m, n, k values (required by weighted-average lookup).
Result<bool> checkFullGemmGrid(const PerfTable &table,
                               std::string_view dtype_key);

} // namespace shardlab::cost
