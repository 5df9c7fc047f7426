#include "ir/stablehlo_dim_numbers.h"

#include <cctype>

namespace shardlab {

namespace {

// One list field: its gather and scatter spellings and where it is kept.
struct ListField {
  const char *gather;
  const char *scatter;
  std::vector<int64_t> GatherScatterDims::*member;
};

// In the order StableHLO declares (and prints) them.
const ListField kListFields[] = {
    {"offset_dims", "update_window_dims", &GatherScatterDims::offset_dims},
    {"collapsed_slice_dims", "inserted_window_dims",
     &GatherScatterDims::collapsed_dims},
    {"operand_batching_dims", "input_batching_dims",
     &GatherScatterDims::operand_batching_dims},
    {"start_indices_batching_dims", "scatter_indices_batching_dims",
     &GatherScatterDims::indices_batching_dims},
    {"start_index_map", "scatter_dims_to_operand_dims",
     &GatherScatterDims::index_map},
};

constexpr std::string_view kIndexVectorDim = "index_vector_dim";
constexpr std::string_view kGather = "#stablehlo.gather<";
constexpr std::string_view kScatter = "#stablehlo.scatter<";

// A cursor over `key = [1, 2], key = 3` and `[b, 0]x[...]` text.
struct Reader {
  std::string_view text;
  size_t pos = 0;

  void skipSpace() {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool tryChar(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool tryText(std::string_view word) {
    skipSpace();
    if (text.substr(pos, word.size()) != word)
      return false;
    pos += word.size();
    return true;
  }
  bool atEnd() {
    skipSpace();
    return pos == text.size();
  }
  // A run of letters, digits and '_' (an identifier, a number, a dim label).
  std::string_view word() {
    skipSpace();
    size_t start = pos;
    if (pos < text.size() && text[pos] == '-')
      ++pos;
    while (pos < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[pos])) ||
            text[pos] == '_'))
      ++pos;
    return text.substr(start, pos - start);
  }
  std::optional<int64_t> integer() {
    std::string_view w = word();
    if (w.empty() || w == "-")
      return std::nullopt;
    int64_t value = 0;
    for (size_t i = w[0] == '-' ? 1 : 0; i < w.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(w[i])))
        return std::nullopt;
      value = value * 10 + (w[i] - '0');
    }
    return w[0] == '-' ? -value : value;
  }
  // `[w, w, ...]` as its words.
  std::optional<std::vector<std::string_view>> wordList() {
    if (!tryChar('['))
      return std::nullopt;
    std::vector<std::string_view> words;
    if (tryChar(']'))
      return words;
    do {
      std::string_view w = word();
      if (w.empty())
        return std::nullopt;
      words.push_back(w);
    } while (tryChar(','));
    if (!tryChar(']'))
      return std::nullopt;
    return words;
  }
};

std::vector<int64_t> *listField(GatherScatterDims &dims, std::string_view key) {
  for (const ListField &field : kListFields)
    if (key == (dims.scatter ? field.scatter : field.gather))
      return &(dims.*field.member);
  return nullptr;
}

bool readField(Reader &reader, GatherScatterDims &dims) {
  std::string_view key = reader.word();
  if (key.empty() || !reader.tryChar('='))
    return false;
  if (key == kIndexVectorDim) {
    std::optional<int64_t> value = reader.integer();
    if (!value)
      return false;
    dims.index_vector_dim = *value;
    return true;
  }
  std::vector<int64_t> *list = listField(dims, key);
  std::optional<std::vector<std::string_view>> words = reader.wordList();
  if (!list || !words)
    return false;
  list->clear();
  for (std::string_view w : *words) {
    Reader number{w};
    std::optional<int64_t> value = number.integer();
    if (!value || !number.atEnd())
      return false;
    list->push_back(*value);
  }
  return true;
}

void appendWords(std::string &out, const std::vector<std::string_view> &words) {
  out += '[';
  for (size_t i = 0; i < words.size(); ++i) {
    if (i)
      out += ", ";
    out += words[i];
  }
  out += ']';
}

} // namespace

std::optional<GatherScatterDims> parseGatherScatterDims(std::string_view text) {
  GatherScatterDims dims;
  dims.scatter = text.rfind(kScatter, 0) == 0;
  if (!dims.scatter && text.rfind(kGather, 0) != 0)
    return std::nullopt;
  if (text.empty() || text.back() != '>')
    return std::nullopt;
  const size_t prefix = dims.scatter ? kScatter.size() : kGather.size();
  Reader reader{text.substr(prefix, text.size() - prefix - 1)};
  if (reader.atEnd())
    return dims;
  do {
    if (!readField(reader, dims))
      return std::nullopt;
  } while (reader.tryChar(','));
  if (!reader.atEnd())
    return std::nullopt;
  return dims;
}

std::string formatGatherScatterDims(const GatherScatterDims &dims) {
  std::string out(dims.scatter ? kScatter : kGather);
  const char *separator = "";
  for (const ListField &field : kListFields) {
    const std::vector<int64_t> &values = dims.*field.member;
    if (values.empty())
      continue;
    out += separator;
    out += dims.scatter ? field.scatter : field.gather;
    out += " = [";
    for (size_t i = 0; i < values.size(); ++i)
      out += (i ? ", " : "") + std::to_string(values[i]);
    out += ']';
    separator = ", ";
  }
  if (dims.index_vector_dim != 0) {
    out += separator;
    out += kIndexVectorDim;
    out += " = " + std::to_string(dims.index_vector_dim);
  }
  return out + '>';
}

std::optional<std::string> canonicalConvDims(std::string_view text) {
  Reader reader{text};
  std::string out;
  for (std::string_view between : {"", "x", "->"}) {
    if (!between.empty() && !reader.tryText(between))
      return std::nullopt;
    std::optional<std::vector<std::string_view>> words = reader.wordList();
    if (!words)
      return std::nullopt;
    out += between;
    appendWords(out, *words);
  }
  if (!reader.atEnd())
    return std::nullopt;
  return out;
}

} // namespace shardlab
