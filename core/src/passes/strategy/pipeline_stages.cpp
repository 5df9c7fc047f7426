// shardlab-pipeline-stages: the program one device of a pipeline stage runs,
// made from the per-device program of a scanned-layers training step.
//
// Rules, on a per-device module whose mesh has a stage axis of S devices
// (major, so a stage is a block of consecutive devices) that no sharding
// uses, and whose step loops over M micro-batches around its L-layer loops
// (layer_loops.h):
//
// 1. Every tensor whose leading dimension is the layer dimension (the
//    stacked weights, their gradients and optimizer states, and every value
//    they reach through loops, elementwise ops, converts, in-place updates,
//    collectives, reshapes and slices that keep that dimension, such as
//    ZeRO-1's shard of a stacked state) keeps L / S layers:
//    the stage's own. Residual stacks a layer loop writes that reach neither
//    an argument nor a result (the activations saved for the backward pass)
//    keep the layers whose inputs the first stage holds at its peak: F x
//    L / S, F the micro-batches in flight, min(S, M) for 1F1B and M for
//    GPipe. Interleaved 1F1B (V chunks of L / (S V) layers a device) holds
//    C chunks' inputs, C = min(2 (S - 1) + (V - 1) S + 1, M V): the first
//    stage runs Megatron-LM's warm-up of 2 (S - 1) + (V - 1) S chunk
//    forwards, then one more, before its first backward (e.g. S = 4,
//    V = 2, L = 16, M = 8: 11 chunks of 2 layers, 22 layers' inputs where
//    1F1B holds 4 micro-batches of 4 layers, 16).
// 2. Each layer loop runs T / S trips (T its trips for the L layers: one
//    layer a trip, or K = L / T when an iteration runs K layers, as
//    jax.lax.scan's unroll writes it; S must divide T, so a stage's layers
//    are whole trips); the micro-batch loop runs M + S - 1
//    ticks, the pipeline's fill and drain included (the bubble: every tick
//    costs a micro-batch's work, as idle ticks of a JAX pipeline compute on
//    padding). Interleaved, with V chunks of L / (S V) layers a device (M a
//    multiple of S), the device runs M V + S - 1 chunk ticks, the bubble V
//    times shorter. They are counted in rounds of V chunks: the micro-batch
//    loop runs M + (S - 1) / V rounds (rounded down), each a micro-batch's
//    L / S layers, with a copy of it after for one round of the remaining
//    R = (S - 1) mod V chunks (R L / (S V) layers, R T / (S V) trips). So the
//    layers run M V + S - 1 chunks' worth and what is not in a layer loop (the
//    embedding, head and loss, the gradients' accumulation) once a round,
//    as a device runs them once a micro-batch, not once a chunk.
// 3. What a layer loop carries that changes and is not per layer (the
//    activations leaving the forward loop, the gradients leaving the
//    backward ones) goes to the next stage (the first layer loop: s -> s+1)
//    or the previous one (later loops: s -> s-1) by a collective_permute
//    that its uses then read. Interleaved, a round passes it on once a
//    chunk: V permutes one after another round the ring (R in the last);
//    in a middle stage (rule 4) V permutes of it, none reading another.
// 4. stage-kind=middle: the program of a middle stage, which runs only its
//    layers (a balanced pipeline's first and last stages hold fewer layers
//    beside the embedding and the head). Each layer loop's changing input
//    that is not per layer (the activations or gradients it receives) is a
//    zero constant, as received from the neighbouring stage; what the
//    micro-batch loop carries that is not per layer (the embedding's and
//    head's gradient sums, the loss) stays as it came in, and the step's
//    results that are not per layer (the embedding's and head's new weights
//    and states, the loss) are zeros. Every op that then feeds no result
//    goes, the sends of rule 3 excepted: the embedding, the head, the loss
//    and their gradients, collectives and updates. The micro-batch loop
//    stops carrying what it no longer changes, and the step's arguments
//    nothing reads go (the ends' weights and states, the batch).
//
// Worked example: L = 8, S = 4, M = 8, 1F1B. Weights [8, H, H] -> [2, H, H]
// per device; the forward loop's saved inputs [8, mb, H] -> [8, mb, H]
// (4 micro-batches x 2 layers); layer loops 8 -> 2 trips; the micro-batch
// loop 8 -> 11 ticks; two collective_permutes per tick. The embedding, the
// head and the loss run on every stage each tick (a real pipeline runs them
// on the first and last stage, whose ticks are then the longest); with
// stage-kind=middle on none: each tick is two layer loops of 2 trips, the
// first starting from zeros, and the two permutes.
// Interleaved, V = 2 (chunks of 1 layer): 8 x 2 + 3 = 19 chunk ticks, so
// 9 rounds of 2 layers (two permutes each way) and a round of R = 1 layer
// (one each way). Written with 2 layers a trip (T = 4), S = 4: the same
// weights [2, H, H] and ticks, layer loops 4 -> 1 trip of 2 layers;
// interleaved V = 2 would need chunks of 1 layer, half a trip: refused.
#include "passes/strategy/layer_loops.h"
#include "passes/strategy/strategy_passes.h"

