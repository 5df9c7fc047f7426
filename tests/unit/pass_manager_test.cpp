// The pass runner and the pass declarations: options are checked against
// what each pass declares (in the CLI, the JSON API and the playground), a
// pass that breaks an invariant fails where it ran, and every declaration
// is complete.
#include "shardlab/api/api.h"
#include "shardlab/api/playground_api.h"
#include "shardlab/passes/pass_manager.h"

#include "api_reply.h"

#include "result_text.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <set>
#include <string>

using nlohmann::json;
using namespace shardlab;

namespace {

const char *kModule = R"(sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
)";

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

std::string appendError(std::string_view flag, std::string_view options) {
  PassPipeline pipeline;
  Status added = appendPass(pipeline, flag, options);
  CHECK_FALSE(added.ok());
  CHECK(pipeline.steps.empty());
  return added ? std::string() : added.error().message;
}

} // namespace

TEST_CASE("an unknown option names the pass, the option and its options") {
  std::string error = appendError("sdy-basic-propagate", "no-such-option=true");
  CHECK(error == "pass '-sdy-basic-propagate' has no option 'no-such-option'; "
                 "its options: keep-sharding-rules (bool), "
                 "conservative-propagation (bool), debug-sharding-origins "
                 "(bool), debug-propagation-edge-sharding (bool)");
  CHECK(contains(appendError("sdy-close-shardings", "x"),
                 "has no option 'x'; it has no options"));
  // An option of a higher layer is not one of the basic layer's.
  CHECK(
      contains(appendError("sdy-basic-propagate", "propagation-strategy=basic"),
               "has no option 'propagation-strategy'"));
}

TEST_CASE("a value of the wrong type is an error naming what it takes") {
  CHECK(appendError("sdy-basic-propagate", "conservative-propagation=maybe") ==
        "option 'conservative-propagation' of pass '-sdy-basic-propagate' "
        "takes true or false, not 'maybe'");
  CHECK(contains(
      appendError("sdy-aggressive-propagate", "propagation-strategy=fast"),
      "takes one of basic,aggressive,basic-then-aggressive, not 'fast'"));
}

TEST_CASE("resolved options carry defaults, given values and their spelling") {
  PassPipeline pipeline;
  REQUIRE(appendPass(pipeline, "sdy-op-priority-propagate",
                     "conservative-propagation=1 keep-sharding-rules")
              .ok());
  const PassOptions &options = pipeline.steps.at(0).options;
  CHECK(options.flag("conservative-propagation"));
  CHECK(options.flag("keep-sharding-rules")); // a bare name is true
  CHECK_FALSE(options.flag("debug-sharding-origins"));
  CHECK(options.flag("run-op-priority-propagation")); // declared default
  CHECK(options.text("propagation-strategy") == "aggressive");
  CHECK(options.isSet("conservative-propagation"));
  CHECK_FALSE(options.isSet("propagation-strategy"));
  CHECK(options.given() == RawPassOptions{{"conservative-propagation", "true"},
                                          {"keep-sharding-rules", "true"}});
}

TEST_CASE("every declaration is complete and its defaults are valid") {
  std::set<std::string_view> flags;
  std::set<std::string_view> stages(std::begin(kPassStages),
                                    std::end(kPassStages));
  for (const PassInfo &pass : allPasses()) {
    CAPTURE(pass.flag);
    CHECK(flags.insert(pass.flag).second);
    CHECK(stages.count(pass.stage) == 1);
    CHECK_FALSE(pass.summary.empty());
    std::set<std::string_view> names;
    for (const OptionDecl &option : pass.options) {
      CHECK(names.insert(option.name).second);
      CHECK_FALSE(option.help.empty());
    }
    // Each default, written out, is a value of its option's type.
    RawPassOptions defaults;
    for (const OptionDecl &option : pass.options)
      defaults[std::string(option.name)] = std::string(option.default_value);
    Result<PassOptions> resolved = PassOptions::resolve(pass, defaults);
    CHECK_MESSAGE(resolved.ok(), errorOf(resolved));
  }
  CHECK(flags.size() > 50);
}

