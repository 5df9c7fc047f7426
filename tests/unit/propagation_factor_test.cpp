// Projection of dimension shardings onto factors and back, and basic /
// aggressive factor propagation, with the examples documenting Shardy's
// sharding_projection.h, basic_factor_propagation.h and
// aggressive_factor_propagation.h.
#include <doctest/doctest.h>

#include "propagation/factor_propagation.h"
#include "propagation/projection.h"
#include "shardlab/sharding/axis.h"

using namespace shardlab;

namespace {

AxisRef A(const char *name) { return fullAxis(name); }
AxisRef S(const char *name, int64_t pre, int64_t size) {
  return subAxis(name, pre, size);
}
using Axes = std::vector<AxisRef>;

// A projection row with the given axes per factor (all present and open).
TensorFactorShardings row(const std::vector<Axes> &per_factor) {
  TensorFactorShardings t;
  for (const Axes &axes : per_factor) {
    FactorSharding f;
    f.present = true;
    f.minor_most = true;
    f.axes = axes;
    t.factors.push_back(f);
  }
  return t;
}

TensorSharding sharding(std::vector<DimSharding> dims) {
  TensorSharding s;
  s.mesh.symbol = "mesh";
  s.dims = std::move(dims);
  return s;
}

} // namespace

TEST_CASE("projection splits an axis over a compound dimension and back") {
  Mesh mesh{{{"x", 4}, {"y", 2}}, {}};
  OpShardingRule rule;
  rule.operands = {{{0, 1}}};
  rule.results = {{{0}, {1}}};
  rule.factor_sizes = {2, 4};
  TensorSharding in = sharding({DimSharding{{A("x"), A("y")}, true, {}}});
  ShardingProjection p = buildProjection({&in}, {nullptr}, rule, mesh);
  CHECK(p.operands[0].factors[0].axes == Axes{S("x", 1, 2)});
  CHECK(p.operands[0].factors[1].axes == Axes{S("x", 2, 2), A("y")});
  CHECK(p.operands[0].factors[0].closed);
  CHECK_FALSE(p.results[0].factors[0].closed);
  p.results[0].factors = p.operands[0].factors;
  p.results[0].factors[0].closed = p.results[0].factors[1].closed = false;
  TensorSharding out = unproject(p.results[0], rule.results[0],
                                 rule.factor_sizes, in.mesh, mesh);
  CHECK(out.dims[0].axes == Axes{S("x", 1, 2)});
  CHECK(out.dims[1].axes == Axes{S("x", 2, 2), A("y")});
  CHECK_FALSE(out.dims[0].closed);
  TensorSharding back = unproject(p.operands[0], rule.operands[0],
                                  rule.factor_sizes, in.mesh, mesh);
  CHECK(back.dims[0].axes == Axes{A("x"), A("y")});
}

TEST_CASE("a coprime axis overflows a non-minor factor and closes the rest") {
  Mesh mesh{{{"x", 3}}, {}};
  OpShardingRule rule;
  rule.operands = {{{0, 1}}};
  rule.factor_sizes = {4, 6};
  TensorSharding in = sharding({DimSharding{{A("x")}, false, {}}});
  TensorFactorShardings t =
      projectTensor(rule.operands[0], &in, rule.factor_sizes, mesh, false);
  CHECK(t.factors[0].axes.empty());
  CHECK(t.factors[0].overflow == Axes{A("x")});
  CHECK(t.factors[1].closed);
  TensorSharding back =
      unproject(t, rule.operands[0], rule.factor_sizes, in.mesh, mesh);
  CHECK(back.dims[0].axes == Axes{A("x")});
  CHECK_FALSE(back.dims[0].closed); // the closed factor is never reached
}

TEST_CASE("axis-list prefix status") {
  CHECK(axisListPrefixStatus({}, {}) == PrefixStatus::Equal);
  CHECK(isStrictPrefix({}, {A("a")}));
  CHECK(isStrictPrefix({S("a", 1, 2)}, {A("a")}));
  CHECK(isStrictPrefix({A("a")}, {A("a"), A("b")}));
  CHECK_FALSE(isStrictPrefix({A("a")}, {A("a")}));
  CHECK_FALSE(isStrictPrefix({A("b")}, {A("a"), A("b")}));
  CHECK_FALSE(isStrictPrefix({S("a", 2, 2)}, {A("a")}));
}

TEST_CASE("compatible major axes (header examples, direction BOTH)") {
  auto major = [](std::vector<Axes> lists) {
    ShardingProjection p;
    for (const Axes &axes : lists)
      p.operands.push_back(row({axes}));
    return compatibleMajorAxes(p, 0, PropagationDirection::Both);
  };
  CHECK(major({{A("a"), A("b")}, {A("a"), A("c")}}) == Axes{A("a")});
  CHECK(
      major(
          {{A("a")}, {}, {A("a"), A("b"), A("c")}, {A("a"), A("b"), A("d")}}) ==
      Axes{A("a"), A("b")});
  CHECK(major({{S("a", 1, 2)}, {S("a", 1, 4)}}) == Axes{S("a", 1, 4)});
  CHECK(major({{S("a", 1, 2), A("b")}, {S("a", 1, 4)}}) == Axes{S("a", 1, 2)});
  CHECK(major({{S("a", 1, 2)}, {S("a", 2, 2)}}).empty());
}

