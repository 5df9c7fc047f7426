// shardlab-reduce-scatter-creator against answers worked by hand from its
// rule (passes/gpu/reduce_scatter_creator.cpp): which all-reduces become
// reduce-scatters, over which groups in which order, and that the program
// computes the same values on simulated devices before and after.
#include "shardlab/interpreter/interpreter.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

#include <string>

using namespace shardlab;
using interpreter::Tensor;

namespace {

// 8 devices; each sums an 8x4 tensor (device d's element i is 100 d + i)
// over `groups` and keeps 2 rows at `table[partition_id]`.
std::string program(const std::string &groups, const std::string &table,
                    const std::string &offset_index = "%pid64") {
  return R"(
func.func @main(%x: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %s = "stablehlo.all_reduce"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<)" +
         groups + R"(> : tensor<2x4xi64>, use_global_device_ids}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %pid = stablehlo.partition_id : tensor<ui32>
  %pid64 = stablehlo.convert %pid : (tensor<ui32>) -> tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %table = stablehlo.constant dense<)" +
         table + R"(> : tensor<8xi64>
  %at = stablehlo.dynamic_slice %table, )" +
         offset_index +
         R"(, sizes = [1] : (tensor<8xi64>, tensor<i64>) -> tensor<1xi64>
  %off = stablehlo.reshape %at : (tensor<1xi64>) -> tensor<i64>
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %p = stablehlo.dynamic_slice %s, %off, %zero, sizes = [2, 4] : (tensor<8x4xf32>, tensor<i64>, tensor<i64>) -> tensor<2x4xf32>
  return %p : tensor<2x4xf32>
}
)";
}

std::unique_ptr<Module> parse(const std::string &text) {
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  return module;
}

void create(Module &module) {
  DiagnosticEngine diags;
  PassPipeline pipeline;
  REQUIRE(appendPass(pipeline, "shardlab-reduce-scatter-creator", ""));
  REQUIRE(runPassPipeline(module, pipeline, diags));
}

std::vector<std::string> opNames(Module &module) {
  std::vector<std::string> names;
  for (Operation &op : module.mainFunc()->region(0).front())
    names.emplace_back(op.name);
  return names;
}

std::vector<int64_t> groupsOf(Module &module) {
  std::vector<int64_t> out;
  for (Operation &op : module.mainFunc()->region(0).front())
    if (op.is("stablehlo.reduce_scatter")) {
      const DenseReader r = op.attrs.get("replica_groups")->denseReader();
      for (int64_t i = 0; i < r.size(); ++i)
        out.push_back(int64_t(r.doubleAt(i)));
    }
  return out;
}

std::vector<std::vector<Tensor>> inputs(Module &module) {
  const Type type = module.mainFunc()->region(0).front().argument(0)->type;
  std::vector<std::vector<Tensor>> args;
  for (int d = 0; d < 8; ++d) {
    Tensor t = Tensor::zeros(type);
    for (int64_t i = 0; i < 32; ++i)
      t.setReal(i, 100.0 * d + double(i));
    args.push_back({t});
  }
  return args;
}

// Every device's result, before and after the pass.
void checkSameValues(const std::string &text) {
  auto before = parse(text), after = parse(text);
  create(*after);
  const interpreter::DevicesRunResult a =
      interpreter::runOnDevices(*before, inputs(*before));
  const interpreter::DevicesRunResult b =
      interpreter::runOnDevices(*after, inputs(*after));
  REQUIRE_MESSAGE(a.ok, a.error);
  REQUIRE_MESSAGE(b.ok, b.error);
  // (Two modules, two type contexts: compared element by element.)
  for (size_t d = 0; d < 8; ++d)
    for (int64_t i = 0; i < 8; ++i)
      CHECK(a.results[d][0].real(i) == b.results[d][0].real(i));
}

} // namespace

