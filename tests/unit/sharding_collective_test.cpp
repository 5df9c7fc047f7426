// Collective, unreduced-transition and manual-computation verifier messages
// (collective_verify.h, manual_verify.h), with inputs taken from Shardy's
// collective_verification, reshard_verification and
// manual_computation_verification tests.
#include <doctest/doctest.h>

#include "sharding/collective_verify.h"
#include "sharding/manual_verify.h"
#include "sharding/sharding_utils.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/mesh.h"
#include "shardlab/sharding/shape.h"

using namespace shardlab;

namespace {

using V = std::vector<AxisRef>;
using PerDim = std::vector<std::vector<AxisRef>>;

AxisRef A(const char *name) { return fullAxis(name); }
AxisRef S(const char *name, int64_t pre, int64_t size) {
  return subAxis(name, pre, size);
}
// A sharding on @mesh with closed dims given as axis lists.
TensorSharding T(std::vector<V> dims, V unreduced = {},
                 ReductionKind kind = ReductionKind::Sum) {
  TensorSharding s;
  s.mesh = MeshRef{"mesh", {}};
  for (V &axes : dims) {
    s.dims.push_back(DimSharding{std::move(axes), true, {}});
  }
  s.unreduced = std::move(unreduced);
  s.unreduced_kind = kind;
  return s;
}
Mesh M(std::vector<MeshAxis> axes) { return Mesh{std::move(axes), {}}; }
const Mesh kXY = M({{"x", 2}, {"y", 2}});

template <typename T> std::string msg(const std::optional<T> &error);
template <> std::string msg(const std::optional<std::string> &error) {
  return error.value_or("OK");
}
template <> std::string msg(const std::optional<CollectiveError> &error) {
  return error ? error->message : "OK";
}

} // namespace

TEST_CASE("verifyCollectiveCommon") {
  TensorSharding out = T({{A("y")}, {}});
  ValueShapeInfo type = ValueShapeInfo::ranked({16, 8});
  CHECK(msg(verifyCollectiveCommon(nullptr, nullptr, out, &kXY, type, {})) ==
        "collective on operand without sharding");
  CollectiveTraits missingOk;
  missingOk.allow_missing_input_sharding = true;
  CHECK(msg(verifyCollectiveCommon(nullptr, nullptr, out, &kXY, type,
                                   missingOk)) == "OK");
  TensorSharding in = T({{A("y")}, {A("x")}});
  CHECK(msg(verifyCollectiveCommon(&in, &kXY, T({{}, {A("x"), A("x")}}), &kXY,
                                   type, {})) == "duplicate axis ref: \"x\"");
  Mesh ab = M({{"a", 2}, {"b", 2}});
  auto diag =
      verifyCollectiveCommon(&in, &ab, T({{A("y")}, {A("x")}}), &kXY, type, {});
  REQUIRE(diag);
  CHECK(diag->message == "result mesh does not match operand mesh");
  CHECK(diag->note == "operand mesh: #sdy.mesh<[\"a\"=2, \"b\"=2]>");
  CollectiveTraits differentOk;
  differentOk.allow_different_meshes = true;
  CHECK(msg(verifyCollectiveCommon(&in, &ab, T({{A("y")}, {A("x")}}), &kXY,
                                   type, differentOk)) == "OK");
  TensorSharding rank1 = T({{A("y")}});
  CHECK(msg(verifyCollectiveCommon(&rank1, &kXY, out, &kXY, type, {})) ==
        "result sharding has rank 2 but operand sharding has rank 1");
}

