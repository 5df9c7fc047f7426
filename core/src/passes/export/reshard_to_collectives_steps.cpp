// The collective steps of CollectiveChain other than all-gather: all-slice
// (with slicing at a source dim for a later all-to-all), collective permute
// (decision and re-placement of axes) and all-to-all.
#include "export_passes.h"
#include "reshard_to_collectives_state.h"

#include <algorithm>
#include <numeric>

namespace shardlab {

namespace {

bool divisible(int64_t a, int64_t b) { return a % b == 0 || b % a == 0; }

void addAll(std::vector<AxisRef> &to, const AxisRef &axis, const Mesh &mesh) {
  addAxisOrMerge(to, axis, mesh);
}

} // namespace

// Out axes of the all-to-all target dim that can be sliced at `src` first,
// so that the all-to-all moves them in the right order (no permute needed).
std::optional<CollectiveChain::SliceRange>
CollectiveChain::slicesForAllToAll(size_t src) {
  AxisList &src_in = in_[src];
  if (src_in.empty() || !out_[src].empty())
    return std::nullopt;
  auto entry = out_index_.find(src_in.back());
  if (entry == out_index_.end())
    return std::nullopt;
  int64_t tgt = entry->second.dim;
  if (!in_[tgt].empty())
    return std::nullopt;
  AxisList &tgt_out = out_[tgt];
  auto start = std::find(tgt_out.begin(), tgt_out.end(), src_in.back());
  if (start == tgt_out.end() || ++start == tgt_out.end() ||
      in_set_.count(*start))
    return std::nullopt;
  auto in_it = src_in.rbegin();
  auto out_it = std::make_reverse_iterator(start);
  int64_t common = 1;
  for (;
       in_it != src_in.rend() && out_it != tgt_out.rend() && *in_it == *out_it;
       ++in_it, ++out_it)
    common *= size(*in_it);
  for (; in_it != src_in.rend(); ++in_it) {
    auto other = out_index_.find(*in_it);
    if (other != out_index_.end() && other->second.dim == tgt)
      return std::nullopt;
  }
  auto end = start;
  int64_t added = 1;
  while (end != tgt_out.end() && !in_set_.count(*end))
    added *= size(*end++);
  int64_t new_size = shardedSize(cur_[src]) * added;
  if (result_->type->shape[src] % new_size != 0)
    return std::nullopt;
  capacity_[tgt] /= common * added;
  return SliceRange{start, end};
}

void CollectiveChain::sliceForAllToAlls(AxesPerDim &slicing, bool &any) {
  for (size_t src = 0; src < rank(); ++src) {
    std::optional<SliceRange> range = slicesForAllToAll(src);
    if (!range)
      continue;
    any = true;
    for (auto it = range->begin; it != range->end; ++it) {
      in_[src].push_back(*it);
      in_set_.insert(*it);
      addAll(slicing[src], *it, mesh_);
      addAll(cur_[src], *it, mesh_);
    }
  }
}

// Slices out axes in their own dim while the dim's capacity allows; the
// others are collected in `available`.
void CollectiveChain::sliceInPlace(AxesPerDim &slicing, AxisList &available,
                                   bool &any) {
  for (size_t d = 0; d < rank(); ++d) {
    AxisList &out = out_[d];
    for (auto it = out.begin(); it != out.end();) {
      AxisRef axis = *it;
      if (in_set_.count(axis)) {
        ++it;
        continue;
      }
      AxisSplit split = withinCapacity(axis, capacity_[d]);
      if (!split.within) {
        available.push_back(axis);
        ++it;
        continue;
      }
      any = true;
      addAll(slicing[d], *split.within, mesh_);
      addAll(cur_[d], *split.within, mesh_);
      if (in_[d].empty() && it == out.begin()) {
        it = out.erase(it);
      } else {
        in_set_.insert(*split.within);
        in_[d].push_back(*split.within);
        *it = *split.within;
        ++it;
      }
      if (split.remainder) {
        out.insert(it, *split.remainder);
        available.push_back(*split.remainder);
      }
    }
  }
}

void CollectiveChain::tryAllSlice() {
  for (size_t d = 0; d < rank(); ++d) {
    int64_t in_size = shardedSize(in_[d]), out_size = shardedSize(out_[d]);
    capacity_[d] = out_size / std::gcd(in_size, out_size);
  }
  AxesPerDim slicing(rank());
  bool any = false;
  sliceForAllToAlls(slicing, any);
  AxisList available;
  sliceInPlace(slicing, available, any);
  distribute(
      false, [&](size_t) -> AxisList & { return available; },
      [&](const AxisRef &axis, size_t d) {
        any = true;
        addAll(slicing[d], axis, mesh_);
        addAll(cur_[d], axis, mesh_);
      });
  rebuildOutIndex();
  if (any)
    emitPerDim("sdy.all_slice", "slicing_axes", std::move(slicing));
}

// Conditions 1, 3, 4 and 5 of Shardy's shouldCollectivePermute for one dim;
// records the candidates of condition 2.
bool CollectiveChain::permuteNeededInDim(
    size_t dim, std::optional<AxisRef> &available_in,
    std::optional<AxisRef> &available_out) {
  const AxisList &in = in_[dim], &out = out_[dim];
  if (!in.empty() && !out.empty() &&
      divisible(size(in.front()), size(out.front())))
    return true;
  for (const AxisRef &axis : out)
    if (!in_set_.count(axis))
      available_out = axis;
  std::optional<int64_t> last_dim;
  int64_t last_index = 0;
  std::vector<bool> seen(rank(), false);
  for (const AxisRef &axis : in) {
    std::optional<int64_t> cur_dim;
    auto entry = out_index_.find(axis);
    if (entry != out_index_.end()) {
      cur_dim = entry->second.dim;
      int64_t index = entry->second.index;
      if ((*cur_dim == static_cast<int64_t>(dim) || seen[*cur_dim]) &&
          (last_dim != cur_dim || index != last_index + 1))
        return true;
      seen[*cur_dim] = true;
      last_index = index;
    } else if (last_dim && out.empty()) {
      return true;
    } else {
      available_in = axis;
    }
    last_dim = cur_dim;
  }
  return false;
}

bool CollectiveChain::shouldPermute() {
  std::optional<AxisRef> available_in, available_out;
  for (size_t d = 0; d < rank(); ++d)
    if (permuteNeededInDim(d, available_in, available_out))
      return true;
  return available_in && available_out &&
         divisible(size(*available_out), size(*available_in));
}

// Step 1 of the permute: out axes that fit the dim's capacity go in place;
// the rest of the out axes and the in axes to gather become available.
void CollectiveChain::placeOutAxes(AxisList &available_out,
                                   std::vector<AxisList> &avail_in) {
  in_set_.clear();
  for (size_t d = 0; d < rank(); ++d) {
    AxisList &in = in_[d], &out = out_[d];
    capacity_[d] = shardedSize(in);
    int64_t used = capacity_[d];
    popBackFromCurrent(cur_[d], in, in.begin());
    while (capacity_[d] > 1 && !out.empty()) {
      AxisSplit split = withinCapacity(out.front(), capacity_[d]);
      if (!split.within)
        break;
      out.pop_front();
      addAxisOrMerge(cur_[d], *split.within, mesh_);
      if (split.remainder)
        out.push_front(*split.remainder);
    }
    available_out.insert(available_out.end(), out.begin(), out.end());
    used /= capacity_[d];
    in.remove_if([&](const AxisRef &axis) { return out_index_.count(axis); });
    while (used > 1 && !in.empty()) {
      AxisSplit split = withinCapacity(in.front(), used);
      if (!split.within)
        break;
      in.pop_front();
      avail_in[d].push_back(*split.within);
      if (split.remainder)
        in.push_front(*split.remainder);
    }
    avail_in[d].splice(avail_in[d].begin(), in);
  }
}

void CollectiveChain::performPermute() {
  AxisList available_out;
  std::vector<AxisList> avail_in(rank());
  placeOutAxes(available_out, avail_in);
  ConsumeFn none = [](const AxisRef &, size_t) {};
  distribute(
      false, [&](size_t) -> AxisList & { return available_out; }, none);
  distribute(
      true, [&](size_t d) -> AxisList & { return avail_in[d]; }, none);
  AxisList all_in;
  for (AxisList &axes : avail_in)
    all_in.splice(all_in.end(), axes);
  distribute(
      true, [&](size_t) -> AxisList & { return all_in; }, none);
  rebuildOutIndex();
  for (size_t d = 0; d < rank(); ++d)
    for (const AxisRef &axis : in_[d])
      addAxisOrMerge(cur_[d], axis, mesh_);
}

void CollectiveChain::tryCollectivePermute() {
  if (shouldPermute())
    performPermute();
  else if (cur_mesh_ == out_mesh_)
    return;
  cur_mesh_ = out_mesh_;
  emit("sdy.collective_permute", "", nullptr);
}

std::optional<AllToAllParam> CollectiveChain::allToAll(size_t src,
                                                       bool out_of_order) {
  AxisList &src_in = in_[src];
  std::optional<int64_t> tgt;
  auto rit = src_in.rbegin();
  for (; rit != src_in.rend(); ++rit) {
    auto entry = out_index_.find(*rit);
    if (entry == out_index_.end())
      break;
    int64_t dim = entry->second.dim;
    if (dim == static_cast<int64_t>(src) || (tgt && dim != *tgt))
      break;
    tgt = dim;
  }
  if (!tgt)
    return std::nullopt;
  auto start = rit.base();
  AxisList &tgt_out = out_[*tgt];
  if (!out_of_order && (std::distance(start, src_in.end()) >
                            static_cast<std::ptrdiff_t>(tgt_out.size()) ||
                        !std::equal(start, src_in.end(), tgt_out.begin())))
    return std::nullopt;
  AllToAllParam param{{}, static_cast<int64_t>(src), *tgt};
  popBackFromCurrent(cur_[src], src_in, start);
  AxisList &tgt_in = in_[*tgt];
  for (auto it = start; it != src_in.end();) {
    AxisRef axis = *it;
    addAxisOrMerge(param.axes, axis, mesh_);
    addAxisOrMerge(cur_[*tgt], axis, mesh_);
    it = src_in.erase(it);
    in_set_.erase(axis);
    if (tgt_in.empty() && !tgt_out.empty() && tgt_out.front() == axis) {
      tgt_out.pop_front();
    } else {
      tgt_in.push_back(axis);
      in_set_.insert(axis);
    }
  }
  return param;
}

void CollectiveChain::tryAllToAlls(bool out_of_order) {
  for (size_t src = 0; src < rank(); ++src)
    while (std::optional<AllToAllParam> param = allToAll(src, out_of_order))
      emit("sdy.all_to_all", "params",
           ctx_.attrs.make(Attr{AttrKind::AllToAllParams,
                                std::vector<AllToAllParam>{std::move(*param)},
                                nullptr,
                                {}}));
}

} // namespace shardlab
