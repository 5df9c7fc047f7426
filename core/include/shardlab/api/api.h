// The entry points shared by the CLIs and the WebAssembly build: text or
// JSON in, JSON out. Every function returns a JSON object with an "ok" field
// and never throws: bad input (syntax errors, unknown flags, malformed
// tables, garbage JSON) comes back as {"ok": false, "error": ...} and/or
// "diagnostics". Nothing is kept between calls (no handles to free).
//
// Every request and reply shape is a JSON Schema in schemas/api/ (the
// TypeScript types in wasm/src/api-types.ts are generated from them, and
// the JS tests validate every reply against them). Diagnostics carry where
// MLIR reports them (line, column), the range they are about and related
// locations (schemas/api/common.schema.json#/$defs/Diagnostic).
//
// The run pipeline reuses the pass registry: a pass added there is reachable
// from `run` (and so from JS) by its Shardy flag with no change here.
#pragma once

#include "shardlab/ir/diagnostics.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/support/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace shardlab::api {

/// Version of the JSON shapes below; bumped on incompatible changes.
inline constexpr int kApiVersion = 1;

// ---- Typed layer (C++ callers: shardlab-opt, tests) ----

/// shardlab-opt's arguments, parsed.
struct RunRequest {
  PassPipeline pipeline;           ///< the pass flags, in order
  bool split_input = false;        ///< -split-input-file
  bool verify_diagnostics = false; ///< -verify-diagnostics
  bool generic = false;            ///< -mlir-print-op-generic
  bool debuginfo = false;          ///< -mlir-print-debuginfo
  bool timing = false;             ///< -mlir-timing (report on stderr)
  std::string file = "<stdin>";    ///< name used in formatted diagnostics
};

/// Parses shardlab-opt's flags (`-sdy-basic-propagate=...`, `-o` is
/// refused: the output is returned). A positional argument only names the
/// input in messages. An error on a bad flag, an unknown pass option or an
/// option value of the wrong type.
Result<RunRequest> parseRunFlags(const std::vector<std::string> &flags);

/// What a run produced: shardlab-opt's stdout, its stderr, its diagnostics.
struct RunResult {
  bool ok = false;
  std::string output;                  ///< equals shardlab-opt's stdout
  std::string stderr_text;             ///< equals shardlab-opt's stderr
  std::vector<Diagnostic> diagnostics; ///< all chunks, in emission order
};

/// Parses, verifies, runs the passes and prints, as shardlab-opt does.
RunResult runPipeline(std::string_view text, const RunRequest &request);

// ---- JSON layer (WASM, JS, tools) ----

/// {"ok", "name", "version", "api_version"}.
std::string versionJson();

/// {"ok", "passes": [{"flag", "description", "implemented"}]}.
std::string listPassesJson();

/// Parses and verifies `text`. {"ok", "output" (printed module, "" when
/// parsing failed), "diagnostics"}. ok is false when an error was reported.
std::string checkJson(std::string_view text);

/// Runs shardlab-opt over `text` with `flags_json`, a JSON array of
/// argument strings (e.g. ["-sdy-basic-propagate=conservative-propagation=
/// true"]). {"ok", "output", "stderr", "diagnostics"} or, for a bad flag,
/// {"ok": false, "error", "output": "", "stderr": "", "diagnostics": []}.
std::string runJson(std::string_view text, std::string_view flags_json);

/// Loads and validates a performance table. `options_json`:
/// {"format": "auto" | "shardlab" | "xla-collective" | "xla-gemm",
///  "device": XLA device key ("" = the only one), "partition_size": 8}.
/// Returns {"ok", "format", "summary": {...}, "table": <shardlab table
/// object>} or {"ok": false, "error"}; "devices" lists XLA device keys.
std::string loadTableJson(std::string_view text, std::string_view options_json);

/// Built-in hardware presets: {"ok", "presets": [{"name", ...}]}.
std::string hardwarePresetsJson();

/// Estimates one collective. `options_json`: {"op": "all-reduce", "bytes",
/// "dtype", "replica_groups": "[2,4]<=[8]" | [[0,1],[2,3]],
/// "source_target_pairs": [[0,1],...], "table": <table object or text>
/// (default: the analytical table of "hardware"), "hardware": "h100",
/// "mode": "compatible" | "accurate", "interpolation": "nearest" |
/// "grid-snap", "partition_size": 8}. "tables": [table, ...] merges several
/// tables. With "group_size" (and "nodes", default 1; "gpus_per_node",
/// default the preset's; "sol_options": "nic_speed_gbps=...,...") the query
/// is by topology, as shardlab-cost's: nodes > 1 the S-curve model alone,
/// nodes = 1 the tables, else the preset's NVLink model. Returns {"ok",
/// "time_us", "model", "explanation": {...}} or {"ok": false, "error"}.
std::string estimateCollectiveJson(std::string_view options_json);

/// Estimates one GEMM. `options_json`: {"b", "m", "k", "n", "dtype" (or
/// "lhs_dtype", "rhs_dtype", "out_dtype", or "dtypes": "bf16xbf16->bf16"),
/// "table" or "tables", "hardware", "mode",
/// "table_kind": "default" | "user"}. Same result shape as collectives.
std::string estimateGemmJson(std::string_view options_json);

} // namespace shardlab::api