TEST_CASE("verifyAllGather") {
  TensorSharding in = T({{A("y")}, {A("x")}});
  Mesh x4y2 = M({{"x", 4}, {"y", 2}});
  Mesh x8y2 = M({{"x", 8}, {"y", 2}});
  CHECK(msg(verifyAllGather(in, T({{A("y")}, {}}),
                            {{}, {S("x", 1, 2), S("x", 2, 2)}}, x4y2)) ==
        "two consecutive sub-axes can be merged: \"x\":(1)2, \"x\":(2)2");
  CHECK(msg(verifyAllGather(in, T({{}, {}}), {{A("y"), A("x")}, {A("x")}},
                            kXY)) == "duplicate axis ref: \"x\"");
  CHECK(msg(verifyAllGather(in, T({{A("y")}, {A("x")}}), {{}}, kXY)) ==
        "result sharding has rank 2 but collective axes has rank 1");
  CHECK(msg(verifyAllGather(in, T({{A("y")}, {}}), {{}, {A("x"), A("y")}},
                            kXY)) ==
        "can't apply gathering axis \"y\" to operand sharding on dimension 1");
  CHECK(msg(verifyAllGather(T({{A("y")}, {}}), T({{}, {}}),
                            {{A("x"), A("y")}, {}}, kXY)) ==
        "can't apply gathering axis \"x\" to operand sharding on dimension 0");
  CHECK(msg(verifyAllGather(T({{A("y")}, {S("x", 1, 2)}}), T({{A("y")}, {}}),
                            {{}, {A("x")}}, x4y2)) ==
        "can't apply gathering axis \"x\" to operand sharding on dimension 1");
  CHECK(
      msg(verifyAllGather(in, T({{A("y")}, {}}), {{}, {S("x", 2, 2)}}, x8y2)) ==
      "can't apply gathering axis \"x\":(2)2 to operand sharding on "
      "dimension 1");
  CHECK(
      msg(verifyAllGather(in, T({{A("y")}, {A("x")}}), {{}, {A("x")}}, kXY)) ==
      "result sharding doesn't match expected sharding [] on dimension 1");
  CHECK(msg(verifyAllGather(in, T({{A("y")}, {S("x", 1, 4)}}),
                            {{}, {S("x", 2, 4)}}, x8y2)) ==
        "result sharding doesn't match expected sharding [\"x\":(1)2] on "
        "dimension 1");
  CHECK(msg(verifyAllGather(in, T({{A("y")}, {S("x", 1, 2)}}),
                            {{}, {S("x", 2, 4)}}, x8y2)) == "OK");
  CHECK(msg(verifyAllGather(in, T({{}, {}}), {{A("y")}, {A("x")}}, kXY)) ==
        "OK");
}

TEST_CASE("verifyAllSlice and verifyReduceScatter") {
  Mesh x8y2 = M({{"x", 8}, {"y", 2}});
  TensorSharding in = T({{A("y")}, {}});
  CHECK(msg(verifyAllSlice(in, T({{A("y")}, {A("x")}}), {{}, {A("x")}}, kXY)) ==
        "OK");
  CHECK(msg(verifyAllSlice(T({{A("y")}, {A("x")}}), T({{A("y")}, {A("x")}}),
                           {{}, {A("x")}}, kXY)) ==
        "result sharding doesn't match expected sharding [\"x\", \"x\"] on "
        "dimension 1");
  CHECK(msg(verifyAllSlice(T({{A("y")}, {S("x", 1, 2)}}),
                           T({{A("y")}, {S("x", 1, 4)}}), {{}, {S("x", 4, 2)}},
                           x8y2)) ==
        "result sharding doesn't match expected sharding [\"x\":(1)2, "
        "\"x\":(4)2] on dimension 1");
  CHECK(msg(verifyAllSlice(T({{A("y")}, {S("x", 1, 2)}}),
                           T({{A("y")}, {S("x", 1, 4)}}), {{}, {S("x", 2, 2)}},
                           x8y2)) == "OK");
  Mesh xyz = M({{"x", 2}, {"y", 2}, {"z", 2}});
  CHECK(msg(verifyReduceScatter(T({{A("y"), A("z")}, {A("x")}}),
                                T({{A("y"), A("z")}, {A("x")}}), {{A("z")}, {}},
                                ReductionKind::Sum, xyz)) ==
        "result sharding doesn't match expected sharding [\"y\", \"z\", "
        "\"z\"] on dimension 0");
  CHECK(msg(verifyReduceScatter(T({{}, {A("x")}}), T({{}, {A("x")}}), {},
                                ReductionKind::Sum, kXY)) ==
        "result sharding has rank 2 but collective axes has rank 0");
  CHECK(msg(verifyReduceScatter(
            T({{A("x")}, {A("y")}}, {A("z")}, ReductionKind::Max),
            T({{A("x"), A("z")}, {A("y")}}), {{A("x")}, {}}, ReductionKind::Min,
            xyz)) == "cannot reduce 'max' unreduced axes. Expected 'min'.");
}

