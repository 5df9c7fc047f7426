// The collective chain of one sdy.reshard (used by reshard_to_collectives.cpp
// only). The state is the difference between the current sharding and the
// wanted one: `in_` holds the current axes per dim past the common prefix
// with the wanted sharding, `out_` the wanted axes past it, `cur_` the whole
// current dims. Each collective shrinks the difference; the chain is done
// when both `in_` and `out_` are empty and the mesh is the wanted one.
// Sub-axes of the two sides are first split so that any two overlapping
// axes are equal, which lets them be used as set and map keys.
#pragma once

#include "shardlab/ir/ir.h"
#include "shardlab/sharding/axis.h"

#include <functional>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace shardlab {

using AxisList = std::list<AxisRef>;
using AxesPerDim = std::vector<std::vector<AxisRef>>;

struct AxisNameLess {
  bool operator()(const AxisRef &a, const AxisRef &b) const {
    return axisRefLess(a, b);
  }
};

/// Splits the axes of `axes` at the boundaries of the overlapping axes of
/// `sorted_other` (sorted by axisRefLess), Shardy's
/// alignSubAxesByDecomposition.
void alignSubAxes(AxisList &axes, const std::vector<AxisRef> &sorted_other,
                  const Mesh &mesh);

/// Lowers one reshard to a chain of collectives inserted before it.
class CollectiveChain {
public:
  CollectiveChain(Context &ctx, Operation &reshard, const Mesh &mesh,
                  Value *input, const TensorSharding &in,
                  const TensorSharding &out);
  /// Inserts the collectives; returns the last result (the input if none).
  Value *insert();

private:
  struct DimAndIndex {
    int64_t dim = 0;
    int64_t index = 0;
  };
  struct AxisSplit {
    std::optional<AxisRef> within, remainder;
  };
  struct SliceRange {
    AxisList::iterator begin, end;
  };
  using AvailableFn = std::function<AxisList &(size_t)>;
  using ConsumeFn = std::function<void(const AxisRef &, size_t)>;

  bool isDone() const;
  size_t rank() const { return in_.size(); }
  int64_t size(const AxisRef &axis) const;
  template <class C> int64_t shardedSize(const C &axes) const {
    int64_t total = 1;
    for (const AxisRef &axis : axes)
      total *= size(axis);
    return total;
  }
  AxisSplit withinCapacity(const AxisRef &axis, int64_t &capacity) const;
  TensorSharding currentSharding() const;
  void rebuildOutIndex();
  void rebuildInSet();
  void popBackFromCurrent(std::vector<AxisRef> &current, const AxisList &axes,
                          AxisList::iterator start) const;
  Value *emit(std::string_view name, std::string_view axes_attr,
              const Attr *axes);
  /// emit() with axes per dimension (all_gather's, all_slice's).
  Value *emitPerDim(std::string_view name, std::string_view axes_attr,
                    AxesPerDim axes);

  void gatherAxesThatCannotCoexist();
  std::vector<AxisRef> gatheringAxes(size_t dim);
  void tryAllGather();
  void distribute(bool to_front, const AvailableFn &available,
                  const ConsumeFn &consume);
  std::optional<SliceRange> slicesForAllToAll(size_t src);
  void sliceForAllToAlls(AxesPerDim &slicing, bool &any);
  void sliceInPlace(AxesPerDim &slicing, AxisList &available, bool &any);
  void tryAllSlice();
  bool permuteNeededInDim(size_t dim, std::optional<AxisRef> &available_in,
                          std::optional<AxisRef> &available_out);
  bool shouldPermute();
  void placeOutAxes(AxisList &available_out, std::vector<AxisList> &avail_in);
  void performPermute();
  void tryCollectivePermute();
  std::optional<AllToAllParam> allToAll(size_t src, bool out_of_order);
  void tryAllToAlls(bool out_of_order);

  Context &ctx_;
  Operation &reshard_;
  const Mesh &mesh_;
  Value *result_;
  MeshRef cur_mesh_, out_mesh_;
  std::vector<AxisRef> unreduced_;
  ReductionKind unreduced_kind_;
  std::vector<AxisList> in_, out_;
  AxesPerDim cur_;
  std::vector<int64_t> capacity_;
  std::set<AxisRef, AxisNameLess> in_set_;
  std::map<AxisRef, DimAndIndex, AxisNameLess> out_index_;
};

} // namespace shardlab
