// Axis algebra on AxisRef values: sizes, the two orderings Shardy uses (by
// name, and by mesh declaration order), containment / prefix / suffix /
// overlap tests between an axis and a sub-axis, splitting and merging
// sub-axes, and the list operations built on them (sort-and-merge, set
// difference). Semantics follow Shardy's AxisRefAttr (attrs.td); the examples
// in the comments below are its documented truth tables. Functions that need
// the size of a full axis take the Mesh; an axis name the mesh lacks counts as
// size 1 (verification reports unknown axes before these are used).
#pragma once

#include "shardlab/sharding/sharding.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace shardlab {

/// A full axis reference `"name"`.
AxisRef fullAxis(const AxisName &name);
/// A sub-axis reference `"name":(pre_size)size`.
AxisRef subAxis(const AxisName &name, int64_t pre_size, int64_t size);

/// Size of the axis or sub-axis ("x" -> mesh size of x, "x":(2)4 -> 4).
int64_t axisRefSize(const AxisRef &axis, const Mesh &mesh);
/// Pre-size of a sub-axis, 1 for a full axis.
int64_t subAxisPreSize(const AxisRef &axis);
/// pre_size * size for a sub-axis, the full axis size for a full axis.
int64_t nextPreSizeOrFullSize(const AxisRef &axis, const Mesh &mesh);
/// Product of the sizes of `axes`.
int64_t axesTotalSize(const std::vector<AxisRef> &axes, const Mesh &mesh);

/// Name order (AxisRefAttr::operator<): names lexicographically; for one
/// name, "a":(1)k < "a" < "a":(m)k for m > 1, and sub-axes by (pre, size).
bool axisRefLess(const AxisRef &lhs, const AxisRef &rhs);
/// Mesh order (AxisRefAttr::getMeshComparator): names by their position in
/// the mesh, then axisRefLess for one name. Names the mesh lacks sort last,
/// by name, so the order stays strict and weak.
bool meshAxisLess(const Mesh &mesh, const AxisRef &lhs, const AxisRef &rhs);

/// Comparator object for std::sort / std::is_sorted in mesh order.
struct MeshAxisOrder {
  const Mesh *mesh;
  bool operator()(const AxisRef &lhs, const AxisRef &rhs) const {
    return meshAxisLess(*mesh, lhs, rhs);
  }
};

/// `a` contains `b`: equal, or `a` splits into sub-axes one of which is `b`.
///   "a" ⊇ "a":(2)2; "a":(1)8 ⊇ "a":(1)4; "a":(2)16 ⊇ "a":(4)2;
///   not "a":(1)4 ⊇ "a":(2)4; not "a":(2)4 ⊇ "a":(1)2; not "a" ⊇ "b":(1)2.
bool contains(const AxisRef &a, const AxisRef &b);
bool strictlyContains(const AxisRef &a, const AxisRef &b);
/// `a` is the major part of `b`: "a":(1)2 prefixOf "a"; "a":(2)2 prefixOf
/// "a":(2)4; not "a":(1)4 prefixOf "a":(1)2; not "a":(1)4 prefixOf "a":(2)8.
bool prefixOf(const AxisRef &a, const AxisRef &b);
bool strictPrefixOf(const AxisRef &a, const AxisRef &b);
/// `a` is the minor part of `b` (needs the mesh for full sizes):
///   "a":(2)4 suffixOf "a" (a=8); "a":(2)4 suffixOf "a":(1)8;
///   not "a" suffixOf "a":(2)4; not "a":(1)4 suffixOf "a".
bool suffixOf(const AxisRef &a, const AxisRef &b, const Mesh &mesh);
bool strictSuffixOf(const AxisRef &a, const AxisRef &b, const Mesh &mesh);
/// Same name and a common sub-axis: "a":(1)4 / "a":(2)4 overlap;
/// "a":(1)4 / "a":(4)2 do not.
bool overlaps(const AxisRef &a, const AxisRef &b);
/// Both can be valid sub-axes of one mesh at the same time:
/// "a":(1)2 / "a":(1)3 cannot; "a":(1)2 / "a":(4)2 can.
bool canCoexist(const AxisRef &a, const AxisRef &b);
/// The common part, or nullopt when none or when they cannot coexist:
/// "a":(1)4 ∩ "a":(2)4 = "a":(2)2.
std::optional<AxisRef> getOverlap(const AxisRef &a, const AxisRef &b);
/// `a` without its overlapping suffix with `b` ("a" - "a":(2)2 = "a":(1)2);
/// `a` itself when no overlap; nullopt when nothing is left or they cannot
/// coexist.
std::optional<AxisRef> getPrefixWithoutOverlap(const AxisRef &a,
                                               const AxisRef &b);
/// `a` without its overlapping prefix with `b` ("a" - "a":(2)2 = "a":(4)2
/// for a=8); `a` itself when no overlap; nullopt as above.
std::optional<AxisRef>
getSuffixWithoutOverlap(const AxisRef &a, const AxisRef &b, const Mesh &mesh);
/// The longer of `a`/`b` that is a prefix of the other, or nullopt.
std::optional<AxisRef> getGreatestCommonPrefix(const AxisRef &a,
                                               const AxisRef &b);
/// Consecutive sub-axes of one axis, `a` major: "a":(2)4, "a":(8)2.
bool canMerge(const AxisRef &a, const AxisRef &b);
/// Merge of two mergeable sub-axes; the full axis when it covers it all.
/// Returns `a` unchanged when !canMerge(a, b).
AxisRef merge(const AxisRef &a, const AxisRef &b, const Mesh &mesh);

/// Appends `axis` to `axes`, merging it into the last one when possible.
void addAxisOrMerge(std::vector<AxisRef> &axes, const AxisRef &axis,
                    const Mesh &mesh);
/// Sorts `axes` in mesh order and merges neighbours that can be merged (the
/// canonical form of replicated / unreduced lists). Assumes no overlaps.
void sortAndMergeAxes(std::vector<AxisRef> &axes, const Mesh &mesh);
/// Sorts `axes` in mesh order without merging.
void sortAxes(std::vector<AxisRef> &axes, const Mesh &mesh);
/// The parts of `a` (in order) not covered by any axis of `b`.
std::vector<AxisRef> getAxisSetDiff(const std::vector<AxisRef> &a,
                                    const std::vector<AxisRef> &b,
                                    const Mesh &mesh);

} // namespace shardlab
