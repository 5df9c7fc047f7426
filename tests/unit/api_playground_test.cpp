// The playground's JSON entry points: the per-edit call (diagnostics,
// pipelines, schedule), the schedule, factor tables, device layouts and
// the per-op trace; errors come back as values.
#include "shardlab/api/playground_api.h"

#include "shardlab/schedule/pipeline.h"
#include "shardlab/schedule/report.h"

#include "api_reply.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

using nlohmann::json;
using namespace shardlab;

namespace {

// Line 4: the dot; line 5: the add. %arg0 is at line 3.
const char *kModule =
    R"(sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %arg2: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = stablehlo.add %0, %arg2 : tensor<8x32xf32>
  return %1 : tensor<8x32xf32>
}
)";

} // namespace

TEST_CASE("playground: propagation output and a schedule") {
  json r = reply(api::playgroundJson(kModule, R"({"pipeline": "basic"})"));
  CHECK(r["ok"] == true);
  CHECK(r["stage"] == "done");
  CHECK(r["flags"] == json::array({"-sdy-basic-propagate"}));
  std::string output = r["output"];
  CHECK(
      output.find(
          R"(%0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {"y", ?}]>]>})") !=
      std::string::npos);
  REQUIRE(r["schedule"]["ok"] == true);
  CHECK(r["schedule"]["report"]["step_time_us"].get<double>() > 0);
  CHECK(r["schedule"]["report"]["ops"].size() > 0);
  CHECK_FALSE(r["schedule"].contains("trace"));
}

TEST_CASE("playground: every pipeline name runs; unknown names are errors") {
  for (const char *name : {"basic", "aggressive", "op-priority",
                           "user-priority", "pipeline", "explicit"}) {
    json options = {{"pipeline", name}, {"schedule", false}};
    json r = reply(api::playgroundJson(kModule, options.dump()));
    CHECK_MESSAGE(r["ok"] == true, name);
    CHECK(!r.contains("schedule"));
  }
  json bad = reply(api::playgroundJson(kModule, R"({"pipeline": "magic"})"));
  CHECK(bad["ok"] == false);
  CHECK(bad["error"].get<std::string>().find("magic") != std::string::npos);
  CHECK(reply(api::playgroundJson(kModule, "[1]"))["ok"] == false);
}

TEST_CASE("playground: diagnostics with positions for bad shardings") {
  std::string text = kModule;
  text.replace(text.find(R"([{"x"}, {}])"), 11, R"([{"z"}, {}])");
  json r = reply(api::playgroundJson(text, "{}"));
  CHECK(r["ok"] == false);
  CHECK(r["stage"] == "verify");
  REQUIRE(r["diagnostics"].size() > 0);
  CHECK(r["diagnostics"][0]["line"] == 3);
  CHECK(r["diagnostics"][0]["severity"] == "error");
  json syntax = reply(api::playgroundJson("func.func @f(", "{}"));
  CHECK(syntax["stage"] == "parse");
  CHECK(syntax["diagnostics"].size() > 0);
}

TEST_CASE("schedule: trace, presets and tables as values") {
  json r =
      reply(api::scheduleJson(kModule, R"({"trace": true, "preset": "b200"})"));
  REQUIRE(r["ok"] == true);
  CHECK(r["trace"]["traceEvents"].size() > 0);
  CHECK(r["explicit_module"].get<std::string>().find("sdy.") !=
        std::string::npos);
  CHECK(reply(api::scheduleJson(kModule, R"({"preset": "z9"})"))["ok"] ==
        false);
  json bad_table = reply(api::scheduleJson(kModule, R"({"table": "{]"})"));
  CHECK(bad_table["ok"] == false);
  CHECK(bad_table["error"].get<std::string>().find("table") !=
        std::string::npos);
  json slower =
      reply(api::scheduleJson(kModule, R"({"estimator": "approximate"})"));
  REQUIRE(slower["ok"] == true);
  CHECK(slower["report"]["step_time_us"] != r["report"]["step_time_us"]);
}