TEST_CASE("gather and slice along a dim") {
  Mesh x8 = M({{"x", 8}, {"y", 2}});
  std::vector<AxisRef> expected;
  CHECK_FALSE(gatherAxesAlongDim({A("y"), A("x")}, {S("x", 2, 4)}, 0, x8,
                                 "gathering", expected));
  CHECK(expected == V{A("y"), S("x", 1, 2)});
  CHECK(gatherAxesAlongDim({A("x")}, {A("y")}, 3, x8, "all-to-all", expected) ==
        "can't apply all-to-all axis \"y\" to operand sharding on dimension 3");
  CHECK(sliceAxesAlongDim({S("x", 1, 2)}, {S("x", 2, 4), A("y")}, x8) ==
        V{A("x"), A("y")});
}

TEST_CASE("verifyAllToAll") {
  TensorSharding in = T({{A("y")}, {A("x")}});
  auto a2a = [](const TensorSharding &from, const TensorSharding &to,
                std::vector<AllToAllParam> params, const Mesh &mesh) {
    return msg(verifyAllToAll(from, to, params, mesh,
                              static_cast<int64_t>(to.dims.size())));
  };
  CHECK(a2a(in, in, {}, kXY) == "parameter list is empty");
  CHECK(a2a(in, T({{}, {A("x"), A("y")}}), {{{A("y")}, 0, 1}}, kXY) == "OK");
  CHECK(a2a(in, T({{A("y")}, {}}), {{{A("y")}, 2, 1}}, kXY) ==
        "source dimension 2 is out of range [0, 2)");
  CHECK(a2a(in, T({{}, {A("y")}}), {{{A("y")}, 0, -1}}, kXY) ==
        "target dimension -1 is out of range [0, 2)");
  CHECK(a2a(in, T({{A("y")}, {}}), {{{A("y")}, 0, 0}}, kXY) ==
        "overlapping source/target dimensions in all-to-all params: 0");
  CHECK(a2a(T({{A("y")}, {}}), T({{}, {A("x"), A("y")}}),
            {{{A("x"), A("y")}, 0, 1}}, kXY) ==
        "can't apply all-to-all axis \"x\" to operand sharding on dimension 0");
  CHECK(a2a(in, T({{A("x")}, {A("y")}}), {{{A("x")}, 1, 0}, {{A("y")}, 0, 1}},
            kXY) ==
        "overlapping source/target dimensions in all-to-all params: 0");
  CHECK(a2a(T({{A("x")}, {}, {A("y")}, {}}), T({{}, {A("y")}, {}, {A("x")}}),
            {{{A("y")}, 2, 1}, {{A("x")}, 0, 3}}, kXY) ==
        "source dimensions are not sorted in ascending order: 0 appears "
        "after 2");
  CHECK(a2a(in, T({{A("y")}, {A("x")}}), {{{A("x")}, 1, 0}}, kXY) ==
        "result sharding doesn't match expected sharding [] on dimension 1");
  Mesh x8y2 = M({{"x", 8}, {"y", 2}});
  CHECK(a2a(in, T({{A("y"), S("x", 2, 4)}, {}}), {{{S("x", 2, 4)}, 1, 0}},
            x8y2) == "result sharding doesn't match expected sharding "
                     "[\"x\":(1)2] on dimension 1");
  CHECK(a2a(T({{A("x")}, {A("y")}, {}}), T({{}, {}, {A("y")}}),
            {{{A("x")}, 0, 2}}, kXY) ==
        "result sharding doesn't match expected sharding [\"x\"] on dimension "
        "2");
  CHECK(a2a(T({{A("y")}, {A("x")}, {}}), T({{}, {}, {A("y")}}),
            {{{A("y")}, 0, 2}}, kXY) ==
        "result sharding doesn't match expected sharding [\"x\"] on dimension "
        "1");
  CHECK(a2a(in, T({{A("y"), A("x")}, {}}), {{{A("x")}, 1, 0}}, kXY) == "OK");
}

