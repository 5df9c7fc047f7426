// Which collectives are combined into one call and in what order the block
// then runs, checked against the rules in fusion/combine_collectives.h
// worked by hand; and what the schedule makes of it.
#include "shardlab/cost/hardware.h"
#include "shardlab/fusion/combine_collectives.h"
#include "shardlab/schedule/program.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

using namespace shardlab;

namespace {

std::unique_ptr<Module> parse(const char *text) {
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  return module;
}

Block &mainBody(Module &module) {
  Operation *main = module.lookupSymbol("main");
  REQUIRE(main);
  return main->region(0).front();
}

// Each step as its ops' result names: "%a+%b" for a combined step.
std::vector<std::string> stepNames(Module &module,
                                   const fusion::CombineOptions &options) {
  // A candidate is any all_reduce; its key is its element type, its bytes
  // its result's.
  auto candidate =
      [](Operation &op) -> std::optional<fusion::CombineCandidate> {
    if (!op.is("stablehlo.all_reduce"))
      return std::nullopt;
    const Type type = op.result(0)->type;
    int64_t elements = 1;
    for (int64_t d : type->shape)
      elements *= d;
    return fusion::CombineCandidate{type->element->text, elements * 4};
  };
  std::vector<std::string> names;
  for (const std::vector<Operation *> &step :
       fusion::orderWithCombinedCollectives(mainBody(module), options,
                                            candidate)) {
    std::string name;
    for (const Operation *op : step)
      name += (name.empty() ? "" : "+") +
              (op->numResults() ? std::to_string(op->loc.line) : "ret");
    names.push_back(name);
  }
  return names;
}

// Line numbers name the ops: 3 %a, 8 %s (uses %a), 9 %b, 14 %c (uses %s,
// so it depends on %a), 19 %d (i32: another key).
const char *kBackward = R"(
func.func @main(%g1: tensor<16xf32>, %g2: tensor<16xf32>, %g3: tensor<16xi32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xi32>) {
  %a = "stablehlo.all_reduce"(%g1) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %x = stablehlo.add %l, %r : tensor<f32>
    stablehlo.return %x : tensor<f32>
  }) : (tensor<16xf32>) -> tensor<16xf32>
  %s = stablehlo.add %a, %g2 : tensor<16xf32>
  %b = "stablehlo.all_reduce"(%g2) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %x = stablehlo.add %l, %r : tensor<f32>
    stablehlo.return %x : tensor<f32>
  }) : (tensor<16xf32>) -> tensor<16xf32>
  %c = "stablehlo.all_reduce"(%s) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %x = stablehlo.add %l, %r : tensor<f32>
    stablehlo.return %x : tensor<f32>
  }) : (tensor<16xf32>) -> tensor<16xf32>
  %d = "stablehlo.all_reduce"(%g3) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
  ^bb0(%l: tensor<i32>, %r: tensor<i32>):
    %x = stablehlo.add %l, %r : tensor<i32>
    stablehlo.return %x : tensor<i32>
  }) : (tensor<16xi32>) -> tensor<16xi32>
  return %b, %c, %d : tensor<16xf32>, tensor<16xf32>, tensor<16xi32>
}
)";

} // namespace

TEST_CASE("Combining: independent collectives of one key are one step; a "
          "dependent one starts a new group") {
  auto module = parse(kBackward);
  fusion::CombineOptions options;
  // %a and %b combine (the step sits at %b, and %s, which reads %a, waits
  // for it, so comes after); %c reads %s, so depends on %a: a group of its own;
  // %d has another key.
  CHECK(stepNames(*module, options) ==
        std::vector<std::string>{"3+9", "8", "14", "19", "ret"});
  SUBCASE("the threshold keeps a group within its bytes") {
    options.threshold_bytes = 64 + 63; // one 64-byte all-reduce fits, two not
    CHECK(stepNames(*module, options) ==
          std::vector<std::string>{"3", "8", "9", "14", "19", "ret"});
  }
  SUBCASE("the member cap keeps a group within its count") {
    options.max_members = 1; // XLA's is 256; one member: nothing combines
    CHECK(stepNames(*module, options) ==
          std::vector<std::string>{"3", "8", "9", "14", "19", "ret"});
  }
  SUBCASE("off, the program order") {
    options.enabled = false;
    CHECK(stepNames(*module, options) ==
          std::vector<std::string>{"3", "8", "9", "14", "19", "ret"});
  }
}

