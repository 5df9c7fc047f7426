// Candidate strategies (see candidates.h and shardlab/strategy/strategy.h).
#include "strategy/candidates.h"

#include <algorithm>
#include <functional>
#include <numeric>

namespace shardlab::strategy {
namespace {

/// How one family of strategies shards each argument, given the axis names
/// it uses ("" when the family does not use that kind of axis).
struct Axes {
  std::vector<std::string> batch; ///< data dim 0 (the batch), major first
  std::string sequence;           ///< data dim 1 (rank >= 3)
  std::string tensor;             ///< Megatron dims of weights
  /// FSDP: the largest free dim of parameters, over those of these axes
  /// the parameter does not use yet (an expert weight's expert dim holds
  /// "expert": FSDP×EP splits it over "data" only).
  std::vector<std::string> parameters;
  std::string expert; ///< EP: the expert dim of expert weights
  /// ZeRO-1: optimizer state's largest free dim over these (as FSDP splits
  /// parameters; `parameters` wins where both are set).
  std::vector<std::string> states;
  /// A pipeline's layer count: a parameter's leading dim of this size is
  /// the stack of layers the pipeline cuts into stages, which FSDP leaves
  /// whole (0: no pipeline).
  int64_t layers = 0;
};

void shardDim(ArgAxes &axes, int64_t dim, const std::string &axis) {
  if (!axis.empty() && dim >= 0 && dim < int64_t(axes.size()))
    axes[size_t(dim)].push_back(axis);
}

// The largest dim of `shape` with no axis yet that divides by `ways` (with
// `padded`: at least `ways` long, split with padding), or -1.
int64_t freeDim(const ArgAxes &axes, const std::vector<int64_t> &shape,
                int64_t ways, bool padded = false) {
  int64_t best = -1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (axes[d].empty() && (padded ? shape[d] >= ways : shape[d] % ways == 0) &&
        (best < 0 || shape[d] > shape[size_t(best)]))
      best = int64_t(d);
  return best;
}

int64_t axisSize(const std::vector<MeshAxis> &mesh, const std::string &axis) {
  for (const MeshAxis &m : mesh)
    if (m.name == axis)
      return m.size;
  return 1;
}

int64_t axesSize(const std::vector<MeshAxis> &mesh,
                 const std::vector<std::string> &axes) {
  int64_t size = 1;
  for (const std::string &axis : axes)
    size *= axisSize(mesh, axis);
  return size;
}

void shardDim(ArgAxes &axes, int64_t dim,
              const std::vector<std::string> &names) {
  for (const std::string &name : names)
    shardDim(axes, dim, name);
}

// Those of `wanted` that no dim of `axes` holds yet.
std::vector<std::string> unusedAxes(const ArgAxes &axes,
                                    const std::vector<std::string> &wanted) {
  std::vector<std::string> out;
  for (const std::string &axis : wanted) {
    bool used = false;
    for (const std::vector<std::string> &dim : axes)
      used = used || std::find(dim.begin(), dim.end(), axis) != dim.end();
    if (!used)
      out.push_back(axis);
  }
  return out;
}

// The first of `dims` that divides by `ways`, else the first (the plan
// then fails with the reason), or -1.
int64_t firstDividing(const std::vector<int64_t> &dims,
                      const std::vector<int64_t> &shape, int64_t ways) {
  for (int64_t d : dims)
    if (shape[size_t(d)] % ways == 0)
      return d;
  return dims.empty() ? -1 : dims[0];
}

// FSDP's dimension of a parameter: the largest free one that divides, else
// the largest free one at least `ways` long, split with padding (as FSDP
// pads its flat shards), which `*padded_dim` then names. -1: none.
int64_t fsdpDim(const ArgAxes &axes, const std::vector<int64_t> &shape,
                int64_t ways, int64_t *padded_dim) {
  if (int64_t d = freeDim(axes, shape, ways); d >= 0)
    return d;
  const int64_t d = freeDim(axes, shape, ways, /*padded=*/true);
  if (padded_dim)
    *padded_dim = d;
  return d;
}

// `*padded_dim`: the dim FSDP splits with padding (left as is if none).
ArgAxes argAxes(const ArgAnalysis &a, const Axes &use,
                const std::vector<MeshAxis> &mesh, int64_t *padded_dim) {
  ArgAxes axes(a.info.shape.size());
  if (a.info.role == ArgRole::Data) {
    shardDim(axes, a.batch_dim, use.batch);
    shardDim(axes, a.sequence_dim, use.sequence);
  } else if (a.info.role == ArgRole::Parameter) {
    if (!use.expert.empty() && !a.expert_dims.empty())
      shardDim(axes,
               firstDividing(a.expert_dims, a.info.shape,
                             axisSize(mesh, use.expert)),
               use.expert);
    // Megatron's dim, where no axis is yet (an expert weight: besides its
    // expert dim).
    if (!use.tensor.empty())
      if (const int64_t d =
              firstDividing(a.row_parallel ? a.row_dims : a.column_dims,
                            a.info.shape, axisSize(mesh, use.tensor));
          d >= 0 && axes[size_t(d)].empty())
        shardDim(axes, d, use.tensor);
    const std::vector<std::string> &split =
        use.parameters.empty() && a.optimizer_state ? use.states
                                                    : use.parameters;
    if (const std::vector<std::string> fsdp = unusedAxes(axes, split);
        !fsdp.empty()) {
      ArgAxes taken = axes;
      if (use.layers > 0 && !taken.empty() && a.info.shape[0] == use.layers)
        taken[0].push_back(axis::kStage);
      shardDim(axes,
               fsdpDim(taken, a.info.shape, axesSize(mesh, fsdp), padded_dim),
               fsdp);
    }
  }
  return axes;
}

Plan makePlan(std::string name, std::string description,
              std::vector<MeshAxis> mesh, const Axes &use,
              const std::vector<ArgAnalysis> &args) {
  Plan plan;
  plan.name = std::move(name);
  plan.description = std::move(description);
  plan.mesh = std::move(mesh);
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> shapes;
  for (const ArgAnalysis &a : args) {
    int64_t padded_dim = -1;
    plan.args.push_back(argAxes(a, use, plan.mesh, &padded_dim));
    if (padded_dim >= 0)
      plan.padded.push_back({plan.args.size() - 1, size_t(padded_dim)});
    plan.priorities.push_back(a.info.role == ArgRole::Data ? 0 : 1);
    names.push_back(a.info.name);
    shapes.push_back(a.info.shape);
  }
  if (Status divides = checkDivisible(plan, names, shapes); !divides)
    plan.error = divides.error().message;
  return plan;
}

bool hasSequence(const std::vector<ArgAnalysis> &args) {
  for (const ArgAnalysis &a : args)
    if (a.info.role == ArgRole::Data && a.sequence_dim >= 0)
      return true;
  return false;
}

// The longest sequence of the data arguments (0: none).
int64_t sequenceLength(const std::vector<ArgAnalysis> &args) {
  int64_t longest = 0;
  for (const ArgAnalysis &a : args)
    if (a.info.role == ArgRole::Data && a.sequence_dim >= 0)
      longest = std::max(longest, a.info.shape[size_t(a.sequence_dim)]);
  return longest;
}

// Whether a ring of `c` devices leaves each at least kFewestContextTokens.
bool ringFits(const std::vector<ArgAnalysis> &args, int64_t c) {
  return sequenceLength(args) >= c * kFewestContextTokens;
}

// The batch of the data arguments (the largest batch dim; 0: none).
int64_t batchSize(const std::vector<ArgAnalysis> &args) {
  int64_t batch = 0;
  for (const ArgAnalysis &a : args)
    if (a.info.role == ArgRole::Data && a.batch_dim >= 0)
      batch = std::max(batch, a.info.shape[size_t(a.batch_dim)]);
  return batch;
}

// Whether the batch splits over `ways` data-parallel devices. Where it
// does, data parallelism over them gives each device as many tokens as a
// context axis would, with no ring to pass: CP only pays where the batch
// runs out (long sequences, a few of them; the published recipes turn it
// on at micro-batches of one sequence).
bool batchTakes(const std::vector<ArgAnalysis> &args, int64_t ways) {
  const int64_t batch = batchSize(args);
  return batch >= ways && batch % ways == 0;
}

// Whether `c` context-parallel devices beside `data_ways` data-parallel
// ones are worth a row: the ring fits and the batch could not take them.
bool contextPays(const std::vector<ArgAnalysis> &args, int64_t data_ways,
                 int64_t c) {
  return ringFits(args, c) && !batchTakes(args, data_ways * c);
}

// The context-parallel splits of `devices`: 1 (none), and with a fused
// attention every c >= 2 dividing them whose ring fits.
std::vector<int64_t> contextWays(const std::vector<ArgAnalysis> &args,
                                 int64_t devices, bool fused_attention) {
  std::vector<int64_t> ways = {1};
  for (int64_t c = 2; fused_attention && c <= devices; ++c)
    if (devices % c == 0 && ringFits(args, c))
      ways.push_back(c);
  return ways;
}

// A plan splitting the experts over the "expert" axis. The experts' split
// is as much the layout as the batch's: with the weights' priority below
// the batch's, propagation keeps the expert matmul's output on the batch
// and moves it back and forth (4 all-to-alls where 2 do). Only the expert
// dim takes the batch's priority: an expert weight's FSDP dim is gathered
// where used, as every parameter's.
Plan expertPlan(std::string name, std::string description,
                std::vector<MeshAxis> mesh, const Axes &use,
                const std::vector<ArgAnalysis> &args) {
  Plan plan = makePlan(std::move(name), std::move(description), std::move(mesh),
                       use, args);
  plan.first_priority_axes = {use.expert};
  return plan;
}

// The experts of the module: the expert dim of its first expert weight
// (0: no experts).
int64_t expertCount(const std::vector<ArgAnalysis> &args) {
  for (const ArgAnalysis &a : args)
    if (a.info.role == ArgRole::Parameter && !a.expert_dims.empty())
      return a.info.shape[size_t(a.expert_dims[0])];
  return 0;
}

bool hasExperts(const std::vector<ArgAnalysis> &args) {
  return expertCount(args) > 0;
}

// The sizes of an "expert" axis within `devices`: each >= 2 dividing both
// the devices and the experts (with `with_one`, 1 first: no EP). Only 1
// without experts.
std::vector<int64_t> expertWays(const std::vector<ArgAnalysis> &args,
                                int64_t devices, bool with_one) {
  std::vector<int64_t> ways;
  if (with_one)
    ways.push_back(1);
  const int64_t experts = expertCount(args);
  for (int64_t e = 2; e <= devices && e <= experts; ++e)
    if (devices % e == 0 && experts % e == 0)
      ways.push_back(e);
  return ways;
}

bool hasOptimizerState(const std::vector<ArgAnalysis> &args) {
  return std::any_of(args.begin(), args.end(),
                     [](const ArgAnalysis &a) { return a.optimizer_state; });
}

// ZeRO-1 (DeepSpeed's stage 1, Megatron's distributed optimizer): as DP,
// DP×TP or DP×EP, and the optimizer state split over the data-parallel axes
// (the batch's) on its largest free dim too; the weights are written whole
// where they are (closed: their split updates must not split them as FSDP
// would), and each new weight
// (`updates`: result -> weight) leaves as its weight came, so the step ends
// gathering the updated shards, as ZeRO-1 does, and the next step reads
// its weights as this one did.
void pinWeights(Plan &plan, const std::vector<ArgAnalysis> &args,
                const std::vector<int64_t> &updates) {
  for (size_t r = 0; r < updates.size(); ++r)
    if (updates[r] >= 0)
      plan.pinned_results.push_back({r, size_t(updates[r])});
  plan.write_unsharded = true;
  if (!hasOptimizerState(args) && plan.error.empty())
    plan.error = "no optimizer state: every parameter reaches a matmul";
}

Plan zeroOnePlan(std::string name, std::string description,
                 std::vector<MeshAxis> mesh, Axes use,
                 const std::vector<ArgAnalysis> &args,
                 const std::vector<int64_t> &updates) {
  if (use.states.empty())
    use.states = use.batch;
  Plan plan = use.expert.empty()
                  ? makePlan(std::move(name), std::move(description),
                             std::move(mesh), use, args)
                  : expertPlan(std::move(name), std::move(description),
                               std::move(mesh), use, args);
  pinWeights(plan, args, updates);
  return plan;
}

// EP inside data parallelism, as Megatron and DeepSpeed-MoE place it: for
// every N = a×e×b with a, e >= 2 (e dividing the experts, b in a node), the
// mesh ["data"=a, "expert"=e, "model"=b]: the batch over data and expert,
// the experts over "expert" (each expert's weights replicated over
// "data"), with b > 1 each expert's matmuls Megatron-style over "model";
// FSDP×EP also splits the parameters over data and expert (an expert
// weight's over "data", its expert dim holding "expert"). a = 1 is EP or
// EP×TP.
//   32 devices, 8 experts: DP×EP 16×2, 8×4, 4×8; DP×EP×TP 8×2×2, 4×2×4,
//   2×2×8, 4×4×2, 2×4×4, 2×8×2; each with its FSDP twin, and with
//   optimizer state its ZeRO-1 one.
void addExpertMixes(std::vector<Plan> &plans,
                    const std::vector<ArgAnalysis> &args, int64_t n,
                    int64_t gpus_per_node,
                    const std::vector<int64_t> &updates) {
  for (int64_t e : expertWays(args, n / 2, /*with_one=*/false))
    for (int64_t b = 1; b * e * 2 <= n; ++b) {
      if ((n / e) % b != 0 || (gpus_per_node > 0 && b > gpus_per_node))
        continue;
      const int64_t a = n / (e * b);
      std::string sizes = std::to_string(a) + "×" + std::to_string(e);
      std::string what = "over " + std::to_string(a * e) + " (experts over " +
                         std::to_string(e) + ")";
      std::vector<MeshAxis> mesh = {{axis::kData, a}, {axis::kExpert, e}};
      Axes use{{axis::kData, axis::kExpert}, "", "", {}, axis::kExpert};
      if (b > 1) {
        sizes += "×" + std::to_string(b);
        what += ", weights Megatron-style over " + std::to_string(b);
        mesh.push_back({axis::kModel, b});
        use.tensor = axis::kModel;
      }
      const std::string tp = b > 1 ? "×TP " : " ";
      plans.push_back(
          expertPlan("DP×EP" + tp + sizes, "batch " + what, mesh, use, args));
      if (hasOptimizerState(args))
        plans.push_back(zeroOnePlan("DP×EP" + tp + sizes + " ZeRO-1",
                                    "batch and optimizer state " + what +
                                        ", the updated shards gathered",
                                    mesh, use, args, updates));
      use.parameters = {axis::kData, axis::kExpert};
      plans.push_back(expertPlan("FSDP×EP" + tp + sizes,
                                 "batch and parameters " + what, mesh, use,
                                 args));
    }
}

// Tensor parallelism all-reduces on every layer: its axis stays on the
// NVLink of one node (the "model" axis is the mesh's minor one, so its
// devices are consecutive).
void keepTensorInNode(Plan &plan, int64_t tensor, int64_t gpus_per_node) {
  if (gpus_per_node > 0 && tensor > gpus_per_node && plan.error.empty())
    plan.error = "its tensor axis of " + std::to_string(tensor) +
                 " devices would span nodes of " +
                 std::to_string(gpus_per_node) +
                 " GPUs (tensor parallelism is kept inside a node)";
}

// Hybrid sharding (PyTorch FSDP's HYBRID_SHARD, HSDP): the parameters
// split over a shard group of f devices inside a node, whole over the r
// groups, the batch over all N = r × f × b: mesh ["replica"=r, "data"=f]
// (with b > 1 also "model"=b, weights Megatron-style, minor). A layer's
// gathers stay on NVLink; a gradient is reduced over its group (to the
// parameter's shard) and only its shard all-reduced across the r groups.
// Every f >= 2, b >= 1 with f × b dividing the GPUs of a node, and r >= 2.
//   1,024 devices, 8 GPUs a node: HSDP 512×2, 256×4, 128×8;
//   HSDP×TP 256×2×2, 128×2×4, 128×4×2.
// Where no split qualifies, one "HSDP" row says why.
void addHybridSharded(std::vector<Plan> &plans,
                      const std::vector<ArgAnalysis> &args, int64_t n,
                      int64_t gpus_per_node) {
  const size_t before = plans.size();
  for (int64_t b = 1; b * 2 <= gpus_per_node; ++b)
    for (int64_t f = 2; f * b <= gpus_per_node; ++f) {
      if (gpus_per_node % (f * b) != 0 || n % (f * b) != 0 || n / (f * b) < 2)
        continue;
      const int64_t r = n / (f * b);
      const std::string R = std::to_string(r), F = std::to_string(f),
                        B = std::to_string(b);
      std::vector<MeshAxis> mesh = {{axis::kReplica, r}, {axis::kData, f}};
      Axes use{{axis::kReplica, axis::kData}, "", "", {axis::kData}};
      std::string name = "HSDP " + R + "×" + F;
      std::string what = "batch over " + std::to_string(n / b) +
                         ", parameters split over groups of " + F +
                         " in a node and replicated over " + R + " of them";
      if (b > 1) {
        mesh.push_back({axis::kModel, b});
        use.tensor = axis::kModel;
        name = "HSDP×TP " + R + "×" + F + "×" + B;
        what += ", weights Megatron-style over " + B;
      }
      plans.push_back(makePlan(name, what, mesh, use, args));
    }
  if (plans.size() > before)
    return;
  Plan none;
  none.name = "HSDP";
  none.description = "parameters split inside a node, replicated across";
  none.error =
      gpus_per_node <= 0 ? "the GPUs a node holds are not known (a preset, or "
                           "--sol-options gpus_per_node=N, says)"
      : gpus_per_node == 1
          ? "a node holds one GPU: there is no group inside it to split the "
            "parameters over"
          : "no group of 2 or more of a node's " +
                std::to_string(gpus_per_node) + " GPUs divides the " +
                std::to_string(n) + " devices into 2 or more replicas";
  plans.push_back(std::move(none));
}

// 3-D: the batch over "data", the sequence over "seq" and the weights
// Megatron-style over "model", for every n = a × c × b (each >= 2; b, the
// tensor axis, inside a node), the mesh ["data"=a, "seq"=c, "model"=b] so
// that "model" is minor. With FSDP the parameters are split over "data"
// too. Only where a data argument has a sequence.
void addThreeWay(std::vector<Plan> &plans, const std::vector<ArgAnalysis> &args,
                 int64_t n, int64_t gpus_per_node, bool fused_attention) {
  if (!hasSequence(args))
    return;
  for (int64_t b = 2; b * 4 <= n; ++b) {
    if (n % b != 0 || (gpus_per_node > 0 && b > gpus_per_node))
      continue;
    for (int64_t c = 2; b * c * 2 <= n; ++c) {
      if ((n / b) % c != 0)
        continue;
      const int64_t a = n / (b * c);
      const std::string split =
          std::to_string(a) + "×" + std::to_string(b) + "×" + std::to_string(c);
      const std::string what =
          "over " + std::to_string(a) + ", weights Megatron-style over " +
          std::to_string(b) + ", sequence over " + std::to_string(c);
      const std::vector<MeshAxis> mesh = {
          {axis::kData, a}, {axis::kSeq, c}, {axis::kModel, b}};
      plans.push_back(makePlan("DP×TP×SP " + split, "batch " + what, mesh,
                               {{axis::kData}, axis::kSeq, axis::kModel, {}},
                               args));
      plans.push_back(makePlan(
          "FSDP×TP×SP " + split, "batch and parameters " + what, mesh,
          {{axis::kData}, axis::kSeq, axis::kModel, {axis::kData}}, args));
      if (!fused_attention || !contextPays(args, a, c))
        continue;
      const std::vector<MeshAxis> ring = {
          {axis::kData, a}, {axis::kContext, c}, {axis::kModel, b}};
      const std::string through = what + " through attention (a ring)";
      plans.push_back(
          makePlan("DP×TP×CP " + split, "batch " + through, ring,
                   {{axis::kData}, axis::kContext, axis::kModel, {}}, args));
      plans.push_back(makePlan(
          "FSDP×TP×CP " + split, "batch and parameters " + through, ring,
          {{axis::kData}, axis::kContext, axis::kModel, {axis::kData}}, args));
    }
  }
}

// Why the sequence of `args` cannot go round a ring of `n` devices, "" when
// it can.
std::string whyNoRing(const std::vector<ArgAnalysis> &args, int64_t n,
                      bool fused_attention) {
  if (!hasSequence(args))
    return "no data argument has a sequence dimension (rank >= 3, or token "
           "ids)";
  if (!fused_attention)
    return "no fused attention call (cuDNN's __cudnn$fmha custom call, as "
           "jax.nn.dot_product_attention(implementation=\"cudnn\") writes "
           "it): a ring runs attention as one op per key chunk";
  const std::string N = std::to_string(n);
  if (!ringFits(args, n))
    return "a ring of " + N + " devices would leave each " +
           std::to_string(sequenceLength(args) / n) +
           " tokens of the sequence, fewer than " +
           std::to_string(kFewestContextTokens) +
           " (context parallelism splits long sequences)";
  if (batchTakes(args, n))
    return "the batch of " + std::to_string(batchSize(args)) +
           " splits over the " + N +
           " devices: DP gives each as many tokens with no ring to pass "
           "(context parallelism is for batches too small to split)";
  return "";
}

// For every n = a × c where the ring pays: DP×CP and FSDP×CP (the batch over
// "data"=a, with FSDP the parameters over both axes) and CP×TP (the
// sequence over "context"=a, the weights Megatron-style over a minor
// "model"=c inside a node).
void addContextMixes(std::vector<Plan> &plans,
                     const std::vector<ArgAnalysis> &args, int64_t n,
                     int64_t gpus_per_node) {
  for (int64_t a = 2; a * 2 <= n; ++a) {
    if (n % a != 0)
      continue;
    const int64_t c = n / a;
    const std::string A = std::to_string(a), C = std::to_string(c);
    const std::string split = A + "×" + C;
    const std::string what = "batch over " + A + ", sequence over " + C +
                             " through attention (a ring)";
    if (contextPays(args, a, c)) {
      plans.push_back(makePlan("DP×CP " + split, what,
                               {{axis::kData, a}, {axis::kContext, c}},
                               {{axis::kData}, axis::kContext, "", {}}, args));
      plans.push_back(makePlan(
          "FSDP×CP " + split,
          what + ", parameters over all " + std::to_string(n),
          {{axis::kData, a}, {axis::kContext, c}},
          {{axis::kData}, axis::kContext, "", {axis::kData, axis::kContext}},
          args));
    }
    if (!contextPays(args, 1, a))
      continue;
    plans.push_back(makePlan("CP×TP " + split,
                             "sequence over " + A +
                                 " through attention (a ring), weights "
                                 "Megatron-style over " +
                                 C,
                             {{axis::kContext, a}, {axis::kModel, c}},
                             {{}, axis::kContext, axis::kModel, {}}, args));
    keepTensorInNode(plans.back(), c, gpus_per_node);
  }
}

// Context parallelism: the sequence over a "context" axis, through
// attention too, where the step's attention is one fused call
// (shardlab-context-ring runs it as a ring: each device keeps its queries
// and passes keys and values on). CP over all n devices, with the
// parameters (CP FSDP) or the optimizer state (CP ZeRO-1) split over the
// ring's devices too, as Megatron's distributed optimizer shards over its
// data and context ranks; then the 2-D mixes. Where no ring can run, one
// row says why.
void addContextParallel(std::vector<Plan> &plans,
                        const std::vector<ArgAnalysis> &args, int64_t n,
                        int64_t gpus_per_node, bool fused_attention,
                        const std::vector<int64_t> &updates) {
  const std::string over = "sequence over " + std::to_string(n) +
                           " devices through attention (a ring)";
  Plan cp = makePlan("CP", over + ": keys and values passed round it",
                     {{axis::kContext, n}}, {{}, axis::kContext, "", {}}, args);
  if (std::string why = whyNoRing(args, n, fused_attention); !why.empty())
    cp.error = std::move(why);
  const bool cp_runs = cp.error.empty();
  plans.push_back(std::move(cp));
  if (!fused_attention || !hasSequence(args))
    return;
  if (cp_runs) {
    plans.push_back(
        makePlan("CP FSDP", over + ", every parameter split over them (ZeRO-3)",
                 {{axis::kContext, n}},
                 {{}, axis::kContext, "", {axis::kContext}}, args));
    if (hasOptimizerState(args))
      plans.push_back(zeroOnePlan(
          "CP ZeRO-1",
          over + ", the optimizer state split over them, the updated "
                 "shards gathered",
          {{axis::kContext, n}},
          {{}, axis::kContext, "", {}, "", {axis::kContext}}, args, updates));
  }
  addContextMixes(plans, args, n, gpus_per_node);
}

/// What a stage splits over its data-parallel axes beside the batch.
enum class StageWeights {
  Replicated, ///< nothing (DP)
  Split,      ///< every parameter (FSDP)
  StateSplit, ///< the optimizer state (ZeRO-1)
};

// How a pipeline splits each stage's devices: a data, e expert (EP inside
// the data-parallel devices, the batch over both), c context, b tensor;
// with `fsdp` the parameters over the data and expert axes too.
struct StageSplit {
  int64_t a = 1, e = 1, b = 1;
  int64_t c = 1; ///< the sequence over a "context" axis (a ring)
  StageWeights weights = StageWeights::Replicated;
  bool fsdp() const { return weights == StageWeights::Split; }
  bool zero1() const { return weights == StageWeights::StateSplit; }
};

// One pipeline: S stages over the major "stage" axis, the batch over
// "data" (a) and "expert" (e, which also splits the experts) and, with
// b > 1, the weights Megatron-style over "model"; with `fsdp` the
// parameters also over "data" and "expert" (ZeRO-3 in each stage: every
// tick gathers a layer's weights where it runs), never their layer dim.
Plan pipelinePlan(const std::vector<ArgAnalysis> &args, int64_t s,
                  const StageSplit &split, const LayerStack &layers,
                  const std::vector<int64_t> &updates) {
  std::vector<MeshAxis> mesh = {{axis::kStage, s}};
  std::string name = "PP", sizes = std::to_string(s);
  std::string what =
      std::to_string(layers.layers) + " layers in " + std::to_string(s) +
      " pipeline stages of " + std::to_string(layers.layers / s) +
      " (1F1B over " + std::to_string(layers.micro_batches) +
      (layers.micro_batches == 1 ? " micro-batch)" : " micro-batches)");
  Axes use;
  auto add = [&](const char *axis, int64_t size, const char *family) {
    mesh.push_back({axis, size});
    name += std::string("×") + family;
    sizes += "×" + std::to_string(size);
  };
  if (split.a > 1) {
    add(axis::kData, split.a, split.fsdp() ? "FSDP" : "DP");
    use.batch.push_back(axis::kData);
    what += (split.fsdp() ? ", batch and parameters over " : ", batch over ") +
            std::to_string(split.a);
  }
  if (split.e > 1) {
    add(axis::kExpert, split.e, "EP");
    use.batch.push_back(axis::kExpert);
    use.expert = axis::kExpert;
    what += ", experts over " + std::to_string(split.e);
  }
  if (split.c > 1) {
    add(axis::kContext, split.c, "CP");
    use.sequence = axis::kContext;
    what += ", sequence over " + std::to_string(split.c) +
            " through attention (a ring)";
  }
  if (split.b > 1) {
    add(axis::kModel, split.b, "TP");
    use.tensor = axis::kModel;
    what += ", weights Megatron-style over " + std::to_string(split.b);
  }
  // A stage's data-parallel devices, and its ring's (which Megatron's
  // distributed optimizer shards over too).
  std::vector<std::string> sharders = use.batch;
  if (split.c > 1)
    sharders.push_back(axis::kContext);
  if (split.fsdp()) {
    use.parameters = sharders;
    use.layers = layers.layers;
    if (split.a == 1)
      sizes += " FSDP";
  }
  if (split.zero1()) {
    use.states = sharders;
    use.layers = layers.layers;
    sizes += " ZeRO-1";
    what += ", optimizer state over the data-parallel devices";
  }
  Plan plan = split.e > 1
                  ? expertPlan(name + " " + sizes, what, mesh, use, args)
                  : makePlan(name + " " + sizes, what, mesh, use, args);
  if (split.zero1())
    pinWeights(plan, args, updates);
  plan.stages = s;
  return plan;
}

// Pipelines of S stages, S dividing the layers and the devices, with every
// split of the rest into data x tensor (tensor in a node). A pipeline needs
// at least S micro-batches (fewer leave stages idle most of a step): where
// the step has fewer, its micro-batches are split (shardlab-split-micro-
// batches) towards 4 S in all, as far as the batch and the lowered mesh
// allow, and the pipeline is left out when that is still fewer than S.
//   80 layers, 1 micro-batch of 1,024 sequences, 1,024 devices, S = 16,
//   DP 64: 16 rows a device, so at most a split in 16 (4 S = 64 asks more):
//   16 micro-batches of 1 row each, lowered on 16,384 devices
//   ("PP×DP 16×64 mb÷16").
// Without layer loops in micro-batches, one row says why.
void addPipelines(std::vector<Plan> &plans,
                  const std::vector<ArgAnalysis> &args, int64_t n,
                  int64_t gpus_per_node, const LayerStack &layers,
                  const std::vector<int64_t> &updates, bool fused_attention) {
  if (!layers.error.empty()) {
    Plan pp;
    pp.name = "PP";
    pp.description = "layers split into pipeline stages";
    pp.mesh = {{axis::kStage, n}};
    pp.error = "no pipeline: " + layers.error;
    plans.push_back(std::move(pp));
    return;
  }
  if (layers.layers < 2 || layers.micro_batches < 1)
    return; // no layer stack was looked for
  for (int64_t s = 2; s <= n; ++s) {
    if (layers.trips % s != 0 || n % s != 0) // whole trips a stage
      continue;
    const int64_t rest = n / s;
    for (int64_t b = 1; b <= rest; ++b) {
      if (rest % b != 0 || (gpus_per_node > 0 && b > gpus_per_node))
        continue;
      for (int64_t c : contextWays(args, rest / b, fused_attention))
        for (int64_t e : expertWays(args, rest / (b * c), /*with_one=*/true))
          for (StageWeights weights :
               {StageWeights::Replicated, StageWeights::Split,
                StageWeights::StateSplit}) {
            const int64_t a = rest / (b * c * e);
            if ((c > 1 && !contextPays(args, a * e, c)) ||
                (weights != StageWeights::Replicated && a < 2 && c < 2) ||
                (weights == StageWeights::StateSplit &&
                 !hasOptimizerState(args)))
              continue;
            Plan plan =
                pipelinePlan(args, s, {a, e, b, c, weights}, layers, updates);
            if (s <= layers.micro_batches) {
              plans.push_back(std::move(plan));
              continue;
            }
            std::optional<Plan> split =
                splitMicroBatchesPlan(plan, args, layers.micro_batches, 4 * s,
                                      kMostSplitLoweredDevices);
            if (split && layers.micro_batches * split->micro_split >= s)
              plans.push_back(std::move(*split));
          }
    }
  }
}

} // namespace

std::optional<Plan> splitMicroBatchesPlan(const Plan &base,
                                          const std::vector<ArgAnalysis> &args,
                                          int64_t micro_batches,
                                          int64_t max_micro_batches,
                                          int64_t max_devices) {
  // A split plan is split again from its plan before the split, further.
  const Plan &from = base.unsplit ? *base.unsplit : base;
  // The rows of a micro-batch each device holds: the data's batch over the
  // axes already splitting it.
  int64_t rows = 0;
  for (size_t i = 0; i < args.size() && i < from.args.size(); ++i) {
    const ArgAnalysis &a = args[i];
    if (a.info.role != ArgRole::Data || a.batch_dim < 0)
      continue;
    int64_t ways = 1;
    for (const std::string &axis : from.args[i][size_t(a.batch_dim)])
      ways *= axisSize(from.mesh, axis);
    const int64_t local = a.info.shape[size_t(a.batch_dim)] / ways;
    rows = rows ? std::gcd(rows, local) : local;
  }
  // The largest split of the rows that keeps the loop within bounds, and
  // the mesh it is lowered on (the devices times the split).
  int64_t devices = 1;
  for (const MeshAxis &axis : from.mesh)
    devices *= axis.size;
  while (rows > 1 && (micro_batches * rows > max_micro_batches ||
                      devices * rows > max_devices)) {
    int64_t divisor = 2;
    while (rows % divisor != 0)
      ++divisor;
    rows /= divisor;
  }
  if (rows < 2 || rows <= base.micro_split)
    return std::nullopt;
  Plan plan = from;
  plan.unsplit = std::make_shared<const Plan>(from);
  plan.micro_split = rows;
  plan.mesh.push_back({axis::kMicro, rows});
  for (size_t i = 0; i < args.size() && i < plan.args.size(); ++i)
    if (args[i].info.role == ArgRole::Data && args[i].batch_dim >= 0)
      plan.args[i][size_t(args[i].batch_dim)].push_back(axis::kMicro);
  plan.name += " mb÷" + std::to_string(rows);
  plan.description += "; each micro-batch split in " + std::to_string(rows) +
                      ", run one after another (" +
                      std::to_string(micro_batches * rows) + " micro-batches)";
  return plan;
}

Plan recomputePlan(const Plan &base, const std::string &policy) {
  Plan plan = base;
  if (base.unsplit)
    plan.unsplit =
        std::make_shared<const Plan>(recomputePlan(*base.unsplit, policy));
  plan.recompute = policy;
  plan.name += " recompute " + policy;
  plan.description += policy == "full" ? "; the backward recomputes each layer"
                      : policy == "selective"
                          ? "; the backward recomputes each layer but "
                            "its GEMMs and attention"
                          : "; the backward recomputes nothing";
  return plan;
}

std::optional<Plan> interleavedPlan(const Plan &base, int64_t v,
                                    const LayerStack &stack) {
  const int64_t s = base.stages, layers = stack.layers;
  const int64_t m = microBatchesOf(base, stack.micro_batches);
  if (s < 2 || v < 2 || base.virtual_stages > 1 || stack.trips % (s * v) != 0 ||
      m % s != 0)
    return std::nullopt;
  Plan plan = base;
  plan.virtual_stages = v;
  plan.name += " interleaved×" + std::to_string(v);
  plan.description += "; interleaved: " + std::to_string(v) + " chunks of " +
                      std::to_string(layers / (s * v)) + " layers a device";
  return plan;
}

std::vector<Plan> candidatePlans(const ModuleAnalysis &analysed, int64_t n,
                                 int64_t gpus_per_node) {
  const std::vector<ArgAnalysis> &args = analysed.args;
  const std::vector<int64_t> &updates = analysed.updates;
  std::vector<Plan> plans;
  const std::string N = std::to_string(n);
  plans.push_back(makePlan(
      "DP", "batch split over " + N + " devices; parameters replicated",
      {{axis::kData, n}}, {{axis::kData}, "", "", {}}, args));
  plans.push_back(makePlan("FSDP",
                           "batch and every parameter split over " + N +
                               " devices (ZeRO-3: parameters gathered "
                               "where used)",
                           {{axis::kData, n}},
                           {{axis::kData}, "", "", {axis::kData}}, args));
  plans.push_back(zeroOnePlan(
      "DP ZeRO-1",
      "batch and optimizer state split over " + N +
          " devices; weights replicated, the updated shards gathered",
      {{axis::kData, n}}, {{axis::kData}, "", "", {}}, args, updates));
  plans.push_back(makePlan("TP",
                           "weights split Megatron-style (column, then row) "
                           "over " +
                               N + " devices; data replicated",
                           {{axis::kModel, n}}, {{}, "", axis::kModel, {}},
                           args));
  keepTensorInNode(plans.back(), n, gpus_per_node);
  Plan sp = makePlan(
      "SP", "sequence split over " + N + " devices; parameters replicated",
      {{axis::kSeq, n}}, {{}, axis::kSeq, "", {}}, args);
  if (!hasSequence(args))
    sp.error =
        "no data argument has a sequence dimension (rank >= 3, or token ids)";
  plans.push_back(std::move(sp));
  // Expert parallelism: the experts split over the devices that split the
  // batch; each device runs its experts on the tokens routed to them, which
  // the dispatch and combine move between devices (all-to-all).
  Plan ep = expertPlan("EP",
                       "batch and experts split over " + N +
                           " devices (tokens dispatched to their experts' "
                           "devices); other parameters replicated",
                       {{axis::kExpert, n}},
                       {{axis::kExpert}, "", "", {}, axis::kExpert}, args);
  if (!hasExperts(args))
    ep.error = "no parameter is an expert weight (a matmul weight with a "
               "batching dimension, as a mixture of experts' is)";
  plans.push_back(std::move(ep));
  addContextParallel(plans, args, n, gpus_per_node, analysed.fused_attention,
                     updates);
  for (int64_t a = 2; a * 2 <= n; ++a) {
    if (n % a != 0)
      continue;
    const int64_t b = n / a;
    const std::string split = std::to_string(a) + "×" + std::to_string(b);
    const std::string A = std::to_string(a), B = std::to_string(b);
    plans.push_back(makePlan("DP×TP " + split,
                             "batch over " + A +
                                 ", weights Megatron-style "
                                 "over " +
                                 B,
                             {{axis::kData, a}, {axis::kModel, b}},
                             {{axis::kData}, "", axis::kModel, {}}, args));
    keepTensorInNode(plans.back(), b, gpus_per_node);
    plans.push_back(makePlan(
        "FSDP×TP " + split,
        "batch and parameters over " + A + ", weights Megatron-style over " + B,
        {{axis::kData, a}, {axis::kModel, b}},
        {{axis::kData}, "", axis::kModel, {axis::kData}}, args));
    keepTensorInNode(plans.back(), b, gpus_per_node);
    if (hasOptimizerState(args)) {
      plans.push_back(zeroOnePlan("DP×TP " + split + " ZeRO-1",
                                  "batch and optimizer state over " + A +
                                      ", weights Megatron-style over " + B +
                                      ", the updated shards gathered",
                                  {{axis::kData, a}, {axis::kModel, b}},
                                  {{axis::kData}, "", axis::kModel, {}}, args,
                                  updates));
      keepTensorInNode(plans.back(), b, gpus_per_node);
    }
    Plan dpsp =
        makePlan("DP×SP " + split, "batch over " + A + ", sequence over " + B,
                 {{axis::kData, a}, {axis::kSeq, b}},
                 {{axis::kData}, axis::kSeq, "", {}}, args);
    if (!hasSequence(args))
      dpsp.error =
          "no data argument has a sequence dimension (rank >= 3, or token ids)";
    plans.push_back(std::move(dpsp));
    if (hasExperts(args)) {
      plans.push_back(expertPlan(
          "EP×TP " + split,
          "batch and experts over " + A + ", weights Megatron-style over " + B +
              " (each expert's matmuls split, as Megatron splits MoE "
              "layers)",
          {{axis::kExpert, a}, {axis::kModel, b}},
          {{axis::kExpert}, "", axis::kModel, {}, axis::kExpert}, args));
      keepTensorInNode(plans.back(), b, gpus_per_node);
    }
  }
  addHybridSharded(plans, args, n, gpus_per_node);
  addThreeWay(plans, args, n, gpus_per_node, analysed.fused_attention);
  addExpertMixes(plans, args, n, gpus_per_node, updates);
  addPipelines(plans, args, n, gpus_per_node, analysed.layers, updates,
               analysed.fused_attention);
  return plans;
}

} // namespace shardlab::strategy