TEST_CASE("verifyCollectivePermute") {
  Mesh x4y2 = M({{"x", 4}, {"y", 2}});
  Mesh x2y4 = M({{"x", 2}, {"y", 4}});
  TensorSharding in = T({{A("x")}, {A("y")}});
  TensorSharding out = T({{A("y")}, {A("x")}});
  auto diag = verifyCollectivePermute(in, x4y2, out, x2y4);
  REQUIRE(diag);
  CHECK(diag->message == "result mesh has different axes than operand mesh");
  CHECK(diag->note == "operand mesh: #sdy.mesh<[\"x\"=4, \"y\"=2]>");
  TensorSharding other = in;
  other.mesh.symbol = "mesh2";
  CHECK(msg(verifyCollectivePermute(in, x2y4, other, x2y4)) ==
        "result mesh name is different but same device ids as operand");
  Mesh xyzw = M({{"x", 2}, {"y", 2}, {"z", 2}, {"w", 4}});
  CHECK(msg(verifyCollectivePermute(T({{A("x"), A("y")}, {A("z")}}), xyzw,
                                    T({{A("y"), A("x")}, {A("w")}}), xyzw)) ==
        "sharded size of result doesn't match operand on dimension 1: 4 != 2");
  CHECK(msg(verifyCollectivePermute(T({{A("x"), A("y")}, {A("z")}}), xyzw,
                                    T({{A("z"), A("y")}, {A("x")}}), xyzw)) ==
        "OK");
}

TEST_CASE("verifyAllReduce") {
  Mesh x2y8z2 = M({{"x", 2}, {"y", 8}, {"z", 2}});
  TensorSharding in = T({{A("y")}, {A("x")}});
  CHECK(msg(verifyAllReduce(T({{}, {}}), T({{}, {A("y")}}), {},
                            ReductionKind::Sum, kXY)) ==
        "operand and result shardings are not equivalent");
  CHECK(msg(verifyAllReduce(in, in, {S("y", 2, 2)}, ReductionKind::Sum,
                            x2y8z2)) ==
        "reduction axis \"y\":(2)2 overlaps with operand dimension sharding or "
        "replicated axes");
  CHECK(msg(verifyAllReduce(T({{A("y")}, {A("x")}}, {A("z")}),
                            T({{A("y")}, {A("x")}}, {A("z")}), {A("z")},
                            ReductionKind::Sum, x2y8z2)) ==
        "reduction axis \"z\" overlaps with result unreduced axes");
  Mesh x4y2 = M({{"x", 4}, {"y", 2}});
  CHECK(msg(verifyAllReduce(T({{}, {}}), T({{}, {}}), {A("y"), A("x")},
                            ReductionKind::Sum, x4y2)) ==
        "reduction axes are not ordered w.r.t. mesh");
  CHECK(msg(verifyAllReduce(in, in, {A("x"), A("x")}, ReductionKind::Sum,
                            kXY)) == "duplicate axis ref: \"x\"");
  Mesh xyz = M({{"x", 2}, {"y", 2}, {"z", 2}});
  CHECK(
      msg(verifyAllReduce(T({{A("y")}, {A("x")}}, {A("z")}, ReductionKind::Max),
                          in, {A("z")}, ReductionKind::Sum, xyz)) ==
      "cannot reduce 'max' unreduced axes. Expected 'sum'.");
  CHECK(msg(verifyAllReduce(in, T({{A("y")}, {A("x")}}, {A("z")}), {},
                            ReductionKind::Sum, xyz)) ==
        "cannot add new unreduced axis 'z'.");
  CHECK(msg(verifyAllReduce(T({{A("y")}, {A("x")}}, {A("z")}), in, {A("z")},
                            ReductionKind::Sum, xyz)) == "OK");
}

