// The work of one op, counted before it runs so that a run can stop at a
// budget (RunOptions::max_work) instead of a clock: the same module stops
// at the same op on any machine. A unit is about what one element produced
// or read, or one multiply-add of a dot, takes (some 3 ns here); an op
// costs its dispatch besides, and a convolution's multiply-add, read
// through its window and dimension numbers, several units. A region's ops
// (a loop body's, a reducer's of more than one op) count their own as they
// run; a one-op reducer is folded without running its region (reduce.cpp)
// and costs what the reduction reads. Measured on this machine (2 cores,
// load 1.1): a 4096-square dot 350 million units a second, a convolution
// 20 million multiply-adds, a reduce whose reducer runs as a region 14
// million elements (400 units each).
#include "ir/op_properties.h"
#include "ops.h"
#include "rules/stablehlo_attrs.h"

#include <algorithm>

namespace shardlab::interpreter::detail {
namespace {

constexpr int64_t kOpDispatch = 400;
constexpr int64_t kConvolutionMultiplyAdd = 16;
constexpr int64_t kAttentionMultiplyAdd = 16;

int64_t elementsOf(Type type) {
  int64_t n = 1;
  for (int64_t size : type->shape)
    n *= std::max<int64_t>(size, 0);
  return n;
}

// The multiply-adds behind one result element of a dot: the product of
// the contracting sizes.
int64_t dotDepth(const Operation &op, const Operands &in) {
  const Tensor &lhs = *in[0];
  if (op.is("stablehlo.dot"))
    return lhs.rank() > 0 ? lhs.type()->shape.back() : 1;
  const Attr *attr = rules::findAttr(op, "dot_dimension_numbers");
  std::optional<rules::DotDims> dims =
      attr ? rules::dotDims(*attr) : std::nullopt;
  int64_t depth = 1;
  if (dims)
    for (int64_t d : dims->lhs_contracting)
      if (d >= 0 && size_t(d) < lhs.type()->shape.size())
        depth *= lhs.type()->shape[size_t(d)];
  return depth;
}

// One result element of a convolution: the kernel's elements of one
// output feature.
int64_t convolutionDepth(const Operation &op, const Operands &in) {
  const Attr *attr = rules::findAttr(op, "dimension_numbers");
  std::optional<rules::ConvDims> dims = attr && attr->kind == AttrKind::Opaque
                                            ? rules::parseConvDims(attr->text)
                                            : std::nullopt;
  const std::vector<int64_t> &kernel = in[1]->type()->shape;
  int64_t features = 1;
  if (dims && dims->kernel_output_feature >= 0 &&
      size_t(dims->kernel_output_feature) < kernel.size())
    features =
        std::max<int64_t>(kernel[size_t(dims->kernel_output_feature)], 1);
  return elementsOf(in[1]->type()) / features;
}

// The multiply-adds of a fused attention per query element: q [B, T, N, D]
// against k [B, S, Nkv, D] is two products of T x S per head forward
// (scores, then values), five backward.
int64_t attentionDepth(const Operation &op, const Operands &in) {
  if (in.size() < 3 || in[0]->rank() != 4 || in[1]->rank() != 4)
    return 1;
  return in[1]->type()->shape[1] * (isFusedAttentionBackward(op) ? 5 : 2);
}

} // namespace

int64_t opWork(const Operation &op, const Operands &in,
               const std::vector<Type> &types) {
  int64_t produced = 0, read = 0;
  for (Type type : types)
    produced += elementsOf(type);
  for (const Tensor *tensor : in)
    read += tensor->size();
  if ((op.is("stablehlo.dot_general") || op.is("stablehlo.dot")) &&
      in.size() >= 2)
    return kOpDispatch + produced * std::max<int64_t>(dotDepth(op, in), 1);
  if (isFusedAttention(op) && !in.empty())
    return kOpDispatch + in[0]->size() * kAttentionMultiplyAdd *
                             std::max<int64_t>(attentionDepth(op, in), 1);
  if (op.is("stablehlo.convolution") && in.size() >= 2)
    return kOpDispatch + produced * kConvolutionMultiplyAdd *
                             std::max<int64_t>(convolutionDepth(op, in), 1);
  return kOpDispatch + std::max(produced, read);
}

} // namespace shardlab::interpreter::detail
