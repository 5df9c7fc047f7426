// copyModule and layered contexts: a module parsed once and copied for
// each use (the comparer copies one parse for every plan) must give every
// copy the source's strings, types and attributes (one value, one pointer),
// keep what a copy makes out of the source, and leave the source as it was,
// also when copies are made and changed on several threads at once.
#include "passes/pass_utils.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

using namespace shardlab;

namespace {

const char *kModule = R"(sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x16xf32>
  %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
)";

std::unique_ptr<Module> parsed() {
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = parseModule(kModule, diags);
  REQUIRE(module);
  return module;
}

// `module` after Shardy's propagation pipeline, printed.
std::string propagated(Module &module) {
  DiagnosticEngine diags;
  Result<PassPipeline> pipeline = buildNamedPipeline("pipeline");
  REQUIRE(pipeline);
  REQUIRE(runPassPipeline(module, *pipeline, diags));
  return printModule(module);
}

Value *firstArgument(Module &module) {
  return module.mainFunc()->region(0).front().argument(0);
}

} // namespace

TEST_CASE("copyModule: the copy prints as the source and runs passes alone") {
  std::unique_ptr<Module> source = parsed();
  const std::string before = printModule(*source);
  const size_t source_attrs = source->ctx().attrs.size();
  const size_t source_ops = source->ctx().ops.live();

  std::unique_ptr<Module> copy = copyModule(*source);
  CHECK(printModule(*copy) == before);
  CHECK(&copy->ctx() != &source->ctx());

  const std::string after = propagated(*copy);
  CHECK(after != before); // propagation gave %1 a sharding
  CHECK(after.find("sdy.sharding_per_value") != std::string::npos);
  // The source is untouched: same text, nothing made in its context.
  CHECK(printModule(*source) == before);
  CHECK(source->ctx().attrs.size() == source_attrs);
  CHECK(source->ctx().ops.live() == source_ops);
  copy.reset();
  CHECK(source->ctx().ops.live() == source_ops);

  // The same pass on the source itself gives what it gave the copy.
  CHECK(propagated(*source) == after);
}

TEST_CASE("copyModule: a copy's context finds the source's values first") {
  std::unique_ptr<Module> source = parsed();
  const std::string_view name = source->ctx().intern("a name of the source");
  std::unique_ptr<Module> copy = copyModule(*source);
  Context &ctx = copy->ctx();
  Value *arg = firstArgument(*source);

  // Types, strings and uniqued attributes equal to the source's are the
  // source's own.
  CHECK(ctx.types.rankedTensor({8, 16}, ctx.types.element("f32")) == arg->type);
  CHECK(ctx.intern("a name of the source").data() == name.data());
  const TensorSharding *written = getSharding(arg);
  REQUIRE(written);
  CHECK(ctx.attrs.sharding(*written) == source->ctx().attrs.sharding(*written));
  CHECK(ctx.attrs.integer(7, ctx.types.element("i64")) ==
        ctx.attrs.integer(7, ctx.types.element("i64")));

  // What only the copy has is made in the copy's context, once.
  const size_t source_attrs = source->ctx().attrs.size();
  Type made = ctx.types.rankedTensor({3, 5, 7}, ctx.types.element("bf16"));
  CHECK(made == ctx.types.rankedTensor({3, 5, 7}, ctx.types.element("bf16")));
  CHECK(source->ctx().attrs.size() == source_attrs);
}

TEST_CASE("copyModule: copies made and changed on two threads at once") {
  std::unique_ptr<Module> source = parsed();
  const std::string before = printModule(*source);
  std::string expected;
  {
    std::unique_ptr<Module> copy = copyModule(*source);
    expected = propagated(*copy);
  }
  std::vector<std::string> results(2);
  auto work = [&](size_t slot) {
    for (int i = 0; i < 20; ++i) {
      std::unique_ptr<Module> copy = copyModule(*source);
      std::string text = propagated(*copy);
      if (text != expected)
        results[slot] = text;
    }
  };
  std::thread other(work, 0);
  work(1);
  other.join();
  CHECK(results[0].empty());
  CHECK(results[1].empty());
  CHECK(printModule(*source) == before);
}
