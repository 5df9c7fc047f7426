// The call-graph passes (flatten / unflatten, import / export of calls,
// func data-flow edges, symbol DCE, pre-order), the constant merger, and
// the property that running the import or propagation pipeline twice gives
// what running it once gives, over generated call graphs.
#include "passes/call_graph.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/text/text.h"

#include <doctest/doctest.h>

#include <cctype>
#include <map>
#include <random>
#include <string>

using namespace shardlab;

namespace {

/// Parses `text`, runs the flags in order, prints; "<failed>" on error.
std::string runPasses(const std::vector<std::string> &flags,
                      const std::string &text,
                      const std::string &options = "") {
  DiagnosticEngine diags;
  auto module = parseModule(text, diags);
  REQUIRE(module);
  for (const std::string &flag : flags) {
    PassPipeline pipeline;
    REQUIRE(appendPass(pipeline, flag, options).ok());
    if (!runPassPipeline(*module, pipeline, diags))
      return "<failed>";
  }
  return printModule(*module);
}

size_t count(const std::string &text, const std::string &part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos;
       at = text.find(part, at + 1))
    ++n;
  return n;
}

const char *kTwoCallsOfFoo = R"(
func.func @main(%arg0: tensor<8xi32>) -> (tensor<8xi32>, tensor<8xi32>) {
  %0 = call @foo(%arg0) : (tensor<8xi32>) -> tensor<8xi32>
  %1 = call @foo(%arg0) : (tensor<8xi32>) -> tensor<8xi32>
  return %0, %1 : tensor<8xi32>, tensor<8xi32>
}
func.func private @foo(%arg0: tensor<8xi32>) -> tensor<8xi32> {
  %0 = call @bar(%arg0) : (tensor<8xi32>) -> tensor<8xi32>
  %1 = call @bar(%0) : (tensor<8xi32>) -> tensor<8xi32>
  return %1 : tensor<8xi32>
}
func.func private @bar(%arg0: tensor<8xi32>) -> tensor<8xi32> {
  return %arg0 : tensor<8xi32>
}
)";

} // namespace

TEST_CASE("call order: callees first, and the reverse for pre-order") {
  DiagnosticEngine diags;
  auto module = parseModule(kTwoCallsOfFoo, diags);
  REQUIRE(module);
  std::vector<std::string> post, pre;
  for (Operation *func : funcsInCallOrder(*module, false))
    post.push_back(std::string(symbolName(*func)));
  for (Operation *func : funcsInCallOrder(*module, true))
    pre.push_back(std::string(symbolName(*func)));
  CHECK(post == std::vector<std::string>{"bar", "foo", "main"});
  CHECK(pre == std::vector<std::string>{"main", "foo", "bar"});
}

TEST_CASE("flatten gives every func one caller, names share one counter") {
  std::string out = runPasses({"sdy-flatten-call-graph"}, kTwoCallsOfFoo);
  // foo's second call to bar -> bar_0; main's second call to foo clones foo
  // (bar -> bar_1, bar_0 -> bar_0_2) and inserts it as foo_3.
  CHECK(count(out, "call @bar_0(") == 1);
  CHECK(count(out, "call @bar_1(") == 1);
  CHECK(count(out, "call @bar_0_2(") == 1);
  CHECK(count(out, "call @foo_3(") == 1);
  CHECK(count(out, "sdy.original_func_name = \"bar\"") == 3);
}

TEST_CASE("unflatten undoes flatten and symbol-dce drops the copies") {
  std::string out = runPasses(
      {"sdy-flatten-call-graph", "sdy-unflatten-call-graph", "symbol-dce"},
      kTwoCallsOfFoo);
  CHECK(count(out, "func.func") == 3);
  CHECK(count(out, "call @foo(") == 2);
  CHECK(count(out, "call @bar(") == 2);
  CHECK(count(out, "original_func_name") == 0);
}

TEST_CASE("import then export of calls round-trips through named "
          "computations") {
  std::string flat = runPasses({"sdy-flatten-call-graph", "symbol-dce",
                                "sdy-import-func-calls", "symbol-dce"},
                               kTwoCallsOfFoo);
  CHECK(count(flat, "sdy.named_computation<\"foo\">") == 2);
  CHECK(count(flat, "sdy.named_computation<\"bar\">") == 4);
  CHECK(count(flat, "func.func") == 1);
  std::string back = runPasses({"sdy-flatten-call-graph", "symbol-dce",
                                "sdy-import-func-calls", "symbol-dce",
                                "sdy-export-named-computations",
                                "sdy-unflatten-call-graph", "symbol-dce"},
                               kTwoCallsOfFoo);
  CHECK(count(back, "func.func") == 3);
  CHECK(count(back, "sdy.named_computation") == 0);
  CHECK(count(back, "sdy.data_flow_edge") == 0);
}

