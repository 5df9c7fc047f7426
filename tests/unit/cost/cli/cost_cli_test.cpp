// shardlab-cost: argument parsing into API options, errors for bad flags and
// values, and that a run prints exactly the JSON API's reply.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "cost_cli.h"

#include "shardlab/api/api.h"

#include <doctest/doctest.h>

#include <sstream>

using shardlab::tools::CostCommand;
using shardlab::tools::parseCostArgs;
using shardlab::tools::runCost;

namespace {

std::string ErrorOf(const std::vector<std::string> &args) {
  auto parsed = parseCostArgs(args);
  return parsed ? "" : parsed.error().message;
}

const std::string kTable = std::string(SHARDLAB_SOURCE_DIR) +
                           "/examples/tables/h100_analytical.shardlab.json";

} // namespace

TEST_CASE("collective flags become API options") {
  auto c = parseCostArgs({"collective",
                          "--op",
                          "all-reduce",
                          "--bytes",
                          "1048576",
                          "--group-size",
                          "16",
                          "--nodes",
                          "2",
                          "--gpus-per-node=8",
                          "--preset",
                          "b200",
                          "--sol-options",
                          "nic_speed_gbps=25",
                          "--mode",
                          "accurate",
                          "--tables",
                          "a.json",
                          "--tables",
                          "b.txtpb",
                          "--json"});
  REQUIRE(c);
  CHECK(c->command == "collective");
  CHECK(c->json);
  CHECK(c->options["op"] == "all-reduce");
  CHECK(c->options["bytes"] == 1048576);
  CHECK(c->options["group_size"] == 16);
  CHECK(c->options["nodes"] == 2);
  CHECK(c->options["gpus_per_node"] == 8);
  CHECK(c->options["hardware"] == "b200");
  CHECK(c->options["sol_options"] == "nic_speed_gbps=25");
  CHECK(c->options["mode"] == "accurate");
  CHECK(c->table_paths == std::vector<std::string>{"a.json", "b.txtpb"});
}

TEST_CASE("defaults: one node, no JSON; gemm dims and dtypes") {
  auto c = parseCostArgs({"collective", "--op", "all-gather", "--bytes", "1",
                          "--group-size", "2"});
  REQUIRE(c);
  CHECK(c->options["nodes"] == 1);
  CHECK_FALSE(c->json);
  auto g = parseCostArgs({"gemm", "--b", "2", "--m", "512", "--n", "256", "--k",
                          "1024", "--dtypes", "f32xf32->f32"});
  REQUIRE(g);
  CHECK(g->options["b"] == 2);
  CHECK(g->options["k"] == 1024);
  CHECK(g->options["dtypes"] == "f32xf32->f32");
}

TEST_CASE("help") {
  CHECK(parseCostArgs({"--help"})->help);
  CHECK(parseCostArgs({"gemm", "--help"})->help);
  std::ostringstream out, err;
  CHECK(runCost(*parseCostArgs({"--help"}), out, err) == 0);
  CHECK(out.str().find("shardlab-cost collective") != std::string::npos);
}

TEST_CASE("bad commands, flags and values are errors naming them") {
  CHECK(ErrorOf({}).find("expected a command") != std::string::npos);
  CHECK(ErrorOf({"allreduce"}).find("unknown command 'allreduce'") !=
        std::string::npos);
  const std::vector<std::string> base = {"collective", "--op", "all-reduce",
                                         "--group-size", "8"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return ErrorOf(args);
  };
  CHECK(with({}) == "collective: --bytes is required (see --help)");
  CHECK(with({"--bytes"}) == "--bytes: missing value");
  for (const char *bad : {"-5", "0", "1e6", "12x", "", " 7", "+3",
                          "99999999999999999999", "4611686018427387904"})
    CHECK(with({"--bytes", bad}) == "--bytes: expected a positive integer, "
                                    "got '" +
                                        std::string(bad) + "'");
  CHECK(with({"--bytes", "8", "--bytes", "9"}) ==
        "--bytes: given more than once");
  CHECK(with({"--bytes", "8", "--mode", "fast"}) ==
        "--mode: expected compatible or accurate, got 'fast'");
  CHECK(with({"--bytes", "8", "--m", "3"}) ==
        "unknown argument '--m' for collective (see --help)");
  CHECK(with({"--bytes", "8", "--frobnicate"}).find("unknown argument") == 0);
  CHECK(ErrorOf({"gemm", "--m", "1", "--n", "1"}) ==
        "gemm: --k is required (see --help)");
}

