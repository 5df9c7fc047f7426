// verifyModule verifies again only the functions that changed since it last
// found the module valid (verify/verifier.cpp): a change anywhere in a
// function, or to a mesh, is still caught.
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"
#include "verify/verifier.h"

#include <doctest/doctest.h>

using namespace shardlab;

namespace {

const char *kTwoFunctions = R"(
sdy.mesh @mesh = <["x"=2]>
func.func @f(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @g(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.abs %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
)";

std::unique_ptr<Module> parsed() {
  DiagnosticEngine diags;
  auto module = parseModule(kTwoFunctions, diags);
  REQUIRE(module);
  REQUIRE(verifyModule(*module, diags));
  return module;
}

Operation &firstOpOf(Module &module, std::string_view func) {
  Operation *f = module.lookupSymbol(func);
  REQUIRE(f);
  return *f->region(0).front().front();
}

// A sharding on an axis the mesh does not have.
void breakSharding(Module &module, std::string_view func) {
  Operation &op = firstOpOf(module, func);
  TensorSharding bad;
  bad.mesh.symbol = "mesh";
  bad.dims.push_back({{AxisRef{"nope", std::nullopt}}, true, std::nullopt});
  setSharding(op.result(0), bad, module.ctx());
}

} // namespace

TEST_CASE("A function changed after a valid verify is verified again") {
  auto module = parsed();
  breakSharding(*module, "g");
  DiagnosticEngine diags;
  CHECK_FALSE(verifyModule(*module, diags));
  CHECK(diags.hasErrors());
}

TEST_CASE("An unchanged module verifies, and so does an undone change") {
  auto module = parsed();
  DiagnosticEngine diags;
  CHECK(verifyModule(*module, diags));
  Operation &op = firstOpOf(*module, "f");
  const Attr *before = op.attrs.get("sdy.sharding");
  breakSharding(*module, "f");
  CHECK_FALSE(verifyModule(*module, diags));
  if (before)
    op.attrs.set(module->ctx().intern("sdy.sharding"), before);
  else
    op.attrs.erase("sdy.sharding");
  DiagnosticEngine again;
  CHECK(verifyModule(*module, again));
}

TEST_CASE("A changed mesh verifies every function again") {
  auto module = parsed();
  // Rename the mesh: @f's argument now names an unknown mesh.
  Operation *mesh = module->lookupSymbol("mesh");
  REQUIRE(mesh);
  mesh->attrs.set(module->ctx().intern("sym_name"),
                  module->ctx().attrs.string("other"));
  module->invalidateSymbols();
  DiagnosticEngine diags;
  CHECK_FALSE(verifyModule(*module, diags));
}

TEST_CASE("A mesh whose axes change verifies every function again") {
  auto module = parsed();
  Operation *mesh = module->lookupSymbol("mesh");
  REQUIRE(mesh);
  Mesh renamed_axis;
  renamed_axis.axes.push_back({"y", 2});
  mesh->attrs.set(module->ctx().intern("mesh"),
                  module->ctx().attrs.make(
                      Attr{AttrKind::Mesh, renamed_axis, nullptr, {}}));
  DiagnosticEngine diags;
  CHECK_FALSE(verifyModule(*module, diags)); // @f shards along "x"
}

TEST_CASE("A mesh that only gained an attribute still lets changed functions "
          "be caught") {
  auto module = parsed();
  Operation *mesh = module->lookupSymbol("mesh");
  REQUIRE(mesh);
  mesh->attrs.set(module->ctx().intern("tag"), module->ctx().attrs.unit());
  DiagnosticEngine ok;
  CHECK(verifyModule(*module, ok));
  breakSharding(*module, "g");
  mesh->attrs.erase("tag");
  DiagnosticEngine diags;
  CHECK_FALSE(verifyModule(*module, diags));
}

TEST_CASE("A function moved within the module stays valid and checked") {
  auto module = parsed();
  Block &body = module->body();
  Operation *f = module->lookupSymbol("f");
  body.push_back(body.take(f));
  DiagnosticEngine ok;
  CHECK(verifyModule(*module, ok));
  breakSharding(*module, "f");
  DiagnosticEngine diags;
  CHECK_FALSE(verifyModule(*module, diags));
}

namespace {

TensorSharding onMissingAxis() {
  TensorSharding bad;
  bad.mesh.symbol = "mesh";
  bad.dims.push_back({{AxisRef{"nope", std::nullopt}}, true, std::nullopt});
  return bad;
}

} // namespace

TEST_CASE("A function whose op alone changed gets its own checks") {
  // -sdy-propagate-to-func-results changes only func ops: their body is not
  // walked again, but a result sharding on a missing axis is still caught.
  auto module = parsed();
  Operation *g = module->lookupSymbol("g");
  REQUIRE(g);
  TensorSharding good;
  good.mesh.symbol = "mesh";
  good.dims.push_back({{AxisRef{"x", std::nullopt}}, true, std::nullopt});
  setFuncResultSharding(*g, 0, good, module->ctx());
  DiagnosticEngine ok;
  CHECK(verifyModule(*module, ok));
  setFuncResultSharding(*g, 0, onMissingAxis(), module->ctx());
  DiagnosticEngine diags;
  CHECK_FALSE(verifyModule(*module, diags));
  CHECK(diags.hasErrors());
}

TEST_CASE("A function whose op and body changed is verified whole") {
  auto module = parsed();
  Operation *g = module->lookupSymbol("g");
  REQUIRE(g);
  TensorSharding good;
  good.mesh.symbol = "mesh";
  good.dims.push_back({{AxisRef{"x", std::nullopt}}, true, std::nullopt});
  setFuncResultSharding(*g, 0, good, module->ctx());
  breakSharding(*module, "g"); // in the body
  DiagnosticEngine diags;
  CHECK_FALSE(verifyModule(*module, diags));
}

TEST_CASE("A pass that keeps modules valid skips the check only after one") {
  // -sdy-drop-sharding-rules is declared keeps_valid: run on a module
  // verified as it is, its result is recorded as verified; run after a
  // change nobody verified, the module is verified whole and the change
  // caught.
  auto module = parsed();
  PassPipeline pipeline;
  REQUIRE(appendPass(pipeline, "sdy-drop-sharding-rules", "").ok());
  DiagnosticEngine ok;
  CHECK(runPassPipeline(*module, pipeline, ok));
  CHECK(verifiedAsIs(*module));
  breakSharding(*module, "f");
  CHECK_FALSE(verifiedAsIs(*module));
  DiagnosticEngine diags;
  CHECK_FALSE(runPassPipeline(*module, pipeline, diags));
  CHECK(diags.hasErrors());
}

TEST_CASE("Ops whose memo key is longer than the memo keeps are checked "
          "each on its own") {
  // Two ops with one sharding attribute and 20 results each (a key longer
  // than the memo's 16 words), the same up to result 18, whose type is a
  // scalar in the second: the second must fail although the first passed.
  auto manyResults = [](const std::string &name, bool scalar_at_18) {
    std::string op = "  %" + name +
                     ":20 = \"test.many\"(%arg0) {sdy.sharding = "
                     "#sdy.sharding_per_value<[";
    for (int i = 0; i < 20; ++i)
      op += std::string(i ? ", " : "") + "<@mesh, [{\"x\"}]>";
    op += "]>} : (tensor<8xf32>) -> (";
    for (int i = 0; i < 20; ++i)
      op += std::string(i ? ", " : "") +
            (scalar_at_18 && i == 18 ? "tensor<f32>" : "tensor<8xf32>");
    return op + ")\n";
  };
  const std::string head =
      "sdy.mesh @mesh = <[\"x\"=2]>\n"
      "func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n";
  const std::string tail = "  return %arg0 : tensor<8xf32>\n}\n";
  DiagnosticEngine good_diags;
  auto good = parseModule(head + manyResults("a", false) +
                              manyResults("b", false) + tail,
                          good_diags);
  REQUIRE(good);
  CHECK(verifyModule(*good, good_diags));
  DiagnosticEngine bad_diags;
  auto bad = parseModule(head + manyResults("a", false) +
                             manyResults("b", true) + tail,
                         bad_diags);
  REQUIRE(bad);
  CHECK_FALSE(verifyModule(*bad, bad_diags));
  CHECK(bad_diags.hasErrors());
}
