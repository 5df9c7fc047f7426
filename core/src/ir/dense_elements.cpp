#include "shardlab/ir/dense_elements.h"

#include <cmath>
#include <cstring>

namespace shardlab {

namespace {

// The width in `name` after `prefix` ("i32" -> 32); 0 when not digits or
// wider than 64 bits.
unsigned integerWidth(std::string_view name, size_t prefix) {
  if (name.size() <= prefix || name.size() > prefix + 2)
    return 0;
  unsigned width = 0;
  for (size_t i = prefix; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9')
      return 0;
    width = width * 10 + static_cast<unsigned>(name[i] - '0');
  }
  return width >= 1 && width <= 64 ? width : 0;
}

ElementLayout scalarLayout(std::string_view name) {
  ElementLayout layout;
  if (const FloatFormat *format = floatFormat(name)) {
    layout.kind = ElementLayout::Kind::Float;
    layout.float_format = format;
    layout.part_bits = format->bits;
    layout.part_bytes = format->storageBytes();
    return layout;
  }
  unsigned width = 0;
  if (name == "index") {
    width = 64;
    layout.is_signed = true;
  } else if (name.rfind("ui", 0) == 0) {
    width = integerWidth(name, 2);
    layout.is_unsigned = true;
  } else if (name.rfind("si", 0) == 0) {
    width = integerWidth(name, 2);
    layout.is_signed = true;
  } else if (name.rfind("i", 0) == 0) {
    width = integerWidth(name, 1);
  }
  if (width == 0)
    return ElementLayout{};
  layout.kind = ElementLayout::Kind::Integer;
  layout.part_bits = width;
  layout.part_bytes = (width + 7) / 8;
  layout.is_bool = width == 1 && !layout.is_unsigned && !layout.is_signed;
  return layout;
}

uint64_t widthMask(unsigned bits) {
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

} // namespace

ElementLayout elementLayout(Type element) {
  if (!element || element->kind != TypeKind::Element)
    return ElementLayout{};
  std::string_view name = element->text;
  constexpr std::string_view kComplex = "complex<";
  if (name.rfind(kComplex, 0) == 0 && name.back() == '>') {
    ElementLayout part = scalarLayout(
        name.substr(kComplex.size(), name.size() - kComplex.size() - 1));
    if (!part.supported() || part.is_bool)
      return ElementLayout{};
    part.kind = ElementLayout::Kind::Complex;
    return part;
  }
  return scalarLayout(name);
}

int64_t integerOfBits(uint64_t bits, const ElementLayout &layout) {
  const unsigned width = layout.part_bits;
  bits &= widthMask(width);
  if (layout.is_unsigned || layout.is_bool || width >= 64)
    return static_cast<int64_t>(bits);
  const uint64_t sign = uint64_t{1} << (width - 1);
  return static_cast<int64_t>((bits ^ sign) - sign);
}

uint64_t DenseElements::partBits(const ElementLayout &layout, size_t index,
                                 unsigned part) const {
  const size_t at = index * layout.elementBytes() + part * layout.part_bytes;
  uint64_t bits = 0;
  for (unsigned b = 0; b < layout.part_bytes; ++b)
    bits |= uint64_t{data[at + b]} << (8 * b);
  return bits;
}

void DenseElements::appendPart(const ElementLayout &layout, uint64_t bits) {
  for (unsigned b = 0; b < layout.part_bytes; ++b)
    data.push_back(static_cast<uint8_t>(bits >> (8 * b)));
}

void DenseElements::compactSplat(const ElementLayout &layout) {
  const size_t size = layout.elementBytes();
  if (splat || size == 0 || data.size() < size)
    return;
  for (size_t at = size; at < data.size(); at += size)
    if (std::memcmp(data.data(), data.data() + at, size) != 0)
      return;
  data.resize(size);
  splat = true;
}

DenseReader::DenseReader(const DenseElements &dense, Type type)
    : dense_(&dense),
      layout_(elementLayout(type && type->isTensor() ? type->element : type)) {
  count_ = type && type->isTensor() ? type->numElements() : 1;
  const size_t stored = dense.storedCount(layout_);
  valid_ = layout_.supported() && dense.raw.empty() && count_ >= 0 &&
           (dense.splat ? stored == 1 : stored == size_t(count_));
}

int64_t DenseReader::intAt(int64_t index) const {
  if (layout_.float_format)
    return static_cast<int64_t>(doubleAt(index));
  return integerOfBits(bits(index), layout_);
}

double DenseReader::doubleAt(int64_t index) const {
  if (layout_.float_format)
    return decodeFloat(bits(index), *layout_.float_format);
  const int64_t value = integerOfBits(bits(index), layout_);
  if (layout_.is_unsigned)
    return static_cast<double>(static_cast<uint64_t>(value));
  return static_cast<double>(value);
}

bool DenseReader::allZeroBits() const {
  for (uint8_t byte : dense_->data)
    if (byte != 0)
      return false;
  return true;
}

DenseElements denseOfInts(Type type, std::span<const int64_t> values) {
  const ElementLayout layout = elementLayout(type ? type->element : nullptr);
  DenseElements dense;
  dense.data.reserve(values.size() * layout.elementBytes());
  for (int64_t value : values) {
    dense.appendPart(layout, static_cast<uint64_t>(value));
    if (layout.kind == ElementLayout::Kind::Complex)
      dense.appendPart(layout, 0);
  }
  dense.compactSplat(layout);
  return dense;
}

namespace {

// An integer element of `layout` for `value`: truncated to the width; an
// infinity (or anything past int64) is the type's smallest or largest value.
uint64_t integerBitsOf(double value, const ElementLayout &layout) {
  const unsigned width = layout.part_bits;
  if (!(std::fabs(value) < 0x1p63)) {
    const bool low = value < 0;
    if (layout.is_unsigned || layout.is_bool)
      return low ? 0 : widthMask(width);
    const uint64_t sign = uint64_t{1} << (width - 1);
    return low ? sign : sign - 1;
  }
  return static_cast<uint64_t>(static_cast<int64_t>(value)) & widthMask(width);
}

} // namespace

DenseElements denseSplatOf(Type type, double value) {
  const ElementLayout layout =
      elementLayout(type && type->isTensor() ? type->element : type);
  DenseElements dense;
  dense.splat = true;
  const uint64_t bits = layout.float_format
                            ? encodeFloat(value, *layout.float_format)
                            : integerBitsOf(value, layout);
  dense.appendPart(layout, bits);
  if (layout.kind == ElementLayout::Kind::Complex)
    dense.appendPart(layout, layout.float_format
                                 ? encodeFloat(0.0, *layout.float_format)
                                 : 0);
  return dense;
}

} // namespace shardlab