TEST_CASE("named pipelines: each builds, and an unknown name lists them") {
  for (const NamedPipeline &named : namedPipelines()) {
    CAPTURE(named.name);
    Result<PassPipeline> pipeline = buildNamedPipeline(named.name);
    REQUIRE(pipeline.ok());
    CHECK(pipeline->steps.size() == named.steps.size());
  }
  Result<PassPipeline> unknown = buildNamedPipeline("fastest");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message ==
        "unknown pipeline 'fastest'; the pipelines: basic aggressive "
        "op-priority user-priority pipeline explicit partition");
}

namespace {

// Test passes: one that leaves a sharding naming a mesh that does not exist
// (an invariant the verifier checks), one that fails without saying why.
bool breakMesh(Module &module, const PassOptions &, DiagnosticEngine &) {
  for (Operation &op : module.body())
    if (op.is("sdy.mesh")) {
      module.body().erase(&op);
      return true;
    }
  return true;
}

bool failSilently(Module &, const PassOptions &, DiagnosticEngine &) {
  return false;
}

std::vector<Diagnostic> runTestPass(PassFn run, std::string *failed, bool &ok) {
  PassInfo pass{"test-pass", "canonicalize", "a test pass", "", {}, run};
  PassPipeline pipeline;
  pipeline.steps.push_back({&pass, {}});
  DiagnosticEngine diags;
  LoadedModule loaded = loadModule(kModule, diags);
  REQUIRE(loaded.module);
  ok = runPassPipeline(*loaded.module, pipeline, diags, failed);
  return diags.diagnostics();
}

} // namespace

TEST_CASE("a pass that breaks an invariant fails where it ran") {
  std::string failed;
  bool ok = true;
  std::vector<Diagnostic> diags = runTestPass(breakMesh, &failed, ok);
  CHECK_FALSE(ok);
  CHECK(failed == "-test-pass");
  REQUIRE_FALSE(diags.empty());
  CHECK(contains(diags[0].message, "unknown mesh"));
}

namespace {

// A pipeline-like test pass: breaks the module itself, then runs a step
// that has nothing to do (and says so).
bool breakThenRunUnchangedStep(Module &module, const PassOptions &options,
                               DiagnosticEngine &diags) {
  breakMesh(module, options, diags);
  return runNestedPass(module, "sdy-pre-order-funcs", diags);
}

} // namespace

TEST_CASE("a pipeline that changed the module is verified though its last "
          "step changed nothing") {
  std::string failed;
  bool ok = true;
  std::vector<Diagnostic> diags =
      runTestPass(breakThenRunUnchangedStep, &failed, ok);
  CHECK_FALSE(ok);
  CHECK(failed == "-test-pass");
  REQUIRE_FALSE(diags.empty());
  CHECK(contains(diags[0].message, "unknown mesh"));
}

TEST_CASE("-verify-each: every pass, =false: none, absent: each step") {
  Result<api::RunRequest> every = api::parseRunFlags({"-verify-each"});
  REQUIRE(every.ok());
  CHECK(every->verify_passes == Module::VerifyPasses::EveryPass);
  Result<api::RunRequest> none = api::parseRunFlags({"-verify-each=false"});
  REQUIRE(none.ok());
  CHECK(none->verify_passes == Module::VerifyPasses::None);
  Result<api::RunRequest> steps = api::parseRunFlags({"-sdy-close-shardings"});
  REQUIRE(steps.ok());
  CHECK(steps->verify_passes == Module::VerifyPasses::Steps);
  Result<api::RunRequest> bad = api::parseRunFlags({"-verify-each=maybe"});
  REQUIRE_FALSE(bad.ok());
  CHECK(contains(bad.error().message, "takes true or false"));

  // With None, a pass that breaks the module is not caught after it.
  PassInfo pass{"test-pass", "canonicalize", "a test pass", "", {}, breakMesh};
  PassPipeline pipeline;
  pipeline.steps.push_back({&pass, {}});
  DiagnosticEngine diags;
  LoadedModule loaded = loadModule(kModule, diags);
  REQUIRE(loaded.module);
  loaded.module->verify_passes = Module::VerifyPasses::None;
  CHECK(runPassPipeline(*loaded.module, pipeline, diags));
  CHECK_FALSE(diags.hasErrors());
}

TEST_CASE("a pass that fails without a diagnostic is named in one") {
  bool ok = true;
  std::vector<Diagnostic> diags = runTestPass(failSilently, nullptr, ok);
  CHECK_FALSE(ok);
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].message == "pass '-test-pass' failed");
}

