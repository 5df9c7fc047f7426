// A tensor the interpreter computes with: its type, shape and elements,
// each element kept as the bits of its element type (a complex element as
// its real then its imaginary part), as a dense literal keeps them. Values
// stay exact, compare by their bits, and round to their type after every
// op, as the StableHLO specification says (nearest, ties to even).
//
//   Tensor t = Tensor::zeros(ctx.types.rankedTensor({2}, f16));
//   t.setReal(0, 0.1);   // stored as 0x2E66, the f16 nearest 0.1
//   t.real(0)            // 0.0999755859375
#pragma once

#include "shardlab/interpreter/quant.h"
#include "shardlab/ir/dense_elements.h"
#include "shardlab/ir/types.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace shardlab::interpreter {

class Tensor {
public:
  Tensor() = default;
  /// A tensor of static ranked type `type` with every element zero bits.
  /// A uniformly quantized element type is stored as its storage integer.
  static Tensor zeros(Type type);
  /// The quantization of a quantized tensor, else nullopt.
  const std::optional<UniformQuant> &quant() const { return quant_; }

  Type type() const { return type_; }
  const ElementLayout &layout() const { return layout_; }
  const std::vector<int64_t> &shape() const { return type_->shape; }
  int64_t rank() const { return type_->rank(); }
  int64_t size() const { return size_; }
  bool isFloat() const { return layout_.kind == ElementLayout::Kind::Float; }
  bool isComplex() const {
    return layout_.kind == ElementLayout::Kind::Complex;
  }
  bool isInteger() const {
    return layout_.kind == ElementLayout::Kind::Integer;
  }
  unsigned parts() const { return isComplex() ? 2 : 1; }

  /// The bits of part `part` of element `i`.
  uint64_t bits(int64_t i, unsigned part = 0) const {
    return bits_[size_t(i) * parts() + part];
  }
  void setBits(int64_t i, uint64_t value, unsigned part = 0) {
    bits_[size_t(i) * parts() + part] = value & mask_;
  }
  /// A float or complex part as a double (exact); an integer converted.
  double real(int64_t i) const;
  double imag(int64_t i) const;
  /// An integer element: sign-extended for signed types, zero-extended for
  /// unsigned ones and i1.
  int64_t integer(int64_t i) const;
  /// Rounds `value` to the element type (float or complex part).
  void setReal(int64_t i, double value);
  void setImag(int64_t i, double value);
  /// Truncates `value` to the integer type's width.
  void setInteger(int64_t i, uint64_t value) { setBits(i, value); }

  /// Row-major strides of the shape.
  std::vector<int64_t> strides() const;
  bool operator==(const Tensor &other) const {
    return type_ == other.type_ && bits_ == other.bits_;
  }

private:
  Type type_ = nullptr;
  ElementLayout layout_;
  int64_t size_ = 0;
  uint64_t mask_ = ~uint64_t{0};
  std::vector<uint64_t> bits_;
  std::optional<UniformQuant> quant_;
};

/// Row-major strides of `shape`.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape);

} // namespace shardlab::interpreter
