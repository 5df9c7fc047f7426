// Parsing of `#sdy.op_sharding_rule<...>`: factor symbols (`i`..`z`, then
// `z_1`, `z_2`, ...), tensor mappings, factor sizes and special factors.
#include "parser.h"

#include <algorithm>

namespace shardlab {

namespace {

// Index 0..17 is 'i'..'z'; index 17 + n is `z_n`.
constexpr int64_t kLastLetterIndex = 'z' - 'i';

std::string factorSymbol(int64_t index) {
  if (index <= kLastLetterIndex)
    return std::string(1, static_cast<char>('i' + index));
  return "z_" + std::to_string(index - kLastLetterIndex);
}

struct SymbolScan {
  std::vector<int64_t> factors;
  std::string error;      ///< fatal error, if any
  std::string soft_error; ///< reported, parsing goes on
};

// Splits one identifier token such as `ij` or `zz_1` into factor indices.
SymbolScan scanFactorSymbols(std::string_view token) {
  SymbolScan scan;
  for (size_t i = 0; i < token.size();) {
    char c = token[i];
    if (c < 'i' || c > 'z') {
      scan.error = "expecting symbol from 'i' to 'z'. Received: '" +
                   std::string(1, c) + "'";
      return scan;
    }
    if (c != 'z' || i + 1 >= token.size() || token[i + 1] != '_') {
      scan.factors.push_back(c - 'i');
      ++i;
      continue;
    }
    size_t begin = i + 2, end = begin;
    while (end < token.size() && token[end] >= '0' && token[end] <= '9')
      ++end;
    std::string digits(token.substr(begin, end - begin));
    if (digits.empty()) {
      scan.error = "expecting integer after 'z_'. Received: '" +
                   std::string(token.substr(i)) + "'";
      return scan;
    }
    if (digits[0] == '0') {
      scan.error = "expecting positive integer without leading zeros. "
                   "Received: '" +
                   digits + "'";
      return scan;
    }
    bool too_big = digits.size() > 19 ||
                   (digits.size() == 19 && digits > "9223372036854775807");
    if (too_big)
      scan.soft_error =
          "expecting symbol index <=2^63-1. Received: '" + digits + "'";
    int64_t n = too_big ? INT64_MAX : std::stoll(digits);
    // Saturate: such an index can never match the factor sizes anyway.
    scan.factors.push_back(
        n > INT64_MAX - kLastLetterIndex ? INT64_MAX : n + kLastLetterIndex);
    i = end;
  }
  return scan;
}

} // namespace

bool Parser::parseFactorToken(std::vector<int64_t> &factors) {
  Location where = loc();
  std::string_view token = parseBareId();
  if (token.empty())
    return error("expecting symbol from 'i' to 'z'. Received: '" +
                 std::string(1, peek()) + "'");
  SymbolScan scan = scanFactorSymbols(token);
  if (!scan.soft_error.empty()) {
    diags_.error(where, scan.soft_error);
    soft_failed_ = true;
  }
  if (!scan.error.empty())
    return errorAt(where, scan.error);
  factors = std::move(scan.factors);
  return true;
}

bool Parser::parseTensorMappings(
    std::vector<OpShardingRule::TensorMapping> &out, const char *param) {
  std::string chain = std::string("failed to parse Sdy_OpShardingRule "
                                  "parameter '") +
                      param + "'";
  if (!expectChar('('))
    return false;
  do {
    if (!expectChar('['))
      return chainError(chain);
    OpShardingRule::TensorMapping mapping;
    if (peek() != ']') {
      do {
        OpShardingRule::DimMapping dim;
        if (peek() == ']') { // `[i,]`: an empty dim mapping, as Shardy reads it
          mapping.push_back(std::move(dim));
          break;
        }
        if (!parseFactorToken(dim)) {
          chainError("failed to parse Sdy_TensorMapping parameter "
                     "'dim_mappings'");
          return chainError(chain);
        }
        mapping.push_back(std::move(dim));
      } while (tryChar(','));
    }
    if (!expectChar(']'))
      return chainError(chain);
    out.push_back(std::move(mapping));
  } while (tryChar(','));
  return expectChar(')');
}

bool Parser::parseFactorSizes(OpShardingRule &rule) {
  if (!expectChar('{'))
    return false;
  int64_t expected = 0;
  do {
    Location where = loc();
    std::string_view token = parseBareId();
    SymbolScan scan = scanFactorSymbols(token);
    if (token.empty() || !scan.error.empty() || scan.factors.size() != 1 ||
        scan.factors[0] != expected)
      return errorAt(where,
                     "expecting factor indices to be ordered like an iota "
                     "([0,1,2,...], e.g. {i=#, j=#, ...}). Expecting factor "
                     "index symbol '" +
                         factorSymbol(expected) + "', received: '" +
                         std::string(token) + "'");
    int64_t size = 0;
    if (!expectChar('=') || !parseInt(size))
      return false;
    rule.factor_sizes.push_back(size);
    ++expected;
  } while (tryChar(','));
  return expectChar('}');
}

bool Parser::parseSpecialFactors(OpShardingRule &rule) {
  struct Kind {
    const char *keyword;
    std::vector<int64_t> *factors;
  };
  const Kind kinds[] = {{"reduction", &rule.reduction},
                        {"need_replication", &rule.need_replication},
                        {"permutation", &rule.permutation},
                        {"blocked_propagation", &rule.blocked_propagation}};
  for (const Kind &kind : kinds) {
    if (!tryKeyword(kind.keyword))
      continue;
    if (!expectChar('=') || !expectChar('{'))
      return false;
    if (tryChar('}'))
      continue;
    do {
      std::vector<int64_t> factors;
      if (!parseFactorToken(factors))
        return false;
      kind.factors->insert(kind.factors->end(), factors.begin(), factors.end());
    } while (tryChar(','));
    if (!expectChar('}'))
      return false;
  }
  return true;
}

bool Parser::parseShardingRuleBody(OpShardingRule &rule) {
  Location start = loc();
  if (!expectChar('<') ||
      !parseTensorMappings(rule.operands, "operand_mappings") ||
      !expectPunct("->") ||
      !parseTensorMappings(rule.results, "result_mappings"))
    return false;
  if (peek() == '{' && !parseFactorSizes(rule))
    return false;
  if (!parseSpecialFactors(rule))
    return false;
  if (tryChar(',')) {
    if (!expectKeyword("custom"))
      return false;
    rule.is_custom = true;
  }
  if (!expectChar('>'))
    return false;
  for (int64_t factor : rule.reduction)
    for (const auto &mapping : rule.results)
      for (const auto &dim : mapping)
        if (std::find(dim.begin(), dim.end(), factor) != dim.end())
          return errorAt(start, "reduction factor cannot be in result "
                                "mappings");
  return !soft_failed_;
}

} // namespace shardlab
