// stablehlo.reduce: N inputs and N init values; every output element folds
// the input elements that map to it (all indices of the reduced dimensions)
// into the init values with the body, in index order. A body of one
// binary op (the sums and maxima JAX writes) is folded without running the
// region: the same element steps, so the same bits.
#include "indexing.h"
#include "ops.h"

#include "ir/op_properties.h"
#include "rules/stablehlo_attrs.h"

#include <algorithm>
#include <array>

namespace shardlab::interpreter::detail {

namespace {

// The ops whose one-op bodies are folded: the reducers JAX and XLA write.
constexpr std::array<std::string_view, 7> kFoldedOps = {
    "stablehlo.add",     "stablehlo.multiply", "stablehlo.maximum",
    "stablehlo.minimum", "stablehlo.and",      "stablehlo.or",
    "stablehlo.xor"};

// The result of each kept index: its init value, then every element that
// maps to it folded in, in index order.
Tensor fold(const SingleOpBody &body, const Tensor &input, const Tensor &init,
            Type result, const std::vector<int64_t> &kept) {
  Tensor out = Tensor::zeros(result);
  for (int64_t i = 0; i < out.size(); ++i)
    copyElement(out, i, init, 0);
  const std::vector<int64_t> out_strides = stridesOf(out.shape());
  std::vector<int64_t> index(size_t(input.rank()), 0);
  for (int64_t flat = 0; flat < input.size(); ++flat) {
    int64_t to = 0;
    for (size_t j = 0; j < kept.size(); ++j)
      to += index[size_t(kept[j])] * out_strides[j];
    foldElement(body, out, to, input, flat);
    nextIndex(index, input.shape());
  }
  return out;
}

} // namespace

std::optional<SingleOpBody> singleOpBody(const Operation &op) {
  if (op.numRegions() == 0 || op.region(0).blocks.size() != 1)
    return std::nullopt;
  Block &block = *op.region(0).blocks.front();
  Operation *body = block.front();
  if (block.numArguments() != 2 || block.size() != 2 ||
      body->numOperands() != 2 || body->numResults() != 1 ||
      std::find(kFoldedOps.begin(), kFoldedOps.end(), body->name) ==
          kFoldedOps.end())
    return std::nullopt;
  Operation *ret = body->nextInBlock();
  Value *acc = block.argument(0), *x = block.argument(1);
  const Type type = acc->type;
  if (!isBlockReturn(*ret) || ret->numOperands() != 1 ||
      ret->operand(0) != body->result(0) || x->type != type ||
      body->result(0)->type != type || type->rank() != 0)
    return std::nullopt;
  // An op not defined on the type (`and` of floats) runs as a region, which
  // says so; a quantized one runs through its expressed type.
  Tensor probe = Tensor::zeros(type);
  if (probe.quant() || !binaryElement(body->name, probe, 0, probe, 0, probe, 0))
    return std::nullopt;
  if (body->operand(0) == acc && body->operand(1) == x)
    return SingleOpBody{body->name, false, type};
  if (body->operand(0) == x && body->operand(1) == acc)
    return SingleOpBody{body->name, true, type};
  return std::nullopt;
}

bool foldsElementsOf(const SingleOpBody &body, Type element) {
  return element == body.type->element;
}

bool foldsReduction(const SingleOpBody &body, const Operands &in,
                    const std::vector<Type> &results) {
  return in.size() == 2 && results.size() == 1 &&
         foldsElementsOf(body, in[0]->type()->element) &&
         in[1]->type() == body.type &&
         foldsElementsOf(body, results[0]->element);
}

void foldElement(const SingleOpBody &body, Tensor &acc, int64_t at,
                 const Tensor &x, int64_t from) {
  if (body.accumulator_second)
    binaryElement(body.op, x, from, acc, at, acc, at);
  else
    binaryElement(body.op, acc, at, x, from, acc, at);
}

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
  if (const std::optional<SingleOpBody> body = singleOpBody(op);
      body && foldsReduction(*body, in, results))
    return std::vector<Tensor>{fold(*body, first, *in[1], results[0], kept)};
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
