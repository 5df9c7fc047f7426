// The propagation stage's passes, as Shardy declares them in
// transforms/propagation/passes.td. Each layer adds options to the one
// below it: basic < aggressive < op-priority < user-priority.
#include "propagation_passes.h"
#include "../stages.h"

namespace shardlab {

namespace {

std::vector<OptionDecl> basicOptions() {
  return {{"keep-sharding-rules", OptionType::Bool, "false",
           "Keep the sdy.sharding_rule attributes propagation attaches"},
          {"conservative-propagation", OptionType::Bool, "false",
           "Do not propagate along factors that would need padding"},
          {"debug-sharding-origins", OptionType::Bool, "false",
           "Record where each sharding came from (sdy.sharding_origins)"},
          {"debug-propagation-edge-sharding", OptionType::Bool, "false",
           "Record which edge each sharding crossed (sdy.propagation_edges)"}};
}

std::vector<OptionDecl> aggressiveOptions() {
  std::vector<OptionDecl> options = basicOptions();
  options.push_back({"propagation-strategy", OptionType::String, "aggressive",
                     "How factors with conflicting shardings are resolved",
                     "basic|aggressive|basic-then-aggressive"});
  return options;
}

std::vector<OptionDecl> opPriorityOptions() {
  std::vector<OptionDecl> options = aggressiveOptions();
  options.push_back({"run-op-priority-propagation", OptionType::Bool, "true",
                     "Run the op-priority layer (else aggressive only)"});
  return options;
}

} // namespace

void addPropagationPasses(std::vector<PassInfo> &passes) {
  const std::string_view stage = "propagation";
  passes.push_back(
      {"sdy-basic-propagate", stage, "Basic sharding propagation",
       "Propagates shardings along the factors of each op's sharding rule "
       "until nothing changes; a factor takes a sharding only when every "
       "tensor that has it agrees.",
       basicOptions(), runBasicPropagate});
  passes.push_back(
      {"sdy-aggressive-propagate", stage, "Aggressive sharding propagation",
       "Basic propagation, then resolves conflicts between operands by "
       "picking the sharding that keeps the most parallelism.",
       aggressiveOptions(), runAggressivePropagate});
  passes.push_back(
      {"sdy-op-priority-propagate", stage, "Op-priority sharding propagation",
       "Propagates through element-wise ops first, then the rest, each "
       "step with aggressive propagation.",
       opPriorityOptions(), runOpPriorityPropagate});
  passes.push_back(
      {"sdy-user-priority-propagate", stage,
       "User-priority sharding propagation",
       "Propagates the shardings with priority p0 first, then p1, ..., "
       "each step with op-priority propagation.",
       opPriorityOptions(), runUserPriorityPropagate});
  passes.push_back(
      {"sdy-populate-op-sharding-rules",
       stage,
       "Attach op sharding rules",
       "Attaches the registry's sdy.sharding_rule to every op that has one "
       "and carries none.",
       {{"conservative-propagation", OptionType::Bool, "false",
         "Attach the conservative rules (no factors needing padding)"}},
       populateOpShardingRules});
  std::vector<OptionDecl> pipeline = {
      {"dedup-functions-fully", OptionType::Bool, "false",
       "One function per callee instead of a copy per call site"},
      {"enable-explicit-gather-scatter-batching", OptionType::Bool, "false",
       "Run -sdy-explicit-gather-scatter-batching in the import"},
      {"conservative-propagation", OptionType::Bool, "false",
       "Do not propagate along factors that would need padding"},
      {"debug-sharding-origins", OptionType::Bool, "false",
       "Record where each sharding came from"},
      {"debug-propagation-edge-sharding", OptionType::Bool, "false",
       "Record which edge each sharding crossed"},
      {"keep-sharding-rules", OptionType::Bool, "false",
       "Keep the sdy.sharding_rule attributes"},
      {"avoid-export-for-partitioning", OptionType::Bool, "false",
       "Skip the export's partitioner part (reshards, collectives)"},
      {"enable-insert-explicit-collectives", OptionType::Bool, "false",
       "Lower reshards to collectives in the export"},
      {"remove-all-gather-reduce-scatter-for-cmv1", OptionType::Bool, "false",
       "Leave the all-gathers feeding dots and the reduce-scatters after them "
       "to the backend's collective matmul (CMV1)"},
      {"update-non-divisible-input-output-shardings", OptionType::Bool, "true",
       "Make function input and output shardings evenly divisible"},
      {"inline-meshes", OptionType::Bool, "false",
       "Inline meshes into the exported shardings"}};
  passes.push_back(
      {"sdy-propagation-pipeline", stage, "Shardy's propagation pipeline",
       "The import pipeline, the call-graph handling (flatten and import "
       "calls, or function data-flow edges with dedup-functions-fully), "
       "user-priority propagation, and the export pipeline.",
       std::move(pipeline), propagationPipeline});
}

} // namespace shardlab
