// shardlab-reduce-scatter-creator: an all-reduce whose only reader keeps
// one device's part of it is a reduce-scatter, as XLA's GPU compiler makes
// it (ReduceScatterCreator, among its collective optimizations): each device
// receives only the part it keeps, moving half the bytes of a ring
// all-reduce and holding a part, not the whole sum.
//
// The rule, on the per-device program:
//   %s = all_reduce(%x) over groups G (n devices each)
//   %o = reshape(dynamic_slice(constant T, convert(partition_id)))
//   %p = dynamic_slice %s at %o along dimension d (0 elsewhere), sizes
//        1/n of %s along d and whole elsewhere; %s has no other reader
//        (or only such slices, all keeping the same part: XLA's
//        common-subexpression elimination makes them one first)
// is `reduce_scatter(%x)` along d over G' when, in every group, the
// members' offsets T[id] are 0, c, 2c, ..., (n-1)c in some order (c the
// part's size): G' lists each group's members in the order of their parts
// (a reduce-scatter's j-th member receives the j-th part). Offsets that
// repeat within a group (the slice is by other axes than the sum) or that
// are not read from such a table leave the all-reduce as it is.
//
// Worked example: 4 devices in one group, T = [0, 64, 128, 192]:
//   %s = all_reduce(%g) [[0, 1, 2, 3]] : 256x512
//   %p = dynamic_slice %s, T[pid], 0 sizes [64, 512]
// becomes %p = reduce_scatter(%g) scatter_dimension = 0, [[0, 1, 2, 3]].
// With T = [64, 0, 192, 128] the groups become [[1, 0, 3, 2]].
//
// Where it matters: a data-parallel gradient summed over more axes than
// the weight is sharded by (Shardy writes all_reduce then all_slice, e.g.
// once a micro-batch split leaves only the weight's axis in the sum).
#include "passes/gpu/gpu_passes.h"

#include "ir/op_properties.h"
#include "passes/call_graph.h"
#include "passes/export/local_builder.h"
#include "passes/pass_utils.h"

#include <algorithm>
#include <optional>