TEST_CASE("func data-flow edges: added on non-main args and call results, "
          "sunk back") {
  std::string with =
      runPasses({"sdy-add-func-data-flow-edges"}, kTwoCallsOfFoo);
  // foo's and bar's argument, and the four call results.
  CHECK(count(with, "sdy.func_data_flow_edge") == 6);
  std::string sunk = runPasses(
      {"sdy-add-func-data-flow-edges", "sdy-sink-func-data-flow-edges"},
      kTwoCallsOfFoo);
  CHECK(sunk == runPasses({}, kTwoCallsOfFoo));
}

TEST_CASE("pre-order-funcs puts callers first") {
  std::string out = runPasses({"sdy-pre-order-funcs"}, R"(
func.func private @leaf() { return }
func.func private @mid() { func.call @leaf() : () -> () return }
func.func @main() { func.call @mid() : () -> () return }
)");
  size_t main_at = out.find("@main"), mid_at = out.find("@mid()"),
         leaf_at = out.find("@leaf()");
  CHECK(main_at < mid_at);
  CHECK(out.find("func.func private @mid") < out.find("func.func private "
                                                      "@leaf"));
  CHECK(leaf_at != std::string::npos);
}

TEST_CASE("constant merger keeps one of equal constants per region") {
  std::string out = runPasses({"sdy-constant-or-scalar-merger"}, R"(
func.func @main() -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = sdy.constant dense<1.0> : tensor<4xf32>
  %1 = sdy.constant dense<1.0> : tensor<4xf32>
  %2 = sdy.constant dense<2.0> : tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
)");
  CHECK(count(out, "sdy.constant") == 2);
  CHECK(count(out, "return %0, %0, %1") == 1);
}

namespace {

// A random module: a mesh, funcs f0..fN-1 where fi may call fj (j > i),
// main calling some of them, elementwise ops and constants, and shardings
// on some arguments and results.
std::string generateCallGraphModule(std::mt19937 &rng) {
  auto pick = [&](int n) {
    return static_cast<int>(rng() % static_cast<unsigned>(n));
  };
  const char *shardings[] = {"",
                             "{sdy.sharding = #sdy.sharding<@mesh, "
                             "[{\"a\"}, {}]>}",
                             "{sdy.sharding = #sdy.sharding<@mesh, "
                             "[{}, {\"b\"}]>}"};
  const char *type = "tensor<8x8xf32>";
  int funcs = 1 + pick(4);
  std::string text = "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n";
  for (int f = -1; f < funcs; ++f) {
    std::string name = f < 0 ? "main" : "f" + std::to_string(f);
    text += std::string("func.func ") + (f < 0 ? "" : "private ") + "@" + name +
            "(%arg0: " + type + " " + shardings[pick(3)] + ") -> (" + type +
            " " + shardings[pick(3)] + ") {\n";
    std::string last = "%arg0";
    int ops = 1 + pick(4);
    for (int i = 0; i < ops; ++i) {
      std::string value = "%v" + std::to_string(i);
      int callee = f + 1 + pick(funcs + 1);
      if (pick(2) == 0 && callee < funcs)
        text += "  " + value + " = call @f" + std::to_string(callee) + "(" +
                last + ") : (" + type + ") -> " + type + "\n";
      else if (pick(3) == 0)
        text += "  %c" + std::to_string(i) +
                " = stablehlo.constant dense<1.0> : " + type + "\n  " + value +
                " = stablehlo.add " + last + ", %c" + std::to_string(i) +
                " : " + type + "\n";
      else
        text +=
            "  " + value + " = stablehlo.negate " + last + " : " + type + "\n";
      last = value;
    }
    text += "  return " + last + " : " + type + "\n}\n";
  }
  return text;
}

// `text` with the generated funcs renamed f0, f1, ... in order of first
// mention: flattening names its clones differently on a second run.
std::string withCanonicalFuncNames(const std::string &text) {
  std::map<std::string, std::string> names;
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 2, "@f") != 0) {
      out += text[i++];
      continue;
    }
    size_t end = i + 2;
    while (end < text.size() && (std::isdigit(text[end]) || text[end] == '_'))
      ++end;
    std::string name = text.substr(i, end - i);
    auto it = names.emplace(name, "@f" + std::to_string(names.size())).first;
    out += it->second;
    i = end;
  }
  return out;
}

} // namespace

TEST_CASE("pipelines: running twice equals running once (generated call "
          "graphs)") {
  std::mt19937 rng(4);
  for (int i = 0; i < 1000; ++i) {
    std::string text = generateCallGraphModule(rng);
    CAPTURE(text);
    for (const char *flag :
         {"sdy-import-pipeline", "sdy-propagation-pipeline"}) {
      for (const char *options : {"", "dedup-functions-fully=true"}) {
        CAPTURE(flag);
        CAPTURE(options);
        std::string once = runPasses({flag}, text, options);
        REQUIRE(once != "<failed>");
        CHECK(withCanonicalFuncNames(runPasses({flag}, once, options)) ==
              withCanonicalFuncNames(once));
      }
    }
  }
}
