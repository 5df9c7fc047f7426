// CharClass: what MLIR's lexer makes of each byte (identifier start and
// body, digit, blank, the end of a simple type span), one table lookup per
// character: the parser's hot loops and the printer's bare-name tests read
// the same rule.
//
//   isIdStart('_') && isIdChar('$') && !isIdChar('-')   // true
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace shardlab {

// A chain of range compares per character was a tenth of parsing.
enum CharClass : uint8_t {
  kIdStart = 1,  ///< a-z A-Z _
  kIdChar = 2,   ///< kIdStart, digits, '$', '.'
  kDigit = 4,    ///< 0-9
  kBlank = 8,    ///< ' ' '\t' '\n' '\r'
  kSpanStop = 16 ///< ends a simple type span's `<...>`: > < \n " (
                 ///< (Parser::spanStop tests the same five)
};

constexpr std::array<uint8_t, 256> makeCharClasses() {
  std::array<uint8_t, 256> classes{};
  for (int c = 0; c < 256; ++c) {
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    const bool digit = c >= '0' && c <= '9';
    uint8_t bits = 0;
    if (letter || c == '_')
      bits |= kIdStart | kIdChar;
    if (digit)
      bits |= kDigit | kIdChar;
    if (c == '$' || c == '.')
      bits |= kIdChar;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
      bits |= kBlank;
    if (c == '>' || c == '<' || c == '\n' || c == '"' || c == '(')
      bits |= kSpanStop;
    classes[static_cast<size_t>(c)] = bits;
  }
  return classes;
}
inline constexpr std::array<uint8_t, 256> kCharClasses = makeCharClasses();

inline bool hasClass(char c, CharClass bits) {
  return (kCharClasses[static_cast<unsigned char>(c)] & bits) != 0;
}
inline bool isIdStart(char c) { return hasClass(c, kIdStart); }
inline bool isIdChar(char c) { return hasClass(c, kIdChar); }
inline bool isDigit(char c) { return hasClass(c, kDigit); }
/// Letters, digits, `_`, `$` and `.` only: a bare MLIR identifier's body.
inline bool isIdentifierBody(std::string_view name) {
  for (char c : name)
    if (!isIdChar(c))
      return false;
  return true;
}

} // namespace shardlab
