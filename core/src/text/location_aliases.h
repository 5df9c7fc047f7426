// The `#loc` aliases MLIR's printer gives locations under
// -mlir-print-debuginfo (mlir/IR/AsmPrinter.cpp, AliasInitializer), so that
// shardlab-opt prints what sdy_opt prints:
//
//   #loc3 = loc("/tmp/g.py":1:1)               <- a block argument's: before
//   module {                                       the module
//     func.func @f(%arg0: tensor<8xf32> loc("y"(#loc3))) ... {
//       %0 = stablehlo.abs %arg0 : tensor<8xf32> loc(#loc4)
//       ...
//   } loc(#loc)
//   #loc = loc("m.mlir":0:0)                   <- an op's: after it
//   #loc4 = loc(callsite(#loc1 at #loc2))
//
// Rules (each checked against sdy_opt): every location printed gets one
// alias, and so does every location inside it (a name location's child
// unless it is unknown, a call site's callee and caller, a fused
// location's parts), visited in the order the module prints, an op's own
// location before its regions. Aliases are numbered by depth (a location
// holding none is 0, else one more than its deepest part), then by first
// visit: `#loc`, `#loc1`, ... An op's location is printed as its alias; a
// block argument's inline, its parts as aliases. Aliases reached from a
// block argument are defined before the module, the others after it.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace shardlab {

class TextSink;

class LocationAliases {
public:
  /// Records a printed location (the text inside `loc(...)`, parts spelled
  /// out): at an op's end (`deferred`) or at a block argument.
  void visit(std::string_view text, bool deferred);
  /// Names the aliases once every location has been visited.
  void assignNames();

  /// `#locN` of a visited location.
  void appendAlias(TextSink &out, std::string_view text) const;
  /// The location with each of its parts as an alias: `"y"(#loc3)`.
  void appendWithPartAliases(TextSink &out, std::string_view text) const;
  /// `#locN = loc(...)` lines of the aliases defined before the module
  /// (`deferred` false) or after it, in the order of their numbers.
  void appendDefinitions(TextSink &out, bool deferred) const;

private:
  struct Entry {
    std::string text;
    std::vector<size_t> parts; ///< entries of the locations inside
    int depth = 0;
    bool deferred = true;
    size_t number = 0; ///< after assignNames
  };
  size_t visitEntry(std::string_view text, bool deferred);
  void markNotDeferred(size_t entry);
  void appendNumber(TextSink &out, size_t entry) const;

  std::vector<Entry> entries_; ///< in the order first visited
  std::unordered_map<std::string, size_t> index_;
  std::vector<size_t> by_number_;
};

} // namespace shardlab