TEST_CASE("schedule: the API's report is shardlab-schedule's report") {
  // Same defaults (device-memory limit, one rerun) and same overrides.
  for (const char *options :
       {"{}", R"({"preset": "b200", "overlap_limit": 2, "all_gather_limit": 2,
                  "reruns": 3, "memory_limit": 4096})"}) {
    json api_report = reply(api::scheduleJson(kModule, options))["report"];
    schedule::TargetOptions target;
    bool custom = std::string(options) != "{}";
    target.preset = custom ? "b200" : "h100";
    Result<schedule::PipelineOptions> defaults =
        schedule::pipelineOptionsFor(target);
    REQUIRE(defaults.ok());
    schedule::PipelineOptions pipeline = *defaults;
    if (custom) {
      pipeline.scheduler.overlap_limit = 2;
      pipeline.scheduler
          .kind_limits[size_t(schedule::CollectiveKind::AllGather)] = 2;
      pipeline.scheduler.reruns = 3;
      pipeline.scheduler.memory_limit_bytes = 4096;
    }
    schedule::PipelineResult r =
        schedule::runSchedulePipeline(kModule, pipeline);
    REQUIRE(r.ok);
    CHECK(api_report ==
          json::parse(schedule::reportJson(r.program, r.schedule)));
  }
  json bad = reply(api::scheduleJson(kModule, R"({"reruns": -1})"));
  CHECK(bad["ok"] == false);
}

TEST_CASE("factor table of a dot before and after propagation") {
  json r =
      reply(api::opFactorsJson(kModule, R"({"line": 4, "pipeline": "basic"})"));
  REQUIRE(r["ok"] == true);
  CHECK(r["op"] == "stablehlo.dot_general");
  REQUIRE(r["factors"].size() == 3);
  CHECK(r["factors"][2]["kind"] == "reduction");
  REQUIRE(r["rows"].size() == 3);
  CHECK(r["rows"][2]["tensor"] == "result 0");
  // The result had no sharding: i gets "x" and k gets "y" by propagation.
  CHECK(r["rows"][2]["before"]["factors"][0]["axes"].empty());
  CHECK(r["rows"][2]["after"]["factors"][0]["axes"] == json::array({"\"x\""}));
  CHECK(r["rows"][2]["after"]["factors"][1]["axes"] == json::array({"\"y\""}));
  CHECK(reply(api::opFactorsJson(kModule, R"({"line": 99})"))["ok"] == false);
  CHECK(reply(api::opFactorsJson(kModule, R"({})"))["ok"] == false);
  CHECK(reply(api::opFactorsJson(kModule, R"({"line": 6})"))["ok"] == false);
}

TEST_CASE("device layout of a value: shards and local shapes") {
  json r = reply(api::valueLayoutJson(kModule, R"({"line": 4})"));
  REQUIRE(r["ok"] == true);
  CHECK(r["shape"] == json::array({8, 32}));
  CHECK(r["local_shape"] == json::array({4, 16}));
  REQUIRE(r["devices"].size() == 4);
  // Device 3 is x=1, y=1: the second shard on both dims.
  CHECK(r["devices"][3]["coords"] == json::array({1, 1}));
  CHECK(r["devices"][3]["shard"] == json::array({1, 1}));
  CHECK(r["devices"][3]["offsets"] == json::array({4, 16}));
  json before =
      reply(api::valueLayoutJson(kModule, R"({"line": 4, "before": true})"));
  CHECK(before["sharding"] == "");
  // %arg1 on line 3 (column of its name): [{}, {"y"}].
  std::string line3 =
      std::string(kModule).substr(std::string(kModule).find("func.func"));
  int64_t column = int64_t(line3.find("%arg1")) + 1;
  json arg = reply(api::valueLayoutJson(
      kModule, json({{"line", 3}, {"column", column + 1}}).dump()));
  REQUIRE(arg["ok"] == true);
  CHECK(arg["value"]["kind"] == "argument");
  CHECK(arg["value"]["index"] == 1);
  CHECK(arg["local_shape"] == json::array({16, 16}));
  CHECK(arg["devices"][1]["shard"] == json::array({0, 1}));
}

