// A property a propagation that does nothing cannot satisfy: over generated
// chains, an axis on one dimension of an argument reaches every value the
// chain makes from it, through pointwise ops (forward, and backward into
// their other operands), and through a dot_general along its factor: a
// batch-like (non-contracting) dimension carries it to the result, a
// contracting one to the other operand's contracting dimension.
//
// The expectations are Shardy's rules for these ops, written here from the
// ops' semantics (a pointwise op maps every dimension to itself; a
// dot_general's lhs rows are the result's rows, its contracting dimension
// the rhs's first). The test also shows the property failing on the module
// as written: checked before propagation, every chain has a value without
// the axis.
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"

#include "propagation/propagate.h"

#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace shardlab;

namespace {

struct Chain {
  std::string text;
  std::vector<int64_t> axis_sizes;
  int sharded_dim = 0;      ///< of %arg0: 0 (rows) or 1 (contracting)
  int pointwise_before = 0; ///< ops on %arg0's chain before the dot
  int pointwise_after = 0;  ///< ops on the dot's result
};

const char *kUnary[] = {"stablehlo.negate", "stablehlo.tanh",
                        "stablehlo.exponential", "stablehlo.abs"};
const char *kBinary[] = {"stablehlo.add", "stablehlo.multiply",
                         "stablehlo.maximum", "stablehlo.subtract"};

// %arg0 (MxK, dim `sharded_dim` on "x"), %arg1 (KxN), %arg2 (MxK) and
// %arg3 (MxN) open and unsharded; a chain of pointwise ops from %arg0 (some
// binary with %arg2), a dot_general with %arg1, a chain after it (some
// binary with %arg3).
Chain makeChain(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % uint64_t(n)); };
  Chain chain;
  const int64_t sizes[] = {2, 4, 8};
  chain.axis_sizes = {sizes[pick(3)], sizes[pick(3)]};
  chain.sharded_dim = pick(2);
  chain.pointwise_before = 1 + pick(5);
  chain.pointwise_after = 1 + pick(5);
  const int64_t m = 16, k = 32, n = 8;
  auto t = [](int64_t a, int64_t b) {
    return "tensor<" + std::to_string(a) + "x" + std::to_string(b) + "xf32>";
  };
  std::string mk = t(m, k), kn = t(k, n), mn = t(m, n);
  std::string text =
      "sdy.mesh @mesh = <[\"x\"=" + std::to_string(chain.axis_sizes[0]) +
      ", \"y\"=" + std::to_string(chain.axis_sizes[1]) + "]>\n";
  text += "func.func @main(%arg0: " + mk +
          " {sdy.sharding = #sdy.sharding<@mesh, [" +
          (chain.sharded_dim == 0 ? "{\"x\"}, {?}" : "{?}, {\"x\"}") +
          "]>}, %arg1: " + kn + ", %arg2: " + mk + ", %arg3: " + mn + ") -> " +
          mn + " {\n";
  std::string last = "%arg0";
  int id = 0;
  auto op = [&](const std::string &type, const std::string &other) {
    std::string name = "%v" + std::to_string(id++);
    if (pick(2) == 0)
      text += "  " + name + " = " + kUnary[pick(4)] + " " + last + " : " +
              type + "\n";
    else
      text += "  " + name + " = " + kBinary[pick(4)] + " " + last + ", " +
              other + " : " + type + "\n";
    last = name;
  };
  for (int i = 0; i < chain.pointwise_before; ++i)
    op(mk, "%arg2");
  text += "  %dot = stablehlo.dot_general " + last +
          ", %arg1, contracting_dims = [1] x [0] : (" + mk + ", " + kn +
          ") -> " + mn + "\n";
  last = "%dot";
  for (int i = 0; i < chain.pointwise_after; ++i)
    op(mn, "%arg3");
  text += "  return " + last + " : " + mn + "\n}\n";
  chain.text = text;
  return chain;
}

bool dimHasX(Value *value, size_t dim) {
  const TensorSharding *sharding = getSharding(value);
  if (!sharding || dim >= sharding->dims.size())
    return false;
  for (const AxisRef &axis : sharding->dims[dim].axes)
    if (axis.name == "x")
      return true;
  return false;
}

// "" when "x" is where the chain's rules put it, else the first value
// without it.
std::string axisReachesChain(Module &module, const Chain &chain) {
  Operation *main = module.lookupSymbol("main");
  Block &body = main->region(0).front();
  const size_t dim = size_t(chain.sharded_dim);
  // Before the dot: every value on %arg0's chain, and %arg2 (the other
  // operand of the binary ops), carries "x" on the sharded dim.
  bool past_dot = false;
  for (Operation &op : body) {
    if (op.is("func.return"))
      break;
    if (op.is("stablehlo.dot_general")) {
      past_dot = true;
      if (chain.sharded_dim == 0 && !dimHasX(op.result(0), 0))
        return "the dot's result rows do not carry x";
      if (chain.sharded_dim == 1 && !dimHasX(body.argument(1), 0))
        return "the rhs contracting dim (%arg1 dim 0) does not carry x";
      continue;
    }
    if (!past_dot && !dimHasX(op.result(0), dim))
      return "a pointwise result before the dot does not carry x";
    if (past_dot && chain.sharded_dim == 0 && !dimHasX(op.result(0), 0))
      return "a pointwise result after the dot does not carry x";
    for (size_t i = 1; i < op.numOperands(); ++i) {
      Value *other = op.operand(i);
      if (!past_dot && !dimHasX(other, dim))
        return "%arg2 (a pointwise operand) does not carry x";
      if (past_dot && chain.sharded_dim == 0 && !dimHasX(other, 0))
        return "%arg3 (a pointwise operand) does not carry x";
    }
  }
  return "";
}

std::unique_ptr<Module> load(const std::string &text) {
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = loadModule(text, diags).module;
  REQUIRE_MESSAGE(module, text);
  return module;
}

} // namespace

TEST_CASE("an axis reaches every value of a pointwise chain and follows its "
          "factor through a dot_general") {
  int rows = 0, contracting = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    const Chain chain = makeChain(seed);
    INFO("seed " << seed << "\n" << chain.text);
    std::unique_ptr<Module> module = load(chain.text);
    // Not vacuous: the module as written fails the property.
    CHECK(axisReachesChain(*module, chain) != "");
    DiagnosticEngine diags;
    REQUIRE(propagateShardings(*module, PropagationOptions{}, diags));
    CHECK(axisReachesChain(*module, chain) == "");
    (chain.sharded_dim == 0 ? rows : contracting) += 1;
  }
  // Both factors of the dot were tried.
  CHECK(rows > 50);
  CHECK(contracting > 50);
}
