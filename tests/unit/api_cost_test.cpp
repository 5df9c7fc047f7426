// The JSON API's cost entry points: table loading in both formats, presets,
// collective and GEMM estimates with explanations, errors as values.
#include "shardlab/api/api.h"

#include "api_reply.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>

using nlohmann::json;
using namespace shardlab;

namespace {

std::string readExample(const std::string &name) {
  std::ifstream in(std::string(SHARDLAB_SOURCE_DIR) + "/examples/tables/" +
                   name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const char *kXlaProfiles = R"pb(
entries {
  key: "sm_90"
  value {
    entries {
      instruction {
        opcode: "all-reduce"
        shape { element_type: F32 dimensions: 256 }
        iota_collective_device_list {
          num_replica_groups: 1
          num_devices_per_group: 8
          iota_reshape_dims: 8
          iota_transpose_perm: 0
        }
      }
      network_throughput_bytes_per_sec: 1000000
    }
  }
}
)pb";

} // namespace

TEST_CASE("a shardlab table loads with a summary and its normalised form") {
  json r = reply(
      api::loadTableJson(readExample("h100_analytical.shardlab.json"), "{}"));
  REQUIRE(r["ok"] == true);
  CHECK(r["format"] == "shardlab");
  CHECK(r["summary"]["source"] == "analytical");
  CHECK(r["summary"]["collectives"].get<int>() > 0);
  CHECK(r["summary"]["gemms"].get<int>() > 0);
  CHECK(r["table"]["format"] == "shardlab-perf-table");
}

TEST_CASE("an XLA text-proto table is detected and imported") {
  json r = reply(api::loadTableJson(kXlaProfiles, ""));
  REQUIRE(r["ok"] == true);
  CHECK(r["format"] == "xla-collective");
  CHECK(r["devices"] == json::array({"sm_90"}));
  CHECK(r["summary"]["collectives"] == 1);
  json wrong = reply(api::loadTableJson(kXlaProfiles, R"({"device":"sm_80"})"));
  CHECK(wrong["ok"] == false);
  CHECK(wrong["error"].get<std::string>().find("sm_90") != std::string::npos);
}

TEST_CASE("invalid tables and options are error values naming the problem") {
  json bad = reply(api::loadTableJson(
      R"({"format":"shardlab-perf-table","version":99})", "{}"));
  CHECK(bad["ok"] == false);
  CHECK(bad["error"].get<std::string>().find("version") != std::string::npos);
  CHECK(reply(api::loadTableJson("{", "{}"))["ok"] == false);
  CHECK(reply(api::loadTableJson("}}}", "{}"))["ok"] == false);
  json format = reply(api::loadTableJson("{}", R"({"format":"csv"})"));
  CHECK(format["ok"] == false);
  CHECK(format["error"].get<std::string>().find("options.format") !=
        std::string::npos);
  CHECK(reply(api::loadTableJson("{}", "[1]"))["ok"] == false);
}

TEST_CASE("a collective estimate from a given table explains itself") {
  json options = {{"op", "all-reduce"},
                  {"bytes", 2048},
                  {"dtype", "f32"},
                  {"replica_groups", "[1,8]<=[8]"},
                  {"table", kXlaProfiles}};
  json r = reply(api::estimateCollectiveJson(options.dump()));
  REQUIRE(r["ok"] == true);
  // Exact key, nearest neighbour: time = bytes / throughput.
  CHECK(r["time_us"].get<double>() == doctest::Approx(2048.0));
  CHECK(r["model"].get<std::string>().rfind("collective-table", 0) == 0);
  CHECK(r["explanation"].contains("terms"));
}

TEST_CASE("a collective estimate defaults to the hardware's analytical table") {
  json options = {
      {"op", "all-gather"},
      {"bytes", 1 << 20},
      {"replica_groups", json::array({{0, 1, 2, 3}, {4, 5, 6, 7}})}};
  json r = reply(api::estimateCollectiveJson(options.dump()));
  REQUIRE(r["ok"] == true);
  double h100 = r["time_us"];
  CHECK(h100 > 0);
  options["hardware"] = "b200";
  json b200 = reply(api::estimateCollectiveJson(options.dump()));
  REQUIRE(b200["ok"] == true);
  CHECK(b200["time_us"].get<double>() < h100); // faster NVLink
}

TEST_CASE("collective option errors are values") {
  CHECK(reply(api::estimateCollectiveJson("garbage"))["ok"] == false);
  json no_bytes = reply(api::estimateCollectiveJson(R"({"op":"all-reduce"})"));
  CHECK(no_bytes["ok"] == false);
  CHECK(no_bytes["error"].get<std::string>().find("bytes") !=
        std::string::npos);
  CHECK(reply(api::estimateCollectiveJson(
            R"({"op":"all-sum","bytes":1})"))["ok"] == false);
  CHECK(reply(api::estimateCollectiveJson(
            R"({"op":"all-reduce","bytes":-1})"))["ok"] == false);
  CHECK(reply(api::estimateCollectiveJson(
            R"({"op":"all-reduce","bytes":1,"replica_groups":[[0,"a"]]})"))
            ["ok"] == false);
  CHECK(reply(api::estimateCollectiveJson(
            R"({"op":"all-reduce","bytes":1,"hardware":"tpu"})"))["ok"] ==
        false);
  CHECK(reply(api::estimateCollectiveJson(
            R"({"op":"all-reduce","bytes":1,"mode":"fast"})"))["ok"] == false);
}

TEST_CASE("a GEMM estimate on the analytical table scales with FLOPs") {
  json options = {{"m", 1024}, {"k", 1024}, {"n", 1024}, {"dtype", "bf16"}};
  json small = reply(api::estimateGemmJson(options.dump()));
  REQUIRE(small["ok"] == true);
  options["m"] = 4096;
  json large = reply(api::estimateGemmJson(options.dump()));
  REQUIRE(large["ok"] == true);
  CHECK(large["time_us"].get<double>() > small["time_us"].get<double>());
  CHECK(reply(api::estimateGemmJson(R"({"m":1,"k":1})"))["ok"] == false);
  CHECK(reply(api::estimateGemmJson(
            R"({"m":8,"k":8,"n":8,"table_kind":"x"})"))["ok"] == false);
}

TEST_CASE("hardware presets are listed") {
  json r = reply(api::hardwarePresetsJson());
  REQUIRE(r["ok"] == true);
  bool h100 = false;
  for (const json &preset : r["presets"])
    h100 |= preset["name"] == "h100";
  CHECK(h100);
}
