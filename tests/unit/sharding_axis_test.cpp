// Truth tables for the axis algebra (axis.h), taken from the examples that
// document Shardy's AxisRefAttr methods, plus mesh helpers and local shapes.
#include <doctest/doctest.h>

#include "sharding/sharding_utils.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/mesh.h"
#include "shardlab/sharding/shape.h"

using namespace shardlab;

namespace {

AxisRef A(const char *name) { return fullAxis(name); }
AxisRef S(const char *name, int64_t pre, int64_t size) {
  return subAxis(name, pre, size);
}
Mesh mesh8() { return Mesh{{{"a", 8}, {"b", 4}}, {}}; }

} // namespace

TEST_CASE("mesh members") {
  Mesh mesh{{{"x", 2}, {"y", 4}}, {}};
  CHECK(mesh.totalSize() == 8);
  CHECK(mesh.axisSize("y") == 4);
  CHECK_FALSE(mesh.axisSize("z").has_value());
  CHECK(mesh.axisIndex("x") == 0);
  CHECK(mesh.axisIndex("y") == 1);
  CHECK(mesh.axisIndex("z") == -1);
  CHECK(Mesh{}.totalSize() == 1);
  CHECK(Mesh{{}, {3}}.isMaximal());
}

TEST_CASE("makeMesh drops iota device ids only") {
  CHECK(makeMesh({{"a", 2}, {"b", 2}}, {0, 1, 2, 3}).device_ids.empty());
  CHECK(makeMesh({{"a", 2}}, {1, 0}).device_ids.size() == 2);
  CHECK(makeMesh({{"a", 2}}, {0}).device_ids.size() == 1);
  CHECK(makeMesh({}, {0}).isMaximal());
}

TEST_CASE("commonMesh ignores empty meshes and rejects different ones") {
  Mesh xy{{{"x", 2}, {"y", 2}}, {}};
  Mesh ab{{{"a", 2}, {"b", 2}}, {}};
  Mesh empty;
  CHECK(commonMesh({&empty, &xy, nullptr, &xy}) == &xy);
  CHECK(commonMesh({&xy, &ab}) == nullptr);
  CHECK(commonMesh({}) == nullptr);
}

TEST_CASE("contains and strictlyContains") {
  CHECK(contains(A("a"), S("a", 2, 2)));
  CHECK(contains(S("a", 1, 8), S("a", 1, 4)));
  CHECK(contains(S("a", 2, 16), S("a", 4, 2)));
  CHECK(contains(A("a"), A("a")));
  CHECK(contains(S("a", 2, 2), S("a", 2, 2)));
  CHECK_FALSE(contains(S("a", 1, 4), S("a", 2, 4)));
  CHECK_FALSE(contains(S("a", 2, 4), S("a", 1, 2)));
  CHECK_FALSE(contains(A("a"), S("b", 1, 2)));
  CHECK(strictlyContains(A("a"), S("a", 2, 2)));
  CHECK(strictlyContains(S("a", 2, 16), S("a", 4, 2)));
  CHECK_FALSE(strictlyContains(A("a"), A("a")));
  CHECK_FALSE(strictlyContains(S("a", 2, 2), S("a", 2, 2)));
}

TEST_CASE("prefixOf and strictPrefixOf") {
  CHECK(prefixOf(S("a", 1, 2), A("a")));
  CHECK(prefixOf(S("a", 2, 2), S("a", 2, 4)));
  CHECK(prefixOf(A("a"), A("a")));
  CHECK(prefixOf(S("a", 2, 4), S("a", 2, 4)));
  CHECK_FALSE(prefixOf(S("a", 1, 4), S("a", 1, 2)));
  CHECK_FALSE(prefixOf(S("a", 1, 4), S("a", 2, 8)));
  CHECK_FALSE(prefixOf(S("a", 1, 2), A("b")));
  CHECK(strictPrefixOf(S("a", 1, 2), A("a")));
  CHECK_FALSE(strictPrefixOf(A("a"), A("a")));
  CHECK_FALSE(strictPrefixOf(S("a", 2, 4), S("a", 2, 4)));
}

TEST_CASE("suffixOf and strictSuffixOf need the full axis size") {
  Mesh mesh = mesh8();
  CHECK(suffixOf(A("a"), A("a"), mesh));
  CHECK(suffixOf(S("a", 2, 4), A("a"), mesh));
  CHECK(suffixOf(S("a", 2, 4), S("a", 1, 8), mesh));
  CHECK_FALSE(suffixOf(A("a"), A("b"), mesh));
  CHECK_FALSE(suffixOf(A("a"), S("a", 2, 4), mesh));
  CHECK_FALSE(suffixOf(S("a", 1, 8), S("a", 2, 4), mesh));
  CHECK_FALSE(suffixOf(S("a", 1, 2), S("a", 2, 4), mesh));
  CHECK_FALSE(suffixOf(S("a", 1, 4), A("a"), mesh));
  CHECK(strictSuffixOf(S("a", 2, 4), A("a"), mesh));
  CHECK_FALSE(strictSuffixOf(A("a"), A("a"), mesh));
  Mesh mesh16{{{"a", 16}}, {}};
  CHECK_FALSE(suffixOf(S("a", 2, 4), A("a"), mesh16));
}

