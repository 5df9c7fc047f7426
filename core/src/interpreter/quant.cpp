// Parsing `!quant.uniform<STORAGE[<MIN:MAX>]:EXPRESSED, SCALE[:ZERO_POINT]>`.
#include "shardlab/interpreter/quant.h"

#include <cstdlib>

namespace shardlab::interpreter {
namespace {

bool integerType(std::string_view text, unsigned &bits, bool &is_unsigned) {
  is_unsigned = text.substr(0, 2) == "ui" || text.substr(0, 1) == "u";
  const size_t digits = text.find_first_of("0123456789");
  if (digits == std::string_view::npos || (text[0] != 'i' && !is_unsigned))
    return false;
  bits = unsigned(
      std::strtoul(std::string(text.substr(digits)).c_str(), nullptr, 10));
  return bits > 0 && bits <= 64;
}

} // namespace

std::optional<UniformQuant> uniformQuant(std::string_view text) {
  constexpr std::string_view kPrefix = "!quant.uniform<";
  if (text.substr(0, kPrefix.size()) != kPrefix || text.back() != '>')
    return std::nullopt;
  std::string_view body = text.substr(kPrefix.size());
  body.remove_suffix(1);
  const size_t comma = body.find(',');
  if (comma == std::string_view::npos ||
      body.find('{') != std::string_view::npos)
    return std::nullopt; // per-axis: not run
  std::string_view types = body.substr(0, comma);
  std::string_view params = body.substr(comma + 1);
  while (!params.empty() && params.front() == ' ')
    params.remove_prefix(1);
  UniformQuant q;
  // STORAGE[<MIN:MAX>]:EXPRESSED
  std::string_view storage = types.substr(0, types.find_first_of("<:"));
  if (!integerType(storage, q.storage_bits, q.storage_unsigned))
    return std::nullopt;
  q.storage = std::string(storage);
  const int64_t w = q.storage_bits;
  if (q.storage_unsigned) {
    q.storage_min = 0;
    q.storage_max = w >= 63 ? INT64_MAX : (int64_t{1} << w) - 1;
  } else {
    q.storage_min = w >= 64 ? INT64_MIN : -(int64_t{1} << (w - 1));
    q.storage_max = w >= 64 ? INT64_MAX : (int64_t{1} << (w - 1)) - 1;
  }
  std::string_view rest = types.substr(storage.size());
  if (!rest.empty() && rest.front() == '<') {
    const size_t close = rest.find('>');
    if (close == std::string_view::npos)
      return std::nullopt;
    const std::string range(rest.substr(1, close - 1));
    const size_t colon = range.find(':');
    if (colon == std::string::npos)
      return std::nullopt;
    q.storage_min = std::strtoll(range.c_str(), nullptr, 10);
    q.storage_max = std::strtoll(range.c_str() + colon + 1, nullptr, 10);
    rest.remove_prefix(close + 1);
  }
  if (rest.empty() || rest.front() != ':')
    return std::nullopt;
  q.expressed = std::string(rest.substr(1));
  // SCALE[:ZERO_POINT]
  const std::string p(params);
  char *end = nullptr;
  q.scale = std::strtod(p.c_str(), &end);
  if (end == p.c_str())
    return std::nullopt;
  if (*end == ':')
    q.zero_point = std::strtoll(end + 1, nullptr, 10);
  return q;
}

} // namespace shardlab::interpreter
