// Table loading, validation messages, duplicates, writing and round trips.
#include "shardlab/cost/perf_table.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

using namespace shardlab::cost;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

namespace {

const char *kValid = R"({
  "format": "shardlab-perf-table", "version": 1,
  "metadata": {"source": "analytical", "device": {"name": "NVIDIA H100"}},
  "collectives": [
    {"op": "all-reduce", "comm_type": "single_partition", "dtype": "f32",
     "bytes": 1024, "devices_per_group": 8, "replica_groups": "[1,8]<=[8]",
     "throughput_bytes_per_s": 2048}
  ],
  "gemms": [
    {"b": 1, "m": 256, "n": 256, "k": 256, "lhs_dtype": "bf16",
     "rhs_dtype": "bf16", "out_dtype": "bf16", "time_us": {"median": 2.0}}
  ]
})";

std::string Replace(std::string text, const std::string &from,
                    const std::string &to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

std::string ErrorOf(const std::string &text) {
  Result<PerfTable> t = parsePerfTable(text);
  REQUIRE_FALSE(t);
  return t.error().message;
}

} // namespace

TEST_CASE("a valid table loads with derived FLOP rate") {
  Result<PerfTable> t = parsePerfTable(kValid);
  REQUIRE(t);
  CHECK(t->collectives.size() == 1);
  CHECK(t->collectives[0].replica_groups->group_size() == 8);
  CHECK(t->gemms[0].flop_per_s ==
        doctest::Approx(2.0 * 256 * 256 * 256 / 2e-6));
  CHECK(gemmDtypeKey(t->gemms[0]) == "bf16xbf16->bf16");
}

TEST_CASE("errors name the entry, the field and what was expected") {
  CHECK(ErrorOf(Replace(kValid, "\"bytes\": 1024", "\"bytes\": -5")) ==
        "collectives[0].bytes: expected an integer >= 1, got number -5");
  CHECK(ErrorOf(Replace(kValid, "\"bytes\": 1024", "\"bytes\": \"1k\""))
            .find("collectives[0].bytes: expected an integer") == 0);
  CHECK(ErrorOf(Replace(kValid, "{\"median\": 2.0}", "{\"median\": 0}"))
            .find("gemms[0].time_us.median: expected a finite number > 0") ==
        0);
  CHECK(ErrorOf(Replace(kValid, "\"analytical\"", "\"guessed\""))
            .find("metadata.source") == 0);
  CHECK(ErrorOf(Replace(kValid, "\"m\": 256, ", "")) ==
        "gemms[0].m: expected an integer >= 1 (field is missing)");
  CHECK(ErrorOf("{\"format\": ").find("invalid JSON") == 0);
  CHECK(ErrorOf("[]").find("top level") != std::string::npos);
}

TEST_CASE("inconsistent throughput and time are rejected") {
  std::string text = Replace(kValid, "\"throughput_bytes_per_s\": 2048",
                             "\"throughput_bytes_per_s\": 2048, "
                             "\"time_us\": {\"median\": 1.0}");
  CHECK(ErrorOf(text).find("throughput_bytes_per_s: expected bytes / "
                           "time_us.median") != std::string::npos);
}

TEST_CASE("duplicate entries are rejected") {
  PerfTable t = *parsePerfTable(kValid);
  t.gemms.push_back(t.gemms[0]);
  Result<bool> v = validatePerfTable(t);
  REQUIRE_FALSE(v);
  CHECK(v.error().message.find("gemms[1]: duplicate of gemms[0]") == 0);
}

TEST_CASE("write is atomic and round-trips") {
  const std::string path = "cost_test_table.shardlab.json";
  PerfTable t = *parsePerfTable(kValid);
  REQUIRE(writePerfTable(t, path));
  CHECK_FALSE(std::ifstream(path + ".tmp").good());
  Result<PerfTable> back = loadPerfTable(path);
  REQUIRE(back);
  CHECK(serializePerfTable(*back) == serializePerfTable(t));
  t.metadata.source = "made-up";
  CHECK_FALSE(writePerfTable(t, path)); // invalid tables are not written
  CHECK(loadPerfTable(path));           // and the old file is intact
  std::remove(path.c_str());
  CHECK(loadPerfTable(path).error().message.find("cannot open") !=
        std::string::npos);
}