TEST_CASE("overlaps") {
  CHECK(overlaps(A("a"), S("a", 2, 2)));
  CHECK(overlaps(S("a", 2, 2), S("a", 2, 2)));
  CHECK(overlaps(S("a", 1, 4), S("a", 2, 4)));
  CHECK(overlaps(S("a", 2, 4), S("a", 1, 4)));
  CHECK(overlaps(S("a", 1, 4), S("a", 1, 2)));
  CHECK(overlaps(S("a", 2, 8), S("a", 4, 2)));
  CHECK_FALSE(overlaps(S("a", 1, 4), S("a", 4, 2)));
  CHECK_FALSE(overlaps(S("a", 1, 2), S("a", 4, 2)));
  CHECK_FALSE(overlaps(S("a", 1, 4), S("b", 2, 4)));
}

TEST_CASE("canCoexist") {
  CHECK(canCoexist(A("a"), A("b")));
  CHECK(canCoexist(A("a"), S("b", 2, 2)));
  CHECK(canCoexist(A("a"), A("a")));
  CHECK(canCoexist(A("a"), S("a", 2, 2)));
  CHECK(canCoexist(S("a", 1, 2), S("a", 4, 2)));
  CHECK(canCoexist(S("a", 1, 4), S("a", 2, 4)));
  CHECK_FALSE(canCoexist(S("a", 1, 2), S("a", 1, 3)));
  CHECK_FALSE(canCoexist(S("a", 1, 2), S("a", 3, 2)));
  CHECK_FALSE(canCoexist(S("a", 1, 3), S("a", 2, 3)));
}

TEST_CASE("getOverlap") {
  CHECK(getOverlap(A("a"), S("a", 2, 2)) == S("a", 2, 2));
  CHECK(getOverlap(S("a", 2, 2), S("a", 2, 2)) == S("a", 2, 2));
  CHECK(getOverlap(S("a", 1, 4), S("a", 2, 4)) == S("a", 2, 2));
  CHECK(getOverlap(S("a", 2, 4), S("a", 1, 4)) == S("a", 2, 2));
  CHECK(getOverlap(S("a", 1, 4), S("a", 1, 2)) == S("a", 1, 2));
  CHECK(getOverlap(S("a", 2, 8), S("a", 4, 2)) == S("a", 4, 2));
  CHECK_FALSE(getOverlap(S("a", 1, 4), S("a", 4, 2)));
  CHECK_FALSE(getOverlap(S("a", 1, 2), S("a", 4, 2)));
  CHECK_FALSE(getOverlap(S("a", 1, 4), S("b", 2, 4)));
  CHECK_FALSE(getOverlap(S("a", 1, 2), S("a", 1, 3)));
  CHECK_FALSE(getOverlap(S("a", 3, 2), S("a", 2, 3)));
}

TEST_CASE("getPrefixWithoutOverlap") {
  CHECK(getPrefixWithoutOverlap(A("a"), S("a", 2, 2)) == S("a", 1, 2));
  CHECK(getPrefixWithoutOverlap(S("a", 1, 4), S("a", 2, 4)) == S("a", 1, 2));
  CHECK(getPrefixWithoutOverlap(S("a", 2, 8), S("a", 4, 2)) == S("a", 2, 2));
  CHECK(getPrefixWithoutOverlap(S("a", 1, 4), S("a", 4, 2)) == S("a", 1, 4));
  CHECK(getPrefixWithoutOverlap(S("a", 1, 2), S("a", 4, 2)) == S("a", 1, 2));
  CHECK(getPrefixWithoutOverlap(S("a", 1, 4), S("b", 2, 4)) == S("a", 1, 4));
  CHECK_FALSE(getPrefixWithoutOverlap(S("a", 2, 2), S("a", 2, 2)));
  CHECK_FALSE(getPrefixWithoutOverlap(S("a", 2, 4), S("a", 1, 4)));
  CHECK_FALSE(getPrefixWithoutOverlap(S("a", 1, 4), S("a", 1, 2)));
  CHECK_FALSE(getPrefixWithoutOverlap(S("a", 1, 2), S("a", 3, 2)));
  CHECK_FALSE(getPrefixWithoutOverlap(S("a", 1, 3), S("a", 2, 3)));
}