TEST_CASE("verifyShardedToUnreduced") {
  Mesh x4y4z4 = M({{"x", 4}, {"y", 4}, {"z", 4}});
  TensorSharding in = T({{A("y")}, {A("x")}});
  CHECK(msg(verifyShardedToUnreduced(T({{A("x")}, {}}),
                                     T({{}, {}}, {A("x")}, ReductionKind::Max),
                                     {{A("x")}, {}}, M({{"x", 4}}))) ==
        "out_sharding reduction_op must be SUM");
  CHECK(msg(verifyShardedToUnreduced(in, T({{A("y")}, {}}),
                                     {{}, {A("x"), A("y")}}, kXY)) ==
        "can't apply shard-to-unreduce axis \"y\" to operand sharding on "
        "dimension 1");
  CHECK(msg(verifyShardedToUnreduced(
            T({{A("y")}, {A("x")}}, {A("z")}),
            T({{}, {S("x", 1, 2)}}, {S("x", 2, 2), A("y")}),
            {{A("y")}, {S("x", 2, 2)}}, x4y4z4)) ==
        "out_unreduced_axes should be in_unreduced_axes + "
        "sharded_to_unreduced_axes");
  CHECK(msg(verifyShardedToUnreduced(
            T({{A("y")}, {A("x")}}, {A("z")}),
            T({{}, {S("x", 1, 2)}}, {S("x", 2, 2), A("y"), A("z")}),
            {{A("y")}, {S("x", 2, 2)}}, x4y4z4)) == "OK");
}

TEST_CASE("verifyReplicatedToUnreduced") {
  Mesh x4y4 = M({{"x", 4}, {"y", 4}});
  CHECK(msg(verifyReplicatedToUnreduced(
            T({{}, {}}), T({{}, {}}, {A("x")}, ReductionKind::Max), {A("x")},
            M({{"x", 4}}))) == "out_sharding reduction_op must be SUM");
  CHECK(msg(verifyReplicatedToUnreduced(
            T({{}, {A("y")}}), T({{A("y")}, {}}, {A("x")}), {A("x")}, x4y4)) ==
        "input and output must share the same dimension shardings");
  CHECK(msg(verifyReplicatedToUnreduced(T({{}, {}}, {A("x")}),
                                        T({{}, {}}, {A("x")}), {}, x4y4)) ==
        "r2u axes must not be empty");
  Mesh x4y2 = M({{"x", 4}, {"y", 2}});
  CHECK(msg(verifyReplicatedToUnreduced(
            T({{}, {}}), T({{}, {}}, {A("x"), A("y")}), {A("y"), A("x")},
            x4y2)) == "r2u axes are not ordered w.r.t. mesh");
  CHECK(msg(verifyReplicatedToUnreduced(T({{A("y")}, {}}),
                                        T({{A("y")}, {}}, {A("x")}),
                                        {S("x", 1, 2), S("x", 2, 2)}, x4y2)) ==
        "two consecutive sub-axes can be merged: \"x\":(1)2, \"x\":(2)2");
  Mesh x2y8z8 = M({{"x", 2}, {"y", 8}, {"z", 8}});
  TensorSharding in = T({{A("y"), A("z")}, {A("x")}});
  CHECK(msg(verifyReplicatedToUnreduced(in, in, {A("z")}, x2y8z8)) ==
        "r2u axis \"z\" overlaps with operand dimension sharding");
  Mesh x2y2z8 = M({{"x", 2}, {"y", 2}, {"z", 8}});
  CHECK(msg(verifyReplicatedToUnreduced(T({{A("y")}, {A("x")}}, {S("z", 2, 2)}),
                                        T({{A("y")}, {A("x")}}, {A("z")}),
                                        {A("z")}, x2y2z8)) ==
        "r2u axis \"z\" overlaps with operand unreduced axes");
  Mesh xyz4 = M({{"x", 4}, {"y", 4}, {"z", 4}});
  CHECK(msg(verifyReplicatedToUnreduced(T({{}, {}}, {A("x")}),
                                        T({{}, {}}, {A("x"), A("y")}),
                                        {A("y"), A("z")}, xyz4)) ==
        "out_unreduced_axes should be in_unreduced_axes + r2u_axes");
  CHECK(msg(verifyReplicatedToUnreduced(T({{}, {}}, {A("x")}),
                                        T({{}, {}}, {A("x"), A("y"), A("z")}),
                                        {A("y"), A("z")}, xyz4)) == "OK");
}

