// Embind bindings of the JSON API: strings in, JSON strings out. No C++
// object crosses the boundary, so JS never holds a handle to free, and every
// entry point returns errors as values (see shardlab/api/api.h).
#include "shardlab/api/api.h"
#include "shardlab/api/playground_api.h"
#include "shardlab/api/sharding_syntax.h"

#include <emscripten/bind.h>

#include <string>

namespace {

/// The modules the selection views last read (see ViewCache): one per
/// instance, so moving the cursor over the same text propagates once.
shardlab::api::ViewCache &viewCache() {
  static shardlab::api::ViewCache cache;
  return cache;
}

std::string version() { return shardlab::api::versionJson(); }

std::string listPasses() { return shardlab::api::listPassesJson(); }

std::string check(const std::string &text) {
  return shardlab::api::checkJson(text);
}

std::string run(const std::string &text, const std::string &flags_json) {
  return shardlab::api::runJson(text, flags_json);
}

std::string loadTable(const std::string &text,
                      const std::string &options_json) {
  return shardlab::api::loadTableJson(text, options_json);
}

std::string hardwarePresets() { return shardlab::api::hardwarePresetsJson(); }

std::string estimateCollective(const std::string &options_json) {
  return shardlab::api::estimateCollectiveJson(options_json);
}

std::string estimateGemm(const std::string &options_json) {
  return shardlab::api::estimateGemmJson(options_json);
}

std::string parseShardings(const std::string &request_json) {
  return shardlab::api::parseShardingsJson(request_json);
}

std::string printShardings(const std::string &request_json) {
  return shardlab::api::printShardingsJson(request_json);
}

std::string playground(const std::string &text,
                       const std::string &options_json) {
  return shardlab::api::playgroundJson(text, options_json);
}

std::string scheduleModule(const std::string &text,
                           const std::string &options_json) {
  return shardlab::api::scheduleJson(text, options_json);
}

std::string shardingReport(const std::string &text) {
  return shardlab::api::shardingReportApiJson(text);
}

std::string opFactors(const std::string &text,
                      const std::string &options_json) {
  return shardlab::api::opFactorsJson(text, options_json, &viewCache());
}

std::string valueLayout(const std::string &text,
                        const std::string &options_json) {
  return shardlab::api::valueLayoutJson(text, options_json, &viewCache());
}

std::string propagationTrace(const std::string &text,
                             const std::string &options_json) {
  return shardlab::api::propagationTraceJson(text, options_json);
}

} // namespace

EMSCRIPTEN_BINDINGS(shardlab) {
  emscripten::function("version", &version);
  emscripten::function("listPasses", &listPasses);
  emscripten::function("check", &check);
  emscripten::function("run", &run);
  emscripten::function("loadTable", &loadTable);
  emscripten::function("hardwarePresets", &hardwarePresets);
  emscripten::function("estimateCollective", &estimateCollective);
  emscripten::function("estimateGemm", &estimateGemm);
  emscripten::function("parseShardings", &parseShardings);
  emscripten::function("printShardings", &printShardings);
  emscripten::function("playground", &playground);
  emscripten::function("schedule", &scheduleModule);
  emscripten::function("shardingReport", &shardingReport);
  emscripten::function("opFactors", &opFactors);
  emscripten::function("valueLayout", &valueLayout);
  emscripten::function("propagationTrace", &propagationTrace);
}
