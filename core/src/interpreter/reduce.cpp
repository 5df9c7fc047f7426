// stablehlo.reduce: N inputs and N init values; every output element folds
// the input elements that map to it (all indices of the reduced dimensions)
// into the init values with the body, in index order.
#include "indexing.h"
#include "ops.h"

#include "rules/stablehlo_attrs.h"

#include <algorithm>

namespace shardlab::interpreter::detail {

Result<std::vector<Tensor>> reduce(const Operation &op, const Operands &in,
                                   const std::vector<Type> &results,
                                   const Combiner &combine) {
  std::optional<std::vector<int64_t>> dims = rules::intsAttr(op, "dimensions");
  const size_t n = in.size() / 2;
  if (!dims || n == 0 || results.size() != n)
    return opError(op, "expected N inputs, N init values and dimensions");
  const Tensor &first = *in[0];
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < first.rank(); ++d)
    if (std::find(dims->begin(), dims->end(), d) == dims->end())
      kept.push_back(d);
  std::vector<Tensor> outs;
  for (size_t k = 0; k < n; ++k)
    outs.push_back(Tensor::zeros(results[k]));
  // Accumulators per output element, starting at the init values.
  std::vector<std::vector<Tensor>> acc(size_t(outs[0].size()));
  for (std::vector<Tensor> &a : acc)
    for (size_t k = 0; k < n; ++k)
      a.push_back(*in[n + k]);
  const std::vector<int64_t> out_strides = stridesOf(outs[0].shape());
  std::vector<int64_t> index(size_t(first.rank()), 0);
  for (int64_t flat = 0; flat < first.size(); ++flat) {
    int64_t to = 0;
    for (size_t j = 0; j < kept.size(); ++j)
      to += index[size_t(kept[j])] * out_strides[j];
    std::vector<Tensor> args = acc[size_t(to)];
    for (size_t k = 0; k < n; ++k)
      args.push_back(scalarAt(*in[k], flat, in[n + k]->type()));
    Result<std::vector<Tensor>> next = combine(args);
    if (!next)
      return next.error();
    acc[size_t(to)] = std::move(*next);
    nextIndex(index, first.shape());
  }
  for (size_t i = 0; i < acc.size(); ++i)
    for (size_t k = 0; k < n; ++k)
      copyElement(outs[k], int64_t(i), acc[i][k], 0);
  return outs;
}

} // namespace shardlab::interpreter::detail
