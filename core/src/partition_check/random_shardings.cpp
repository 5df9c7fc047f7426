// Random meshes and shardings (random_shardings.h).
#include "partition_check/random_shardings.h"

#include "rules/stablehlo_attrs.h"

#include <algorithm>

namespace shardlab::partition_check::detail {

uint64_t Random::next() { // splitmix64
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

Mesh randomMesh(Random &random, int64_t max_devices) {
  static constexpr int64_t kShapes[][3] = {{2, 0, 0}, {4, 0, 0}, {3, 0, 0},
                                           {2, 2, 0}, {2, 3, 0}, {4, 2, 0},
                                           {2, 4, 0}, {2, 2, 2}, {8, 0, 0}};
  static constexpr const char *kNames[] = {"a", "b", "c"};
  for (int attempt = 0; attempt < 16; ++attempt) {
    const int64_t *shape = kShapes[random.below(std::size(kShapes))];
    Mesh mesh;
    for (int a = 0; a < 3 && shape[a] > 0; ++a)
      mesh.axes.push_back({AxisName(kNames[a]), shape[a]});
    if (mesh.totalSize() <= max_devices)
      return mesh;
  }
  Mesh two;
  two.axes.push_back({AxisName("a"), 2});
  return two;
}

namespace {

// A sub-axis of a full axis of size 4 or 8 (its lower or upper 2), else
// the full axis.
AxisRef maybeSubAxis(Random &random, const MeshAxis &axis) {
  AxisRef ref{axis.name, std::nullopt};
  if (axis.size >= 4 && axis.size % 2 == 0) {
    const int64_t pre = random.below(2) ? 1 : axis.size / 2;
    ref.sub = SubAxisInfo{pre, 2};
  }
  return ref;
}

} // namespace

TensorSharding randomSharding(Random &random, const Mesh &mesh,
                              const std::string &mesh_name,
                              const std::vector<int64_t> &shape) {
  TensorSharding sharding;
  sharding.mesh.symbol = mesh_name;
  std::vector<size_t> unused(mesh.axes.size());
  for (size_t a = 0; a < unused.size(); ++a)
    unused[a] = a;
  auto takeAxis = [&]() -> const MeshAxis & {
    const size_t pick = size_t(random.below(int64_t(unused.size())));
    const size_t axis = unused[pick];
    unused.erase(unused.begin() + std::ptrdiff_t(pick));
    return mesh.axes[axis];
  };
  for (size_t d = 0; d < shape.size(); ++d) {
    DimSharding dim;
    const int64_t choice = random.below(8);
    if (choice == 2) {
      dim.closed = false; // open: propagation decides
    } else if (choice >= 3 && !unused.empty()) {
      const MeshAxis &axis = takeAxis();
      dim.axes.push_back(choice == 5 ? maybeSubAxis(random, axis)
                                     : AxisRef{axis.name, std::nullopt});
      if (choice == 7 && !unused.empty())
        dim.axes.push_back(AxisRef{takeAxis().name, std::nullopt});
    }
    sharding.dims.push_back(std::move(dim));
  }
  return sharding;
}

bool isCheck(const Operation &op) {
  if (op.name.substr(0, 6) == "check.")
    return true;
  if (!op.is("stablehlo.custom_call"))
    return false;
  return rules::stringAttr(op, "call_target_name").substr(0, 6) == "check.";
}

std::vector<Value *> shardableInputs(Operation &entry) {
  std::vector<Value *> inputs;
  Block &body = entry.region(0).front();
  for (size_t i = 0; i < body.numArguments(); ++i)
    if (body.argument(i)->type && body.argument(i)->type->rank() > 0)
      inputs.push_back(body.argument(i));
  if (body.numArguments() > 0)
    return inputs;
  for (Operation &op : body) {
    const bool input =
        op.is("stablehlo.constant") ||
        ((op.is("func.call") || op.is("call")) && op.numOperands() == 0);
    if (!input || op.numResults() != 1)
      continue;
    Value *value = op.result(0);
    if (!value->type || !value->type->isRankedTensor() ||
        value->type->rank() == 0)
      continue;
    bool computes = false;
    for (OpOperand *use = value->firstUse(); use; use = use->next_use)
      computes = computes || !isCheck(*use->owner);
    if (computes)
      inputs.push_back(value);
  }
  return inputs;
}

} // namespace shardlab::partition_check::detail
