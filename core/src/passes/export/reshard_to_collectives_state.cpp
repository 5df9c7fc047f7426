// State and bookkeeping of CollectiveChain: construction (sub-axis
// alignment, common prefix removal), capacity splits, the current sharding,
// emitting a collective, all-gather and all-slice. Collective permute and
// all-to-all are in reshard_to_collectives_permute.cpp.
#include "reshard_to_collectives_state.h"
#include "export_passes.h"

#include "passes/pass_utils.h"

#include <algorithm>
#include <numeric>

namespace shardlab {

namespace {

// The first axis of `sorted` that overlaps `axis`, or sorted.end().
std::vector<AxisRef>::const_iterator
firstOverlapping(const std::vector<AxisRef> &sorted, const AxisRef &axis) {
  auto after =
      std::lower_bound(sorted.begin(), sorted.end(), axis, AxisNameLess{});
  if (after != sorted.begin() && overlaps(axis, *std::prev(after)))
    return std::prev(after);
  if (after != sorted.end() && overlaps(axis, *after))
    return after;
  return sorted.end();
}

std::vector<AxisRef> sortedAxes(const std::vector<AxisList> &per_dim) {
  std::vector<AxisRef> all;
  for (const AxisList &axes : per_dim)
    all.insert(all.end(), axes.begin(), axes.end());
  std::sort(all.begin(), all.end(), AxisNameLess{});
  return all;
}

void alignAll(std::vector<AxisList> &per_dim,
              const std::vector<AxisRef> &sorted_other, const Mesh &mesh) {
  if (sorted_other.empty())
    return;
  for (AxisList &axes : per_dim)
    alignSubAxes(axes, sorted_other, mesh);
}

std::vector<AxisList> axisLists(const TensorSharding &sharding) {
  std::vector<AxisList> lists;
  for (const DimSharding &dim : sharding.dims)
    lists.emplace_back(dim.axes.begin(), dim.axes.end());
  return lists;
}

} // namespace

void alignSubAxes(AxisList &axes, const std::vector<AxisRef> &sorted_other,
                  const Mesh &mesh) {
  auto it = axes.begin();
  while (it != axes.end()) {
    AxisRef axis = *it;
    auto other = firstOverlapping(sorted_other, axis);
    bool advanced = false;
    while (other != sorted_other.end() && canCoexist(*other, axis) &&
           !contains(*other, axis) && overlaps(*other, axis)) {
      it = axes.erase(it);
      if (auto prefix = getPrefixWithoutOverlap(axis, *other))
        axes.insert(it, *prefix);
      axes.insert(it, *getOverlap(axis, *other));
      auto suffix = getSuffixWithoutOverlap(axis, *other, mesh);
      if (!suffix) {
        advanced = true;
        break;
      }
      it = axes.insert(it, *suffix);
      axis = *suffix;
      ++other;
    }
    if (!advanced)
      ++it;
  }
}

CollectiveChain::CollectiveChain(Context &ctx, Operation &reshard,
                                 const Mesh &mesh, Value *input,
                                 const TensorSharding &in,
                                 const TensorSharding &out)
    : ctx_(ctx), reshard_(reshard), mesh_(mesh), result_(input),
      cur_mesh_(in.mesh), out_mesh_(out.mesh), unreduced_(out.unreduced),
      unreduced_kind_(out.unreduced_kind), in_(axisLists(in)),
      out_(axisLists(out)), capacity_(in.dims.size(), 1) {
  for (const DimSharding &dim : in.dims)
    cur_.push_back(dim.axes);
  std::vector<AxisRef> sorted_in = sortedAxes(in_);
  std::vector<AxisRef> sorted_out = sortedAxes(out_);
  alignAll(in_, sorted_out, mesh_);
  alignAll(out_, sorted_in, mesh_);
  for (size_t d = 0; d < rank(); ++d)
    while (!in_[d].empty() && !out_[d].empty() &&
           in_[d].front() == out_[d].front()) {
      in_[d].pop_front();
      out_[d].pop_front();
    }
  rebuildInSet();
  rebuildOutIndex();
}

Value *CollectiveChain::insert() {
  gatherAxesThatCannotCoexist();
  for (int i = 0; i < 2 && !isDone(); ++i) {
    tryAllSlice();
    tryCollectivePermute();
    tryAllToAlls(false);
    tryAllToAlls(true);
    tryAllGather();
  }
  return result_;
}

bool CollectiveChain::isDone() const {
  if (!(cur_mesh_ == out_mesh_))
    return false;
  for (size_t d = 0; d < rank(); ++d)
    if (!in_[d].empty() || !out_[d].empty())
      return false;
  return true;
}

int64_t CollectiveChain::size(const AxisRef &axis) const {
  return axisRefSize(axis, mesh_);
}

CollectiveChain::AxisSplit
CollectiveChain::withinCapacity(const AxisRef &axis, int64_t &capacity) const {
  int64_t axis_size = size(axis);
  if (capacity <= 1 || (axis_size % capacity != 0 && capacity % axis_size != 0))
    return {};
  if (capacity >= axis_size) {
    capacity /= axis_size;
    return {axis, std::nullopt};
  }
  AxisRef within = subAxis(axis.name, subAxisPreSize(axis), capacity);
  AxisRef remainder = subAxis(axis.name, nextPreSizeOrFullSize(within, mesh_),
                              axis_size / capacity);
  capacity = 1;
  return {within, remainder};
}

TensorSharding CollectiveChain::currentSharding() const {
  TensorSharding sharding;
  sharding.mesh = cur_mesh_;
  for (const std::vector<AxisRef> &axes : cur_)
    sharding.dims.push_back(DimSharding{axes, true, std::nullopt});
  sharding.unreduced = unreduced_;
  sharding.unreduced_kind = unreduced_kind_;
  return sharding;
}

void CollectiveChain::rebuildOutIndex() {
  out_index_.clear();
  for (size_t d = 0; d < rank(); ++d) {
    int64_t index = 0;
    for (const AxisRef &axis : out_[d])
      out_index_.emplace(axis, DimAndIndex{static_cast<int64_t>(d), index++});
  }
}

void CollectiveChain::rebuildInSet() {
  in_set_.clear();
  for (const AxisList &axes : in_)
    in_set_.insert(axes.begin(), axes.end());
}

void CollectiveChain::popBackFromCurrent(std::vector<AxisRef> &current,
                                         const AxisList &axes,
                                         AxisList::iterator start) const {
  auto stop = std::make_reverse_iterator(start);
  for (auto it = axes.rbegin(); it != stop; ++it) {
    if (auto prefix = getPrefixWithoutOverlap(current.back(), *it))
      current.back() = *prefix;
    else
      current.pop_back();
  }
}

Value *CollectiveChain::emit(std::string_view name, std::string_view axes_attr,
                             const Attr *axes) {
  auto op = makeOp(ctx_, name, {result_}, {result_->type}, reshard_.loc);
  if (axes)
    op->attrs.set(ctx_.intern(axes_attr), axes);
  setOpSharding(*op, currentSharding(), ctx_, "out_sharding");
  Operation *created =
      reshard_.parentBlock()->insertBefore(&reshard_, std::move(op));
  result_ = created->result(0);
  return result_;
}

Value *CollectiveChain::emitPerDim(std::string_view name,
                                   std::string_view axes_attr,
                                   AxesPerDim axes) {
  return emit(name, axes_attr,
              ctx_.attrs.make(Attr{
                  AttrKind::AxisRefListList, std::move(axes), nullptr, {}}));
}

// Shardy walks the in axes from the back while they are absent from the
// out axes, but steps its reverse iterator the wrong way: when the last in
// axis is absent, the whole dim is gathered (only that axis leaves the set);
// otherwise nothing is. Reproduced as is, since the tests record it.
std::vector<AxisRef> CollectiveChain::gatheringAxes(size_t dim) {
  AxisList &in = in_[dim];
  if (in.empty() || out_index_.count(in.back()))
    return {};
  in_set_.erase(in.back());
  popBackFromCurrent(cur_[dim], in, in.begin());
  std::vector<AxisRef> gathering;
  for (const AxisRef &axis : in)
    addAxisOrMerge(gathering, axis, mesh_);
  in.clear();
  return gathering;
}

// An out axis that cannot coexist with a current one (sub-axes "a":(1)2 and
// "a":(3)2 of a 6-device axis) cannot be sliced while that one is held: the
// devices of a later gather along the current one would hold other columns
// of the new split, and the gather would mix them. Shardy slices anyway
// (basic_propagation's sub_axes_cannot_coexist, whose program computes other
// values than the module); here each dim's in axes from the first such one on
// are gathered first.
void CollectiveChain::gatherAxesThatCannotCoexist() {
  std::vector<AxisRef> sorted_out = sortedAxes(out_);
  auto conflicts = [&](const AxisRef &axis) {
    return std::any_of(sorted_out.begin(), sorted_out.end(),
                       [&](const AxisRef &o) { return !canCoexist(o, axis); });
  };
  AxesPerDim gathering(rank());
  bool any = false;
  for (size_t d = 0; d < rank(); ++d) {
    AxisList &in = in_[d];
    auto first = std::find_if(in.begin(), in.end(), conflicts);
    if (first == in.end())
      continue;
    any = true;
    popBackFromCurrent(cur_[d], in, first);
    for (auto it = first; it != in.end(); ++it)
      addAxisOrMerge(gathering[d], *it, mesh_);
    in.erase(first, in.end());
  }
  if (!any)
    return;
  rebuildInSet();
  emitPerDim("sdy.all_gather", "gathering_axes", std::move(gathering));
}

void CollectiveChain::tryAllGather() {
  AxesPerDim gathering(rank());
  bool any = false;
  for (size_t d = 0; d < rank(); ++d) {
    gathering[d] = gatheringAxes(d);
    any = any || !gathering[d].empty();
  }
  if (any)
    emitPerDim("sdy.all_gather", "gathering_axes", std::move(gathering));
}

void CollectiveChain::distribute(bool to_front, const AvailableFn &available,
                                 const ConsumeFn &consume) {
  std::vector<AxisRef> split_added;
  for (size_t d = 0; d < rank(); ++d) {
    AxisList &in = in_[d];
    auto insert_at = to_front ? in.begin() : in.end();
    AxisList &avail = available(d);
    auto it = avail.begin();
    while (it != avail.end() && capacity_[d] > 1) {
      AxisSplit split = withinCapacity(*it, capacity_[d]);
      if (!split.within) {
        ++it;
        continue;
      }
      it = avail.erase(it);
      in.insert(insert_at, *split.within);
      in_set_.insert(*split.within);
      consume(*split.within, d);
      if (split.remainder) {
        split_added.push_back(*split.within);
        avail.push_front(*split.remainder);
      }
    }
  }
  std::sort(split_added.begin(), split_added.end(), AxisNameLess{});
  alignAll(out_, split_added, mesh_);
}

} // namespace shardlab
