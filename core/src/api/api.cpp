// JSON entry points over the text pipeline: version, pass list, check
// (parse + verify) and run (shardlab-opt's flags).
#include "shardlab/api/api.h"
#include "diagnostics_json.h"
#include "guard.h"
#include "json_options.h"
#include "shardlab/text/text.h"

namespace shardlab::api {
namespace {

using detail::dumpReply;
using detail::guarded;
using detail::json;

json optionsArray(const PassInfo &pass) {
  static const char *kTypes[] = {"bool", "int", "string"};
  json options = json::array();
  for (const OptionDecl &option : pass.options)
    options.push_back({{"name", std::string(option.name)},
                       {"type", kTypes[static_cast<int>(option.type)]},
                       {"default", std::string(option.default_value)},
                       {"help", std::string(option.help)}});
  return options;
}

bool hasError(const std::vector<Diagnostic> &diagnostics) {
  for (const Diagnostic &diag : diagnostics)
    if (diag.severity == Severity::Error)
      return true;
  return false;
}

/// Reads a JSON array of strings.
Result<std::vector<std::string>> readFlags(std::string_view flags_json) {
  json parsed = detail::parseJson(flags_json);
  if (!parsed.is_array())
    return makeError("flags: expected a JSON array of strings");
  std::vector<std::string> flags;
  for (const json &flag : parsed) {
    if (!flag.is_string())
      return makeError("flags: expected a JSON array of strings");
    flags.push_back(flag.get<std::string>());
  }
  return flags;
}

std::string runReply(std::string_view text, std::string_view flags_json) {
  Result<std::vector<std::string>> flags = readFlags(flags_json);
  Result<RunRequest> request =
      flags ? parseRunFlags(*flags) : Result<RunRequest>(flags.error());
  if (!request)
    return dumpReply({{"ok", false},
                      {"error", request.error().message},
                      {"output", ""},
                      {"stderr", ""},
                      {"diagnostics", json::array()}});
  RunResult result = runPipeline(text, *request);
  json reply = {
      {"ok", result.ok},
      {"diagnostics", detail::diagnosticsJson(result.diagnostics, text)}};
  // Moved in, not listed above: an initializer list copies, and the output
  // is the whole module's text.
  reply["output"] = std::move(result.output);
  reply["stderr"] = std::move(result.stderr_text);
  return dumpReply(reply);
}

std::string checkReply(std::string_view text) {
  DiagnosticEngine diags;
  std::string output;
  if (auto module = loadModule(text, diags).module)
    output = printModule(*module);
  const auto &all = diags.diagnostics();
  json reply = {{"ok", !hasError(all)},
                {"diagnostics", detail::diagnosticsJson(all, text)}};
  reply["output"] = std::move(output); // moved: see runReply
  return dumpReply(reply);
}

} // namespace

std::string versionJson() {
  return guarded([] {
    return dumpReply({{"ok", true},
                      {"name", "shardlab"},
                      {"version", "0.1.0"},
                      {"api_version", kApiVersion}});
  });
}

std::string listPassesJson() {
  return guarded([] {
    json passes = json::array();
    for (const PassInfo &pass : allPasses())
      passes.push_back({{"flag", std::string(pass.flag)},
                        {"stage", std::string(pass.stage)},
                        {"description", std::string(pass.summary)},
                        {"options", optionsArray(pass)},
                        {"implemented", pass.run != nullptr}});
    return dumpReply({{"ok", true}, {"passes", passes}});
  });
}

std::string checkJson(std::string_view text) {
  return guarded([&] { return checkReply(text); });
}

std::string runJson(std::string_view text, std::string_view flags_json) {
  return guarded([&] { return runReply(text, flags_json); });
}

} // namespace shardlab::api