TEST_CASE("full-grid check reports the missing corner") {
  PerfTable t = *parsePerfTable(kValid);
  GemmEntry g = t.gemms[0];
  g.m = 512;
  g.n = 512;
  t.gemms.push_back(g);
  Result<bool> grid = checkFullGemmGrid(t, "bf16xbf16->bf16");
  REQUIRE_FALSE(grid);
  CHECK(grid.error().message.find("missing b=1 m=256 n=512 k=256") !=
        std::string::npos);
}

TEST_CASE("dtype keys split and reject unknown types") {
  auto parts = splitGemmDtypeKey("f8e4m3fnxf8e5m2->bf16");
  REQUIRE(parts);
  CHECK((*parts)[0] == "f8e4m3fn");
  CHECK((*parts)[1] == "f8e5m2");
  CHECK((*parts)[2] == "bf16");
  CHECK_FALSE(splitGemmDtypeKey("bf16->bf16"));
  CHECK_FALSE(splitGemmDtypeKey("qqxbf16->bf16"));
}

TEST_CASE("a table's overlap entry: read, written back, and checked") {
  const std::string with = Replace(
      kValid, "\"gemms\": [",
      "\"overlap\": {\"compute_slowdown\": 1.12, \"comm_slowdown\": 1.5, "
      "\"source\": \"overlap.py, 8 x H100\"},\n  \"gemms\": [");
  Result<PerfTable> t = parsePerfTable(with);
  REQUIRE(t);
  REQUIRE(t->overlap);
  CHECK(t->overlap->compute_slowdown == 1.12);
  CHECK(t->overlap->comm_slowdown == 1.5);
  CHECK(t->overlap->source == "overlap.py, 8 x H100");
  Result<PerfTable> back = parsePerfTable(serializePerfTable(*t));
  REQUIRE(back);
  REQUIRE(back->overlap);
  CHECK(back->overlap->comm_slowdown == 1.5);
  CHECK_FALSE(parsePerfTable(kValid)->overlap);
  // A speed-up beside a transfer is not a slowdown; the source is required.
  CHECK(ErrorOf(Replace(with, "1.12", "0.9")) ==
        "overlap.compute_slowdown: expected a factor from 1 (no slowdown) to "
        "100, got number 0.9");
  CHECK(ErrorOf(Replace(with, ", \"source\": \"overlap.py, 8 x H100\"", ""))
            .find("overlap.source") == 0);
  CHECK(ErrorOf(Replace(with, "\"overlap\": {", "\"overlap\": 1.12, \"x\": {"))
            .find("overlap: expected an object") == 0);
}

TEST_CASE("a table's fused_attention entry: read, written back, and checked") {
  const std::string with = Replace(
      kValid, "\"gemms\": [",
      "\"fused_attention\": {\"forward_slowdown\": 1.3, "
      "\"backward_slowdown\": 0.95, \"source\": \"programs.py, H100\"},\n"
      "  \"gemms\": [");
  Result<PerfTable> t = parsePerfTable(with);
  REQUIRE(t);
  REQUIRE(t->fused_attention);
  CHECK(t->fused_attention->forward_slowdown == 1.3);
  // Faster than cuBLAS's GEMMs at the table's rates is a measurement too.
  CHECK(t->fused_attention->backward_slowdown == 0.95);
  CHECK(t->fused_attention->source == "programs.py, H100");
  Result<PerfTable> back = parsePerfTable(serializePerfTable(*t));
  REQUIRE(back);
  REQUIRE(back->fused_attention);
  CHECK(back->fused_attention->backward_slowdown == 0.95);
  CHECK_FALSE(parsePerfTable(kValid)->fused_attention);
  CHECK(ErrorOf(Replace(with, "0.95", "0.05")) ==
        "fused_attention.backward_slowdown: expected a factor from 0.1 to 100 "
        "(1: the price of its GEMMs), got number 0.05");
  CHECK(ErrorOf(Replace(with, ", \"source\": \"programs.py, H100\"", ""))
            .find("fused_attention.source") == 0);
  CHECK(ErrorOf(Replace(with, "\"fused_attention\": {",
                        "\"fused_attention\": [], \"x\": {"))
            .find("fused_attention: expected an object") == 0);
}
