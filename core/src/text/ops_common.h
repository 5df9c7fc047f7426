// Shared pieces of the custom op syntaxes (ops_*.cpp): attribute setters
// and the recurring `%a, %b : type` / functional-type patterns.
#pragma once

#include "ir/op_registry.h"
#include "parser.h"
#include "printer.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::syntax {

/// `name` is static (a literal or an entry of a static table), so it is
/// stored as it is: interning it cost a hash lookup per attribute.
inline void setAttr(Parser &, Operation &op, std::string_view name,
                    const Attr *value) {
  op.attrs.set(name, value);
}

/// `: type` shared by every operand and the result, or `: (ins) -> out`.
/// Used by StableHLO's elementwise ops (hlo::parseSameOperandsAndResultType).
bool parseSameOperandsAndResultType(Parser &parser, Operation &op,
                                    const std::vector<Value *> &operands,
                                    size_t num_results = 1);
void printSameOperandsAndResultType(Printer &printer, Operation &op);

/// `%in <sharding>`-style: parses a tensor sharding body into `name`.
bool parseShardingAttr(Parser &parser, Operation &op, std::string_view name);

/// `: (ins) -> outs`, checking the operand count.
bool parseFunctionalTypeFor(Parser &parser, Operation &op,
                            const std::vector<Value *> &operands);

/// `[1, 2, 3]` (possibly empty).
bool parseIntList(Parser &parser, std::vector<int64_t> &values);

/// A `dense<...> : tensor<Nxcolsxi64>` attribute of `flat` (row-major), as
/// StableHLO's padding attributes are.
const Attr *denseIntMatrix(Context &ctx, const std::vector<int64_t> &flat,
                           int64_t cols);
/// The values of such an attribute (row-major), or nothing when `attr` is
/// not an integer dense literal of `cols` columns.
std::optional<std::vector<int64_t>> denseIntMatrixValues(const Attr *attr,
                                                         int64_t cols);

/// `%a, %b` then sets the operands.
bool parseOperandsInto(Parser &parser, Operation &op);

/// `{` ... `}` with declared entry args and a trailing terminator.
bool parseRegionWithArgs(Parser &parser, Operation &op,
                         const std::vector<ArgDecl> &args);

} // namespace shardlab::syntax

namespace shardlab {

// The op tables of the ops_*.cpp files, joined by the op registry.
std::vector<OpInfo> chloOpInfos();
std::vector<OpInfo> funcOpInfos();
std::vector<OpInfo> sdyOpInfos();
std::vector<OpInfo> stablehloOpInfos();
std::vector<OpInfo> stablehloStructuredOpInfos();
std::vector<OpInfo> stablehloKeyedOpInfos();

} // namespace shardlab
