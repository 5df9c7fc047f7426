// Device positions, groups, offsets and permutations
// (sharding/device_layout.h).
#include "sharding/device_layout.h"
#include "shardlab/sharding/axis.h"

#include <doctest/doctest.h>

using namespace shardlab;

namespace {

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

AxisRef full(const char *name) { return fullAxis(name); }
AxisRef sub(const char *name, int64_t pre, int64_t size) {
  return subAxis(name, pre, size);
}
TensorSharding sharded(std::vector<std::vector<AxisRef>> dims) {
  TensorSharding s;
  s.mesh.symbol = "m";
  for (auto &axes : dims)
    s.dims.push_back({std::move(axes), true, std::nullopt});
  return s;
}

} // namespace

TEST_CASE("Device order: dimension axes first, then what is left in mesh "
          "order, split around used sub-axes") {
  Mesh mesh{{{"x", 2}, {"y", 4}}, {}};
  CHECK(deviceOrder(mesh, sharded({{}, {full("y")}})) ==
        std::vector<AxisRef>{full("y"), full("x")});
  CHECK(deviceOrder(mesh, sharded({{sub("y", 2, 2)}, {}})) ==
        std::vector<AxisRef>{sub("y", 2, 2), full("x"), sub("y", 1, 2)});
}

TEST_CASE("Shard offsets by device id follow the mesh's device order") {
  Mesh mesh{{{"x", 2}, {"y", 4}}, {}};
  CHECK(shardIndexByDevice(mesh, {full("x")}) ==
        std::vector<int64_t>{0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(shardIndexByDevice(mesh, {full("y"), full("x")}) ==
        std::vector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7});
  Mesh reversed{{{"x", 4}}, {3, 2, 1, 0}};
  CHECK(shardIndexByDevice(reversed, {full("x")}) ==
        std::vector<int64_t>{3, 2, 1, 0});
}

TEST_CASE("Permutation pairs keep positions: every device has one target") {
  Mesh mesh{{{"x", 2}, {"y", 4}}, {}};
  // [{"x"}, {"y":(2)2}] -> [{"y":(2)2}, {"x"}]: the free "y":(1)2 stays.
  CHECK(permutationPairs(mesh, sharded({{full("x")}, {sub("y", 2, 2)}}), mesh,
                         sharded({{sub("y", 2, 2)}, {full("x")}})) ==
        Pairs{{0, 0}, {1, 4}, {2, 2}, {3, 6}, {4, 1}, {5, 5}, {6, 3}, {7, 7}});
  // The same sharding on a mesh whose device ids are rotated.
  Mesh iota{{{"x", 4}}, {}};
  Mesh rotated{{{"x", 4}}, {1, 2, 3, 0}};
  CHECK(permutationPairs(iota, sharded({{full("x")}}), rotated,
                         sharded({{full("x")}})) ==
        Pairs{{0, 1}, {1, 2}, {2, 3}, {3, 0}});
}

TEST_CASE("Moving a device along axes keeps the other coordinates") {
  Mesh mesh{{{"a", 4}, {"b", 2}}, {}};
  // Device 5 is (a=2, b=1); shard 0 along "a" is held by (0, 1).
  const std::vector<int64_t> at5 = meshCoordinates(mesh, 5);
  CHECK(meshPosition(mesh, coordinatesWithIndex(mesh, {full("a")}, at5, 0)) ==
        1);
  // Along "a":(2)2 (the minor half of a) device 5 has index 0; index 1 is
  // a = 3, so position 7.
  CHECK(indexAlongAxes(mesh, {sub("a", 2, 2)}, at5) == 0);
  CHECK(meshPosition(
            mesh, coordinatesWithIndex(mesh, {sub("a", 2, 2)}, at5, 1)) == 7);
  // Along ["a", "b"] the index is the position itself.
  for (int64_t p = 0; p < 8; ++p)
    CHECK(meshPosition(mesh, coordinatesWithIndex(mesh, {full("a"), full("b")},
                                                  at5, p)) == p);
}

TEST_CASE("pairsAlongAxis: a ring, a line, and device ids") {
  using Rows = std::vector<std::vector<int64_t>>;
  Mesh mesh{{{"a", 2}, {"b", 3}}, {}};
  CHECK(pairsAlongAxis(mesh, 1, 1, /*wrap=*/true) ==
        Rows{{0, 1}, {1, 2}, {2, 0}, {3, 4}, {4, 5}, {5, 3}});
  CHECK(pairsAlongAxis(mesh, 1, -1, /*wrap=*/false) ==
        Rows{{1, 0}, {2, 1}, {4, 3}, {5, 4}});
  CHECK(pairsAlongAxis(mesh, 0, 1, /*wrap=*/false) ==
        Rows{{0, 3}, {1, 4}, {2, 5}});
  // Explicit device ids: the pairs name devices, not positions.
  Mesh shuffled{{{"a", 2}}, {1, 0}};
  CHECK(pairsAlongAxis(shuffled, 0, 1, /*wrap=*/true) == Rows{{1, 0}, {0, 1}});
}
