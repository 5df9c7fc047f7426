// The elements of a dense literal (`dense<[1, 2]> : tensor<2xi64>`), kept
// exactly as MLIR keeps them: each element as the bits of its element type,
// little-endian, in as many bytes as the type needs (i1 one byte here, packed
// to bits only in hex text), a complex element as its real then its
// imaginary part. A literal whose elements are all equal is stored once
// (`splat`), as MLIR compacts it, and prints as one value. Equality is
// equality of the bytes: a NaN equals itself, -0 differs from 0.
//
//   dense<[9007199254740993, -1]> : tensor<2xi64>
//     data = 01 00 00 00 00 00 20 00 | FF FF FF FF FF FF FF FF
//   dense<0x7FC00000> : tensor<4xf32>      data = 00 00 C0 7F, splat
//   dense<(1.0, 2.0)> : tensor<complex<f32>> data = 00 00 80 3F 00 00 00 40
#pragma once

#include "shardlab/ir/float_format.h"
#include "shardlab/ir/types.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace shardlab {

/// How the elements of one element type are stored and read.
struct ElementLayout {
  enum class Kind { Integer, Float, Complex, Unsupported };
  Kind kind = Kind::Unsupported;
  unsigned part_bits = 0;   ///< width of the integer, float or complex part
  unsigned part_bytes = 0;  ///< bytes one part takes
  bool is_bool = false;     ///< i1: true / false
  bool is_unsigned = false; ///< ui8 ...: printed and range-checked unsigned
  bool is_signed = false;   ///< si8 ... and index: positive values < 2^(w-1)
  const FloatFormat *float_format = nullptr; ///< float parts, else nullptr

  unsigned elementBytes() const {
    return kind == Kind::Complex ? 2 * part_bytes : part_bytes;
  }
  bool supported() const { return kind != Kind::Unsupported; }
};

/// The layout of `element` (f32, i1, ui64, complex<f64>, ...); Unsupported
/// for types kept as text (strings, quantized types, integers over 64 bits).
ElementLayout elementLayout(Type element);

/// An integer of `layout` as a signed value: sign-extended from its width,
/// or zero-extended for unsigned types (ui64 above 2^63 wraps).
int64_t integerOfBits(uint64_t bits, const ElementLayout &layout);

struct DenseElements {
  std::vector<uint8_t> data; ///< the stored elements (one when `splat`)
  bool splat = false;
  std::string raw; ///< the literal's text, for a type kept as text

  bool operator==(const DenseElements &other) const {
    return splat == other.splat && data == other.data && raw == other.raw;
  }
  size_t storedCount(const ElementLayout &layout) const {
    return layout.elementBytes() ? data.size() / layout.elementBytes() : 0;
  }
  /// The bits of part `part` (0 real, 1 imaginary) of stored element `index`.
  uint64_t partBits(const ElementLayout &layout, size_t index,
                    unsigned part = 0) const;
  /// Appends one part of the next element.
  void appendPart(const ElementLayout &layout, uint64_t bits);
  /// Keeps one element when all `count` are equal (MLIR's splat detection).
  void compactSplat(const ElementLayout &layout);
};

/// Reads the elements of a dense literal of tensor type `type` by index
/// (a splat answers every index). Not valid for a literal kept as text.
class DenseReader {
public:
  DenseReader(const DenseElements &dense, Type type);
  bool valid() const { return valid_; }
  int64_t size() const { return count_; }
  const ElementLayout &layout() const { return layout_; }
  uint64_t bits(int64_t index, unsigned part = 0) const {
    return dense_->partBits(layout_, stored(index), part);
  }
  /// An integer element's value (integerOfBits); a float element truncated.
  int64_t intAt(int64_t index) const;
  /// The real part as a double (exact for floats; integers converted).
  double doubleAt(int64_t index) const;
  bool isSplat() const { return dense_->splat; }
  /// Whether every part of every element is zero bits (+0.0, 0, false).
  bool allZeroBits() const;

private:
  size_t stored(int64_t index) const {
    return dense_->splat ? 0 : static_cast<size_t>(index);
  }
  const DenseElements *dense_;
  ElementLayout layout_;
  int64_t count_ = 0;
  bool valid_ = false;
};

/// A literal of `type` holding `values` (integer element types; each value
/// truncated to the width), compacted to a splat when all are equal.
DenseElements denseOfInts(Type type, std::span<const int64_t> values);
/// A splat of `type` whose element is `value` rounded to the element type
/// (integers truncate; complex types get an imaginary part of 0).
DenseElements denseSplatOf(Type type, double value);

} // namespace shardlab
