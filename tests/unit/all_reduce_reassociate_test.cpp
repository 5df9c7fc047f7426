// shardlab-all-reduce-reassociate against answers worked by hand from its
// rule (passes/gpu/all_reduce_reassociate.cpp): which sums of all-reduces
// become one all-reduce, that a chain folds, that the reduce-scatter
// creator then takes the one all-reduce with its (repeated) slices, and
// that the program computes the same values on simulated devices.
#include "shardlab/interpreter/interpreter.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

using namespace shardlab;
using interpreter::Tensor;

namespace {

const char *kGroups = "[[0, 2, 4, 6], [1, 3, 5, 7]]";

// An all-reduce of `operand` over `groups` (2x4) with `reducer` (add, max).
std::string allReduce(const std::string &result, const std::string &operand,
                      const std::string &groups, int channel,
                      const std::string &reducer = "add") {
  return "  " + result + R"( = "stablehlo.all_reduce"()" + operand +
         R"() <{channel_handle = #stablehlo.channel_handle<handle = )" +
         std::to_string(channel) + R"(, type = 1>, replica_groups = dense<)" +
         groups + R"(> : tensor<2x4xi64>, use_global_device_ids}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = stablehlo.)" +
         reducer + R"( %a, %b : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) : (tensor<8x4xf32>) -> tensor<8x4xf32>
)";
}

// 8 devices; x, y, z are each device's 8x4 inputs; `body` computes %r.
std::string program(const std::string &body) {
  return "func.func @main(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>, "
         "%z: tensor<8x4xf32>) -> tensor<8x4xf32> {\n" +
         body + "  return %r : tensor<8x4xf32>\n}\n";
}

// (x + y) summed over the groups, as Shardy writes it: each summed first.
std::string twoSums(const std::string &second_groups = kGroups,
                    const std::string &reducer = "add") {
  return program(allReduce("%sx", "%x", kGroups, 1, reducer) +
                 allReduce("%sy", "%y", second_groups, 2, reducer) +
                 "  %r = stablehlo.add %sx, %sy : tensor<8x4xf32>\n");
}

std::unique_ptr<Module> parse(const std::string &text) {
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  return module;
}

void run(Module &module, std::initializer_list<const char *> flags) {
  DiagnosticEngine diags;
  PassPipeline pipeline;
  for (const char *flag : flags)
    REQUIRE(appendPass(pipeline, flag, ""));
  REQUIRE(runPassPipeline(module, pipeline, diags));
}

size_t count(Module &module, const std::string &name) {
  size_t n = 0;
  for (Operation &op : module.mainFunc()->region(0).front())
    n += op.name == name;
  return n;
}

std::vector<std::vector<Tensor>> inputs(Module &module) {
  Block &entry = module.mainFunc()->region(0).front();
  std::vector<std::vector<Tensor>> args;
  for (int d = 0; d < 8; ++d) {
    std::vector<Tensor> per_device;
    for (size_t a = 0; a < entry.numArguments(); ++a) {
      Tensor t = Tensor::zeros(entry.argument(a)->type);
      for (int64_t i = 0; i < t.size(); ++i)
        t.setReal(i, 1000.0 * double(a) + 100.0 * d + double(i));
      per_device.push_back(t);
    }
    args.push_back(std::move(per_device));
  }
  return args;
}

// Every device's result, before and after `flags`.
void checkSameValues(const std::string &text,
                     std::initializer_list<const char *> flags) {
  auto before = parse(text), after = parse(text);
  run(*after, flags);
  const interpreter::DevicesRunResult a =
      interpreter::runOnDevices(*before, inputs(*before));
  const interpreter::DevicesRunResult b =
      interpreter::runOnDevices(*after, inputs(*after));
  REQUIRE_MESSAGE(a.ok, a.error);
  REQUIRE_MESSAGE(b.ok, b.error);
  for (size_t d = 0; d < 8; ++d) {
    const Tensor &ta = a.results[d][0], &tb = b.results[d][0];
    REQUIRE(ta.size() == tb.size());
    for (int64_t i = 0; i < ta.size(); ++i)
      CHECK(ta.real(i) == tb.real(i));
  }
}

const std::initializer_list<const char *> kReassociate = {
    "shardlab-all-reduce-reassociate"};

} // namespace

