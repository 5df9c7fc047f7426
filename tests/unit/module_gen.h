// A small generator of random StableHLO + sdy modules for property tests:
// a random mesh (1-3 axes), a chain of elementwise, dot_general, reshape,
// transpose, reduce and broadcast_in_dim ops (with the occasional sharding
// constraint), and random valid shardings (open or closed dims, sub-axes,
// replicated axes, user priorities) on arguments, results and some op
// results.
//
// A module is generated once as a ModuleSpec (deterministic from a seed)
// and rendered to text with a Naming, so the same module can be printed
// with other axis, mesh and value names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardlab::testgen {

/// An axis of the mesh, or a sub-axis `(pre)size` of it.
struct GenAxis {
  int axis = 0;
  int64_t pre = 0; ///< 0: the full axis
  int64_t size = 0;
};

struct GenDim {
  std::vector<GenAxis> axes;
  bool closed = false;
  int64_t priority = -1; ///< -1: none
};

struct GenSharding {
  std::vector<GenDim> dims;
  std::vector<GenAxis> replicated;
};

struct GenValue {
  std::vector<int64_t> shape;
};

/// One op: `text` is a format with `$0`, `$1` for operands, `$R` for the
/// result name, `$T0`.. for operand types and `$TR` for the result type.
struct GenOp {
  std::string format;
  std::vector<int> operands; ///< value ids
  int result = -1;           ///< value id
  std::optional<GenSharding> sharding;
  /// A sharding constraint: `format` is ignored, `constraint` is used.
  std::optional<GenSharding> constraint;
};

struct ModuleSpec {
  std::vector<int64_t> axis_sizes;
  std::vector<GenValue> values; ///< by id: args first, then op results
  std::vector<int> args;
  std::vector<std::optional<GenSharding>> arg_shardings;
  std::vector<GenOp> ops;
  std::vector<int> results;
  std::vector<std::optional<GenSharding>> result_shardings;
};

struct GenOptions {
  int min_ops = 3;
  int max_ops = 14;
};

/// How a spec is printed.
struct Naming {
  std::vector<std::string> axis_names; ///< one per mesh axis
  std::string mesh_name = "mesh";
  /// Value names: canonical (%0, %1, %arg0) or `%<prefix><id>` when set.
  std::string value_prefix;
};

ModuleSpec generateModule(uint64_t seed, const GenOptions &options = {});
/// Default names: "x", "y", "z".
Naming defaultNaming(const ModuleSpec &spec);
std::string renderModule(const ModuleSpec &spec, const Naming &naming);

} // namespace shardlab::testgen