#include "ir/op_properties.h"
#include "ir/while_loops.h"
#include "passes/export/local_builder.h"
#include "passes/pass_utils.h"
#include "sharding/device_layout.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace shardlab {
namespace {

// Values whose dimension 0 is the layer dimension, linked where an op
// carries that dimension from one to the other.
class LayerDims {
public:
  explicit LayerDims(int64_t layers) : layers_(layers) {}

  void link(Value *a, Value *b) {
    if (a != b && leadingDimIs(a, layers_) && leadingDimIs(b, layers_)) {
      edges_[a].push_back(b);
      edges_[b].push_back(a);
    }
  }
  void linkOp(Operation &op);
  /// The values linked to `seed`, `seed` included.
  std::vector<Value *> component(Value *seed) const;

private:
  int64_t layers_;
  std::unordered_map<Value *, std::vector<Value *>> edges_;
};

bool firstIsZero(const Attr *attr) {
  return attr && !attr->ints().empty() && attr->ints()[0] == 0;
}

bool containsZero(const Attr *attr) {
  return attr && std::count(attr->ints().begin(), attr->ints().end(), 0);
}

// Ops whose operand i becomes their result i (and only that one).
bool isPairwise(const Operation &op) {
  return op.is("stablehlo.while") || op.is("stablehlo.optimization_barrier") ||
         isStableHloCollective(op);
}

void LayerDims::linkOp(Operation &op) {
  auto pairwise = [&](size_t n) {
    for (size_t i = 0; i < n && i < op.numOperands() && i < op.numResults();
         ++i)
      link(op.operand(i), op.result(i));
  };
  if (op.is("stablehlo.while")) {
    Block &cond = op.region(0).front(), &body = op.region(1).front();
    Operation *yield = body.back();
    for (size_t i = 0; i < op.numOperands(); ++i) {
      link(op.operand(i), op.result(i));
      link(op.operand(i), cond.argument(i));
      link(op.operand(i), body.argument(i));
      link(body.argument(i), yield->operand(i));
    }
  } else if (isElementwise(op)) {
    for (size_t i = 0; i < op.numOperands(); ++i)
      link(op.operand(i), op.result(0));
  } else if (op.is("stablehlo.dynamic_update_slice") ||
             // A slice that keeps every layer (a ZeRO-1 shard of a stack:
             // linked only when both sides have L rows).
             op.is("stablehlo.dynamic_slice") || op.is("stablehlo.slice") ||
             op.is("stablehlo.reshape") ||
             (op.is("stablehlo.transpose") &&
              firstIsZero(op.attrs.get("permutation"))) ||
             (op.is("stablehlo.broadcast_in_dim") &&
              firstIsZero(op.attrs.get("broadcast_dimensions")))) {
    link(op.operand(0), op.result(0));
  } else if (op.is("stablehlo.optimization_barrier") ||
             isStableHloCollective(op)) {
    pairwise(op.numResults());
  } else if (op.is("stablehlo.reduce") &&
             !containsZero(op.attrs.get("dimensions"))) {
    pairwise(op.numResults());
  }
}

std::vector<Value *> LayerDims::component(Value *seed) const {
  std::vector<Value *> out{seed};
  std::unordered_set<Value *> seen{seed};
  for (size_t i = 0; i < out.size(); ++i) {
    auto it = edges_.find(out[i]);
    if (it == edges_.end())
      continue;
    for (Value *next : it->second)
      if (seen.insert(next).second)
        out.push_back(next);
  }
  return out;
}

struct Options {
  int64_t stages = 0;
  std::string axis;
  bool gpipe = false;
  int64_t virtual_stages = 1; ///< V: chunks of layers a device holds
  bool middle = false;        ///< stage-kind=middle: the layers only (rule 4)
};

class PipelineStages {
public:
  PipelineStages(Module &module, Operation &func, const Options &options,
                 DiagnosticEngine &diags)
      : module_(module), ctx_(module.ctx()), func_(func), options_(options),
        diags_(diags) {}
  bool run();

private:
  bool fail(const std::string &message) {
    diags_.error(func_.loc, "shardlab-pipeline-stages: " + message);
    return false;
  }
  bool findMesh();
  void collectComponents();
  bool isStash(const std::vector<Value *> &component) const;
  bool resize(const std::vector<Value *> &component, int64_t rows);
  bool checkUses();
  bool setTrips(Operation &loop, int64_t trips);
  void sendActivations(Operation &loop, bool forward, int64_t hops);
  Operation *peelRound(std::vector<Operation *> &layer_loops);
  bool setRoundTrips(Operation &round, const std::vector<Operation *> &loops,
                     int64_t rounds, int64_t chunks);
  std::vector<std::vector<int64_t>> pairs(int64_t hop) const;
  int64_t inFlight(int64_t micro_batches) const;
  std::string summary(int64_t in_flight) const;
  std::string tripsText(int64_t parts) const;
  void keepLayersOnly(Operation &micro_batch_loop,
                      const std::vector<Operation *> &layer_loops);
  void zeroNonLayerResults();
  void eraseDeadButSends();
  void dropPassThroughs(Operation &micro_batch_loop);
  void eraseUnreadArguments();