TEST_CASE("views through a ViewCache answer as without one") {
  // The cache keeps the last text's modules: other positions, the other
  // view and "before" reuse them; another pipeline or text does not.
  api::ViewCache cache;
  const std::string calls[][2] = {
      {"factors", R"({"line": 4})"},
      {"factors", R"({"line": 5})"},
      {"layout", R"({"line": 4})"},
      {"layout", R"({"line": 4, "before": true})"},
      {"factors", R"({"line": 4, "pipeline": "basic"})"},
      {"layout", R"({"line": 5, "pipeline": "explicit"})"},
      {"factors", R"({"line": 99})"},
  };
  for (const auto &[view, options] : calls) {
    const bool factors = view == "factors";
    const std::string plain = factors ? api::opFactorsJson(kModule, options)
                                      : api::valueLayoutJson(kModule, options);
    const std::string cached =
        factors ? api::opFactorsJson(kModule, options, &cache)
                : api::valueLayoutJson(kModule, options, &cache);
    CHECK_MESSAGE(cached == plain, view << " " << options);
  }
  // A different text is not answered from the cache.
  const std::string other = std::string(kModule).replace(
      std::string(kModule).find("[{\"x\"}, {}]"),
      std::string("[{\"x\"}, {}]").size(), "[{}, {\"x\"}]");
  CHECK(api::valueLayoutJson(other, R"({"line": 4})", &cache) ==
        api::valueLayoutJson(other, R"({"line": 4})"));
}

TEST_CASE("trace: per-op steps with the factor and source of each axis") {
  json r =
      reply(api::propagationTraceJson(kModule, R"({"pipeline": "basic"})"));
  REQUIRE(r["ok"] == true);
  REQUIRE(r["steps"].size() >= 2);
  json dot = r["steps"][0];
  CHECK(dot["op"] == "stablehlo.dot_general");
  bool x_from_lhs = false;
  for (const json &d : dot["decisions"])
    x_from_lhs =
        x_from_lhs || (d["axis"] == "\"x\"" && d["target"] == "result 0" &&
                       d["source"] == "operand 0" && d["symbol"] == "i");
  CHECK(x_from_lhs);
  CHECK(r["steps"][1]["op"] == "stablehlo.add");
  CHECK(reply(api::propagationTraceJson("garbage", "{}"))["ok"] == false);
}

TEST_CASE("sharding report through the API") {
  json r = reply(api::shardingReportApiJson(kModule));
  CHECK(r["ok"] == true);
  CHECK(r["shardings"].size() > 0);
  CHECK(reply(api::shardingReportApiJson("nope"))["ok"] == false);
}

TEST_CASE("device layout with sub-axes: (1)2 is the major half of the axis") {
  const char *text = R"(sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<32xf32>) -> tensor<2x16xf32> {
  %r = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)2}, {"x":(2)2}]>]>} : (tensor<32xf32>) -> tensor<2x16xf32>
  return %r : tensor<2x16xf32>
}
)";
  json r =
      reply(api::valueLayoutJson(text, R"({"line": 3, "pipeline": "basic"})"));
  REQUIRE(r["ok"] == true);
  REQUIRE(r["devices"].size() == 4);
  // x = 1 (0b01): major half 0, minor half 1; x = 2 (0b10): major 1, minor 0.
  CHECK(r["devices"][1]["shard"] == json::array({0, 1}));
  CHECK(r["devices"][2]["shard"] == json::array({1, 0}));
  CHECK(r["devices"][2]["offsets"] == json::array({1, 0}));
  CHECK(r["local_shape"] == json::array({1, 8}));
}
