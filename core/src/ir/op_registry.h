// The registry of known ops: for each op name, its custom ("pretty") syntax,
// the names of its inherent attributes (printed as `<{...}>` properties in
// the generic form), and the SSA names MLIR's printer gives its results and
// block arguments.
#pragma once

#include "shardlab/ir/ir.h"

#include <span>
#include <string_view>
#include <vector>

namespace shardlab {

class Parser;
class Printer;

/// An enum Shardy keeps as an i32 property that the passes and the custom
/// form read by name: the generic form prints and reads its number, as
/// sdy_opt does (`allowed_direction = 2 : i32` is BACKWARD).
struct EnumProperty {
  std::string_view attr;     ///< the attribute passes read: a name
  std::string_view property; ///< its name in the generic form
  std::span<const std::string_view> names; ///< by number
  /// The number an absent attribute stands for, which the generic form
  /// prints as Shardy prints its default (`reduction_op = 0 : i32`, a sum);
  /// -1: printed only when set.
  int absent = -1;
};

struct OpInfo {
  std::string_view name;
  /// Parses the custom form after the op name; null: generic form only.
  bool (*parse)(Parser &parser, Operation &op, size_t num_results) = nullptr;
  /// Prints the custom form after the op name; null: generic form.
  void (*print)(Printer &printer, Operation &op) = nullptr;
  /// Inherent attributes (properties in MLIR's generic form).
  std::vector<std::string_view> inherent;
  /// Name prefix MLIR's printer gives results (`c`, `cst`, `c3_i32`), or
  /// null. A name made up for the op is written into `scratch`.
  std::string_view (*result_name)(Operation &op,
                                  std::string &scratch) = nullptr;
  /// Name MLIR's printer gives entry block arguments of regions.
  std::string_view block_arg_name;
  /// The default dialect for op names inside this op's regions.
  std::string_view region_dialect;
  bool isolated_from_above = false;
  /// Whether the custom form can print this op (attributes as the custom
  /// parser stores them); otherwise it prints generically. Null: always.
  bool (*can_print)(Operation &op) = nullptr;
  /// One name per result (MLIR result groups, e.g. rng_bit_generator's
  /// `%output_state, %output`); null: results print as `%N:k`.
  std::vector<std::string_view> (*result_names)(Operation &op) = nullptr;
  /// The op is in elementwiseOps() (set by the registry, so isElementwise
  /// reads a flag instead of searching the list by name for every op).
  bool elementwise_name = false;
  /// An inherent attribute kept by name and printed generically as a number.
  const EnumProperty *enum_property = nullptr;
};

/// Looks up a known op; nullptr for ops the project does not model.
const OpInfo *lookupOp(std::string_view name);

} // namespace shardlab
