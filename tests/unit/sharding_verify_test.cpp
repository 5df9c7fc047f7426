// Verifier messages for meshes, tensor shardings, shardings per value and op
// sharding rules (verify.h), with inputs taken from Shardy's
// mesh_verification, tensor_sharding_verification and
// sharding_rule_verification tests; plus the text forms (format.h).
#include <doctest/doctest.h>

#include "sharding/verify.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/format.h"
#include "shardlab/sharding/shape.h"

using namespace shardlab;

namespace {

AxisRef A(const char *name) { return fullAxis(name); }
AxisRef S(const char *name, int64_t pre, int64_t size) {
  return subAxis(name, pre, size);
}
DimSharding D(std::vector<AxisRef> axes, bool closed = true,
              std::optional<int64_t> priority = std::nullopt) {
  return DimSharding{std::move(axes), closed, priority};
}
TensorSharding T(std::vector<DimSharding> dims,
                 std::vector<AxisRef> replicated = {},
                 std::vector<AxisRef> unreduced = {}) {
  TensorSharding s;
  s.mesh = MeshRef{"mesh", {}};
  s.dims = std::move(dims);
  s.replicated = std::move(replicated);
  s.unreduced = std::move(unreduced);
  return s;
}
ValueShapeInfo R(std::vector<int64_t> dims) {
  return ValueShapeInfo::ranked(std::move(dims));
}
std::string err(const TensorSharding &s, const Mesh &mesh,
                const ValueShapeInfo &value, ShardingVerifyOptions opts = {}) {
  return verifyTensorSharding(s, &mesh, value, opts).value_or("OK");
}
const Mesh kA2{{{"a", 2}}, {}};
const Mesh kA8B2{{{"a", 8}, {"b", 2}}, {}};

} // namespace

TEST_CASE("verifyMesh messages") {
  CHECK(verifyMeshAxis({"b", 0}) == "axis size must be at least 1, got: 0");
  CHECK_FALSE(verifyMeshAxis({"b", 1}));
  CHECK(verifyMesh(Mesh{{{"a", 2}, {"b", 0}}, {}}) ==
        "axis size must be at least 1, got: 0");
  CHECK(verifyMesh(Mesh{{{"a", 2}, {"b", 2}, {"a", 4}}, {}}) ==
        "duplicate axis name: \"a\"");
  CHECK(verifyMesh(Mesh{{}, {-1}}) ==
        "device id must be non-negative, got: -1");
  CHECK(verifyMesh(Mesh{{}, {1, 0}}) ==
        "axes is empty and device_ids has more than one element");
  CHECK(verifyMesh(Mesh{{{"a", 2}, {"b", 2}}, {0, 2, 1, 3, 4, 5}}) ==
        "total product of axis sizes must match total number of device ids, "
        "got: 4 != 6");
  CHECK(verifyMesh(Mesh{{{"a", 2}}, {0}}) ==
        "total product of axis sizes must match total number of device ids, "
        "got: 2 != 1");
  CHECK(verifyMesh(Mesh{{{"a", 2}}, {1, 1}}) ==
        "sorted device ids must be iota(product(axes)), got: 1, 1");
  CHECK(verifyMesh(Mesh{{{"a", 2}}, {2, 1}}) ==
        "sorted device ids must be iota(product(axes)), got: 1, 2");
  CHECK(verifyMesh(Mesh{{{"a", 2}}, {0, 1}}) ==
        "if the ordered device ids are the same as iota(product(axes)), no "
        "need to specify them for simplicity");
  CHECK_FALSE(verifyMesh(Mesh{}));
  CHECK_FALSE(verifyMesh(Mesh{{}, {3}}));
  CHECK_FALSE(verifyMesh(Mesh{{{"a", 2}}, {1, 0}}));
  CHECK_FALSE(verifyMesh(Mesh{{{"a", 2}, {"b", 1}}, {}}));
}

