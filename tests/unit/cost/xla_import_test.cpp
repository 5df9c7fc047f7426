// Importing XLA's text-proto tables (collective profiles, GEMM tables).
#include "shardlab/cost/collective_model.h"
#include "shardlab/cost/gemm_model.h"
#include "shardlab/cost/xla_import.h"

#include <doctest/doctest.h>

using namespace shardlab::cost;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

namespace {

// Shaped like XLA's default_collective_perf_table.txtpb (values made up for
// the test only; they are never shipped as a table).
const char *kProfiles = R"pb(
entries {
  key: "sm_90"
  value {
    entries {
      instruction {
        name: "_"
        opcode: "all-reduce"
        shape { element_type: F32 dimensions: 256 layout { minor_to_major: 0 } }
        iota_collective_device_list {
          num_replica_groups: 1
          num_devices_per_group: 8
          iota_reshape_dims: 8
          iota_transpose_perm: 0
        }
        use_global_device_ids: true
      }
      fingerprint: "abc"
      network_throughput_bytes_per_sec: 20765736
    }
    entries {
      instruction {
        opcode: "reduce-scatter"
        shape { element_type: BF16 dimensions: 64 }
        replica_groups { replica_ids: [0, 1] }
        replica_groups { replica_ids: [2, 3] }
      }
      network_throughput_bytes_per_sec: 1000
    }
    entries {
      instruction {
        opcode: "collective-permute"
        shape { element_type: F32 dimensions: 4 }
        source_target_pairs { source: 0 target: 1 }
        source_target_pairs { source: 1 target: 0 }
      }
      network_throughput_bytes_per_sec: 77
    }
  }
}
entries { key: "sm_100_B200" value { } }
)pb";

const char *kGemms = R"pb(
# proto-message: xla.GemmPerfTable
entries {
  key: "sm_100_B200"
  value {
    entries {
      b: 1 m: 256 n: 256 k: 256
      flops { key: "bf16xbf16->bf16" value: 6765006451612 }
      flops { key: "f32xf32->f32" value: 5065584541062 }
    }
  }
}
)pb";

} // namespace

TEST_CASE("text proto parse errors carry line and column") {
  Result<TextProtoField> bad = parseTextProto("a {\n  b: \"x\n");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "text proto 3:1: unterminated string");
  CHECK(parseTextProto("a {\n  b c\n}").error().message ==
        "text proto 2:5: expected ':' or '{' after 'b'");
  CHECK_FALSE(parseTextProto("a {"));
  CHECK_FALSE(parseTextProto("a b"));
  std::string deep(200, '{');
  CHECK_FALSE(parseTextProto("x " + deep));
}

TEST_CASE("collective profiles import with XLA's byte conventions") {
  CHECK(*listXlaDeviceKeys(kProfiles) ==
        std::vector<std::string>{"sm_90", "sm_100_B200"});
  Result<PerfTable> t = importXlaCollectiveProfiles(kProfiles, "sm_90");
  REQUIRE(t);
  REQUIRE(t->collectives.size() == 3);
  const CollectiveEntry &ar = t->collectives[0];
  CHECK(ar.op == "all-reduce");
  CHECK(ar.bytes == 1024);
  CHECK(ar.comm_type == CommType::SinglePartition);
  const CollectiveEntry &rs = t->collectives[1];
  CHECK(rs.dtype == "bf16");
  CHECK(rs.bytes == 64 * 2 * 2); // input bytes = output x group size
  CHECK(t->collectives[2].permute_type ==
        PermuteType::IntraPartitionTwoWayAllMutual);
  CHECK(t->metadata.source == "measured");
  Result<PerfTable> missing = importXlaCollectiveProfiles(kProfiles, "sm_80");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("sm_90, sm_100_B200") !=
        std::string::npos);
}

TEST_CASE("imported default table reproduces XLA's H100 1 KiB all-reduce") {
  PerfTable t = *importXlaCollectiveProfiles(kProfiles, "sm_90");
  CollectiveInterpolatorOptions opts;
  opts.interpolation = TableInterpolation::GridSnap;
  auto ci = CollectiveInterpolator::create(t, opts);
  CollectiveQuery q;
  q.op = CollectiveOp::AllReduce;
  q.dtype = "f32";
  q.bytes = 1024;
  q.groups = *parseReplicaGroups("[1,8]<=[8]");
  CHECK(ci->estimateTime(q)->time_us == doctest::Approx(49.312).epsilon(1e-6));
}

TEST_CASE("GEMM tables import per dtype key") {
  Result<PerfTable> t = importXlaGemmTable(kGemms, "");
  REQUIRE(t);
  REQUIRE(t->gemms.size() == 2);
  CHECK(gemmDtypeKey(t->gemms[1]) == "f32xf32->f32");
  CHECK(t->gemms[0].flop_per_s == 6765006451612.0);
  auto mi = MatmulInterpolator::create(*t, GemmTableKind::Default,
                                       EstimateMode::Compatible);
  GemmQuery q{{1, 512, 512, 512}, "s8", "s8", "s8"};
  // B200 vector: s8 (1,512^3) falls back to bf16 (1,256^3) -> 39.68 us.
  CHECK(mi->estimateTime(q)->time_us == doctest::Approx(39.68).epsilon(1e-4));
}