TEST_CASE("Reduce-scatter creator: an all-reduce a device keeps its part of "
          "is a reduce-scatter") {
  // Groups {0, 2, 4, 6} and {1, 3, 5, 7}; device d keeps rows 2 (d / 2):
  // the members of each group keep parts 0, 1, 2, 3 in group order.
  const std::string text =
      program("[[0, 2, 4, 6], [1, 3, 5, 7]]", "[0, 0, 2, 2, 4, 4, 6, 6]");
  auto module = parse(text);
  create(*module);
  // The sum, the lookup and the slice are one reduce_scatter; the device
  // index and table nothing reads any more are gone.
  const std::vector<std::string> names = opNames(*module);
  INFO(names.size());
  CHECK(names ==
        std::vector<std::string>{"stablehlo.reduce_scatter", "func.return"});
  CHECK(groupsOf(*module) == std::vector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7});
  checkSameValues(text);
  // Device 2 (second of {0, 2, 4, 6}): rows 2-3 summed over the group:
  // element (2, 0) = sum over d of 100 d + 8 = 1200 + 32.
  auto run = parse(text);
  create(*run);
  const interpreter::DevicesRunResult r =
      interpreter::runOnDevices(*run, inputs(*run));
  REQUIRE(r.ok);
  CHECK(r.results[2][0].real(0) == 1232);
}

TEST_CASE("Reduce-scatter creator: members are listed in the order of the "
          "parts they keep") {
  // Device 0 keeps rows 2-3, device 2 rows 0-1: group {0, 2, 4, 6} is the
  // reduce-scatter's [2, 0, 6, 4].
  const std::string text =
      program("[[0, 2, 4, 6], [1, 3, 5, 7]]", "[2, 2, 0, 0, 6, 6, 4, 4]");
  auto module = parse(text);
  create(*module);
  CHECK(groupsOf(*module) == std::vector<int64_t>{2, 0, 6, 4, 3, 1, 7, 5});
  checkSameValues(text);
}

TEST_CASE("Reduce-scatter creator: left alone when the parts do not match "
          "the groups") {
  // Parts by the other axis: 0 and 2 keep the same rows (a slice by
  // other devices than the sum's).
  for (const std::string &text :
       {program("[[0, 2, 4, 6], [1, 3, 5, 7]]", "[0, 2, 0, 2, 4, 6, 4, 6]"),
        // an offset that is not a part's start
        program("[[0, 2, 4, 6], [1, 3, 5, 7]]", "[1, 1, 2, 2, 4, 4, 6, 6]"),
        // the table read at a constant, not at the device
        program("[[0, 2, 4, 6], [1, 3, 5, 7]]", "[0, 0, 2, 2, 4, 4, 6, 6]",
                "%one")}) {
    auto module = parse(text);
    create(*module);
    const std::vector<std::string> names = opNames(*module);
    CHECK(std::count(names.begin(), names.end(), "stablehlo.all_reduce") == 1);
    CHECK(std::count(names.begin(), names.end(), "stablehlo.reduce_scatter") ==
          0);
  }
  // Groups of replica ids (no use_global_device_ids): not the devices the
  // table is indexed by.
  {
    std::string replicas =
        program("[[0, 2, 4, 6], [1, 3, 5, 7]]", "[0, 0, 2, 2, 4, 4, 6, 6]");
    const std::string global = ", use_global_device_ids";
    replicas.erase(replicas.find(global), global.size());
    auto module = parse(replicas);
    create(*module);
    const std::vector<std::string> names = opNames(*module);
    CHECK(std::count(names.begin(), names.end(), "stablehlo.all_reduce") == 1);
  }
  // A sum read by another op too: every device needs all of it.
  std::string shared =
      program("[[0, 2, 4, 6], [1, 3, 5, 7]]", "[0, 0, 2, 2, 4, 4, 6, 6]");
  shared.replace(shared.find("return %p : tensor<2x4xf32>"),
                 std::string("return %p : tensor<2x4xf32>").size(),
                 "%q = stablehlo.negate %s : tensor<8x4xf32>\n"
                 "  return %p : tensor<2x4xf32>");
  auto module = parse(shared);
  create(*module);
  const std::vector<std::string> names = opNames(*module);
  CHECK(std::count(names.begin(), names.end(), "stablehlo.all_reduce") == 1);
}