TEST_CASE("verifyTensorSharding: mesh, type and rank") {
  TensorSharding s = T({D({}), D({A("a")})});
  s.mesh.symbol = "other_mesh";
  CHECK(verifyTensorSharding(s, nullptr, R({8, 8})) ==
        "unknown mesh: @other_mesh");
  CHECK(err(T({D({})}), kA2, ValueShapeInfo::nonShaped("!stablehlo.token")) ==
        "non-shaped tensors can only have a sharding with rank 0 and no "
        "replicated or unreduced axes. type: '!stablehlo.token', sharding: "
        "#sdy.sharding<@mesh, [{}]>");
  CHECK(err(T({}, {A("a")}), kA2,
            ValueShapeInfo::nonShaped("!stablehlo.token")) ==
        "non-shaped tensors can only have a sharding with rank 0 and no "
        "replicated or unreduced axes. type: '!stablehlo.token', sharding: "
        "#sdy.sharding<@mesh, [], replicated={\"a\"}>");
  CHECK(err(T({}), kA2, ValueShapeInfo::nonShaped("!stablehlo.token")) == "OK");
  CHECK(err(T({}), kA2, ValueShapeInfo::unranked()) ==
        "only ranked tensors can have a sharding. type: 'tensor<*xf32>'");
  CHECK(err(T({D({}), D({A("b")})}, {A("a")}), kA2, R({8})) ==
        "sharding doesn't match tensor rank: 2 != 1");
  CHECK(err(T({D({})}), kA2, R({kDynamic, kDynamic})) ==
        "sharding doesn't match tensor rank: 1 != 2");
  CHECK(err(T({D({A("a")}), D({})}), kA2, R({8, 8})) == "OK");
}

TEST_CASE("verifyTensorSharding: maximal meshes and tuples") {
  Mesh maximal{{}, {0}};
  const char *kMaximal = "a maximal sharding can only have a sharding with "
                         "rank 0 and no replicated or unreduced axes.";
  CHECK(err(T({D({}), D({})}), maximal, R({8, 8})) == kMaximal);
  CHECK(err(T({}, {A("a")}), maximal, R({8, 8})) == kMaximal);
  CHECK(err(T({}, {}, {A("a")}), maximal, R({8, 8})) == kMaximal);
  CHECK(err(T({}), maximal, R({8, 8})) == "OK");
  CHECK(err(T({}, {A("a")}), kA2, ValueShapeInfo::none()) == kMaximal);
  ValueShapeInfo two = ValueShapeInfo::tuple({R({8, 8}), R({8, 8})});
  CHECK(err(T({D({A("a")}), D({})}), kA2, two) ==
        "ops can only have a sharding for a tuple of size 1: "
        "'tuple<tensor<8x8xf32>, tensor<8x8xf32>>'");
  ValueShapeInfo token =
      ValueShapeInfo::tuple({ValueShapeInfo::nonShaped("!stablehlo.token")});
  CHECK(err(T({D({})}), kA2, token) ==
        "non-shaped tensors can only have a sharding with rank 0 and no "
        "replicated or unreduced axes. type: 'tuple<!stablehlo.token>', "
        "sharding: #sdy.sharding<@mesh, [{}]>");
  ValueShapeInfo one = ValueShapeInfo::tuple({R({8, 8})});
  CHECK(err(T({D({A("a")}), D({})}), kA2, one) == "OK");
  CHECK(err(T({D({A("a")})}), kA2, one) ==
        "sharding doesn't match tensor rank: 1 != 2");
}

TEST_CASE("verifyTensorSharding: priorities") {
  CHECK(err(T({D({}, true, 1), D({})}), kA2, R({kDynamic, kDynamic})) ==
        "dim 0 is empty and closed but has a priority");
  CHECK(err(T({D({A("a")}), D({}, true, 3)}), kA2, R({8, 8})) ==
        "dim 1 is empty and closed but has a priority");
  CHECK(err(T({D({A("a")}, true, -1), D({})}), kA2, R({8, 8})) ==
        "dim 0 has a negative priority");
  CHECK(err(T({D({}, false, 1), D({A("a")}, true, 0)}), kA2, R({8, 8})) ==
        "OK");
}

