// Decimal text to double, rounded as strtod rounds (to nearest), for the
// float literals of module text: dense constants of real programs hold
// thousands. fast_float (libfast-float-dev) parses them without the C
// library: the WASM build's strtod (musl) computes in 128-bit long double,
// which WebAssembly emulates in software.
//
//   parseDecimal("1.250000e-01") == 0.125
//   parseDecimal("-3")           == -3.0
//   parseDecimal("1e400")        == HUGE_VAL (as strtod; so are the forms
//                                   fast_float leaves to it)
#pragma once

#include <string_view>

namespace shardlab {

/// The double nearest to `text` (a decimal, optionally signed and with an
/// exponent); whatever strtod reads of it otherwise.
double parseDecimal(std::string_view text);

} // namespace shardlab