TEST_CASE("verifyUnreducedAxesTransition (reshard / sharding_constraint)") {
  Mesh mesh = M({{"x", 2}, {"y", 2}, {"z", 2}});
  auto reshard = [&](const TensorSharding &from, const TensorSharding &to) {
    return msg(verifyUnreducedAxesTransition({{&from, &mesh}}, {{&to, &mesh}},
                                             ReductionKind::Sum,
                                             from.unreduced_kind));
  };
  CHECK(reshard(T({{}}, {A("x")}, ReductionKind::Max), T({{}}, {A("x")})) ==
        "cannot change the reduction operator of kept unreduced axes from max "
        "to sum.");
  CHECK(reshard(T({{A("x")}}), T({{}}, {A("x")}, ReductionKind::Max)) ==
        "cannot introduce 'max' unreduced axes. Expected 'sum'.");
  CHECK(reshard(T({{}}, {A("x")}, ReductionKind::Max),
                T({{}}, {A("x"), A("y")})) ==
        "cannot change the reduction operator of kept unreduced axes from max "
        "to sum.");
  CHECK(reshard(T({{}}, {A("x")}, ReductionKind::Max), T({{}})) == "OK");
  TensorSharding in = T({{}}, {A("y")});
  TensorSharding out = T({{}});
  CHECK(msg(verifyUnreducedAxesTransition({{&in, &mesh}}, {{&out, &mesh}},
                                          std::nullopt, std::nullopt)) ==
        "dropped unreduced axis 'y' without a blessed operation (e.g., "
        "sdy.reshard). This is an invalid transition from unreduced to "
        "reduced.");
  Mesh other = M({{"x", 2}});
  CHECK(msg(verifyUnreducedAxesTransition({{&in, &mesh}}, {{&out, &other}},
                                          std::nullopt, std::nullopt)) == "OK");
}

namespace {

std::vector<TensorSharding> open(std::vector<std::vector<V>> shardings) {
  std::vector<TensorSharding> result;
  for (auto &dims : shardings) {
    TensorSharding s = T(dims);
    for (DimSharding &dim : s.dims) {
      dim.closed = false;
    }
    result.push_back(s);
  }
  return result;
}
ValueShapeInfo R(std::vector<int64_t> dims) {
  return ValueShapeInfo::ranked(std::move(dims));
}

} // namespace