TEST_CASE("verifyTensorSharding: axis lists") {
  CHECK(err(T({D({}), D({A("c")})}), kA2, R({8, 8})) ==
        "unknown axis name: \"c\"");
  CHECK(err(T({D({}), D({})}, {A("c")}), kA2, R({8, 8})) ==
        "unknown axis name: \"c\"");
  CHECK(err(T({D({}), D({})}, {}, {A("c")}), kA2, R({8, 8})) ==
        "unknown axis name: \"c\"");
  CHECK(err(T({D({}), D({S("c", 2, 2)})}, {A("a")}), kA2, R({8, 8})) ==
        "unknown axis name: \"c\"");
  const char *kDup = "duplicate axis ref: \"a\"";
  CHECK(err(T({D({}), D({A("a")})}, {A("a")}), kA2, R({8, 8})) == kDup);
  CHECK(err(T({D({}), D({A("a")})}, {}, {A("a")}), kA2, R({8, 8})) == kDup);
  CHECK(err(T({D({}), D({})}, {A("a")}, {A("a")}), kA2, R({8, 8})) == kDup);
  CHECK(err(T({D({}), D({})}, {A("a"), A("a")}), kA2, R({8, 8})) == kDup);
  CHECK(err(T({D({}), D({A("a"), A("a")})}), kA2, R({8, 8})) == kDup);
  CHECK(err(T({D({A("a")}), D({A("a")})}), kA2, R({8, 8})) == kDup);
  CHECK(err(T({D({}), D({S("a", 2, 2)})}, {S("a", 2, 2)}), kA8B2, R({8, 8})) ==
        "duplicate axis ref: \"a\":(2)2");
  CHECK(err(T({D({}), D({S("a", 2, 2), S("a", 4, 4)})}), kA8B2, R({8, 8})) ==
        "two consecutive sub-axes can be merged: \"a\":(2)2, \"a\":(4)4");
  CHECK(
      err(T({D({}), D({})}, {S("a", 2, 2), S("a", 4, 4)}), kA8B2, R({8, 8})) ==
      "two consecutive sub-axes can be merged: \"a\":(2)2, \"a\":(4)4");
  CHECK(err(T({D({S("a", 1, 2), A("b"), S("a", 2, 2)}), D({})}), kA8B2,
            R({8, 8})) == "OK");
}

TEST_CASE("verifyTensorSharding: replicated/unreduced order") {
  Mesh cab{{{"c", 2}, {"a", 2}, {"b", 2}}, {}};
  CHECK(err(T({D({}), D({})}, {A("a"), A("b"), A("c")}), cab, R({8, 8})) ==
        "replicated axes are not ordered w.r.t. mesh");
  CHECK(err(T({D({}), D({})}, {}, {A("a"), A("b"), A("c")}), cab, R({8, 8})) ==
        "unreduced axes are not ordered w.r.t. mesh");
  CHECK(err(T({D({}), D({})}, {A("c"), A("a")}, {A("b")}), cab, R({8, 8})) ==
        "OK");
  CHECK(err(T({D({}), D({})}, {S("a", 4, 2), S("a", 1, 2), A("b")}), kA8B2,
            R({8, 8})) == "replicated axes are not ordered w.r.t. mesh");
  CHECK(err(T({D({}), D({})}, {}, {S("a", 4, 2), S("a", 1, 2), A("b")}), kA8B2,
            R({8, 8})) == "unreduced axes are not ordered w.r.t. mesh");
}