  Module &module_;
  Context &ctx_;
  Operation &func_;
  Options options_;
  DiagnosticEngine &diags_;
  Mesh mesh_;
  LayerLoops loops_;
  std::vector<std::vector<Value *>> components_;
  std::unordered_set<Value *> resized_;
  std::unordered_set<Operation *> sends_; ///< rule 3's permutes
  int64_t next_channel_ = 1;
};

bool PipelineStages::findMesh() {
  for (Operation &op : module_.body()) {
    const Attr *mesh = op.is("sdy.mesh") ? op.attrs.get("mesh") : nullptr;
    if (mesh && mesh->kind == AttrKind::Mesh &&
        mesh->mesh().axisIndex(options_.axis) >= 0) {
      mesh_ = mesh->mesh();
      const int64_t size = *mesh_.axisSize(options_.axis);
      if (options_.stages == 0)
        options_.stages = size;
      if (options_.stages != size)
        return fail("stages=" + std::to_string(options_.stages) +
                    " but mesh axis \"" + options_.axis + "\" has " +
                    std::to_string(size) + " devices");
      return true;
    }
  }
  return fail("no mesh has an axis \"" + options_.axis +
              "\" (the stage axis: major, and used by no sharding)");
}

void PipelineStages::collectComponents() {
  LayerDims dims(loops_.layers);
  walk(func_, [&](Operation &op) { dims.linkOp(op); });
  std::unordered_set<Value *> seen;
  for (Operation *loop : loops_.loops)
    for (Operation &op : loop->region(1).front())
      if (Value *stacked = layerSliced(op, *loop);
          stacked && !seen.count(stacked)) {
        components_.push_back(dims.component(stacked));
        seen.insert(components_.back().begin(), components_.back().end());
      }
}

// Residuals a layer loop stacks for the backward pass: written in a layer
// loop, and neither an argument of the step nor one of its results.
bool PipelineStages::isStash(const std::vector<Value *> &component) const {
  Block &entry = func_.region(0).front();
  bool written = false;
  for (Value *v : component) {
    if (v->owner_block == &entry)
      return false;
    for (OpOperand *use = v->firstUse(); use; use = use->next_use) {
      if (use->owner->is("func.return"))
        return false;
      written |=
          use->owner->is("stablehlo.dynamic_update_slice") && use->index() == 0;
    }
  }
  return written;
}

// A slice that keeps every layer keeps the stage's `rows` once resized:
// its size (dynamic_slice) or limit (slice) along dimension 0 follows.
// False when the op's attribute is not there to follow.
bool setSliceRows(Context &ctx, Operation &op, int64_t rows) {
  const char *name = op.is("stablehlo.dynamic_slice") ? "slice_sizes"
                     : op.is("stablehlo.slice")       ? "limit_indices"
                                                      : nullptr;
  if (!name)
    return true;
  const Attr *attr = op.attrs.get(name);
  if (!attr || attr->ints().empty())
    return false;
  std::vector<int64_t> values = attr->ints();
  values[0] = rows;
  op.attrs.set(name, ctx.attrs.denseArray(ctx.types.element("i64"), values));
  return true;
}

bool PipelineStages::resize(const std::vector<Value *> &component,
                            int64_t rows) {
  for (Value *v : component) {
    std::vector<int64_t> shape = v->type->shape;
    shape[0] = rows;
    const Type type =
        ctx_.types.rankedTensor(shape, v->type->element, v->type->encoding);
    Operation *def = v->defining_op;
    if (def && def->is("stablehlo.constant")) {
      const DenseReader reader = def->attrs.get("value")->denseReader();
      if (!reader.valid() || !reader.isSplat())
        return fail("a constant of " + std::to_string(loops_.layers) +
                    " layers that is not a splat");
      LocalBuilder b(ctx_, *def);
      def->attrs.set(ctx_.intern("value"),
                     b.splatAttr(type, reader.doubleAt(0)));
    }
    if (def && !setSliceRows(ctx_, *def, rows))
      return fail("a slice of the " + std::to_string(loops_.layers) +
                  " layers without its sizes");
    v->type = type;
    resized_.insert(v);
  }
  return true;
}

// Every op that reads a resized value and gives a result of L layers must
// have had that result resized too, or the rewrite does not know the op.
bool PipelineStages::checkUses() {
  for (Value *v : resized_)
    for (OpOperand *use = v->firstUse(); use; use = use->next_use) {
      Operation &op = *use->owner;
      for (size_t r = 0; r < op.numResults(); ++r)
        if ((!isPairwise(op) || r == use->index()) &&
            leadingDimIs(op.result(r), loops_.layers) &&
            !resized_.count(op.result(r)))
          return fail("cannot split the layer dimension through " +
                      std::string(op.name));
    }
  return true;
}

bool PipelineStages::setTrips(Operation &loop, int64_t trips) {
  return setTripCount(ctx_, loop, trips) ||
         fail("a loop it splits is not counted");
}

// Source-target pairs sending from each stage to stage + hop. Interleaved,
// a micro-batch goes round the ring V times: the last stage passes it back
// to the first.
std::vector<std::vector<int64_t>> PipelineStages::pairs(int64_t hop) const {
  return pairsAlongAxis(mesh_, mesh_.axisIndex(options_.axis), hop,
                        /*wrap=*/options_.virtual_stages > 1);
}

// Each of `loop`'s changing results goes on `hops` stages, one permute a
// hop (a chunk's hand-over each, in a round of an interleaved pipeline).
void PipelineStages::sendActivations(Operation &loop, bool forward,
                                     int64_t hops) {
  Block &body = loop.region(1).front();
  Operation *yield = body.back();
  Operation *after = loop.nextInBlock();
  for (size_t i = 0; i < loop.numResults(); ++i) {
    Value *result = loop.result(i);
    const bool changes = yield->operand(i) != body.argument(i);
    // Sent even when nothing here reads it: stage 0's input gradient is
    // unused, every other stage's is the previous stage's input.
    if (!changes || resized_.count(result) || !result->type->isRankedTensor() ||
        result->type->rank() == 0)
      continue;
    LocalBuilder b(ctx_, *after);
    std::vector<Operation *> sends;
    Value *sent = result;
    for (int64_t hop = 0; hop < hops; ++hop) {
      Operation *send = b.create(
          "stablehlo.collective_permute", {sent}, {result->type},
          {{"channel_handle", channelHandleAttr(ctx_, next_channel_++)},
           {"source_target_pairs",
            b.denseMatrixAttr(pairs(forward ? 1 : -1))}});
      sends.push_back(send);
      sends_.insert(send);
      sent = send->result(0);
    }
    if (sends.empty())
      continue;
    result->replaceAllUsesWith(sent);
    // Every stage's hand-overs go one after the other, the last feeding
    // its ends; a middle stage's are V chunks' outputs, none waiting for
    // another (rule 4).
    for (Operation *send : sends)
      if (send == sends.front() || options_.middle)
        send->setOperand(0, result);
  }
}

// A copy of the micro-batch loop after it, taking its results and giving
// its uses theirs but its counter's (rule 2's last, partial round);
// `layer_loops` gets the copy's layer loops. The copy's collectives get
// channels of their own.
Operation *PipelineStages::peelRound(std::vector<Operation *> &layer_loops) {
  Operation &loop = *loops_.micro_batch_loop;
  ValueMap map;
  Operation *copy =
      loop.parentBlock()->insertBefore(loop.nextInBlock(), cloneOp(loop, map));
  // The copy's counter starts where the loop's did, so it stays counted.
  const Value *counter = loopCounter(loop)->compare->operand(0);
  for (size_t i = 0; i < loop.numResults(); ++i) {
    loop.result(i)->replaceAllUsesWith(copy->result(i));
    if (loop.region(0).front().argument(i) != counter)
      copy->setOperand(i, loop.result(i));
  }
  for (Operation *layer_loop : loops_.loops)
    layer_loops.push_back(map.at(layer_loop->result(0))->defining_op);
  for (Value *v : std::vector<Value *>(resized_.begin(), resized_.end()))
    if (auto it = map.find(v); it != map.end())
      resized_.insert(it->second);
  walk(*copy, [&](Operation &op) {
    if (op.attrs.get("channel_handle"))
      op.attrs.set(ctx_.intern("channel_handle"),
                   channelHandleAttr(ctx_, next_channel_++));
  });
  return copy;
}

// `round` runs `rounds` trips, each `chunks` chunks of every layer loop in
// `loops`, which pass their activations on once a chunk.
bool PipelineStages::setRoundTrips(Operation &round,
                                   const std::vector<Operation *> &loops,
                                   int64_t rounds, int64_t chunks) {
  // A chunk's trips: its layers over the layers a trip runs.
  const int64_t chunk =
      loops_.trips / (options_.stages * options_.virtual_stages);
  for (size_t i = 0; i < loops.size(); ++i) {
    if (!setTrips(*loops[i], chunks * chunk))
      return false;
    sendActivations(*loops[i], i == 0, chunks);
  }
  return setTrips(round, rounds);
}

bool PipelineStages::run() {
  if (!module_.per_device)
    return fail("runs on a per-device program (after "
                "sdy-convert-global-to-local)");
  if (!findMesh())
    return false;
  const int64_t s = options_.stages;
  loops_ = findLayerLoops(func_);
  if (!loops_.error.empty())
    return fail(loops_.error);
  const int64_t l = loops_.layers, m = loops_.micro_batches;
  if (!loops_.micro_batch_loop)
    return fail(loops_.no_micro_batches + ": a pipeline needs micro-batches");
  const int64_t v = options_.virtual_stages;
  if (loops_.trips % (s * v) != 0)
    return fail(std::to_string(l) + " layers" + tripsText(1) +
                " do not divide into " + std::to_string(s) + " stages" +
                (v > 1 ? " of " + std::to_string(v) + " chunks" : ""));
  if (v > 1 && m % s != 0)
    return fail("an interleaved pipeline needs micro-batches in multiples "
                "of its stages (" +
                std::to_string(m) + " micro-batches, " + std::to_string(s) +
                " stages)");
  const int64_t in_flight = inFlight(m);
  collectComponents();
  for (const std::vector<Value *> &component : components_)
    if (!resize(component,
                isStash(component) ? l / (s * v) * in_flight : l / s))
      return false;
  if (!checkUses())
    return false;
  if (!loopCounter(*loops_.micro_batch_loop))
    return fail("a loop it splits is not counted");
  next_channel_ = firstFreeChannelId(module_);
  // Rule 2: rounds of V chunks, and a round of the R chunks left over.
  const int64_t left_over = (s - 1) % v;
  std::vector<Operation *> last_loops;
  Operation *last = left_over > 0 ? peelRound(last_loops) : nullptr;
  if (!setRoundTrips(*loops_.micro_batch_loop, loops_.loops, m + (s - 1) / v,
                     v) ||
      (last && !setRoundTrips(*last, last_loops, 1, left_over)))
    return false;
  if (options_.middle) {
    // Rule 4, the last round first: its inits are the rounds' results.
    if (last)
      keepLayersOnly(*last, last_loops);
    keepLayersOnly(*loops_.micro_batch_loop, loops_.loops);
    zeroNonLayerResults();
    eraseDeadButSends();
    if (last)
      dropPassThroughs(*last);
    dropPassThroughs(*loops_.micro_batch_loop);
    eraseTriviallyDeadOps(func_);
    eraseUnreadArguments();
  }
  updateFunctionType(ctx_, func_);
  module_.op().attrs.set(ctx_.intern("shardlab.pipeline"),
                         ctx_.attrs.string(summary(in_flight)));
  return true;
}

// Rule 4 in `micro_batch_loop`: its carried values and its layer loops'
// inputs that are not per layer no longer change or are zeros.
void PipelineStages::keepLayersOnly(
    Operation &micro_batch_loop, const std::vector<Operation *> &layer_loops) {
  Block &body = micro_batch_loop.region(1).front();
  Operation *yield = body.back();
  const Value *counter = bodyCounter(micro_batch_loop);
  for (size_t i = 0; i < yield->numOperands(); ++i)
    if (body.argument(i) != counter && !resized_.count(body.argument(i)))
      yield->setOperand(i, body.argument(i));
  for (Operation *loop : layer_loops) {
    Block &loop_body = loop->region(1).front();
    Operation *loop_yield = loop_body.back();
    for (size_t i = 0; i < loop->numOperands(); ++i) {
      Value *init = loop->operand(i);
      const bool changes = loop_yield->operand(i) != loop_body.argument(i);
      if (changes && !resized_.count(init) && init->type->isRankedTensor() &&
          init->type->rank() > 0) {
        LocalBuilder b(ctx_, *loop);
        loop->setOperand(i, b.splat(init->type, 0.0));
      }
    }
  }
}

// The step's results without the layer dimension become zeros.
void PipelineStages::zeroNonLayerResults() {
  Operation *ret = func_.region(0).front().back();
  for (size_t i = 0; i < ret->numOperands(); ++i) {
    Value *result = ret->operand(i);
    if (!resized_.count(result) && result->type->isRankedTensor()) {
      LocalBuilder b(ctx_, *ret);
      ret->setOperand(i, b.splat(result->type, 0.0));
    }
  }
}

// Whether an op nothing reads may go: free of side effects but for the
// collectives and device ids (here the embedding's or the head's), all of
// its regions' ops too.
bool erasableWhenUnread(Operation &op) {
  if (isStableHloCollective(op) || op.is("stablehlo.partition_id"))
    return true;
  if (op.numRegions() == 0)
    return isSideEffectFree(op);
  bool erasable = true;
  for (size_t r = 0; r < op.numRegions() && erasable; ++r)
    for (const std::unique_ptr<Block> &block : op.region(r).blocks)
      for (Operation &inner : *block)
        erasable = erasable && erasableWhenUnread(inner);
  return erasable;
}

// Erases every op whose results nothing reads (erasableWhenUnread), but
// the sends.
void PipelineStages::eraseDeadButSends() {
  eraseUnreadOps(func_, [&](Operation &op) {
    return !sends_.count(&op) && erasableWhenUnread(op);
  });
}

// `micro_batch_loop` stops carrying the values it passes through unread.
void PipelineStages::dropPassThroughs(Operation &micro_batch_loop) {
  Block &body = micro_batch_loop.region(1).front();
  Operation *yield = body.back();
  const Value *counter = bodyCounter(micro_batch_loop);
  std::vector<bool> keep(micro_batch_loop.numOperands(), true);
  bool any = false;
  for (size_t i = 0; i < keep.size(); ++i)
    if (body.argument(i) != counter && yield->operand(i) == body.argument(i) &&
        !micro_batch_loop.result(i)->hasUses()) {
      keep[i] = false;
      any = true;
    }
  ValueMap map;
  if (any)
    rebuildLoop(ctx_, micro_batch_loop, keep, {}, map);
}

// The step's arguments nothing reads any more (the ends' weights and
// states, the batch) go, with their attributes.
void PipelineStages::eraseUnreadArguments() {
  Block &entry = func_.region(0).front();
  const Attr *attrs = func_.attrs.get("arg_attrs");
  std::vector<const Attr *> kept_attrs;
  if (attrs && attrs->kind == AttrKind::Array)
    kept_attrs = attrs->elements();
  for (size_t i = entry.numArguments(); i-- > 0;) {
    if (entry.argument(i)->hasUses())
      continue;
    entry.eraseArgument(i);
    if (i < kept_attrs.size())
      kept_attrs.erase(kept_attrs.begin() + static_cast<std::ptrdiff_t>(i));
  }
  if (attrs && attrs->kind == AttrKind::Array)
    func_.attrs.set(ctx_.intern("arg_attrs"),
                    ctx_.attrs.array(std::move(kept_attrs)));
}

// What the first stage holds residuals of at its peak (rule 1): micro-
// batches of L / S layers, or interleaved (V > 1) chunk forwards of
// L / (S V) layers.
int64_t PipelineStages::inFlight(int64_t m) const {
  const int64_t s = options_.stages, v = options_.virtual_stages;
  if (options_.gpipe)
    return m * v;
  if (v == 1)
    return std::min(s, m);
  return std::min(2 * (s - 1) + (v - 1) * s + 1, m * v);
}

// " (T trips of K)" for the layers of `parts` equal parts when the layer
// loops run K > 1 layers a trip, else nothing.
std::string PipelineStages::tripsText(int64_t parts) const {
  const int64_t l = loops_.layers, t = loops_.trips / parts;
  if (loops_.trips == l)
    return "";
  return " (" + std::to_string(t) + (t == 1 ? " trip" : " trips") + " of " +
         std::to_string(l / loops_.trips) + ")";
}

// The assumption line the report shows.
std::string PipelineStages::summary(int64_t in_flight) const {
  const int64_t s = options_.stages, v = options_.virtual_stages;
  const int64_t l = loops_.layers, m = loops_.micro_batches;
  const std::string ticks = std::to_string(m * v + s - 1);
  std::string kind = options_.gpipe ? "GPipe" : "1F1B";
  if (v > 1)
    kind += ", interleaved: " + std::to_string(v) + " chunks of " +
            std::to_string(l / (s * v)) + " layers a device";
  std::string text = std::to_string(s) + " pipeline stages (" + kind + ") of " +
                     std::to_string(l / s) + " layers" + tripsText(s) +
                     " over " + std::to_string(m) + " micro-batches: " + ticks +
                     (v > 1 ? " chunk" : "") + " ticks (bubble " +
                     std::to_string(s - 1) + "/" + ticks + "), residuals of " +
                     std::to_string(in_flight) +
                     (v > 1 ? " chunk forwards" : " micro-batches") +
                     " in flight on the first stage; ";
  const int64_t left_over = (s - 1) % v;
  const std::string rounds =
      std::to_string(v) + " chunks (" + std::to_string(m + (s - 1) / v) +
      " rounds" +
      (left_over ? " and one of " + std::to_string(left_over) : std::string()) +
      ")";
  if (options_.middle)
    return text +
           "a middle stage: its layers only (the embedding, head and loss, "
           "their weights, gradients and updates on the first and last "
           "stages)" +
           (v > 1 ? "; rounds of " + rounds : std::string());
  text += "the embedding, head and loss counted on every stage each ";
  return text + (v == 1 ? "tick" : "round of " + rounds);
}

} // namespace

bool pipelineStagesPass(Module &module, const PassOptions &options,
                        DiagnosticEngine &diags) {
  Operation *func = module.mainFunc();
  if (!func) {
    diags.error(module.op().loc, "shardlab-pipeline-stages: no entry function");
    return false;
  }
  Options o{options.integer("stages"), options.text("axis"),
            options.text("schedule") == "gpipe",
            options.integer("virtual-stages"),
            options.text("stage-kind") == "middle"};
  if (o.virtual_stages < 1) {
    diags.error(module.op().loc,
                "shardlab-pipeline-stages: virtual-stages must be at least 1");
    return false;
  }
  return PipelineStages(module, *func, o, diags).run();
}

} // namespace shardlab
