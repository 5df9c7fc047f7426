// Command-line flags, byte sizes and integer lists for the collectors.
#include "shardlab/collectors/flags.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>

namespace shardlab::collectors {
namespace {

const FlagSpec *findLong(const std::vector<FlagSpec> &specs,
                         std::string_view name) {
  for (const FlagSpec &s : specs)
    if (s.long_name == name)
      return &s;
  return nullptr;
}

const FlagSpec *findShort(const std::vector<FlagSpec> &specs, char c) {
  for (const FlagSpec &s : specs)
    if (s.short_name != 0 && s.short_name == c)
      return &s;
  return nullptr;
}

std::string trim(std::string_view text) {
  size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b])))
    ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1])))
    --e;
  return std::string(text.substr(b, e - b));
}

// Reads the flag's value: inline (--x=v, -xv) or the next argument.
Result<std::string> takeValue(const FlagSpec &spec, const std::string &inl,
                              bool has_inline,
                              const std::vector<std::string> &args, size_t *i) {
  if (spec.value_name.empty()) {
    if (has_inline)
      return makeError("--" + spec.long_name + " takes no value");
    return std::string("1");
  }
  if (has_inline)
    return inl;
  if (*i + 1 >= args.size())
    return makeError("--" + spec.long_name + " needs a value (" +
                     spec.value_name + ")");
  return args[++*i];
}

Result<int64_t> parseInt64(std::string_view text) {
  int64_t v = 0;
  const char *end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || text.empty())
    return makeError("not an integer");
  return v;
}

} // namespace

std::string ParsedFlags::get(const std::string &name,
                             const std::string &fallback) const {
  auto it = values.find(name);
  return it == values.end() ? fallback : it->second;
}

Result<ParsedFlags> parseFlags(const std::vector<FlagSpec> &specs,
                               const std::vector<std::string> &args) {
  ParsedFlags out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    const FlagSpec *spec = nullptr;
    std::string inl;
    bool has_inline = false;
    if (a.rfind("--", 0) == 0 && a.size() > 2) {
      const size_t eq = a.find('=');
      spec = findLong(
          specs,
          a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2));
      has_inline = eq != std::string::npos;
      if (has_inline)
        inl = a.substr(eq + 1);
    } else if (a.size() >= 2 && a[0] == '-' && a[1] != '-') {
      spec = findShort(specs, a[1]);
      has_inline = a.size() > 2;
      inl = a.substr(2);
    } else {
      return makeError("unexpected argument '" + a + "' (see --help)");
    }
    if (!spec)
      return makeError("unknown flag '" + a + "' (see --help)");
    Result<std::string> v = takeValue(*spec, inl, has_inline, args, &i);
    if (!v)
      return v.error();
    out.values[spec->long_name] = *v;
  }
  return out;
}

std::string formatHelp(const std::string &program, const std::string &summary,
                       const std::vector<FlagSpec> &specs,
                       const std::string &epilogue) {
  std::string text = "Usage: " + program + " [flags]\n\n" + summary + "\n\n";
  for (const FlagSpec &s : specs) {
    std::string left = "  ";
    left += s.short_name ? std::string("-") + s.short_name + ", " : "    ";
    left += "--" + s.long_name;
    if (!s.value_name.empty())
      left += " " + s.value_name;
    if (left.size() < 30)
      left.resize(30, ' ');
    else
      left += "\n" + std::string(30, ' ');
    text += left + s.help;
    if (!s.default_text.empty())
      text += " [" + s.default_text + "]";
    text += "\n";
  }
  return text + (epilogue.empty() ? "" : "\n" + epilogue);
}

Result<int64_t> parseBytes(std::string_view text) {
  const std::string orig = trim(text);
  std::string t = orig;
  for (char &c : t)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (t.size() > 3 && t.substr(t.size() - 2) == "IB")
    t.resize(t.size() - 2); // 1KiB -> 1K
  else if (t.size() > 2 && t.back() == 'B' &&
           std::isalpha(static_cast<unsigned char>(t[t.size() - 2])))
    t.pop_back(); // 1KB -> 1K
  int shift = 0;
  if (!t.empty()) {
    switch (std::toupper(static_cast<unsigned char>(t.back()))) {
    case 'K':
      shift = 10;
      break;
    case 'M':
      shift = 20;
      break;
    case 'G':
      shift = 30;
      break;
    case 'T':
      shift = 40;
      break;
    default:
      break;
    }
  }
  if (shift)
    t.pop_back();
  Result<int64_t> v = parseInt64(t);
  if (!v || *v < 1 || *v > (int64_t{1} << (62 - shift)))
    return makeError("'" + orig +
                     "' is not a byte size (examples: 1024, 1K, 32M, 2G)");
  return *v << shift;
}

std::string formatBytes(int64_t bytes) {
  const char *units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (u < 4 && bytes >= 1024 && bytes % 1024 == 0)
    bytes /= 1024, ++u;
  return std::to_string(bytes) + units[u];
}

Result<int64_t> parsePositiveInt(std::string_view text, std::string_view what) {
  Result<int64_t> v = parseInt64(trim(text));
  if (!v || *v < 1)
    return makeError(std::string(what) +
                     ": expected a positive integer, got '" +
                     std::string(text) + "'");
  return *v;
}

Result<double> parseFactor(std::string_view text, std::string_view what) {
  const std::string t = trim(text);
  char *end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !(v > 1) || !std::isfinite(v))
    return makeError(std::string(what) + ": expected a number > 1, got '" +
                     std::string(text) + "'");
  return v;
}

std::vector<std::string> splitList(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos)
      comma = text.size();
    std::string item = trim(text.substr(start, comma - start));
    if (!item.empty())
      out.push_back(item);
    start = comma + 1;
  }
  return out;
}

Result<std::vector<int64_t>> parseIntList(std::string_view text,
                                          std::string_view what) {
  std::set<int64_t> values;
  for (const std::string &item : splitList(text)) {
    const size_t dots = item.find("..");
    if (dots == std::string::npos) {
      Result<int64_t> v = parsePositiveInt(item, what);
      if (!v)
        return v.error();
      values.insert(*v);
      continue;
    }
    Result<int64_t> lo = parsePositiveInt(item.substr(0, dots), what);
    Result<int64_t> hi = parsePositiveInt(item.substr(dots + 2), what);
    if (!lo || !hi || *lo > *hi)
      return makeError(std::string(what) + ": bad range '" + item +
                       "' (expected LO..HI with 1 <= LO <= HI)");
    for (int64_t v = *lo; v <= *hi; v *= 2)
      values.insert(v);
  }
  if (values.empty())
    return makeError(std::string(what) + ": empty list");
  return std::vector<int64_t>(values.begin(), values.end());
}

} // namespace shardlab::collectors