TEST_CASE("runs print the JSON API's reply, errors go to stderr") {
  auto c = parseCostArgs({"gemm", "--m", "1024", "--n", "1024", "--k", "1024",
                          "--tables", kTable, "--json"});
  REQUIRE(c);
  std::ostringstream out, err;
  CHECK(runCost(*c, out, err) == 0);
  CHECK(err.str().empty());
  CHECK(out.str().find("\"time_us\"") != std::string::npos);
  auto bad = parseCostArgs({"collective", "--op", "all-reduce", "--bytes", "8",
                            "--group-size", "3", "--nodes", "2"});
  REQUIRE(bad);
  std::ostringstream out2, err2;
  CHECK(runCost(*bad, out2, err2) == 1);
  CHECK(err2.str().find("not a multiple of the node count") !=
        std::string::npos);
  auto missing = parseCostArgs({"gemm", "--m", "1", "--n", "1", "--k", "1",
                                "--tables", "/nonexistent.json"});
  std::ostringstream out3, err3;
  CHECK(runCost(*missing, out3, err3) == 1);
  CHECK(err3.str().find("cannot open file") != std::string::npos);
}

TEST_CASE("CLI and API agree; K > 1 is the S-curve alone") {
  auto c =
      parseCostArgs({"collective", "--op", "all-reduce", "--bytes", "1048576",
                     "--group-size", "16", "--nodes", "2", "--json"});
  REQUIRE(c);
  std::ostringstream out, err;
  REQUIRE(runCost(*c, out, err) == 0);
  const std::string api = shardlab::api::estimateCollectiveJson(
      R"({"op":"all-reduce","bytes":1048576,"group_size":16,"nodes":2})");
  CHECK(out.str() == api + "\n");
  auto reply = nlohmann::json::parse(api);
  // NCCL's tree, cheaper than XLA's ring here: H100 terms (launch 45 us,
  // rtt 31, chunk prep 6, NIC 25 GB/s x 1.025), one level each way, each
  // NIC sending 1 MiB / 8: 45 + 2 x (37 + 5.37 + 6) = 141.8 us.
  CHECK(reply["model"] == "s-curve/tree all-reduce");
  CHECK(reply["time_us"].get<double>() == doctest::Approx(141.8).epsilon(1e-3));
  // XLA's ring alone: research/xla_lhs.md §d.2, H100 defaults, AR of 1 MiB
  // over 2 x 8 GPUs.
  auto ring = nlohmann::json::parse(shardlab::api::estimateCollectiveJson(
      R"({"op":"all-reduce","bytes":1048576,"group_size":16,"nodes":2,)"
      R"("sol_options":"tree_all_reduce=0"})"));
  CHECK(ring["model"] == "s-curve/ring all-reduce");
  CHECK(ring["time_us"].get<double>() == doctest::Approx(193.8).epsilon(1e-3));
}

TEST_CASE("XLA text-proto tables: --device picks one of several devices") {
  const std::string xla =
      std::string(SHARDLAB_SOURCE_DIR) + "/tests/fuzz/cost_corpus/xla_0.txtpb";
  std::vector<std::string> args = {
      "collective",   "--op", "all-reduce", "--bytes", "1024",
      "--group-size", "8",    "--tables",   xla,       "--json"};
  auto without = parseCostArgs(args);
  REQUIRE(without);
  std::ostringstream out, err;
  CHECK(runCost(*without, out, err) == 1);
  CHECK(err.str().find("the table holds several devices (sm_90, "
                       "sm_100_B200); choose one with --device") !=
        std::string::npos);
  args.insert(args.end(), {"--device", "sm_90"});
  auto with = parseCostArgs(args);
  REQUIRE(with);
  CHECK(with->options["device"] == "sm_90");
  std::ostringstream out2, err2;
  REQUIRE(runCost(*with, out2, err2) == 0);
  auto reply = nlohmann::json::parse(out2.str());
  CHECK(reply["model"] == "collective-table/exact");
  CHECK(reply["explanation"]["key"] == "all-reduce|{{0,1,2,3,4,5,6,7}}|f32");
}