TEST_CASE("verifyTensorSharding: sub-axes") {
  auto dimSub = [](AxisRef axis) { return T({D({}), D({axis})}); };
  CHECK(err(T({D({}), D({A("a")})}, {S("a", 2, 2)}), kA8B2, R({8, 8})) ==
        "both sub-axis and full-axis are used for axis name: \"a\"");
  CHECK(err(T({D({}), D({A("a")})}, {}, {S("a", 2, 2)}), kA8B2, R({8, 8})) ==
        "both sub-axis and full-axis are used for axis name: \"a\"");
  CHECK(err(dimSub(S("a", -1, 2)), kA8B2, R({8, 8})) ==
        "sub-axis pre-size must be at least 1: \"a\":(-1)2");
  CHECK(err(dimSub(S("a", 2, 1)), kA8B2, R({8, 8})) ==
        "sub-axis sizes must be greater than 1: \"a\":(2)1");
  CHECK(err(dimSub(S("a", 3, 2)), kA8B2, R({6, 6})) ==
        "sub-axis next pre-size 6 doesn't divide the size of the full axis 8: "
        "\"a\":(3)2");
  CHECK(err(dimSub(S("a", 2, 3)), kA8B2, R({6, 6})) ==
        "sub-axis next pre-size 6 doesn't divide the size of the full axis 8: "
        "\"a\":(2)3");
  CHECK(err(dimSub(S("a", 4, 4)), kA8B2, R({8, 8})) ==
        "sub-axis next pre-size 16 doesn't divide the size of the full axis "
        "8: \"a\":(4)4");
  CHECK(err(dimSub(S("a", 1, 8)), kA8B2, R({8, 8})) ==
        "sub-axis size is equal to the full axis size: \"a\":(1)8");
  Mesh a8b4{{{"a", 8}, {"b", 4}}, {}};
  TensorSharding overlap =
      T({D({S("a", 2, 4)}), D({S("b", 2, 2)})}, {S("a", 1, 4)});
  CHECK(err(overlap, a8b4, R({8, 8})) ==
        "overlapping sub-axes: \"a\":(1)4, \"a\":(2)4");
  CHECK(err(overlap, a8b4, R({kDynamic, kDynamic})) ==
        "overlapping sub-axes: \"a\":(1)4, \"a\":(2)4");
  CHECK(err(T({D({S("a", 2, 4)}), D({})}, {S("a", 1, 2)}), a8b4, R({8, 8})) ==
        "OK");
}

TEST_CASE("verifyTensorSharding: divisibility and manual parents") {
  ShardingVerifyOptions divisible;
  divisible.check_divisibility = true;
  Mesh a4{{{"a", 4}}, {}};
  CHECK(err(T({D({A("a")})}), a4, R({6}), divisible) ==
        "dim 0 with size 6 is not divisible by its sharded size 4");
  CHECK(err(T({D({A("a")})}), a4, R({6})) == "OK");
  CHECK(err(T({D({A("a")})}), a4, R({kDynamic}), divisible) == "OK");
  ShardingVerifyOptions manual;
  manual.already_manual_axes = {"a"};
  CHECK(err(T({D({A("a")}), D({})}), kA2, R({8, 32}), manual) ==
        "operates on axis \"a\" which is already bound by a parent "
        "sdy.manual_computation op");
  CHECK(axisBoundByParent(T({D({})}, {}, {A("a")}), {"a"}) == "a");
  CHECK_FALSE(axisBoundByParent(T({D({A("b")})}), {"a"}));
}

TEST_CASE("verifyShardingPerValue adds the value layer") {
  Mesh mesh{{{"a", 2}, {"b", 2}}, {}};
  std::vector<const Mesh *> two{&mesh, &mesh};
  CHECK(verifyShardingPerValue({T({D({}), D({A("b")})}, {A("a")})}, {&mesh},
                               {R({8})}) ==
        "- sharding doesn't match tensor rank: 2 != 1");
  CHECK(verifyShardingPerValue(
            {T({D({A("a")}), D({})}), T({D({A("c")}), D({})})}, two,
            {R({2, 13}), R({2, 13})}) == "1 - unknown axis name: \"c\"");
  CHECK(
      verifyShardingPerValue({T({D({A("a")}), D({})}), T({D({A("b")}), D({})}),
                              T({D({A("a")}), D({})})},
                             {&mesh, &mesh, &mesh}, {R({2, 13}), R({2, 13})}) ==
      "shardings don't match number of values: 3 shardings vs 2 values");
  Mesh maximal{{}, {0}};
  CHECK(verifyShardingPerValue({T({D({})})}, {&maximal}, {}) ==
        "0 - a maximal sharding can only have a sharding with rank 0 and no "
        "replicated or unreduced axes.");
  CHECK_FALSE(verifyShardingPerValue({T({})}, {&maximal}, {}));
  CHECK(verifyShardingPerValue({T({D({A("a")})})}, {&mesh}, {}) ==
        "shardings don't match number of values: 1 shardings vs 0 values");
  CHECK_FALSE(verifyShardingPerValue({}, {}, {}));
}