TEST_CASE("All-reduce reassociate: the sum of two all-reduces over the same "
          "groups is one all-reduce") {
  const std::string text = twoSums();
  auto module = parse(text);
  run(*module, kReassociate);
  CHECK(count(*module, "stablehlo.all_reduce") == 1);
  CHECK(count(*module, "stablehlo.add") == 1);
  checkSameValues(text, kReassociate);
  // Device 2, element 0: x + y summed over {0, 2, 4, 6}: for each device d,
  // (100 d) + (1000 + 100 d), so 4,000 + 2 x 1,200.
  auto after = parse(text);
  run(*after, kReassociate);
  const interpreter::DevicesRunResult r =
      interpreter::runOnDevices(*after, inputs(*after));
  REQUIRE(r.ok);
  CHECK(r.results[2][0].real(0) == 6400);
}

TEST_CASE("All-reduce reassociate: a chain of sums folds into one") {
  const std::string text = program(
      allReduce("%sx", "%x", kGroups, 1) + allReduce("%sy", "%y", kGroups, 2) +
      allReduce("%sz", "%z", kGroups, 3) +
      "  %xy = stablehlo.add %sx, %sy : tensor<8x4xf32>\n"
      "  %r = stablehlo.add %xy, %sz : tensor<8x4xf32>\n");
  auto module = parse(text);
  run(*module, kReassociate);
  CHECK(count(*module, "stablehlo.all_reduce") == 1);
  CHECK(count(*module, "stablehlo.add") == 2);
  checkSameValues(text, kReassociate);
}

TEST_CASE("All-reduce reassociate: left alone when the sums differ or are "
          "read elsewhere") {
  // Other groups: each sum is over other devices.
  // A max, not a sum: max(x) + max(y) is not max(x + y).
  for (const std::string &text :
       {twoSums("[[0, 1, 2, 3], [4, 5, 6, 7]]"), twoSums(kGroups, "maximum")}) {
    auto module = parse(text);
    run(*module, kReassociate);
    CHECK(count(*module, "stablehlo.all_reduce") == 2);
  }
  // One sum read by another op too: it is still needed on its own.
  std::string shared = twoSums();
  shared.replace(shared.find("  return %r"), 2,
                 "  %q = stablehlo.negate %sx : tensor<8x4xf32>\n  ");
  auto module = parse(shared);
  run(*module, kReassociate);
  CHECK(count(*module, "stablehlo.all_reduce") == 2);
}

TEST_CASE("All-reduce reassociate, then the reduce-scatter creator: one "
          "reduce-scatter for the part both slices keep") {
  // As the backward of sequence-parallel GEMMs reads it: the summed
  // gradient sliced twice at the device's part (two readers, one part).
  std::string body = allReduce("%sx", "%x", kGroups, 1) +
                     allReduce("%sy", "%y", kGroups, 2) + R"(
  %s = stablehlo.add %sx, %sy : tensor<8x4xf32>
  %pid = stablehlo.partition_id : tensor<ui32>
  %pid64 = stablehlo.convert %pid : (tensor<ui32>) -> tensor<i64>
  %table = stablehlo.constant dense<[0, 0, 2, 2, 4, 4, 6, 6]> : tensor<8xi64>
  %at = stablehlo.dynamic_slice %table, %pid64, sizes = [1] : (tensor<8xi64>, tensor<i64>) -> tensor<1xi64>
  %off = stablehlo.reshape %at : (tensor<1xi64>) -> tensor<i64>
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %p = stablehlo.dynamic_slice %s, %off, %zero, sizes = [2, 4] : (tensor<8x4xf32>, tensor<i64>, tensor<i64>) -> tensor<2x4xf32>
  %q = stablehlo.dynamic_slice %s, %off, %zero, sizes = [2, 4] : (tensor<8x4xf32>, tensor<i64>, tensor<i64>) -> tensor<2x4xf32>
  %pq = stablehlo.multiply %p, %q : tensor<2x4xf32>
  %r = stablehlo.pad %pq, %cst, low = [0, 0], high = [6, 0], interior = [0, 0] : (tensor<2x4xf32>, tensor<f32>) -> tensor<8x4xf32>
)";
  body = "  %cst = stablehlo.constant dense<0.0> : tensor<f32>\n" + body;
  const std::string text = program(body);
  const std::initializer_list<const char *> both = {
      "shardlab-all-reduce-reassociate", "shardlab-reduce-scatter-creator"};
  auto module = parse(text);
  run(*module, both);
  CHECK(count(*module, "stablehlo.all_reduce") == 0);
  CHECK(count(*module, "stablehlo.reduce_scatter") == 1);
  CHECK(count(*module, "stablehlo.dynamic_slice") == 0);
  checkSameValues(text, both);
  // Without the reassociation the two sums stay all-reduces: the creator
  // needs one all-reduce read only by slices.
  auto alone = parse(text);
  run(*alone, {"shardlab-reduce-scatter-creator"});
  CHECK(count(*alone, "stablehlo.all_reduce") == 2);
}
