// One call for the playground and the scheduler: module text in; the module
// after propagation, the module after explicit collectives, the sharding of
// every op result, and the collectives with the ops that required them out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab {

/// One sdy collective of the lowered module.
struct CollectiveReport {
  std::string kind;                   ///< "all_gather", "all_to_all", ...
  std::vector<std::string> mesh_axes; ///< axes it communicates over
  int64_t bytes_per_device = 0;       ///< operand bytes on one device
  std::vector<std::vector<int64_t>> device_groups;
  std::string required_by; ///< the op the reshard was for
  uint32_t line = 0;       ///< source line of that op
};

/// The sharding of one op result (printed `#sdy.sharding` text).
struct ValueShardingReport {
  std::string op;
  uint32_t line = 0;
  uint32_t result = 0;
  std::string sharding;
};

struct ShardingReport {
  bool ok = false;
  std::string error;
  /// The propagation used: "sdy-propagation-pipeline".
  std::string propagation;
  std::string propagated_module;
  std::string explicit_module;
  std::vector<ValueShardingReport> shardings;
  std::vector<CollectiveReport> collectives;
};

/// Runs propagation, then the export pipeline with explicit collectives.
ShardingReport shardingReport(std::string_view module_text);
/// The report as JSON (the same field names).
std::string shardingReportJson(const ShardingReport &report);

} // namespace shardlab
