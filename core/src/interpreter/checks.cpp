// The `check.*` custom calls of StableHLO's test dialect, as JAX's exported
// test modules use them. expect_eq / eq: exact (a NaN equals a NaN, -0
// equals +0); expect_close: at most `max_ulp_difference` (default 3) units
// in the last place apart; expect_almost_eq: |actual - expected| within
// `tolerance` (default 1e-4), per part for complex elements. The *_const
// forms compare with their `value` attribute.
#include "indexing.h"
#include "ops.h"

#include "rules/stablehlo_attrs.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace shardlab::interpreter::detail {
namespace {

// Bits read so that adjacent floats differ by one: the ULP distance is the
// difference of keys.
int64_t orderedKey(uint64_t bits, const FloatFormat &format) {
  const uint64_t sign = uint64_t{1} << (format.bits - 1);
  const int64_t magnitude = int64_t(bits & (sign - 1));
  return bits & sign ? -magnitude : magnitude;
}

bool closeUlps(uint64_t a, uint64_t b, const FloatFormat &format,
               uint64_t max_ulps) {
  const bool nan_a = isNanBits(a, format), nan_b = isNanBits(b, format);
  if (nan_a || nan_b)
    return nan_a && nan_b;
  if (isZeroBits(a, format) && isZeroBits(b, format))
    return true;
  return uint64_t(std::llabs(orderedKey(a, format) - orderedKey(b, format))) <=
         max_ulps;
}

bool equalFloat(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

bool almost(double a, double b, double tolerance) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  if (a == b)
    return true;
  return std::fabs(a - b) <= tolerance;
}

std::string describe(const Tensor &t, int64_t i) {
  std::ostringstream s;
  s.precision(17);
  if (t.isInteger())
    s << t.integer(i);
  else if (t.isComplex())
    s << "(" << t.real(i) << ", " << t.imag(i) << ")";
  else
    s << t.real(i);
  return s.str();
}

enum class Kind { Eq, Close, Almost };

// The first element where actual and expected differ, or -1.
int64_t firstMismatch(const Tensor &actual, const Tensor &expected, Kind kind,
                      uint64_t max_ulps, double tolerance) {
  const int64_t n = actual.size();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = expected.size() == 1 ? 0 : i;
    bool same = true;
    if (actual.isInteger()) {
      same = actual.integer(i) == expected.integer(j);
    } else {
      for (unsigned p = 0; p < actual.parts() && same; ++p) {
        const double a = p ? actual.imag(i) : actual.real(i);
        const double e = p ? expected.imag(j) : expected.real(j);
        if (kind == Kind::Eq)
          same = equalFloat(a, e);
        else if (kind == Kind::Almost)
          same = almost(a, e, tolerance);
        else
          same = closeUlps(actual.bits(i, p), expected.bits(j, p),
                           *actual.layout().float_format, max_ulps);
      }
    }
    if (!same)
      return i;
  }
  return -1;
}

// The `value` attribute of a *_const check as a tensor of the operand's
// type.
std::optional<Tensor> constValue(const Operation &op, const Tensor &like) {
  const Attr *value = rules::findAttr(op, "value");
  if (!value || value->kind != AttrKind::DenseElements)
    return std::nullopt;
  const DenseReader reader = value->denseReader();
  if (!reader.valid())
    return std::nullopt;
  return fromLiteral(reader, like.type());
}

} // namespace

std::optional<CheckResult>
runCheck(const Operation &op, std::string_view target, const Operands &in) {
  Kind kind;
  bool is_const = false;
  if (target == "check.expect_eq" || target == "check.eq")
    kind = Kind::Eq;
  else if (target == "check.expect_eq_const")
    kind = Kind::Eq, is_const = true;
  else if (target == "check.expect_close")
    kind = Kind::Close;
  else if (target == "check.expect_almost_eq")
    kind = Kind::Almost;
  else if (target == "check.expect_almost_eq_const")
    kind = Kind::Almost, is_const = true;
  else
    return std::nullopt;
  CheckResult r;
  r.op = std::string(target);
  r.line = op.loc.line;
  if (in.empty() || (!is_const && in.size() < 2)) {
    r.detail = "expected two operands";
    return r;
  }
  std::optional<Tensor> expected_const;
  if (is_const) {
    expected_const = constValue(op, *in[0]);
    if (!expected_const) {
      r.detail = "no readable `value` attribute";
      return r;
    }
  }
  const Tensor &actual = *in[0];
  const Tensor &expected = is_const ? *expected_const : *in[1];
  if (expected.size() != actual.size() && expected.size() != 1) {
    r.detail = "operands of different sizes";
    return r;
  }
  const std::optional<int64_t> ulps = rules::intAttr(op, "max_ulp_difference");
  const Attr *tol = rules::findAttr(op, "tolerance");
  const double tolerance =
      tol && tol->kind == AttrKind::Float ? tol->floatValue() : 1e-4;
  const int64_t bad = firstMismatch(actual, expected, kind,
                                    uint64_t(ulps.value_or(3)), tolerance);
  r.passed = bad < 0;
  if (!r.passed)
    r.detail = "element " + std::to_string(bad) + ": " + describe(actual, bad) +
               ", expected " +
               describe(expected, expected.size() == 1 ? 0 : bad);
  return r;
}

} // namespace shardlab::interpreter::detail
