// Replica-group expansion, parsing, printing and XLA's classifications.
#include "shardlab/cost/device_groups.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace shardlab::cost {

ReplicaGroups ReplicaGroups::fromLists(std::vector<std::vector<int64_t>> l) {
  ReplicaGroups g;
  g.lists = std::move(l);
  return g;
}

ReplicaGroups ReplicaGroups::fromIota(IotaGroups iota) {
  ReplicaGroups g;
  g.is_iota = true;
  g.iota = std::move(iota);
  return g;
}

int64_t ReplicaGroups::num_groups() const {
  return is_iota ? iota.num_groups : static_cast<int64_t>(lists.size());
}

int64_t ReplicaGroups::group_size() const {
  if (is_iota)
    return iota.group_size;
  return lists.empty() ? 0 : static_cast<int64_t>(lists[0].size());
}

namespace {

constexpr int64_t kMaxDevices = int64_t{1} << 24;

Result<int64_t> checkedProduct(const std::vector<int64_t> &dims) {
  int64_t total = 1;
  for (int64_t d : dims) {
    if (d <= 0 || total > kMaxDevices / d)
      return makeError("iota dimensions must be positive and describe at "
                       "most 2^24 devices");
    total *= d;
  }
  return total;
}

bool isPermutation(const std::vector<int64_t> &perm, size_t rank) {
  if (perm.size() != rank)
    return false;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || static_cast<size_t>(p) >= rank || seen[p])
      return false;
    seen[p] = true;
  }
  return true;
}

// Row-major linear ids of reshape_dims, read in the transposed order.
std::vector<int64_t> transposedIota(const std::vector<int64_t> &dims,
                                    const std::vector<int64_t> &perm,
                                    int64_t total) {
  const size_t rank = dims.size();
  std::vector<int64_t> stride(rank, 1);
  for (size_t i = rank; i-- > 1;)
    stride[i - 1] = stride[i] * dims[i];
  std::vector<int64_t> out_dims(rank), index(rank, 0), out;
  for (size_t k = 0; k < rank; ++k)
    out_dims[k] = dims[perm[k]];
  out.reserve(total);
  for (int64_t n = 0; n < total; ++n) {
    int64_t id = 0;
    for (size_t k = 0; k < rank; ++k)
      id += index[k] * stride[perm[k]];
    out.push_back(id);
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < out_dims[k])
        break;
      index[k] = 0;
    }
  }
  return out;
}

} // namespace

Result<std::vector<std::vector<int64_t>>> expandIota(const IotaGroups &iota) {
  std::vector<int64_t> dims = iota.reshape_dims;
  if (dims.empty())
    dims.push_back(iota.num_groups * iota.group_size);
  std::vector<int64_t> perm = iota.transpose_perm;
  if (perm.empty())
    for (size_t i = 0; i < dims.size(); ++i)
      perm.push_back(static_cast<int64_t>(i));
  Result<int64_t> total = checkedProduct(dims);
  if (!total)
    return total.error();
  if (iota.num_groups <= 0 || iota.group_size <= 0 ||
      iota.num_groups * iota.group_size != *total)
    return makeError("iota replica groups: num_groups * group_size must "
                     "equal the product of the reshape dims");
  if (!isPermutation(perm, dims.size()))
    return makeError("iota replica groups: transpose_perm is not a "
                     "permutation of the reshape dims");
  std::vector<int64_t> ids = transposedIota(dims, perm, *total);
  std::vector<std::vector<int64_t>> groups(iota.num_groups);
  for (int64_t i = 0; i < *total; ++i)
    groups[i / iota.group_size].push_back(ids[i]);
  return groups;
}

Result<std::vector<std::vector<int64_t>>> expand(const ReplicaGroups &g) {
  if (g.is_iota)
    return expandIota(g.iota);
  return g.lists;
}

namespace {

std::string joinInts(const std::vector<int64_t> &v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0)
      out += ',';
    out += std::to_string(v[i]);
  }
  return out;
}

} // namespace

std::string toText(const ReplicaGroups &g) {
  if (g.is_iota) {
    std::string out = "[";
    out += std::to_string(g.iota.num_groups) + "," +
           std::to_string(g.iota.group_size) + "]<=[";
    std::vector<int64_t> dims = g.iota.reshape_dims;
    if (dims.empty())
      dims.push_back(g.iota.num_groups * g.iota.group_size);
    out += joinInts(dims) + "]";
    bool identity = true;
    for (size_t i = 0; i < g.iota.transpose_perm.size(); ++i)
      identity = identity && g.iota.transpose_perm[i] == int64_t(i);
    if (!identity)
      out += "T(" + joinInts(g.iota.transpose_perm) + ")";
    return out;
  }
  std::string out = "{";
  for (size_t i = 0; i < g.lists.size(); ++i) {
    out += i > 0 ? ",{" : "{";
    out += joinInts(g.lists[i]);
    out += '}';
  }
  return out + "}";
}

ReplicaGroups canonicalDeviceList(const ReplicaGroups &g) {
  if (g.is_iota)
    return g;
  IotaGroups iota;
  iota.num_groups = g.num_groups();
  iota.group_size = g.group_size();
  iota.reshape_dims = {iota.num_groups * iota.group_size};
  iota.transpose_perm = {0};
  return ReplicaGroups::fromIota(iota);
}

Result<std::string> canonicalKey(const ReplicaGroups &g) {
  Result<std::vector<std::vector<int64_t>>> lists =
      expand(canonicalDeviceList(g));
  if (!lists)
    return lists.error();
  return toText(ReplicaGroups::fromLists(*lists));
}

} // namespace shardlab::cost
