#include "text/float_text.h"

#include "support/big_uint.h"
#include "support/decimal.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace shardlab {

namespace {

// APFloat::toString's digit budget when asked for none: enough digits to
// read the value back (Steele and White's bound, as LLVM writes it).
unsigned naturalPrecision(const FloatFormat &format) {
  return 2 + format.precision() * 59 / 196;
}

// The exact decimal digits of significand * 2^exponent (most significant
// first) and the power of ten of the last digit, after APFloat's first cut:
// it drops whole tens by truncating division while the integer is wider
// than `precision` digits need, before it rounds the digits themselves.
std::string exactDigits(uint64_t significand, int exponent, unsigned precision,
                        int &exp10) {
  while ((significand & 1) == 0) { // trailing binary zeros
    significand >>= 1;
    ++exponent;
  }
  BigUint n(significand);
  exp10 = 0;
  if (exponent > 0) {
    n.shiftLeft(static_cast<unsigned>(exponent));
  } else if (exponent < 0) { // N * 2^-e == N * 5^e * 10^-e
    n.multiplyByPowerOf5(static_cast<unsigned>(-exponent));
    exp10 = exponent;
  }
  const unsigned bits = n.bitLength();
  const unsigned bits_required = (precision * 196 + 58) / 59;
  if (bits > bits_required) {
    unsigned tens = (bits - bits_required) * 59 / 196;
    exp10 += static_cast<int>(tens);
    n.divideByPowerOf10(tens);
  }
  std::string digits = n.toDecimal();
  while (digits.size() > 1 && digits.back() == '0') {
    digits.pop_back();
    ++exp10;
  }
  return digits;
}

// Rounds `digits` to `precision` digits, half up, dropping trailing zeros
// (APFloat's AdjustToPrecision on its digit buffer).
void roundDigits(std::string &digits, int &exp10, unsigned precision) {
  const size_t count = digits.size();
  if (count <= precision)
    return;
  const bool up = digits[precision] >= '5';
  digits.resize(precision);
  if (up) {
    while (!digits.empty() && digits.back() == '9')
      digits.pop_back();
    if (digits.empty()) {
      digits = "1";
      exp10 += static_cast<int>(count);
      return;
    }
    ++digits.back();
  } else {
    while (digits.size() > 1 && digits.back() == '0')
      digits.pop_back();
  }
  exp10 += static_cast<int>(count - digits.size());
}

void appendScientific(std::string &out, const std::string &digits, int exp10,
                      unsigned precision, bool truncate_zero) {
  const size_t count = digits.size();
  int exponent = exp10 + static_cast<int>(count) - 1;
  out += digits[0];
  out += '.';
  if (count == 1 && truncate_zero)
    out += '0';
  else
    out.append(digits, 1, std::string::npos);
  if (!truncate_zero && precision > count - 1)
    out.append(precision - count + 1, '0');
  out += truncate_zero ? 'E' : 'e';
  out += exponent >= 0 ? '+' : '-';
  std::string power = std::to_string(std::abs(exponent));
  if (!truncate_zero && power.size() < 2)
    out += '0';
  out += power;
}

bool useScientific(size_t count, int exp10, unsigned precision,
                   unsigned max_padding) {
  if (max_padding == 0)
    return true;
  if (exp10 >= 0) // 765e3 -> 765000, unless that looks more precise
    return static_cast<unsigned>(exp10) > max_padding ||
           count + static_cast<unsigned>(exp10) > precision;
  const int msd = exp10 + static_cast<int>(count) - 1;
  return msd < 0 && static_cast<unsigned>(-msd) > max_padding;
}

void appendPlain(std::string &out, const std::string &digits, int exp10) {
  if (exp10 >= 0) {
    out += digits;
    out.append(static_cast<size_t>(exp10), '0');
    return;
  }
  const int whole = exp10 + static_cast<int>(digits.size());
  if (whole > 0) {
    out.append(digits, 0, static_cast<size_t>(whole));
    out += '.';
    out.append(digits, static_cast<size_t>(whole), std::string::npos);
    return;
  }
  out += "0.";
  out.append(static_cast<size_t>(-whole), '0');
  out += digits;
}

std::string zeroSpelling(bool negative, unsigned precision,
                         unsigned max_padding, bool truncate_zero) {
  std::string out = negative ? "-" : "";
  if (max_padding != 0)
    return out + "0";
  if (truncate_zero)
    return out + "0.0E+0";
  out += "0.0";
  if (precision > 1)
    out.append(precision - 1, '0');
  return out + "e+00";
}

// A decimal literal as digits * 10^exp10 (sign dropped).
BigUint decimalValue(std::string_view text, int &exp10) {
  BigUint value;
  exp10 = 0;
  size_t i = text.empty() || text[0] != '-' ? 0 : 1;
  bool fraction = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.') {
      fraction = true;
    } else if (c >= '0' && c <= '9') {
      value.multiplyBySmall(10);
      value.addSmall(static_cast<uint32_t>(c - '0'));
      exp10 -= fraction ? 1 : 0;
    } else {
      break; // the exponent
    }
  }
  if (i + 1 < text.size())
    exp10 += std::atoi(std::string(text.substr(i + 1)).c_str());
  return value;
}

