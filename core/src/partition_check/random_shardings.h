// The random mesh and input shardings of a seeded partition check: small
// meshes of one to three axes (up to max_devices devices), and for each
// input a sharding whose dimensions are replicated, open, sharded by an
// axis, by a sub-axis, or by two axes, whether or not the axes divide them.
#pragma once

#include "shardlab/ir/ir.h"
#include "shardlab/sharding/sharding.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardlab::partition_check::detail {

/// A deterministic generator (the same numbers on every platform, which
/// the standard distributions do not promise).
class Random {
public:
  explicit Random(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next();
  /// Uniform in [0, n).
  int64_t below(int64_t n) { return int64_t(next() % uint64_t(n)); }

private:
  uint64_t state_;
};

/// A mesh of at most `max_devices` devices, axes "a", "b", "c".
Mesh randomMesh(Random &random, int64_t max_devices);

/// A sharding of a tensor of `shape` over `mesh` (named `mesh_name`).
TensorSharding randomSharding(Random &random, const Mesh &mesh,
                              const std::string &mesh_name,
                              const std::vector<int64_t> &shape);

/// The values a seeded check shards in `entry`: its arguments, or, with
/// none, the values of rank >= 1 it starts from (constants and calls
/// without operands, as JAX's `@inputs()`) that an op other than a check
/// uses.
std::vector<Value *> shardableInputs(Operation &entry);

/// Whether `op` is a check (`check.*` op or custom call).
bool isCheck(const Operation &op);

} // namespace shardlab::partition_check::detail
