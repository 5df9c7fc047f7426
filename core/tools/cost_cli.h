// The shardlab-cost command line: flags are parsed into the options object
// of the JSON API (api::estimateCollectiveJson / estimateGemmJson), so the
// CLI and the WebAssembly package give the same answers for the same query.
#pragma once

#include "shardlab/support/result.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace shardlab::tools {

/// One parsed invocation: which estimate, its API options and the tables
/// to read into options["tables"].
struct CostCommand {
  std::string command; // "collective" or "gemm"
  nlohmann::json options = nlohmann::json::object();
  std::vector<std::string> table_paths;
  bool json = false;
  bool help = false;
};

/// The --help text.
const char *costHelp();

/// Parses the arguments after the program name. Errors name the flag.
shardlab::Result<CostCommand>
parseCostArgs(const std::vector<std::string> &args);

/// Reads a table file (refusing files over kMaxPerfTableFileBytes).
shardlab::Result<std::string> readTableFile(const std::string &path);

/// Human-readable rendering of an estimate reply of the JSON API.
std::string renderEstimateText(const nlohmann::json &reply);

/// Runs a parsed command: prints the estimate (text or JSON) to `out` and
/// errors to `err`. Returns the process exit status (0 on success).
int runCost(CostCommand command, std::ostream &out, std::ostream &err);

} // namespace shardlab::tools
