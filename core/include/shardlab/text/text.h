// Reading and writing the MLIR textual form: parseModule builds a Module
// from text (generic op form and the custom forms of func, stablehlo and
// sdy ops); printModule prints it back as mlir-opt does.
#pragma once

#include "shardlab/ir/diagnostics.h"
#include "shardlab/ir/ir.h"
#include "shardlab/support/result.h"

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace shardlab {

struct ParseOptions {
  /// Added to every line number (for chunks of a split input file).
  uint32_t line_offset = 0;
  /// Added to the column numbers of the text's first line: a chunk of a
  /// split input file can start after a marker, mid-line.
  uint32_t column_offset = 0;
  /// Deepest nesting of regions and brackets accepted before a diagnostic.
  uint32_t max_nesting = 256;
};

/// Parses a whole module. Returns null (with diagnostics) on a syntax error.
std::unique_ptr<Module> parseModule(std::string_view text,
                                    DiagnosticEngine &diags,
                                    const ParseOptions &options = {},
                                    std::shared_ptr<Context> context = {});

/// Parses one attribute written as text (`#sdy.sharding_per_value<[...]>`,
/// as XLA stores Shardy attributes in frontend-attribute strings) into
/// `context` (which owns it: keep the context alive while using it). An
/// error (with the column) when the text is not exactly one attribute.
Result<const Attr *> parseAttributeText(std::string_view text,
                                        std::shared_ptr<Context> context);

struct PrintOptions {
  bool generic = false; ///< print every op in the generic form
  /// Print each op's and block argument's location (`loc(...)`), as
  /// -mlir-print-debuginfo: the one the text gave, else its position in
  /// `file` (MLIR's own default), else `loc(unknown)`.
  bool debuginfo = false;
  std::string file = "-";
};

std::string printModule(Module &module, const PrintOptions &options = {});

/// One attribute as text, as it prints inside a module
/// (`#sdy.sharding_per_value<[<@mesh, [{"a"}]>]>`).
std::string printAttribute(const Attr *attr);

/// The SSA names printModule gives the values of `module` (`%0`, `%arg1`,
/// `%0#1`, `%iterArg_2`; unique within a func).
std::unordered_map<const Value *, std::string>
printedValueNames(Module &module, const PrintOptions &options = {});

/// The name argument `index` of `func` was written with in `text`, the
/// text `module` was parsed from (`%x` in `func.func @main(%x: ...)`), or
/// `%argN` when the parser did not record where it was.
std::string writtenArgumentName(const Module &module, const Operation &func,
                                std::string_view text, size_t index);

} // namespace shardlab