TEST_CASE("getSuffixWithoutOverlap") {
  Mesh mesh = mesh8();
  CHECK(getSuffixWithoutOverlap(A("a"), S("a", 2, 2), mesh) == S("a", 4, 2));
  CHECK(getSuffixWithoutOverlap(S("a", 1, 4), S("a", 1, 2), mesh) ==
        S("a", 2, 2));
  CHECK(getSuffixWithoutOverlap(S("a", 2, 8), S("a", 4, 2), mesh) ==
        S("a", 8, 2));
  CHECK(getSuffixWithoutOverlap(S("a", 1, 4), S("a", 4, 2), mesh) ==
        S("a", 1, 4));
  CHECK(getSuffixWithoutOverlap(S("a", 1, 2), S("a", 4, 2), mesh) ==
        S("a", 1, 2));
  CHECK(getSuffixWithoutOverlap(S("a", 1, 4), S("b", 2, 4), mesh) ==
        S("a", 1, 4));
  CHECK_FALSE(getSuffixWithoutOverlap(S("a", 2, 2), S("a", 2, 2), mesh));
  CHECK_FALSE(getSuffixWithoutOverlap(S("a", 1, 4), S("a", 2, 4), mesh));
  CHECK_FALSE(getSuffixWithoutOverlap(S("a", 2, 2), S("a", 1, 4), mesh));
  CHECK_FALSE(getSuffixWithoutOverlap(S("a", 2, 3), S("a", 1, 3), mesh));
  CHECK_FALSE(getSuffixWithoutOverlap(S("a", 3, 2), S("a", 1, 2), mesh));
}

TEST_CASE("getGreatestCommonPrefix") {
  CHECK(getGreatestCommonPrefix(A("a"), A("a")) == A("a"));
  CHECK(getGreatestCommonPrefix(S("a", 1, 4), A("a")) == S("a", 1, 4));
  CHECK(getGreatestCommonPrefix(A("a"), S("a", 1, 4)) == S("a", 1, 4));
  CHECK(getGreatestCommonPrefix(S("a", 1, 2), S("a", 1, 4)) == S("a", 1, 2));
  CHECK(getGreatestCommonPrefix(S("a", 2, 8), S("a", 2, 4)) == S("a", 2, 4));
  CHECK_FALSE(getGreatestCommonPrefix(A("a"), A("b")));
  CHECK_FALSE(getGreatestCommonPrefix(S("a", 1, 2), S("a", 2, 4)));
}

TEST_CASE("canMerge and merge") {
  Mesh mesh{{{"a", 32}, {"b", 8}, {"c", 8}, {"d", 8}}, {}};
  CHECK(canMerge(S("a", 2, 4), S("a", 8, 2)));
  CHECK(canMerge(S("b", 1, 2), S("b", 2, 4)));
  CHECK_FALSE(canMerge(S("c", 1, 2), S("c", 4, 2)));
  CHECK_FALSE(canMerge(S("d", 2, 4), S("d", 1, 2)));
  CHECK_FALSE(canMerge(A("a"), S("a", 2, 2)));
  CHECK(merge(S("a", 2, 4), S("a", 8, 2), mesh) == S("a", 2, 8));
  CHECK(merge(S("b", 1, 2), S("b", 2, 4), mesh) == A("b"));
  CHECK(merge(S("c", 1, 2), S("c", 4, 2), mesh) == S("c", 1, 2));
}

TEST_CASE("name order and mesh order") {
  // "a":(1)k < "a" < "a":(m)k for m > 1; sub-axes by pre-size then size.
  CHECK(axisRefLess(S("a", 1, 2), A("a")));
  CHECK(axisRefLess(A("a"), S("a", 2, 2)));
  CHECK_FALSE(axisRefLess(A("a"), S("a", 1, 2)));
  CHECK(axisRefLess(S("a", 2, 2), S("a", 4, 2)));
  CHECK(axisRefLess(S("a", 4, 2), S("a", 4, 4)));
  CHECK(axisRefLess(A("a"), A("b")));
  Mesh mesh{{{"c", 2}, {"a", 2}, {"b", 2}}, {}};
  CHECK(meshAxisLess(mesh, A("c"), A("a")));
  CHECK_FALSE(meshAxisLess(mesh, A("a"), A("c")));
  CHECK(meshAxisLess(mesh, S("c", 1, 2), A("a")));
  CHECK(meshAxisLess(mesh, A("b"), A("zz")));
  std::vector<AxisRef> axes{A("b"), A("a"), A("c")};
  sortAxes(axes, mesh);
  CHECK(axes == std::vector<AxisRef>{A("c"), A("a"), A("b")});
}

