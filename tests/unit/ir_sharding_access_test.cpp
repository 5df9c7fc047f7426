// Writing shardings where Shardy keeps them (shardlab/ir/sharding_access.h):
// a function argument's sharding lives in the function's arg_attrs array.
#include "shardlab/ir/sharding_access.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

#include <string>

using namespace shardlab;

TEST_CASE("Setting an argument's sharding to what it is keeps arg_attrs") {
  // Attributes are interned: a new arg_attrs array per write would keep a
  // copy of every argument's dictionary for the context's life, which made
  // a pass over the 17k arguments of a large @main take gigabytes.
  std::string text = "sdy.mesh @mesh = <[\"x\"=2]>\nfunc.func @main(";
  for (int i = 0; i < 64; ++i)
    text += std::string(i ? ", " : "") + "%arg" + std::to_string(i) +
            ": tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, "
            "[{\"x\"}]>}";
  text += ") -> tensor<8xf32> {\n  return %arg0 : tensor<8xf32>\n}\n";
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  Operation &main = *module->lookupSymbol("main");
  const Attr *before = main.attrs.get("arg_attrs");
  REQUIRE(before);
  Block &entry = main.region(0).front();
  for (size_t i = 0; i < entry.numArguments(); ++i)
    setSharding(entry.argument(i), *getSharding(entry.argument(i)),
                module->ctx());
  CHECK(main.attrs.get("arg_attrs") == before);
  // A real change still writes it.
  TensorSharding replicated = *getSharding(entry.argument(3));
  replicated.dims[0].axes.clear();
  setSharding(entry.argument(3), replicated, module->ctx());
  CHECK(main.attrs.get("arg_attrs") != before);
  CHECK(getSharding(entry.argument(3))->dims[0].axes.empty());
  CHECK_FALSE(getSharding(entry.argument(4))->dims[0].axes.empty());
}
