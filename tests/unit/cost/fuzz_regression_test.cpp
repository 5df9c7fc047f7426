// Regressions found by tests/fuzz/fuzz_cost_tables.cpp (UBSan/ASan reports
// on tables that load): each input must load or fail with a message, and
// the interpolators built from it must not overflow.
#include "shardlab/cost/collective_model.h"
#include "shardlab/cost/gemm_model.h"
#include "shardlab/cost/sol_model.h"
#include "shardlab/cost/xla_import.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace shardlab::cost;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

TEST_CASE("saturating double -> int64 conversion") {
  CHECK(saturatingInt64(7.9) == 7);
  CHECK(saturatingInt64(-7.9) == -7);
  CHECK(saturatingInt64(7.3787e19) == INT64_MAX);
  CHECK(saturatingInt64(-1e300) == INT64_MIN);
  CHECK(saturatingInt64(0.0 / 0.0) == 0);
}

TEST_CASE("fuzz: a FLOP rate beyond int64 in a user GEMM profile") {
  // crash-703f04f9: UBSan "7.3787e+19 is outside the range of long".
  const char *text = R"pb(
entries {
  key: "sm_100_B200"
  value {
    entries {
      b: 5 m: 256 n: 256 k: 256
      flops { key: "bf16xbf16->bf16" value: 67650065065584541060 }
    }
  }
})pb";
  Result<PerfTable> t = importXlaGemmTable(text, "");
  REQUIRE(t);
  auto mi = MatmulInterpolator::create(*t, GemmTableKind::UserProfiles,
                                       EstimateMode::Compatible);
  REQUIRE(mi);
  GemmQuery q;
  q.dims = {5, 256, 256, 256};
  q.lhs_dtype = q.rhs_dtype = q.out_dtype = "bf16";
  CHECK(mi->estimateTime(q));
}

TEST_CASE("fuzz: huge collective throughputs and GEMM dims") {
  PerfTable t;
  t.metadata.source = "measured";
  CollectiveEntry e;
  e.op = "all-gather";
  e.comm_type = CommType::SinglePartition;
  e.bytes = 1024;
  e.devices_per_group = 2;
  e.throughput_bytes_per_s = 1e300;
  t.collectives.push_back(e);
  REQUIRE(validatePerfTable(t));
  CHECK(CollectiveInterpolator::create(t, {}));
  GemmEntry g{1, int64_t{1} << 41, 256, 256, "bf16", "bf16", "bf16", {}, 1e12};
  t.gemms.push_back(g);
  Result<bool> valid = validatePerfTable(t);
  REQUIRE_FALSE(valid);
  CHECK(valid.error().message == "gemms[0]: expected b, m, n, k in [1, 2^40]");
}

TEST_CASE("S-curve chunk count with a huge chunk size does not overflow") {
  SolConfig c = solPlatformDefaults("");
  c.chunk_size_bytes = INT64_MAX;
  CHECK(chunkPrepUs(c, 1 << 20) == c.chunk_prep_us);
  CHECK(chunkPrepUs(c, 0) == 0);
  c.chunk_size_bytes = 4;
  CHECK(chunkPrepUs(c, 9) == 3 * c.chunk_prep_us);
}

TEST_CASE("over-size table texts and files are refused before parsing") {
  const std::string text(size_t(kMaxPerfTableFileBytes) + 1, ' ');
  Result<PerfTable> parsed = parsePerfTable(text);
  REQUIRE_FALSE(parsed);
  CHECK(parsed.error().message.find("are refused") != std::string::npos);
  CHECK_FALSE(importXlaGemmTable(text, ""));
  CHECK_FALSE(parseTextProto(text));
  // A sparse 1 GiB file: refused by its size, never read.
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "shardlab_1gib_table.json";
  { std::ofstream(path.string()) << ' '; }
  std::filesystem::resize_file(path, std::uintmax_t{1} << 30);
  Result<PerfTable> loaded = loadPerfTable(path.string());
  std::filesystem::remove(path);
  REQUIRE_FALSE(loaded);
  CHECK(loaded.error().message.find("is 1073741824 bytes") !=
        std::string::npos);
}

TEST_CASE("non-grid GEMM tables: answered from the measured points") {
  PerfTable t;
  t.metadata.source = "measured";
  // Rate doubles from m = 256 to m = 512; one point off that line.
  t.gemms.push_back({1, 256, 256, 256, "bf16", "bf16", "bf16", {}, 1e12});
  t.gemms.push_back({1, 512, 256, 256, "bf16", "bf16", "bf16", {}, 2e12});
  t.gemms.push_back({1, 256, 512, 512, "bf16", "bf16", "bf16", {}, 1e12});
  CHECK(checkFullGemmGrid(t, "bf16xbf16->bf16").error().message ==
        "gemms (bf16xbf16->bf16): not a full grid, missing b=1 m=256 n=256 "
        "k=512");
  for (EstimateMode mode : {EstimateMode::Compatible, EstimateMode::Accurate}) {
    CAPTURE(int(mode));
    auto mi = MatmulInterpolator::create(t, GemmTableKind::Default, mode);
    REQUIRE(mi);
    GemmQuery q;
    // Its bracket in (k, n) needs (256, 512, 256), which is not measured.
    q.dims = {1, 256, 362, 362};
    q.lhs_dtype = q.rhs_dtype = q.out_dtype = "bf16";
    Result<Estimate> e = mi->estimateTime(q);
    REQUIRE(e);
    const double flops = 2.0 * 256 * 362 * 362;
    const double rate = flops / (e->time_us * 1e-6);
    CHECK(rate >= 1e12 * 0.999); // within the measured rates
    CHECK(rate <= 2e12 * 1.001);
    CHECK(e->explanation.note.find("local quadratic fit") != std::string::npos);
    CHECK_FALSE(e->explanation.neighbours.empty());
    REQUIRE(mi->timeUs(q));
    CHECK(*mi->timeUs(q) == doctest::Approx(e->time_us));
  }
}