namespace shardlab {
namespace {

/// T when `offset` is reshape(dynamic_slice(constant T, partition_id)).
std::optional<std::vector<int64_t>> deviceTable(const Value *offset) {
  const Operation *reshape = offset->defining_op;
  if (!reshape || !reshape->is("stablehlo.reshape") ||
      !reshape->operand(0)->defining_op)
    return std::nullopt;
  return deviceTableOf(*reshape->operand(0)->defining_op);
}

/// The dimension `slice` takes a part of, when it is exactly one.
std::optional<size_t> slicedDimension(const Operation &slice) {
  const Attr *sizes = slice.attrs.get("slice_sizes");
  const Type whole = slice.operand(0)->type;
  if (!sizes || sizes->kind != AttrKind::DenseArray || !whole ||
      !whole->hasStaticShape() || sizes->ints().size() != whole->shape.size())
    return std::nullopt;
  std::optional<size_t> dim;
  for (size_t d = 0; d < whole->shape.size(); ++d) {
    if (sizes->ints()[d] == whole->shape[d])
      continue; // whole: any start is clamped to 0
    if (dim)
      return std::nullopt;
    dim = d;
  }
  return dim;
}

/// Each group's members in the order of the parts they keep, when every
/// group's offsets are 0, part, ..., (n - 1) part.
std::optional<std::vector<std::vector<int64_t>>>
membersByPart(const std::vector<std::vector<int64_t>> &groups,
              const std::vector<int64_t> &table, int64_t part, int64_t whole) {
  std::vector<std::vector<int64_t>> out;
  for (const std::vector<int64_t> &group : groups) {
    const int64_t n = int64_t(group.size());
    if (n < 2 || part * n != whole)
      return std::nullopt;
    std::vector<int64_t> ordered(size_t(n), -1);
    for (int64_t id : group) {
      if (id < 0 || id >= int64_t(table.size()) || table[size_t(id)] % part)
        return std::nullopt;
      const int64_t k = table[size_t(id)] / part;
      if (k < 0 || k >= n || ordered[size_t(k)] >= 0)
        return std::nullopt;
      ordered[size_t(k)] = id;
    }
    out.push_back(std::move(ordered));
  }
  return out;
}

/// The dimension all of `reduce`'s readers slice and their offset table,
/// when every reader is a dynamic_slice keeping the same part of the sum
/// (the same sizes, the same table: what XLA's common-subexpression
/// elimination makes one slice before its ReduceScatterCreator runs).
struct SlicedReaders {
  std::vector<Operation *> slices; // in block order
  size_t dim = 0;
  std::vector<int64_t> table;
};

std::optional<SlicedReaders> slicedReaders(Operation &reduce) {
  SlicedReaders out;
  for (Operation *reader : usersOf(reduce.result(0))) {
    if (!reader->is("stablehlo.dynamic_slice") ||
        reader->operand(0) != reduce.result(0) ||
        reader->parentBlock() != reduce.parentBlock())
      return std::nullopt;
    const std::optional<size_t> dim = slicedDimension(*reader);
    if (!dim)
      return std::nullopt;
    std::optional<std::vector<int64_t>> table =
        deviceTable(reader->operand(1 + *dim));
    if (!table)
      return std::nullopt;
    if (out.slices.empty()) {
      out.dim = *dim;
      out.table = std::move(*table);
    } else if (*dim != out.dim || *table != out.table ||
               reader->attrs.get("slice_sizes") !=
                   out.slices.front()->attrs.get("slice_sizes")) {
      return std::nullopt;
    }
    out.slices.push_back(reader);
  }
  if (out.slices.empty())
    return std::nullopt;
  std::sort(out.slices.begin(), out.slices.end(),
            [](const Operation *a, const Operation *b) {
              return isBeforeInBlock(a, b);
            });
  return out;
}

/// Rewrites `reduce` (an all_reduce) and its slicing readers into one
/// reduce_scatter; false when the rule does not hold.
bool createReduceScatter(Context &ctx, Operation &reduce) {
  // Groups of global device ids, as the table is indexed by partition_id.
  if (reduce.numOperands() != 1 || reduce.numResults() != 1 ||
      reduce.numRegions() != 1 || !reduce.attrs.get("use_global_device_ids"))
    return false;
  const std::optional<SlicedReaders> readers = slicedReaders(reduce);
  if (!readers)
    return false;
  Operation &slice = *readers->slices.front();
  const int64_t whole = reduce.result(0)->type->shape[readers->dim];
  const int64_t part = slice.result(0)->type->shape[readers->dim];
  const std::optional<std::vector<std::vector<int64_t>>> groups =
      membersByPart(readReplicaGroups(reduce.attrs.get("replica_groups"),
                                      int64_t(readers->table.size())),
                    readers->table, part, whole);
  if (!groups)
    return false;
  LocalBuilder b(ctx, slice);
  std::vector<std::pair<std::string_view, const Attr *>> attrs = {
      {"replica_groups", b.denseMatrixAttr(*groups)},
      {"scatter_dimension", b.int64Attr(int64_t(readers->dim))}};
  for (std::string_view kept : {"channel_handle", "use_global_device_ids"})
    if (const Attr *a = reduce.attrs.get(kept))
      attrs.emplace_back(kept, a);
  Operation *scatter = b.create("stablehlo.reduce_scatter", {reduce.operand(0)},
                                {slice.result(0)->type}, attrs);
  // The reducer moves over as it is.
  moveRegionBlocks(reduce.region(0), scatter->addRegion());
  for (Operation *reader : readers->slices) {
    reader->result(0)->replaceAllUsesWith(scatter->result(0));
    eraseOp(*reader);
  }
  eraseOp(reduce);
  return true;
}

} // namespace

bool reduceScatterCreatorPass(Module &module, const PassOptions &,
                              DiagnosticEngine &) {
  forEachFunc(module, [&](Operation &func) {
    std::vector<Operation *> reduces;
    walk(func, [&](Operation &op) {
      if (op.is("stablehlo.all_reduce"))
        reduces.push_back(&op);
    });
    bool changed = false;
    for (Operation *reduce : reduces)
      changed |= createReduceScatter(module.ctx(), *reduce);
    if (!changed)
      return;
    // The offset tables and device indices nothing reads any more
    // (partition_id is not side-effect free to the general rule).
    eraseTriviallyDeadOps(func);
    std::vector<Operation *> unread;
    walk(func, [&](Operation &op) {
      if (op.is("stablehlo.partition_id") && op.result(0)->numUses() == 0)
        unread.push_back(&op);
    });
    for (Operation *op : unread)
      eraseOp(*op);
  });
  return true;
}

} // namespace shardlab
