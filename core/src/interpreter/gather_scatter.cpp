// gather and scatter, index by index as the StableHLO specification
// defines them. A gather's start indices are clamped into the operand; a
// scatter's update window that does not fit in the operand is skipped whole
// (XLA's choice where the specification leaves it to the implementation).
#include "indexing.h"
#include "ops.h"

#include "rules/stablehlo_attrs.h"

#include <algorithm>

namespace shardlab::interpreter::detail {
namespace {

using Fields = rules::DimNumberFields;

std::vector<int64_t> field(const Fields &f, const char *name) {
  auto it = f.find(name);
  return it == f.end() ? std::vector<int64_t>{} : it->second;
}

bool contains(const std::vector<int64_t> &v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::optional<Fields> dimNumbers(const Operation &op, const char *name) {
  const Attr *attr = rules::findAttr(op, name);
  if (!attr)
    return std::nullopt;
  return rules::parseDimNumberFields(attr->text);
}

// The index of the batch of `indices` the op reads: the batch index with a
// full slice along index_vector_dim (or none, when it is the rank: a
// trailing 1).
std::vector<int64_t> startIndex(const Tensor &indices,
                                const std::vector<int64_t> &batch_index,
                                int64_t index_vector_dim) {
  const std::vector<int64_t> strides = indices.strides();
  std::vector<int64_t> at;
  size_t b = 0;
  int64_t base = 0;
  for (int64_t d = 0; d < indices.rank(); ++d)
    if (d != index_vector_dim)
      base += batch_index[b++] * strides[size_t(d)];
  if (index_vector_dim >= indices.rank())
    return {indices.integer(base)};
  for (int64_t k = 0; k < indices.shape()[size_t(index_vector_dim)]; ++k)
    at.push_back(indices.integer(base + k * strides[size_t(index_vector_dim)]));
  return at;
}

} // namespace

Result<Tensor> gather(const Operation &op, const Operands &in, Type result) {
  std::optional<Fields> f = dimNumbers(op, "dimension_numbers");
  std::optional<std::vector<int64_t>> sizes =
      rules::intsAttr(op, "slice_sizes");
  if (!f || !sizes)
    return opError(op, "dimension_numbers or slice_sizes missing");
  const Tensor &operand = *in[0], &indices = *in[1];
  const std::vector<int64_t> offset_dims = field(*f, "offset_dims");
  const std::vector<int64_t> collapsed = field(*f, "collapsed_slice_dims");
  const std::vector<int64_t> operand_batching =
      field(*f, "operand_batching_dims");
  const std::vector<int64_t> indices_batching =
      field(*f, "start_indices_batching_dims");
  const std::vector<int64_t> start_map = field(*f, "start_index_map");
  const std::vector<int64_t> ivd = field(*f, "index_vector_dim");
  const int64_t index_vector_dim = ivd.empty() ? 0 : ivd[0];
  Tensor out = Tensor::zeros(result);
  const std::vector<int64_t> ostrides = operand.strides();
  std::vector<int64_t> index(size_t(out.rank()), 0);
  for (int64_t flat = 0; flat < out.size();
       ++flat, nextIndex(index, out.shape())) {
    std::vector<int64_t> batch_index, offset_index;
    for (int64_t d = 0; d < out.rank(); ++d)
      (contains(offset_dims, d) ? offset_index : batch_index)
          .push_back(index[size_t(d)]);
    const std::vector<int64_t> start =
        startIndex(indices, batch_index, index_vector_dim);
    std::vector<int64_t> at(size_t(operand.rank()), 0);
    for (size_t k = 0; k < start_map.size() && k < start.size(); ++k) {
      const size_t d = size_t(start_map[k]);
      at[d] =
          std::clamp<int64_t>(start[k], 0, operand.shape()[d] - (*sizes)[d]);
    }
    for (size_t k = 0; k < operand_batching.size(); ++k) {
      const int64_t ds = indices_batching[k];
      at[size_t(operand_batching[k])] +=
          batch_index[size_t(ds < index_vector_dim ? ds : ds - 1)];
    }
    size_t o = 0;
    for (int64_t d = 0; d < operand.rank(); ++d)
      if (!contains(collapsed, d) && !contains(operand_batching, d))
        at[size_t(d)] += offset_index[o++];
    const int64_t from = flatIndex(at, ostrides);
    copyElement(out, flat, operand, from);
  }
  return out;
}

Result<std::vector<Tensor>> scatter(const Operation &op, const Operands &in,
                                    const std::vector<Type> &results,
                                    const Combiner &combine) {
  std::optional<Fields> f = dimNumbers(op, "scatter_dimension_numbers");
  const size_t n = results.size();
  if (!f || in.size() != 2 * n + 1)
    return opError(op, "scatter_dimension_numbers missing or operands not "
                       "N inputs, indices, N updates");
  const Tensor &indices = *in[n];
  const std::vector<int64_t> window_dims = field(*f, "update_window_dims");
  const std::vector<int64_t> inserted = field(*f, "inserted_window_dims");
  const std::vector<int64_t> input_batching = field(*f, "input_batching_dims");
  const std::vector<int64_t> indices_batching =
      field(*f, "scatter_indices_batching_dims");
  const std::vector<int64_t> to_operand =
      field(*f, "scatter_dims_to_operand_dims");
  const std::vector<int64_t> ivd = field(*f, "index_vector_dim");
  const int64_t index_vector_dim = ivd.empty() ? 0 : ivd[0];
  // The update computation's arguments: scalars of each input's type.
  Operation &mutable_op = const_cast<Operation &>(op);
  if (!mutable_op.numRegions() || mutable_op.region(0).empty() ||
      mutable_op.region(0).front().numArguments() != 2 * n)
    return opError(op, "update computation missing");
  std::vector<Type> scalar;
  for (size_t k = 0; k < 2 * n; ++k)
    scalar.push_back(mutable_op.region(0).front().argument(k)->type);
  std::vector<Tensor> outs;
  for (size_t k = 0; k < n; ++k)
    outs.push_back(*in[k]);
  const Tensor &updates0 = *in[n + 1];
  const std::vector<int64_t> ostrides = outs[0].strides();
  const std::vector<int64_t> &oshape = outs[0].shape();
  // The window's extent along each operand dimension (1 where inserted or
  // batched).
  std::vector<int64_t> extent(oshape.size(), 1);
  {
    size_t w = 0;
    for (size_t d = 0; d < oshape.size(); ++d)
      if (!contains(inserted, int64_t(d)) &&
          !contains(input_batching, int64_t(d)))
        extent[d] = updates0.shape()[size_t(window_dims[w++])];
  }
  // A one-op update computation (scatter-add) folds without its region.
  const std::optional<SingleOpBody> body = singleOpBody(op);
  const bool folds = body && n == 1 &&
                     foldsElementsOf(*body, outs[0].type()->element) &&
                     foldsElementsOf(*body, updates0.type()->element);
  std::vector<int64_t> index(size_t(updates0.rank()), 0);
  for (int64_t flat = 0; flat < updates0.size();
       ++flat, nextIndex(index, updates0.shape())) {
    std::vector<int64_t> scatter_index, window_index;
    for (int64_t d = 0; d < updates0.rank(); ++d)
      (contains(window_dims, d) ? window_index : scatter_index)
          .push_back(index[size_t(d)]);
    const std::vector<int64_t> start =
        startIndex(indices, scatter_index, index_vector_dim);
    std::vector<int64_t> at(oshape.size(), 0);
    for (size_t k = 0; k < to_operand.size() && k < start.size(); ++k)
      at[size_t(to_operand[k])] = start[k];
    for (size_t k = 0; k < input_batching.size(); ++k) {
      const int64_t ds = indices_batching[k];
      at[size_t(input_batching[k])] =
          scatter_index[size_t(ds < index_vector_dim ? ds : ds - 1)];
    }
    bool fits = true;
    for (size_t d = 0; d < oshape.size(); ++d)
      fits =
          fits && at[d] >= 0 && at[d] <= oshape[d] - extent[d]; // no overflow
    if (!fits)
      continue; // the whole window is skipped
    size_t w = 0;
    for (size_t d = 0; d < oshape.size(); ++d)
      if (!contains(inserted, int64_t(d)) &&
          !contains(input_batching, int64_t(d)))
        at[d] += window_index[w++];
    const int64_t to = flatIndex(at, ostrides);
    if (folds) {
      foldElement(*body, outs[0], to, updates0, flat);
      continue;
    }
    std::vector<Tensor> args;
    for (size_t k = 0; k < n; ++k)
      args.push_back(scalarAt(outs[k], to, scalar[k]));
    for (size_t k = 0; k < n; ++k)
      args.push_back(scalarAt(*in[n + 1 + k], flat, scalar[n + k]));
    Result<std::vector<Tensor>> combined = combine(args);
    if (!combined)
      return combined.error();
    for (size_t k = 0; k < n; ++k)
      copyElement(outs[k], to, (*combined)[k], 0);
  }
  return outs;
}

} // namespace shardlab::interpreter::detail
