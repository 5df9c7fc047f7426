// constantTripCount / loopCounter: the trip count of a counted while loop,
// worked by hand from ir/while_loops.h's rule (init to limit, LT, by a
// constant step), and the loops it declines to count.
#include "ir/while_loops.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

#include <string>

using namespace shardlab;

namespace {

// A loop `for (i = init; i cmp limit; i = step_expr)` with `step_expr`
// written over %i and %step.
std::unique_ptr<Module> loop(const std::string &init, const std::string &limit,
                             const std::string &step, const std::string &cmp,
                             const std::string &step_expr) {
  const std::string text =
      "func.func @main(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> "
      "{\n"
      "  %init = stablehlo.constant dense<" +
      init +
      "> : tensor<i32>\n"
      "  %limit = " +
      (limit == "%n"
           ? "stablehlo.add %n, %n : tensor<i32>"
           : "stablehlo.constant dense<" + limit + "> : tensor<i32>") +
      "\n"
      "  %step = stablehlo.constant dense<" +
      step +
      "> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%i = %init, %h = %x) : tensor<i32>, "
      "tensor<4xf32>\n"
      "    cond {\n"
      "      %c = stablehlo.compare " +
      cmp +
      ", %i, %limit : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %c : tensor<i1>\n"
      "    } do {\n"
      "      %next = " +
      step_expr +
      " : tensor<i32>\n"
      "      %h2 = stablehlo.negate %h : tensor<4xf32>\n"
      "      stablehlo.return %next, %h2 : tensor<i32>, tensor<4xf32>\n"
      "    }\n"
      "  return %r#1 : tensor<4xf32>\n"
      "}\n";
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE_MESSAGE(module, text);
  return module;
}

std::optional<int64_t> trips(Module &module) {
  Operation *main = module.lookupSymbol("main");
  REQUIRE(main);
  for (Operation &op : main->region(0).front())
    if (op.is("stablehlo.while"))
      return constantTripCount(op);
  FAIL("no while loop");
  return std::nullopt;
}

} // namespace

TEST_CASE("constantTripCount: init to limit by step, rounded up") {
  const std::string add = "stablehlo.add %i, %step";
  CHECK(trips(*loop("0", "8", "1", "LT", add)) == 8);
  // 0, 3, 6, 9: four trips below 10.
  CHECK(trips(*loop("0", "10", "3", "LT", add)) == 4);
  // 2, 4, 6: three below 8.
  CHECK(trips(*loop("2", "8", "2", "LT", add)) == 3);
  // The step written first, as some exporters write the add.
  CHECK(trips(*loop("0", "8", "1", "LT", "stablehlo.add %step, %i")) == 8);
  // The counter is read where the loop starts: an init at or past the
  // limit runs no trip.
  CHECK(trips(*loop("8", "8", "1", "LT", add)) == 0);
  CHECK(trips(*loop("10", "8", "1", "LT", add)) == 0);
}

TEST_CASE("constantTripCount: loops it does not count") {
  const std::string add = "stablehlo.add %i, %step";
  // A step of zero never ends; a negative one counts down.
  CHECK_FALSE(trips(*loop("0", "8", "0", "LT", add)));
  CHECK_FALSE(trips(*loop("8", "0", "-1", "GT", add)));
  // Another comparison, a limit that is not a constant, a counter that is
  // not added to.
  CHECK_FALSE(trips(*loop("0", "8", "1", "LE", add)));
  CHECK_FALSE(trips(*loop("0", "%n", "1", "LT", add)));
  CHECK_FALSE(
      trips(*loop("0", "8", "2", "LT", "stablehlo.multiply %i, %step")));
}
