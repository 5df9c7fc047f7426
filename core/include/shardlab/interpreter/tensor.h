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
#include <cstring>
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
    const unsigned char *at = bytes_.data() + offset(i, part);
    switch (width_) {
    case 1:
      return *at;
    case 2:
      return load<uint16_t>(at);
    case 4:
      return load<uint32_t>(at);
    default:
      return load<uint64_t>(at);
    }
  }
  void setBits(int64_t i, uint64_t value, unsigned part = 0) {
    unsigned char *at = bytes_.data() + offset(i, part);
    value &= mask_;
    switch (width_) {
    case 1:
      *at = static_cast<unsigned char>(value);
      break;
    case 2:
      store(at, static_cast<uint16_t>(value));
      break;
    case 4:
      store(at, static_cast<uint32_t>(value));
      break;
    default:
      store(at, value);
    }
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

  /// The bytes the elements take.
  size_t storageBytes() const { return bytes_.size(); }

  /// Row-major strides of the shape.
  std::vector<int64_t> strides() const;
  bool operator==(const Tensor &other) const {
    return type_ == other.type_ && bytes_ == other.bytes_;
  }

private:
  size_t offset(int64_t i, unsigned part) const {
    return (size_t(i) * parts() + part) * width_;
  }
  template <class T> static T load(const unsigned char *at) {
    T value;
    std::memcpy(&value, at, sizeof(T));
    return value;
  }
  template <class T> static void store(unsigned char *at, T value) {
    std::memcpy(at, &value, sizeof(T));
  }

  Type type_ = nullptr;
  ElementLayout layout_;
  int64_t size_ = 0;
  uint64_t mask_ = ~uint64_t{0};
  /// Each part in 1, 2, 4 or 8 bytes (its width rounded up), so that an
  /// f32 tensor takes 4 bytes an element, a bf16 one 2.
  unsigned width_ = 8;
  std::vector<unsigned char> bytes_;
  std::optional<UniformQuant> quant_;
};

/// Row-major strides of `shape`.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape);

} // namespace shardlab::interpreter