namespace {

OpShardingRule rule(std::vector<OpShardingRule::TensorMapping> operands,
                    std::vector<OpShardingRule::TensorMapping> results,
                    std::vector<int64_t> sizes) {
  OpShardingRule r;
  r.operands = std::move(operands);
  r.results = std::move(results);
  r.factor_sizes = std::move(sizes);
  return r;
}
std::string ruleErr(const OpShardingRule &r, std::vector<ValueShapeInfo> ins,
                    std::vector<ValueShapeInfo> outs) {
  return verifyOpShardingRule(r, ins, outs).value_or("OK");
}

} // namespace

TEST_CASE("verifyOpShardingRule: counts, types and ranks") {
  // ([i, j], [i, j])->([i, j]) {i=8, j=8} on 8x8 operands.
  OpShardingRule ok = rule({{{0}, {1}}, {{0}, {1}}}, {{{0}, {1}}}, {8, 8});
  CHECK(ruleErr(ok, {R({8, 8}), R({8, 8})}, {R({8, 8})}) == "OK");
  CHECK(ruleErr(ok, {R({kDynamic, 8}), R({8, 8})}, {R({8, 8})}) ==
        "operand 0 - expected a ranked tensor with a static shape. type: "
        "'tensor<?x8xf32>'");
  CHECK(ruleErr(ok, {ValueShapeInfo::unranked(), R({8, 8})}, {R({8, 8})}) ==
        "operand 0 - expected a ranked tensor with a static shape. type: "
        "'tensor<*xf32>'");
  CHECK(ruleErr(ok, {R({8, 8}), R({8})}, {R({8, 8})}) ==
        "operand 1 - mapping rank must match: 2 != 1");
  CHECK(ruleErr(ok, {R({8, 8}), R({8, 8})}, {R({8})}) ==
        "result - mapping rank must match: 2 != 1");
  CHECK(ruleErr(ok, {R({8, 8}), R({8, 8})}, {R({8, 8}), R({8, 8})}) ==
        "number of results and mappings must match: 2 != 1");
  CHECK(ruleErr(ok, {R({8, 8})}, {R({8, 8})}) ==
        "number of operands and mappings must match: 1 != 2");
  OpShardingRule none = rule({}, {{{0}}}, {8});
  CHECK(ruleErr(none, {}, {R({8})}) ==
        "number of operands mappings cannot be 0. Op sharding rules can only "
        "be defined on operations with at least one operand and result.");
}

TEST_CASE("verifyOpShardingRule: dim mappings and factors") {
  CHECK(ruleErr(rule({{{0, 1}}}, {{{0, 1}}}, {1, 8}), {R({8})}, {R({8})}) ==
        "operand - dim mapping can't have a factor of size 1 if there are "
        "multiple factors");
  CHECK(ruleErr(rule({{{0}, {}}}, {{{0}, {1}}}, {8, 8}), {R({8, 8})},
                {R({8, 8})}) ==
        "operand - dim mapping must have at least one factor");
  CHECK(ruleErr(rule({{{0}, {12}}}, {{{0}, {1}}}, {8, 8}), {R({8, 8})},
                {R({8, 8})}) ==
        "operand - expecting factor indices to be within 0<=...<num_factors; "
        "received: 12, num_factors: 2");
  CHECK(ruleErr(rule({{{0}, {1}}}, {{{0}, {1}}}, {8, 8, 2}), {R({8, 8})},
                {R({8, 8})}) ==
        "has factor k=2 that isn't used in operand and result mappings");
  CHECK(ruleErr(rule({{{0}, {1}}}, {{{0}, {0}}}, {8, 8}), {R({8, 8})},
                {R({8, 8})}) ==
        "result - cannot reuse factors for the same tensor value");
  CHECK(ruleErr(rule({{{0}, {0}}, {{0}, {1}}}, {{{0}, {1}}}, {8, 8}),
                {R({8, 8}), R({8, 8})}, {R({8, 8})}) ==
        "operand 0 - cannot reuse factors for the same tensor value");
}

