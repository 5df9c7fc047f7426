// Collectors: flag parsing, byte sizes, lists and both programs' options.
#include "shardlab/collectors/collective_plan.h"
#include "shardlab/collectors/flags.h"
#include "shardlab/collectors/gemm_plan.h"

#include <doctest/doctest.h>

using namespace shardlab::collectors;

TEST_CASE("collectors: byte sizes use binary suffixes") {
  CHECK(*parseBytes("1024") == 1024);
  CHECK(*parseBytes("1K") == 1024);
  CHECK(*parseBytes("32M") == 32 << 20);
  CHECK(*parseBytes("2G") == int64_t{2} << 30);
  CHECK(*parseBytes("1KiB") == 1024);
  CHECK(*parseBytes("4kb") == 4096);
  CHECK_FALSE(parseBytes("0"));
  CHECK_FALSE(parseBytes("-1K"));
  CHECK_FALSE(parseBytes("1X"));
  CHECK_FALSE(parseBytes(""));
  CHECK(parseBytes("abc").error().message.find("not a byte size") !=
        std::string::npos);
  CHECK(formatBytes(1024) == "1K");
  CHECK(formatBytes(int64_t{2} << 30) == "2G");
  CHECK(formatBytes(1000) == "1000");
}

TEST_CASE("collectors: integer lists accept ranges and dedupe") {
  CHECK(*parseIntList("1,2,4", "x") == std::vector<int64_t>{1, 2, 4});
  CHECK(*parseIntList("256..4096", "x") ==
        std::vector<int64_t>{256, 512, 1024, 2048, 4096});
  CHECK(*parseIntList("4, 1,16..32,4", "x") ==
        std::vector<int64_t>{1, 4, 16, 32});
  CHECK_FALSE(parseIntList("8..2", "x"));
  CHECK_FALSE(parseIntList("", "x"));
  CHECK(parseIntList("1,0", "--batch").error().message.find("--batch") == 0);
}

TEST_CASE("collectors: flag forms and errors") {
  const std::vector<FlagSpec> specs = {{"iters", 'n', "N", "", ""},
                                       {"dry-run", 0, "", "", ""}};
  Result<ParsedFlags> f = parseFlags(specs, {"-n", "5", "--dry-run"});
  REQUIRE(f);
  CHECK(f->get("iters", "") == "5");
  CHECK(f->has("dry-run"));
  CHECK(parseFlags(specs, {"-n7"})->get("iters", "") == "7");
  CHECK(parseFlags(specs, {"--iters=9"})->get("iters", "") == "9");
  CHECK(parseFlags(specs, {"--iters"}).error().message ==
        "--iters needs a value (N)");
  CHECK(parseFlags(specs, {"--dry-run=1"}).error().message ==
        "--dry-run takes no value");
  CHECK(parseFlags(specs, {"--nope"}).error().message ==
        "unknown flag '--nope' (see --help)");
  CHECK(parseFlags(specs, {"stray"}).error().message ==
        "unexpected argument 'stray' (see --help)");
}

TEST_CASE("collectors: collective options defaults follow XLA's sweep") {
  Result<CollectiveOptions> o = parseCollectiveOptions({});
  REQUIRE(o);
  CHECK(o->min_bytes == 1024);
  CHECK(o->max_bytes == int64_t{2} << 30);
  CHECK(o->step_factor == 2);
  CHECK(o->ops.size() == 5);
  CHECK(o->dtypes == std::vector<std::string>{"f32"});
  CHECK(o->group_sizes == std::vector<int64_t>{2, 4, 8});
}

TEST_CASE("collectors: collective options parse nccl-tests style flags") {
  Result<CollectiveOptions> o = parseCollectiveOptions(
      {"-b",       "8K",
       "-e",       "64M",
       "-f",       "4",
       "-n",       "50",
       "-w",       "0",
       "-c",       "0",
       "-d",       "bf16,f32",
       "--ops",    "all-gather,sendrecv",
       "--groups", "[1,8]<=[8];{{0,4},{1,5},{2,6},{3,7}}",
       "--out",    "x.json",
       "--dry-run"});
  REQUIRE(o);
  CHECK(o->min_bytes == 8192);
  CHECK(o->max_bytes == 64 << 20);
  CHECK(o->step_factor == 4);
  CHECK(o->iters == 50);
  CHECK(o->warmup == 0);
  CHECK(o->check == 0);
  CHECK(o->dtypes == std::vector<std::string>{"bf16", "f32"});
  REQUIRE(o->ops.size() == 2);
  CHECK(o->ops[1] == CollOp::CollectivePermute);
  CHECK(o->groups.size() == 2);
  CHECK(o->out == "x.json");
  CHECK(o->dry_run);
}

TEST_CASE("collectors: collective option errors say what is wrong") {
  CHECK(parseCollectiveOptions({"-b", "2G", "-e", "1K"}).error().message ==
        "--minbytes 2G > --maxbytes 1K");
  CHECK(parseCollectiveOptions({"-d", "f64"})
            .error()
            .message.find("unsupported type 'f64'") != std::string::npos);
  CHECK(parseCollectiveOptions({"--ops", "broadcast"})
            .error()
            .message.find("unknown op 'broadcast'") != std::string::npos);
  CHECK(parseCollectiveOptions({"-f", "1"})
            .error()
            .message.find("expected a number > 1") != std::string::npos);
  CHECK(parseCollectiveOptions({"-n", "0"})
            .error()
            .message.find("--iters: expected a positive integer") == 0);
  CHECK(collectiveHelp().find("--minbytes SIZE") != std::string::npos);
}

TEST_CASE("collectors: gemm options") {
  Result<GemmOptions> d = parseGemmOptions({});
  REQUIRE(d);
  CHECK(d->batch == std::vector<int64_t>{1, 2, 4});
  CHECK(d->m == std::vector<int64_t>{256, 512, 1024, 2048, 4096});
  CHECK(d->k == d->m);
  CHECK(d->f32_compute == F32Compute::Tf32);
  Result<GemmOptions> o = parseGemmOptions(
      {"-b", "128", "-e", "512", "-k", "64", "--batch", "8", "-d", "f32,fp8",
       "--f32-compute", "strict", "--rotate-bytes", "1G", "--algos", "4"});
  REQUIRE(o);
  CHECK(o->m == std::vector<int64_t>{128, 256, 512});
  CHECK(o->n == o->m);
  CHECK(o->k == std::vector<int64_t>{64});
  CHECK(o->batch == std::vector<int64_t>{8});
  CHECK(o->f32_compute == F32Compute::Strict);
  CHECK(o->rotate_bytes == int64_t{1} << 30);
  CHECK(o->algos == 4);
  CHECK(parseGemmOptions({"--f32-compute", "fast"})
            .error()
            .message.find("tf32 or strict") != std::string::npos);
  CHECK(parseGemmOptions({"-d", "int4"})
            .error()
            .message.find("unsupported GEMM type 'int4'") != std::string::npos);
  CHECK(gemmHelp().find("--f32-compute MODE") != std::string::npos);
}