TEST_CASE("sortAndMergeAxes gives the canonical list") {
  Mesh mesh{{{"a", 8}, {"b", 8}, {"c", 8}, {"d", 8}}, {}};
  std::vector<AxisRef> axes{S("d", 4, 2), S("b", 2, 2), A("c"),
                            S("a", 4, 2), S("b", 4, 2), S("d", 2, 2),
                            S("b", 1, 2), S("a", 1, 2)};
  sortAndMergeAxes(axes, mesh);
  CHECK(axes == std::vector<AxisRef>{S("a", 1, 2), S("a", 4, 2), A("b"), A("c"),
                                     S("d", 2, 4)});
}

TEST_CASE("getAxisSetDiff") {
  Mesh mesh{{{"a", 8}, {"b", 4}, {"c", 2}, {"d", 4}}, {}};
  using V = std::vector<AxisRef>;
  CHECK(getAxisSetDiff({}, {A("c"), A("d")}, mesh).empty());
  CHECK(getAxisSetDiff({A("b"), A("a")}, {}, mesh) == V{A("b"), A("a")});
  CHECK(getAxisSetDiff({A("a"), S("b", 1, 2)}, {S("b", 1, 2), A("a")}, mesh)
            .empty());
  CHECK(getAxisSetDiff({A("b"), A("a")}, {A("b"), A("d")}, mesh) == V{A("a")});
  CHECK(getAxisSetDiff({A("b"), S("a", 1, 4)}, {A("a"), S("b", 2, 2)}, mesh) ==
        V{S("b", 1, 2)});
  CHECK(getAxisSetDiff({S("a", 2, 4)}, {S("a", 1, 4)}, mesh) ==
        V{S("a", 4, 2)});
  CHECK(getAxisSetDiff({S("b", 1, 2), A("a")}, {S("a", 2, 2), S("b", 2, 2)},
                       mesh) == V{S("b", 1, 2), S("a", 1, 2), S("a", 4, 2)});
  CHECK(getAxisSetDiff({A("a")}, {S("a", 1, 2), S("a", 4, 2)}, mesh) ==
        V{S("a", 2, 2)});
}

TEST_CASE("sizes of axis refs") {
  Mesh mesh = mesh8();
  CHECK(axisRefSize(A("a"), mesh) == 8);
  CHECK(axisRefSize(S("a", 2, 4), mesh) == 4);
  CHECK(nextPreSizeOrFullSize(S("a", 2, 2), mesh) == 4);
  CHECK(nextPreSizeOrFullSize(A("b"), mesh) == 4);
  CHECK(axesTotalSize({A("a"), S("b", 1, 2)}, mesh) == 16);
}

TEST_CASE("localShape divides rounding up and keeps dynamic dims") {
  // @mesh_xyz = <["x"=2, "y"=8, "z"=2]>, [{"x"}, {"y":(2)2}] : 4x8 -> 2x4.
  Mesh mesh{{{"x", 2}, {"y", 8}, {"z", 2}}, {}};
  TensorSharding sharding;
  sharding.dims = {DimSharding{{A("x")}, true, {}},
                   DimSharding{{S("y", 2, 2)}, true, {}}};
  CHECK(localShape({4, 8}, sharding, mesh) == std::vector<int64_t>{2, 4});
  CHECK(localShape({5, kDynamic}, sharding, mesh) ==
        std::vector<int64_t>{3, kDynamic});
  CHECK(isDivisible({4, 8}, sharding, mesh));
  CHECK_FALSE(isDivisible({5, 8}, sharding, mesh));
  CHECK(localShape({4}, sharding, mesh) == std::vector<int64_t>{4});
}

TEST_CASE("canonicalizeReplicatedAndUnreduced sorts in mesh order") {
  Mesh mesh{{{"c", 2}, {"a", 2}, {"b", 4}}, {}};
  TensorSharding sharding;
  sharding.replicated = {A("a"), A("c")};
  sharding.unreduced = {S("b", 2, 2), S("b", 1, 2)};
  canonicalizeReplicatedAndUnreduced(sharding, mesh);
  CHECK(sharding.replicated == std::vector<AxisRef>{A("c"), A("a")});
  CHECK(sharding.unreduced == std::vector<AxisRef>{A("b")});
}

TEST_CASE("isEquivalent ignores open/closed and optionally unreduced") {
  MeshRef ref{"mesh", {}};
  TensorSharding a = fullyClosedSharding(ref, 2);
  TensorSharding b = fullyOpenSharding(ref, 2);
  CHECK(isEquivalent(a, b));
  a.dims[0].axes = {A("x")};
  CHECK_FALSE(isEquivalent(a, b));
  b.dims[0].axes = {A("x")};
  CHECK(isEquivalent(a, b));
  b.unreduced = {A("y")};
  CHECK_FALSE(isEquivalent(a, b));
  CHECK(isEquivalent(a, b, /*ignore_unreduced=*/true));
  CHECK(isFullyReplicated(fullyOpenSharding(ref, 3)));
}