TEST_CASE("verifyOpShardingRule: special factors") {
  // ([i, j, k])->([i, k]) {i=2, j=4, k=8}.
  OpShardingRule r = rule({{{0}, {1}, {2}}}, {{{0}, {2}}}, {2, 4, 8});
  auto check = [&](OpShardingRule x) {
    return ruleErr(x, {R({2, 4, 8})}, {R({2, 8})});
  };
  CHECK(check(r) == "OK");
  OpShardingRule x = r;
  x.reduction = {1, 0};
  CHECK(check(x) == "indices of special factors must be sorted");
  x = r;
  x.need_replication = {1, 1};
  CHECK(check(x) == "indices of special factors must be unique");
  x = r;
  x.permutation = {17};
  CHECK(check(x) == "index must be less than 3, got: 17");
  x = r;
  x.permutation = {-1};
  CHECK(check(x) == "index must be non-negative");
  x = r;
  x.reduction = {1};
  x.need_replication = {1};
  CHECK(check(x) == "a factor can only be in one of the reduction, need "
                    "replication, or permutation factor sets");
  x = r;
  x.blocked_propagation = {2, 0};
  CHECK(check(x) == "indices of special factors must be sorted");
  x = r;
  x.reduction = {2};
  CHECK(check(x) == "reduction factor cannot be in result mappings");
  x = r;
  x.reduction = {1};
  x.blocked_propagation = {1};
  CHECK(check(x) == "OK");
}

TEST_CASE("text forms") {
  CHECK(axisRefToString(S("x", 1, 2)) == "\"x\":(1)2");
  CHECK(axisListToString({}) == "[]");
  CHECK(axisListToString({A("x"), S("y", 2, 2)}) == "[\"x\", \"y\":(2)2]");
  CHECK(meshToString(Mesh{{{"a", 2}, {"b", 2}}, {}}) ==
        "#sdy.mesh<[\"a\"=2, \"b\"=2]>");
  CHECK(meshToString(Mesh{{}, {3}}) == "#sdy.mesh<[], device_ids=[3]>");
  TensorSharding s = T({D({A("a")}, false), D({}, false), D({A("b")}, true, 1)},
                       {A("c")}, {A("d")});
  s.unreduced_kind = ReductionKind::Max;
  CHECK(shardingToString(s) ==
        "#sdy.sharding<@mesh, [{\"a\", ?}, {?}, {\"b\"}p1], "
        "replicated={\"c\"}, unreduced=max{\"d\"}>");
  s.mesh = MeshRef{"", Mesh{{{"x", 2}}, {1, 0}}};
  s.unreduced_kind = ReductionKind::Sum;
  CHECK(shardingBodyToString(s) ==
        "<mesh<[\"x\"=2], device_ids=[1, 0]>, [{\"a\", ?}, {?}, {\"b\"}p1], "
        "replicated={\"c\"}, unreduced={\"d\"}>");
  CHECK(factorSymbol(0) == "i");
  CHECK(factorSymbol(17) == "z");
  CHECK(factorSymbol(18) == "z_1");
  CHECK(rankedTensorTypeToString({kDynamic, 32}, "f32") == "tensor<?x32xf32>");
  CHECK(rankedTensorTypeToString({}, "i1") == "tensor<i1>");
  CHECK(reductionKindName(ReductionKind::Min) == "min");
}
