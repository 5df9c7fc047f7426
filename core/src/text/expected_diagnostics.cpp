#include "text/expected_diagnostics.h"

namespace shardlab {

namespace {

struct Expected {
  Severity severity;
  uint32_t line;
  std::string text;
  bool matched = false;
};

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos)
      end = text.size();
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

bool isDesignatorLine(std::string_view line) {
  return line.find("expected-") != std::string_view::npos;
}

// Parses `expected-<kind>[@<offset>] {{text}}` at `at` in `line`.
bool parseAnnotation(const std::vector<std::string_view> &lines, size_t index,
                     size_t at, Expected &out) {
  std::string_view line = lines[index];
  std::string_view rest = line.substr(at + 9);
  static const std::pair<std::string_view, Severity> kinds[] = {
      {"error", Severity::Error},
      {"warning", Severity::Warning},
      {"note", Severity::Note},
      {"remark", Severity::Remark}};
  bool found = false;
  for (const auto &[name, severity] : kinds)
    if (rest.rfind(name, 0) == 0) {
      out.severity = severity;
      rest = rest.substr(name.size());
      found = true;
      break;
    }
  if (!found)
    return false;
  size_t target = index;
  size_t space = rest.find_first_not_of(' ');
  rest =
      space == std::string_view::npos ? std::string_view() : rest.substr(space);
  if (!rest.empty() && rest[0] == '@') {
    rest = rest.substr(1);
    if (rest.rfind("above", 0) == 0) {
      while (target > 0 && isDesignatorLine(lines[--target])) {
      }
      rest = rest.substr(5);
    } else if (rest.rfind("below", 0) == 0) {
      while (target + 1 < lines.size() && isDesignatorLine(lines[++target])) {
      }
      rest = rest.substr(5);
    } else {
      bool minus = rest[0] == '-';
      size_t digits = 1;
      int64_t offset = 0;
      while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9')
        offset = offset * 10 + (rest[digits++] - '0');
      target = minus ? index - static_cast<size_t>(offset)
                     : index + static_cast<size_t>(offset);
      rest = rest.substr(digits);
    }
  }
  size_t open = rest.find("{{");
  size_t close = rest.rfind("}}");
  if (open == std::string_view::npos || close == std::string_view::npos ||
      close < open)
    return false;
  out.text = std::string(rest.substr(open + 2, close - open - 2));
  out.line = static_cast<uint32_t>(target + 1);
  return true;
}

} // namespace

bool checkExpectedDiagnostics(std::string_view chunk, uint32_t first_line,
                              const std::vector<Diagnostic> &diags,
                              const std::string &file, std::ostream &err) {
  std::vector<std::string_view> lines = splitLines(chunk);
  std::vector<Expected> expected;
  for (size_t i = 0; i < lines.size(); ++i) {
    size_t at = lines[i].find("expected-");
    Expected annotation;
    if (at != std::string_view::npos &&
        parseAnnotation(lines, i, at, annotation)) {
      annotation.line += first_line;
      expected.push_back(std::move(annotation));
    }
  }
  bool ok = true;
  for (const Diagnostic &diag : diags) {
    bool matched = false;
    for (Expected &want : expected)
      if (want.severity == diag.severity && want.line == diag.loc.line &&
          diag.message.find(want.text) != std::string::npos) {
        want.matched = matched = true;
      }
    if (!matched) {
      err << file << ":" << diag.loc.line << ":" << diag.loc.col
          << ": error: unexpected " << severityName(diag.severity) << ": "
          << diag.message << "\n";
      ok = false;
    }
  }
  for (const Expected &want : expected)
    if (!want.matched) {
      err << file << ":" << want.line << ": error: expected "
          << severityName(want.severity) << " \"" << want.text
          << "\" was not produced\n";
      ok = false;
    }
  return ok;
}

} // namespace shardlab
