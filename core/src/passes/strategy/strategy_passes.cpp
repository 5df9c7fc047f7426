// The strategy stage's passes: shardlab's own, not Shardy's. They rewrite a
// program into the one a layout or a choice that shardings cannot say would
// run, for the scheduler to estimate: --compare runs them for its pipeline,
// micro-batch, recomputation and expert candidates. shardlab-recompute,
// shardlab-expert-exchange and shardlab-context-ring run before propagation;
// the others on the per-device program (after sdy-convert-global-to-local).
#include "strategy_passes.h"
#include "../stages.h"

namespace shardlab {

void addStrategyPasses(std::vector<PassInfo> &passes) {
  passes.push_back(
      {"shardlab-pipeline-stages",
       "strategy",
       "Split a scanned-layers step into pipeline stages",
       "On the per-device program of a step whose layer loops (counted "
       "loops slicing stacked [L, ...] weights) sit inside a loop over M "
       "micro-batches, and whose mesh has a stage axis of S devices that no "
       "sharding uses: every tensor of the layer dimension keeps its "
       "stage's L/S layers (saved residuals: those of the micro-batches in "
       "flight on the first stage, min(S, M) for 1F1B, M for GPipe; "
       "interleaved, the chunk forwards of Megatron-LM's warm-up and one "
       "more); layer "
       "loops run a stage's trips (L/S, or L/(S K) when an unrolled scan "
       "runs K layers a trip) and the micro-batch loop M + S - 1 ticks (fill "
       "and drain); what a layer loop passes on (activations, gradients) "
       "goes to the next or previous stage by collective_permute. "
       "Interleaved, the micro-batch loop runs rounds of V chunks (the "
       "embedding, head and loss once a round) and a copy of it the chunks "
       "left over. The "
       "rules, with a worked example, head pipeline_stages.cpp.",
       {{"stages", OptionType::Int, "0",
         "Pipeline stages S (0: the size of the stage axis)"},
        {"axis", OptionType::String, "stage", "The mesh axis of the stages"},
        {"virtual-stages", OptionType::Int, "1",
         "Interleaved schedule: V chunks of L/(S V) layers a device, "
         "M V + S - 1 chunk ticks counted in rounds of V chunks, the ring "
         "closed (M a multiple of S)"},
        {"schedule", OptionType::String, "1f1b",
         "Pipeline schedule: how many micro-batches' residuals the first "
         "stage holds",
         "1f1b|gpipe"},
        {"stage-kind", OptionType::String, "every",
         "every: the embedding, head and loss on every stage each tick (an "
         "unbalanced pipeline's slowest stage); middle: a middle stage, its "
         "layers only, their inputs received as zeros (rule 4)",
         "every|middle"}},
       pipelineStagesPass});
  passes.push_back(
      {"shardlab-split-micro-batches",
       "strategy",
       "Split each micro-batch into k run one after another",
       "On the per-device program of a step lowered with a mesh axis of k "
       "devices that only the batch dimension of its data uses (so every "
       "per-micro-batch tensor is k times smaller): the loop over "
       "micro-batches runs k times as many iterations, all-reduces across "
       "the axis alone disappear (the accumulation adds the parts) and "
       "others lose it from their groups, and the mesh loses the axis. A "
       "collective gathering across it is an error. The rules, with a "
       "worked example, head split_micro_batches.cpp.",
       {{"axis", OptionType::String, "micro",
         "The mesh axis that splits the micro-batches"}},
       splitMicroBatchesPass});
  passes.push_back(
      {"shardlab-recompute",
       "strategy",
       "Set what a training step's backward recomputes of each layer",
       "On a module before propagation whose forward layer loop saves "
       "values of each layer in [L, ...] stacks that a later layer loop "
       "(the backward) reads one layer at a time: the backward recomputes "
       "the layer's forward from its input (full: jax.checkpoint's "
       "nothing_saveable), or the forward saves the outputs of its "
       "dot_generals and custom calls and the backward recomputes the "
       "rest (selective: dots_saveable), or everything the backward reads "
       "(none: everything_saveable). The rules, with a worked example, "
       "head recompute.cpp.",
       {{"policy", OptionType::String, "full",
         "What the forward saves for the backward", "full|selective|none"}},
       recomputePass});
  passes.push_back(
      {"shardlab-expert-exchange",
       "strategy",
       "Exchange a mixture of experts' tokens by all-to-all",
       "On a module before propagation whose expert weights (the rhs of "
       "dot_generals batched over their expert dim) are sharded over a "
       "mesh axis: each expert matmul reads its tokens through two sharding "
       "constraints (the expert dim replicated, then on the axis) and each "
       "other dot_general reads what the experts computed through the same "
       "two the other way round, as JAX mixture-of-experts layers write "
       "them: the tokens then move to their experts' devices and back by "
       "all-to-all, not gathered over the axis. The rules, with a worked "
       "example, head expert_exchange.cpp.",
       {{"axis", OptionType::String, "expert",
         "The mesh axis that splits the experts"}},
       expertExchangePass});
  passes.push_back(
      {"shardlab-context-ring",
       "strategy",
       "Run fused attention as a ring over a context-parallel axis",
       "On a module before propagation whose fused attention calls "
       "(cuDNN's __cudnn$fmha custom calls, q, k, v [B, T, N, D]) should "
       "see the sequence split over a mesh axis of C devices: each call "
       "becomes a manual computation over the axis, its operands and "
       "results split by sequence, whose body calls the attention once per "
       "key chunk and passes the keys and values to the next device by "
       "collective_permute between calls; the forward merges the chunks' "
       "outputs by their softmax statistics, the backward passes dK and dV "
       "on with the keys and home at the end, as JAX's ring attentions "
       "write it. The rules, with a worked example, head context_ring.cpp.",
       {{"axis", OptionType::String, "context",
         "The mesh axis that splits the sequence"}},
       contextRingPass});
}

} // namespace shardlab
