// Index arithmetic shared by the interpreter's op families (indexing.h).
#include "indexing.h"

#include "ops.h"
#include "rules/stablehlo_attrs.h"

namespace shardlab::interpreter::detail {

bool nextIndex(std::vector<int64_t> &index, const std::vector<int64_t> &shape) {
  for (size_t d = index.size(); d-- > 0;) {
    if (++index[d] < shape[d])
      return true;
    index[d] = 0;
  }
  return false;
}

int64_t flatIndex(const std::vector<int64_t> &index,
                  const std::vector<int64_t> &strides) {
  int64_t at = 0;
  for (size_t d = 0; d < index.size(); ++d)
    at += index[d] * strides[d];
  return at;
}

void copyElement(Tensor &out, int64_t to, const Tensor &in, int64_t from) {
  for (unsigned p = 0; p < out.parts(); ++p)
    out.setBits(to, in.bits(from, p), p);
}

void copyBox(const Tensor &from, const std::vector<int64_t> &from_start,
             Tensor &to, const std::vector<int64_t> &to_start,
             const std::vector<int64_t> &sizes) {
  for (int64_t s : sizes)
    if (s <= 0)
      return;
  const std::vector<int64_t> from_strides = from.strides();
  const std::vector<int64_t> to_strides = to.strides();
  std::vector<int64_t> index(sizes.size(), 0), a(sizes.size()), b(sizes.size());
  do {
    for (size_t d = 0; d < sizes.size(); ++d) {
      a[d] = from_start[d] + index[d];
      b[d] = to_start[d] + index[d];
    }
    copyElement(to, flatIndex(b, to_strides), from, flatIndex(a, from_strides));
  } while (nextIndex(index, sizes));
}

Tensor scalarAt(const Tensor &from, int64_t i, Type scalar) {
  Tensor t = Tensor::zeros(scalar);
  copyElement(t, 0, from, i);
  return t;
}

Tensor fromLiteral(const DenseReader &reader, Type type) {
  Tensor t = Tensor::zeros(type);
  for (int64_t i = 0; i < t.size(); ++i)
    for (unsigned p = 0; p < t.parts(); ++p)
      t.setBits(i, reader.bits(i, p), p);
  return t;
}

int64_t totalOrderKey(uint64_t bits, const FloatFormat &format) {
  const uint64_t sign = uint64_t{1} << (format.bits - 1);
  const int64_t magnitude = int64_t(bits & (sign - 1));
  return bits & sign ? -magnitude - 1 : magnitude;
}

std::vector<int64_t> intsOrOnes(const Operation &op, std::string_view name,
                                size_t rank) {
  std::optional<std::vector<int64_t>> v = rules::intsAttr(op, name);
  return v && v->size() == rank ? *v : std::vector<int64_t>(rank, 1);
}

Result<std::vector<int64_t>> lowPadding(const Operation &op, size_t rank) {
  std::vector<int64_t> low(rank, 0);
  const Attr *padding = rules::findAttr(op, "padding");
  if (!padding)
    return low;
  std::optional<std::vector<int64_t>> p = rules::denseInts(*padding, 2 * rank);
  if (!p || p->size() != 2 * rank)
    return opError(op, "padding unreadable");
  for (size_t d = 0; d < rank; ++d)
    low[d] = (*p)[2 * d];
  return low;
}

} // namespace shardlab::interpreter::detail
