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
  PassPipeline pipeline;                        ///< the pass flags, in order
  bool split_input = false;                     ///< -split-input-file[=MARKER]
  std::string split_marker = "// -----";        ///< where the input splits
  std::string output_split_marker = "// -----"; ///< -output-split-marker
  bool verify_diagnostics = false;              ///< -verify-diagnostics
  bool generic = false;                         ///< -mlir-print-op-generic
  bool debuginfo = false;                       ///< -mlir-print-debuginfo
  bool timing = false; ///< -mlir-timing (report on stderr)
  /// -verify-each: EveryPass; -verify-each=false: None.
  Module::VerifyPasses verify_passes = Module::VerifyPasses::Steps;
  std::string file = "<stdin>"; ///< name used in formatted diagnostics
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
// Each takes and returns the JSON that schemas/api/ describes (the file
// named after the method, e.g. run.schema.json for runJson); the core
// rejects a request field the schema does not declare.

/// version.schema.json: name, version and API version.
std::string versionJson();

/// passes.schema.json: every pass flag, its stage and declared options.
std::string listPassesJson();

/// run.schema.json CheckResult: parse + verify, the printed module.
std::string checkJson(std::string_view text);

/// run.schema.json RunResult: shardlab-opt over `text` with `flags_json`, a
/// JSON array of its arguments (["-sdy-basic-propagate=..."]); a bad flag
/// or option is an error naming it.
std::string runJson(std::string_view text, std::string_view flags_json);

/// execute.schema.json: the module run by the interpreter (shardlab-run):
/// its checks and results; with "shardings", partitioned and run on
/// simulated devices, compared with the global run, and (with
/// "collectives") what each device held before and after each collective.
std::string executeJson(std::string_view text, std::string_view options_json);

/// tables.schema.json: a performance table loaded and validated
/// (shardlab JSON or XLA text-proto), normalised to shardlab's schema.
std::string loadTableJson(std::string_view text, std::string_view options_json);

/// tables.schema.json: the built-in hardware presets.
std::string hardwarePresetsJson();

/// estimate.schema.json: one collective, from a table, several merged
/// tables, or (with "group_size") by topology as shardlab-cost does.
std::string estimateCollectiveJson(std::string_view options_json);

/// estimate.schema.json: one GEMM.
std::string estimateGemmJson(std::string_view options_json);

} // namespace shardlab::api
