// Embind bindings of the JSON API: no C++ object crosses the boundary, so JS
// never holds a handle to free, and every entry point returns errors as
// values (see shardlab/api/api.h).
//
// Module texts arrive as (pointer, length) of UTF-8 bytes the caller copied
// into the instance's memory, and their replies leave as a view of a reply
// buffer, valid until the next call: both cross with one native copy (see
// wasm/src/boundary.ts). Small option strings use embind's std::string.
#include "shardlab/api/api.h"
#include "shardlab/api/playground_api.h"
#include "shardlab/api/sharding_syntax.h"
#include "shardlab/api/strategy_api.h"
#include "support/byte_scan.h"

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace {

/// Per-instance state of the binding (the core keeps none): the last reply
/// of a text call, which JS reads through a memory view, and the modules the
/// selection views last read (see ViewCache), so moving the cursor over the
/// same text propagates once.
struct BindingState {
  std::string reply;
  bool reply_ascii = true; ///< every byte of `reply` is below 0x80
  shardlab::api::ViewCache view_cache;
};

BindingState &state() {
  static BindingState instance;
  return instance;
}

std::string_view textAt(std::uintptr_t bytes, std::size_t length) {
  return {reinterpret_cast<const char *>(bytes), length};
}

/// Keeps `reply` alive in the binding and returns a Uint8Array over it.
emscripten::val replyView(std::string reply) {
  std::string &kept = state().reply;
  kept = std::move(reply);
  state().reply_ascii = shardlab::isAscii(kept);
  return emscripten::val(emscripten::typed_memory_view(
      kept.size(), reinterpret_cast<const unsigned char *>(kept.data())));
}

/// Whether the last reply view holds only ASCII: then it is its own
/// Latin-1 text, which Node copies into a string without decoding UTF-8
/// (wasm/src/boundary.ts).
bool replyIsAscii() { return state().reply_ascii; }

std::string version() { return shardlab::api::versionJson(); }

std::string listPasses() { return shardlab::api::listPassesJson(); }

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

// Text calls: (text bytes, text length, options JSON) -> reply view.

emscripten::val check(std::uintptr_t text, std::size_t length,
                      const std::string & /*unused*/) {
  return replyView(shardlab::api::checkJson(textAt(text, length)));
}

emscripten::val run(std::uintptr_t text, std::size_t length,
                    const std::string &flags_json) {
  return replyView(shardlab::api::runJson(textAt(text, length), flags_json));
}

emscripten::val execute(std::uintptr_t text, std::size_t length,
                        const std::string &options_json) {
  return replyView(
      shardlab::api::executeJson(textAt(text, length), options_json));
}

emscripten::val loadTable(std::uintptr_t text, std::size_t length,
                          const std::string &options_json) {
  return replyView(
      shardlab::api::loadTableJson(textAt(text, length), options_json));
}

emscripten::val playground(std::uintptr_t text, std::size_t length,
                           const std::string &options_json) {
  return replyView(
      shardlab::api::playgroundJson(textAt(text, length), options_json));
}

emscripten::val scheduleModule(std::uintptr_t text, std::size_t length,
                               const std::string &options_json) {
  return replyView(
      shardlab::api::scheduleJson(textAt(text, length), options_json));
}

emscripten::val shardingReport(std::uintptr_t text, std::size_t length,
                               const std::string & /*unused*/) {
  return replyView(shardlab::api::shardingReportApiJson(textAt(text, length)));
}

emscripten::val opFactors(std::uintptr_t text, std::size_t length,
                          const std::string &options_json) {
  return replyView(shardlab::api::opFactorsJson(
      textAt(text, length), options_json, &state().view_cache));
}

emscripten::val valueLayout(std::uintptr_t text, std::size_t length,
                            const std::string &options_json) {
  return replyView(shardlab::api::valueLayoutJson(
      textAt(text, length), options_json, &state().view_cache));
}

emscripten::val propagationTrace(std::uintptr_t text, std::size_t length,
                                 const std::string &options_json) {
  return replyView(
      shardlab::api::propagationTraceJson(textAt(text, length), options_json));
}

emscripten::val dataflowGraph(std::uintptr_t text, std::size_t length,
                              const std::string &options_json) {
  return replyView(shardlab::api::dataflowGraphJson(
      textAt(text, length), options_json, &state().view_cache));
}

emscripten::val compareStrategies(std::uintptr_t text, std::size_t length,
                                  const std::string &options_json) {
  return replyView(
      shardlab::api::compareStrategiesJson(textAt(text, length), options_json));
}

emscripten::val suggestShardings(std::uintptr_t text, std::size_t length,
                                 const std::string &options_json) {
  return replyView(
      shardlab::api::suggestShardingsJson(textAt(text, length), options_json));
}

} // namespace

EMSCRIPTEN_BINDINGS(shardlab) {
  emscripten::function("version", &version);
  emscripten::function("replyIsAscii", &replyIsAscii);
  emscripten::function("listPasses", &listPasses);
  emscripten::function("hardwarePresets", &hardwarePresets);
  emscripten::function("estimateCollective", &estimateCollective);
  emscripten::function("estimateGemm", &estimateGemm);
  emscripten::function("parseShardings", &parseShardings);
  emscripten::function("printShardings", &printShardings);
  emscripten::function("check", &check);
  emscripten::function("run", &run);
  emscripten::function("execute", &execute);
  emscripten::function("loadTable", &loadTable);
  emscripten::function("playground", &playground);
  emscripten::function("schedule", &scheduleModule);
  emscripten::function("shardingReport", &shardingReport);
  emscripten::function("opFactors", &opFactors);
  emscripten::function("valueLayout", &valueLayout);
  emscripten::function("propagationTrace", &propagationTrace);
  emscripten::function("dataflowGraph", &dataflowGraph);
  emscripten::function("compareStrategies", &compareStrategies);
  emscripten::function("suggestShardings", &suggestShardings);
}
