// Types of the IR: ranked and unranked tensors, element types, tokens,
// tuples, functions and opaque dialect types. Types are immutable and
// interned in a TypeContext, so equal types are equal pointers.
#pragma once

#include "shardlab/sharding/shape.h"
#include "shardlab/support/string_hash.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace shardlab {

enum class TypeKind {
  Element,        ///< f32, i32, bf16, index, complex<f32>, !quant.uniform<..>
  RankedTensor,   ///< tensor<8x?xf32>
  UnrankedTensor, ///< tensor<*xf32>
  Token,          ///< !stablehlo.token
  Tuple,          ///< tuple<...>
  Function,       ///< (inputs) -> results
  Opaque,         ///< any other type, kept as text
};

struct TypeStorage;
using Type = const TypeStorage *;

/// The shared representation of one interned type.
struct TypeStorage {
  TypeKind kind = TypeKind::Opaque;
  std::string text;           ///< canonical printed form
  std::vector<int64_t> shape; ///< tensor dims, kDynamic for `?`
  Type element = nullptr;     ///< tensor element type
  std::string encoding;       ///< tensor encoding attribute text, if any
  std::vector<Type> members;  ///< tuple members / function inputs
  std::vector<Type> results;  ///< function results

  bool isTensor() const {
    return kind == TypeKind::RankedTensor || kind == TypeKind::UnrankedTensor;
  }
  bool isRankedTensor() const { return kind == TypeKind::RankedTensor; }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  bool hasStaticShape() const;
  /// Number of elements of a static ranked tensor, -1 otherwise.
  int64_t numElements() const;
  /// Bit width of an element type (f32 -> 32, complex<f32> -> 64), 0 if
  /// unknown.
  int64_t elementBitWidth() const;
  bool isIntegerElement() const; ///< i1, i32, ui8, ... (also index)
  bool isFloatElement() const;   ///< f16, bf16, f32, f8E4M3FN, ...
};

/// Owns and interns types. One per module set (a Context).
class TypeContext {
public:
  TypeContext();
  /// Layered over `parent`, which must outlive it and no longer change:
  /// a type the parent has is the parent's (see Context).
  explicit TypeContext(const TypeContext *parent);
  /// The element type spelled `text` (`f32`, `i64`, ...). Inline for the
  /// two that op parsers and passes ask for on every op.
  Type element(std::string_view text) {
    if (i64_ && text.size() == 3 && equalStrings(text, "i64"))
      return i64_;
    if (i1_ && text.size() == 2 && equalStrings(text, "i1"))
      return i1_;
    return lookupElement(text);
  }
  Type rankedTensor(const std::vector<int64_t> &shape, Type element,
                    std::string_view encoding = {});
  Type unrankedTensor(Type element);
  Type token(std::string_view text = "!stablehlo.token");
  Type tuple(const std::vector<Type> &members);
  Type function(const std::vector<Type> &inputs,
                const std::vector<Type> &results);
  Type opaque(std::string_view text);

private:
  Type lookupElement(std::string_view text);
  Type intern(TypeStorage &&storage);
  /// The type spelled `text` here or in a parent; null if none has it.
  Type find(std::string_view text) const;
  const TypeContext *parent_ = nullptr;
  // Keyed by views of the types' own spellings (TypeStorage::text).
  std::unordered_map<std::string_view, std::unique_ptr<TypeStorage>, StringHash,
                     StringEqual>
      types_;
  // The element types op parsers and passes ask for by name on every op
  // (dimension lists are i64 arrays): answered without a table lookup, 2.5%
  // of a WASM parse.
  Type i64_ = nullptr;
  Type i1_ = nullptr;
};

/// Prints a shape dimension list as MLIR does: `8x?x4x` style prefix.
void appendShape(std::string &out, const std::vector<int64_t> &shape);

} // namespace shardlab