TEST_CASE("verifyManualComputationValues") {
  Mesh a2 = M({{"a", 2}});
  std::vector<const Mesh *> one{&a2};
  auto values = [&](std::vector<TensorSharding> s, std::vector<const Mesh *> m,
                    std::vector<ValueShapeInfo> global,
                    std::vector<ValueShapeInfo> local,
                    std::vector<std::string> manual = {"a"}) {
    return msg(
        verifyManualComputationValues("operand", s, m, global, local, manual));
  };
  auto in = open({{{A("a")}, {}}});
  CHECK(values(in, one, {R({16, 32})}, {R({8, 32})}) == "OK");
  CHECK(values(in, {nullptr}, {R({16, 32})}, {R({8, 32})}) ==
        "operand - unknown mesh: @mesh");
  CHECK(values(open({{{A("a")}, {}}, {{A("a")}, {}}}), {&a2, &a2},
               {R({16, 32})}, {R({8, 32})}) ==
        "operand shardings don't match number of values: 2 shardings vs 1 "
        "values");
  CHECK(values(open({{{A("a")}, {}, {}}}), one, {R({16, 32})}, {R({8, 32})}) ==
        "operand - sharding doesn't match tensor rank: 3 != 2");
  CHECK(values(in, one, {R({16, 32})}, {R({16, 32}), R({16, 32})}) ==
        "number of op operands and region operands must match. Op has 1 op "
        "operands and 2 region operands");
  Mesh a4 = M({{"a", 4}});
  CHECK(values(in, {&a4}, {R({6, 32})}, {R({8, 32})}) ==
        "operand dimension size 6 is not divisible by the manual axes size 4");
  CHECK(values(in, one, {R({16, 32})}, {R({16, 32})}) ==
        "operand shape, corresponding sharding, and region operand shape at "
        "index 0 must match. Expected local shape 'tensor<8x32xf32>', actual "
        "local shape 'tensor<16x32xf32>'");
  CHECK(values(in, one, {R({16, 32})}, {R({16, 32})}, {}) == "OK");
  CHECK(values(in, one, {R({kDynamic, 32})}, {R({16, 32})}) ==
        "operand shape, corresponding sharding, and region operand shape at "
        "index 0 must match. Expected local shape 'tensor<?x32xf32>', actual "
        "local shape 'tensor<16x32xf32>'");
  Mesh ab = M({{"a", 2}, {"b", 2}});
  CHECK(values(open({{{}, {A("a"), A("b")}}}), {&ab}, {R({16, 32})},
               {R({16, 8})}, {"a", "b"}) == "OK");
  CHECK(values(open({{{}, {A("a"), A("b")}}}), {&ab}, {R({16, 32})},
               {R({16, 16})}, {"b"}) ==
        "operand sharding at index 0 must have all manual axes come before "
        "free axes in its dimension sharding at index 1. Saw manual axis "
        "\"b\" after free axis \"a\"");
  std::vector<TensorSharding> token = {T({})};
  CHECK(values(token, one, {ValueShapeInfo::nonShaped("!stablehlo.token")},
               {ValueShapeInfo::nonShaped("!stablehlo.token")}) == "OK");
  CHECK(values(open({{{}}}), one,
               {ValueShapeInfo::nonShaped("!stablehlo.token")},
               {ValueShapeInfo::nonShaped("!stablehlo.token")}) ==
        "operand - non-shaped tensors can only have a sharding with rank 0 "
        "and no replicated or unreduced axes. type: '!stablehlo.token', "
        "sharding: #sdy.sharding<@mesh, [{?}]>");
  CHECK(values({}, {}, {}, {}) == "OK");
}

TEST_CASE("manual computation mesh and axes") {
  Mesh a2 = M({{"a", 2}});
  CHECK(msg(verifyManualComputationMesh(nullptr, true, {"a"})) ==
        "all in and out shardings must be bound to the same mesh or an empty "
        "mesh.");
  CHECK(msg(verifyManualComputationMesh(&a2, true, {"a", "b"})) ==
        "unknown manual axis: \"b\"");
  CHECK(msg(verifyManualComputationMesh(&a2, true, {"a"})) == "OK");
  CHECK(msg(verifyManualComputationMesh(nullptr, false, {"a"})) == "OK");
  CHECK(msg(verifyManualAxesNotBound({"b", "a"}, {"a"})) ==
        "operates on axis \"a\" which is already bound by a parent "
        "sdy.manual_computation op");
  CHECK(msg(verifyManualAxesNotBound({"b"}, {"a"})) == "OK");
  TensorSharding s = T({{A("a")}, {A("b")}});
  Mesh ab = M({{"a", 2}, {"b", 4}});
  CHECK(manualLocalShape({16, 32}, s, ab, {"a"}) ==
        std::vector<int64_t>{8, 32});
  CHECK_FALSE(manualLocalShape({16, 6}, s, ab, {"b"}));
}