TEST_CASE("forward direction lets results shorten but not extend the axes") {
  ShardingProjection p;
  p.operands.push_back(row({{A("a")}}));
  p.results.push_back(row({{A("a"), A("b")}}));
  CHECK(compatibleMajorAxes(p, 0, PropagationDirection::Forward) ==
        Axes{A("a")});
  CHECK(compatibleMajorAxes(p, 0, PropagationDirection::Backward) ==
        Axes{A("a"), A("b")});
  CHECK(compatibleMajorAxes(p, 0, PropagationDirection::None).empty());
}

TEST_CASE("direction union and intersection") {
  using D = PropagationDirection;
  CHECK(unionOfDirections(D::Forward, D::Backward) == D::Both);
  CHECK(unionOfDirections(D::None, D::Forward) == D::Forward);
  CHECK(intersectionOfDirections(D::Forward, D::Backward) == D::None);
  CHECK(intersectionOfDirections(D::Both, D::Backward) == D::Backward);
}

TEST_CASE("basic propagation expands the design doc's table") {
  // F0, F1, F2 over T0 (operand) and T1, T2 (results); replicated f, g.
  ShardingProjection p;
  p.operands.push_back(row({{A("a")}, {}, {}}));
  p.operands[0].replicated = {A("f")};
  p.results.push_back(row({{A("a"), A("b")}, {A("c"), A("d")}, {}}));
  p.results[0].replicated = {A("g")};
  p.results.push_back(row({{}, {A("c"), A("e")}, {}}));
  std::vector<int64_t> sizes = {64, 64, 64};
  FactorDirectionFn both = [](int64_t) { return PropagationDirection::Both; };
  FactorPropagationInput in{&both, &sizes, nullptr, false, false};
  TensorUpdates updates = propagateFactors(FactorStrategy::Basic, p, in);
  CHECK(p.operands[0].factors[0].axes == Axes{A("a"), A("b")});
  CHECK(p.operands[0].factors[1].axes == Axes{A("c")});
  CHECK(p.results[1].factors[0].axes == Axes{A("a"), A("b")});
  CHECK(p.results[0].factors[1].axes == Axes{A("c"), A("d")});
  CHECK(updates.operands[0]);
  CHECK_FALSE(updates.results[0]);
  CHECK(updates.results[1]);
}

TEST_CASE("basic propagation respects closed factors and replicated axes") {
  ShardingProjection p;
  p.operands.push_back(row({{A("a")}}));
  p.results.push_back(row({{}}));
  p.results[0].factors[0].closed = true;
  std::vector<int64_t> sizes = {8};
  FactorDirectionFn both = [](int64_t) { return PropagationDirection::Both; };
  FactorPropagationInput in{&both, &sizes, nullptr, false, false};
  propagateFactors(FactorStrategy::Basic, p, in);
  CHECK(p.results[0].factors[0].axes.empty());

  ShardingProjection q;
  q.operands.push_back(row({{A("a")}}));
  q.results.push_back(row({{}}));
  q.results[0].replicated = {A("a")};
  propagateFactors(FactorStrategy::Basic, q, in);
  CHECK(q.results[0].factors[0].axes.empty());
}

TEST_CASE("aggressive propagation resolves a conflict across factors") {
  // C = dot(A, B): factors i (A0, C0), j (B1, C1), k (A1, B0).
  // A = [{"a"}, {}], B = [{}, {"a"}]: both i and j want "a"; the larger
  // source tensor (equal here) then the lower index wins: i.
  Mesh mesh{{{"a", 2}}, {}};
  ShardingProjection p;
  TensorFactorShardings lhs = row({{A("a")}, {}, {}});
  lhs.factors[1].present = false;
  TensorFactorShardings rhs = row({{}, {A("a")}, {}});
  rhs.factors[0].present = false;
  TensorFactorShardings out = row({{}, {}, {}});
  out.factors[2].present = false;
  p.operands = {lhs, rhs};
  p.results = {out};
  std::vector<int64_t> sizes = {8, 8, 8};
  FactorDirectionFn both = [](int64_t) { return PropagationDirection::Both; };
  FactorPropagationInput in{&both, &sizes, &mesh, false, false};
  ShardingProjection basic = p;
  propagateFactors(FactorStrategy::Basic, basic, in);
  CHECK(basic.results[0].factors[0].axes.empty());
  CHECK(basic.results[0].factors[1].axes.empty());
  TensorUpdates updates = propagateFactors(FactorStrategy::Aggressive, p, in);
  CHECK(p.results[0].factors[0].axes == Axes{A("a")});
  CHECK(p.results[0].factors[1].axes.empty());
  CHECK(updates.results[0]);
  CHECK_FALSE(updates.operands[0]);
}
