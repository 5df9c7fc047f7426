// Importers for XLA's text-proto performance tables, so users can point
// shardlab at XLA's own files: DeviceHloInstructionProfiles (collective
// throughputs, default_collective_perf_table.txtpb or a collector's output)
// and GemmPerfTable (default_matmul_perf_table.txtpb). Both become PerfTable.
#pragma once

#include "shardlab/cost/perf_table.h"
#include "shardlab/support/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace shardlab::cost {

/// A protobuf text-format field: a scalar (`name: value`) or a message
/// (`name { ... }`). Scalars keep their text (strings unquoted/unescaped).
struct TextProtoField {
  std::string name;
  std::string scalar;
  bool is_message = false;
  std::vector<TextProtoField> fields;

  /// First field with this name, or nullptr.
  const TextProtoField *find(std::string_view field_name) const;
  /// All fields with this name, in order.
  std::vector<const TextProtoField *> findAll(std::string_view name) const;
};

/// Parses protobuf text format (comments, nested messages, `[a, b]` lists,
/// quoted strings). Errors say line and column.
Result<TextProtoField> parseTextProto(std::string_view text);

/// Device keys (e.g. "sm_90", "sm_100_B200") present in either table kind.
Result<std::vector<std::string>> listXlaDeviceKeys(std::string_view text);

/// Imports one device's collective profiles. An empty key selects the only
/// device present. Entries identical to an earlier one are dropped (XLA's
/// nearest-neighbour lookup would never reach them).
Result<PerfTable> importXlaCollectiveProfiles(std::string_view text,
                                              std::string_view device_key,
                                              int64_t default_partition = 8);

/// Imports one device's GEMM FLOP rates from a GemmPerfTable.
Result<PerfTable> importXlaGemmTable(std::string_view text,
                                     std::string_view device_key);

} // namespace shardlab::cost
