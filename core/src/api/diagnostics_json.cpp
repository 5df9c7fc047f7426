// Diagnostics as JSON with the range an editor underlines.
#include "diagnostics_json.h"

#include <algorithm>
#include <cctype>

namespace shardlab::api::detail {
namespace {

/// Offsets of the starts of the lines of a text.
class LineIndex {
public:
  explicit LineIndex(std::string_view text) : text_(text) {
    starts_.push_back(0);
    for (size_t i = text.find('\n'); i != std::string_view::npos;
         i = text.find('\n', i + 1))
      starts_.push_back(i + 1);
  }
  /// The offset of 1-based line:column, or npos when outside the text.
  size_t offset(Location loc) const {
    if (loc.line == 0 || loc.line > starts_.size())
      return std::string_view::npos;
    size_t at = starts_[loc.line - 1] + std::max<uint32_t>(loc.col, 1) - 1;
    return at <= text_.size() ? at : std::string_view::npos;
  }
  Location location(size_t offset) const {
    auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
    size_t line = size_t(it - starts_.begin());
    return {uint32_t(line), uint32_t(offset - starts_[line - 1] + 1)};
  }
  std::string_view text() const { return text_; }

private:
  std::string_view text_;
  std::vector<size_t> starts_;
};

bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '$' || c == '-' || c == '#';
}

/// The end of the token starting at `at`: an SSA name, symbol, op name or
/// number; a quoted string; else one character.
size_t tokenEnd(std::string_view text, size_t at) {
  if (at >= text.size())
    return at;
  char c = text[at];
  if (c == '"') {
    size_t end = at + 1;
    while (end < text.size() && text[end] != '"' && text[end] != '\n')
      end += text[end] == '\\' ? 2 : 1;
    return std::min(end + 1, text.size());
  }
  size_t end = at + 1;
  if (c == '%' || c == '@' || c == '^' || c == '!' || isWordChar(c))
    while (end < text.size() && isWordChar(text[end]))
      ++end;
  return end;
}

SourceRange rangeOf(const Diagnostic &diag, const LineIndex &lines) {
  if (diag.range.start.line != 0)
    return diag.range;
  size_t at = lines.offset(diag.loc);
  if (at == std::string_view::npos)
    return {diag.loc, diag.loc};
  return {diag.loc, lines.location(tokenEnd(lines.text(), at))};
}

json position(Location loc) {
  return {{"line", loc.line}, {"column", loc.col}};
}

} // namespace

json diagnosticsJson(const std::vector<Diagnostic> &diagnostics,
                     std::string_view source) {
  json array = json::array();
  if (diagnostics.empty()) // the line index reads the whole source
    return array;
  LineIndex lines(source);
  for (const Diagnostic &diag : diagnostics) {
    SourceRange range = rangeOf(diag, lines);
    json related = json::array();
    for (const RelatedLocation &other : diag.related)
      related.push_back({{"line", other.loc.line},
                         {"column", other.loc.col},
                         {"message", other.message}});
    array.push_back(
        {{"severity", std::string(severityName(diag.severity))},
         {"message", diag.message},
         {"line", diag.loc.line},
         {"column", diag.loc.col},
         {"range",
          {{"start", position(range.start)}, {"end", position(range.end)}}},
         {"related", related}});
  }
  return array;
}

json failureReply(const std::string &error,
                  const std::vector<Diagnostic> &diagnostics,
                  std::string_view source) {
  return {{"ok", false},
          {"error", error},
          {"diagnostics", diagnosticsJson(diagnostics, source)}};
}

} // namespace shardlab::api::detail