TEST_CASE("a pass that is not implemented fails with that message") {
  // Every pass Shardy has is implemented; a declaration without a body
  // (what a newly declared pass starts as) still fails cleanly.
  bool ok = true;
  std::vector<Diagnostic> diags = runTestPass(nullptr, nullptr, ok);
  CHECK_FALSE(ok);
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].message ==
        "pass '-test-pass' is not implemented yet in shardlab");
}

TEST_CASE("loadModule says which stage failed") {
  DiagnosticEngine parse_diags;
  CHECK(loadModule("func.func @f(", parse_diags).failed_stage == "parse");
  DiagnosticEngine verify_diags;
  LoadedModule bad =
      loadModule("func.func @f(%a: tensor<8xf32> {sdy.sharding = "
                 "#sdy.sharding<@nowhere, [{\"x\"}]>}) -> tensor<8xf32> {\n"
                 "  return %a : tensor<8xf32>\n}\n",
                 verify_diags);
  CHECK(bad.failed_stage == "verify");
  CHECK_FALSE(bad.module);
}

TEST_CASE("the CLI's flags and the JSON API reject an unknown option") {
  Result<api::RunRequest> request =
      api::parseRunFlags({"-sdy-basic-propagate=no-such-option=true"});
  REQUIRE_FALSE(request.ok());
  std::string error = request.error().message;
  CHECK(contains(error, "pass '-sdy-basic-propagate' has no option "
                        "'no-such-option'"));
  json run = reply(
      api::runJson(kModule, R"(["-sdy-basic-propagate=no-such-option=true"])"));
  CHECK(run["ok"] == false);
  CHECK(contains(run["error"].get<std::string>(),
                 "has no option 'no-such-option'; its options: "
                 "keep-sharding-rules (bool)"));
  json typed = reply(api::runJson(
      kModule, R"(["-sdy-basic-propagate=conservative-propagation=2"])"));
  CHECK(typed["ok"] == false);
  CHECK(contains(typed["error"].get<std::string>(), "takes true or false"));
}

TEST_CASE("the pass list carries each pass's stage and declared options") {
  json list = reply(api::listPassesJson());
  bool found = false;
  for (const json &pass : list["passes"])
    if (pass["flag"] == "sdy-aggressive-propagate") {
      found = true;
      CHECK(pass["stage"] == "propagation");
      CHECK(pass["options"].size() == 5);
      CHECK(pass["options"][4]["name"] == "propagation-strategy");
      CHECK(pass["options"][4]["type"] == "string");
      CHECK(pass["options"][4]["default"] == "aggressive");
    }
  CHECK(found);
}

TEST_CASE("passes with nothing to do say so, and only then") {
  // The runner skips fingerprinting and verifying after a pass that marks
  // the module unchanged: a pass that marks it wrongly would hide its own
  // breakage. Without calls or named computations, these have nothing to
  // do; with a call, the call-graph ones do work and must not say so.
  const char *with_call = R"(sdy.mesh @mesh = <["x"=2]>
func.func @callee(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = call @callee(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
)";
  auto unchangedAfter = [](const char *text, std::string_view flag) {
    DiagnosticEngine diags;
    LoadedModule loaded = loadModule(text, diags);
    REQUIRE(loaded.module);
    PassPipeline pipeline;
    REQUIRE(appendPass(pipeline, flag, "").ok());
    REQUIRE(runPassPipeline(*loaded.module, pipeline, diags));
    return loaded.module->unchanged_by_pass;
  };
  for (std::string_view flag :
       {"sdy-flatten-call-graph", "sdy-import-func-calls",
        "sdy-propagate-sharding-from-func-to-call",
        "sdy-export-named-computations", "sdy-unflatten-call-graph",
        "sdy-insert-func-call-reshards", "sdy-pre-order-funcs",
        "sdy-remove-sub-axes-in-input-output-shardings",
        "sdy-update-non-divisible-input-output-shardings"}) {
    CAPTURE(flag);
    CHECK(unchangedAfter(kModule, flag));
  }
  for (std::string_view flag :
       {"sdy-flatten-call-graph", "sdy-import-func-calls",
        "sdy-unflatten-call-graph", "sdy-pre-order-funcs"}) {
    CAPTURE(flag);
    CHECK_FALSE(unchangedAfter(with_call, flag));
  }
}