TEST_CASE("Combining: the schedule pays one network latency for a combined "
          "all-reduce, and an export's repeated all-gather once") {
  // 16 devices on 2 nodes; three small gradient all-reduces across the
  // nodes (latency-bound) and one all-gather written twice.
  auto module = parse(R"(
func.func @main(%g1: tensor<256xf32>, %g2: tensor<256xf32>, %g3: tensor<256xf32>, %w: tensor<64x8xf32>) -> (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<64x16xf32>, tensor<64x16xf32>) {
  %a = "stablehlo.all_reduce"(%g1) <{replica_groups = dense<[[0, 8]]> : tensor<1x2xi64>, use_global_device_ids}> ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %x = stablehlo.add %l, %r : tensor<f32>
    stablehlo.return %x : tensor<f32>
  }) : (tensor<256xf32>) -> tensor<256xf32>
  %b = "stablehlo.all_reduce"(%g2) <{replica_groups = dense<[[0, 8]]> : tensor<1x2xi64>, use_global_device_ids}> ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %x = stablehlo.add %l, %r : tensor<f32>
    stablehlo.return %x : tensor<f32>
  }) : (tensor<256xf32>) -> tensor<256xf32>
  %c = "stablehlo.all_reduce"(%g3) <{replica_groups = dense<[[0, 8]]> : tensor<1x2xi64>, use_global_device_ids}> ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %x = stablehlo.add %l, %r : tensor<f32>
    stablehlo.return %x : tensor<f32>
  }) : (tensor<256xf32>) -> tensor<256xf32>
  %w1 = "stablehlo.all_gather"(%w) <{all_gather_dim = 1 : i64, replica_groups = dense<[[0, 8]]> : tensor<1x2xi64>, use_global_device_ids}> : (tensor<64x8xf32>) -> tensor<64x16xf32>
  %w2 = "stablehlo.all_gather"(%w) <{all_gather_dim = 1 : i64, replica_groups = dense<[[0, 8]]> : tensor<1x2xi64>, use_global_device_ids}> : (tensor<64x8xf32>) -> tensor<64x16xf32>
  return %a, %b, %c, %w1, %w2 : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<64x16xf32>, tensor<64x16xf32>
}
)");
  schedule::ProgramOptions options;
  options.hardware = *cost::findHardwarePreset("h100");
  options.sol = cost::solDefaultsFor(options.hardware);
  struct Calls {
    int all_reduce = 0, all_gather = 0;
    double all_reduce_us = 0;
  };
  auto callsOf = [&](bool combine) {
    options.combine_collectives = combine;
    DiagnosticEngine diags;
    Result<schedule::Program> program =
        schedule::buildProgram(*module, options, diags);
    REQUIRE(program.ok());
    Calls calls;
    for (const schedule::CollectiveInfo &c : program->collectives) {
      if (c.kind == schedule::CollectiveKind::AllReduce) {
        ++calls.all_reduce;
        calls.all_reduce_us += c.time_us;
      } else if (c.kind == schedule::CollectiveKind::AllGather) {
        ++calls.all_gather;
      }
    }
    return calls;
  };
  const Calls combined = callsOf(true), separate = callsOf(false);
  CHECK(combined.all_reduce == 1);
  CHECK(separate.all_reduce == 3);
  CHECK(combined.all_gather == 1);
  CHECK(separate.all_gather == 2);
  // 1 KiB each: the S-curve's latency (launch + ring steps) dominates, so
  // one call of 3 KiB costs about a third of three calls of 1 KiB.
  CHECK(combined.all_reduce_us < 0.4 * separate.all_reduce_us);
  CHECK(combined.all_reduce_us > 0.3 * separate.all_reduce_us);
  // Fusion is a setting of its own: without it the collectives are still
  // combined, so the no-fusion variant of a table changes kernels alone.
  options.fusion = false;
  const Calls unfused = callsOf(true);
  CHECK(unfused.all_reduce == 1);
  CHECK(unfused.all_gather == 1);
}
