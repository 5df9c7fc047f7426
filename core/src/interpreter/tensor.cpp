// Tensor storage: zeros, element access with rounding to the element type.
#include "shardlab/interpreter/tensor.h"

#include <algorithm>

namespace shardlab::interpreter {

std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

Tensor Tensor::zeros(Type type) {
  Tensor t;
  t.type_ = type;
  t.layout_ = elementLayout(type->element);
  if (!t.layout_.supported())
    if ((t.quant_ = uniformQuant(type->element->text))) {
      t.layout_.kind = ElementLayout::Kind::Integer;
      t.layout_.part_bits = t.quant_->storage_bits;
      t.layout_.part_bytes = (t.quant_->storage_bits + 7) / 8;
      t.layout_.is_unsigned = t.quant_->storage_unsigned;
    }
  t.size_ = type->numElements();
  t.mask_ = t.layout_.part_bits >= 64
                ? ~uint64_t{0}
                : (uint64_t{1} << t.layout_.part_bits) - 1;
  const unsigned bytes = std::max(t.layout_.part_bytes, 1u);
  t.width_ = bytes <= 1 ? 1 : bytes <= 2 ? 2 : bytes <= 4 ? 4 : 8;
  t.bytes_.assign(size_t(t.size_) * t.parts() * t.width_, 0);
  return t;
}

std::vector<int64_t> Tensor::strides() const { return stridesOf(shape()); }

double Tensor::real(int64_t i) const {
  if (layout_.float_format)
    return decodeFloat(bits(i, 0), *layout_.float_format);
  if (isInteger())
    return layout_.is_unsigned || layout_.is_bool ? double(uint64_t(integer(i)))
                                                  : double(integer(i));
  return 0;
}

double Tensor::imag(int64_t i) const {
  return isComplex() ? decodeFloat(bits(i, 1), *layout_.float_format) : 0.0;
}

int64_t Tensor::integer(int64_t i) const {
  return integerOfBits(bits(i, 0), layout_);
}

void Tensor::setReal(int64_t i, double value) {
  if (layout_.float_format)
    setBits(i, encodeFloat(value, *layout_.float_format), 0);
}

void Tensor::setImag(int64_t i, double value) {
  if (isComplex())
    setBits(i, encodeFloat(value, *layout_.float_format), 1);
}

} // namespace shardlab::interpreter