// -1, 0, 1 as the decimal `text` is below, at or above |value| (finite).
int compareMagnitude(std::string_view text, double value) {
  int exp10 = 0;
  BigUint decimal = decimalValue(text, exp10);
  int exp2 = 0;
  double fraction = std::frexp(std::fabs(value), &exp2);
  BigUint binary(static_cast<uint64_t>(std::ldexp(fraction, 53)));
  exp2 -= 53;
  if (exp10 >= 0)
    decimal.multiplyByPowerOf10(static_cast<unsigned>(exp10));
  else
    binary.multiplyByPowerOf10(static_cast<unsigned>(-exp10));
  if (exp2 >= 0)
    binary.shiftLeft(static_cast<unsigned>(exp2));
  else
    decimal.shiftLeft(static_cast<unsigned>(-exp2));
  return decimal.compare(binary);
}

// Whether `value` lies exactly halfway between two neighbours of `format`:
// the one case where rounding through f64 can differ from rounding once.
bool isTie(double value, const FloatFormat &format) {
  const double magnitude = std::fabs(value);
  if (magnitude == 0 || !std::isfinite(magnitude))
    return false;
  const int min_exponent =
      format.fraction_bits > 0 ? 1 - format.bias : -format.bias;
  const int quantum = std::max(std::ilogb(magnitude), min_exponent) -
                      static_cast<int>(format.fraction_bits);
  const double scaled = std::ldexp(magnitude, -quantum);
  return scaled - std::floor(scaled) == 0.5;
}

} // namespace

std::string hexBits(uint64_t bits) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  char buffer[16];
  size_t n = 0;
  do {
    buffer[n++] = kDigits[bits & 0xF];
    bits >>= 4;
  } while (bits);
  std::string out = "0x";
  while (n)
    out += buffer[--n];
  return out;
}

std::string apfloatToString(uint64_t bits, const FloatFormat &format,
                            unsigned precision, unsigned max_padding,
                            bool truncate_zero) {
  const bool negative = signBit(bits, format);
  if (precision == 0)
    precision = naturalPrecision(format);
  uint64_t significand = 0;
  int exponent = 0;
  if (!decomposeFloat(bits, format, significand, exponent))
    return zeroSpelling(negative, precision, max_padding, truncate_zero);
  int exp10 = 0;
  std::string digits = exactDigits(significand, exponent, precision, exp10);
  roundDigits(digits, exp10, precision);
  std::string out = negative ? "-" : "";
  if (useScientific(digits.size(), exp10, precision, max_padding))
    appendScientific(out, digits, exp10, precision, truncate_zero);
  else
    appendPlain(out, digits, exp10);
  return out;
}

uint64_t floatBitsOfLiteral(std::string_view decimal,
                            const FloatFormat &format) {
  return encodeFloat(parseDecimal(decimal), format);
}

uint64_t nearestFloatBits(std::string_view decimal, const FloatFormat &format) {
  const double value = parseDecimal(decimal);
  if (format.bits == 64 || !isTie(value, format))
    return encodeFloat(value, format);
  // f64 rounded the literal onto a tie of the format; the literal itself
  // decides which way the one rounding goes.
  const int side = compareMagnitude(decimal, value);
  if (side == 0)
    return encodeFloat(value, format);
  const double away = std::copysign(INFINITY, value);
  const double toward = std::copysign(0.0, value);
  return encodeFloat(std::nextafter(value, side > 0 ? away : toward), format);
}

std::string formatFloatLiteral(uint64_t bits, const FloatFormat &format) {
  if (!isNanBits(bits, format) && !isInfBits(bits, format)) {
    std::string text = apfloatToString(bits, format, 6, 0, false);
    if (nearestFloatBits(text, format) == bits)
      return text;
    text = apfloatToString(bits, format, 0, 3, true);
    if (text.find('.') != std::string::npos)
      return text;
  }
  return hexBits(bits);
}

} // namespace shardlab
