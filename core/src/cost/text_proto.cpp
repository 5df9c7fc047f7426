// A small protobuf text-format parser (no schema, no exceptions).
#include "shardlab/cost/xla_import.h"

#include <cctype>

namespace shardlab::cost {
namespace {

constexpr int kMaxDepth = 64;

class TextProtoParser {
public:
  explicit TextProtoParser(std::string_view text) : text_(text) {}

  Result<TextProtoField> parseRoot() {
    TextProtoField root;
    root.is_message = true;
    if (!parseFields(&root, '\0', 0))
      return makeError(error_);
    return root;
  }

private:
  bool parseFields(TextProtoField *msg, char close, int depth) {
    if (depth > kMaxDepth)
      return fail("messages nested deeper than 64 levels");
    while (true) {
      skipSpace();
      if (pos_ == text_.size())
        return close == '\0' || fail("unexpected end of input");
      if (text_[pos_] == close) {
        ++pos_;
        return true;
      }
      if (!parseField(msg, depth))
        return false;
      skipSpace();
      if (pos_ < text_.size() && (text_[pos_] == ',' || text_[pos_] == ';'))
        ++pos_;
    }
  }

  bool parseField(TextProtoField *msg, int depth) {
    std::string name;
    if (!identifier(&name))
      return fail("expected a field name");
    skipSpace();
    const bool colon = consume(':');
    skipSpace();
    if (peek('{') || peek('<')) {
      const char close = text_[pos_++] == '{' ? '}' : '>';
      TextProtoField child{name, "", true, {}};
      if (!parseFields(&child, close, depth + 1))
        return false;
      msg->fields.push_back(std::move(child));
      return true;
    }
    if (!colon)
      return fail("expected ':' or '{' after '" + name + "'");
    if (consume('['))
      return parseList(msg, name);
    std::string value;
    if (!scalar(&value))
      return false;
    msg->fields.push_back({name, value, false, {}});
    return true;
  }

  bool parseList(TextProtoField *msg, const std::string &name) {
    skipSpace();
    if (consume(']'))
      return true;
    do {
      std::string value;
      skipSpace();
      if (!scalar(&value))
        return false;
      msg->fields.push_back({name, value, false, {}});
      skipSpace();
    } while (consume(','));
    return consume(']') || fail("expected ']' to close the list");
  }

  bool scalar(std::string *out) {
    if (peek('"') || peek('\''))
      return quotedString(out);
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum((unsigned char)text_[pos_]) ||
                                   std::string_view("-+._").find(text_[pos_]) !=
                                       std::string_view::npos))
      ++pos_;
    if (pos_ == start)
      return fail("expected a value");
    *out = std::string(text_.substr(start, pos_ - start));
    return true;
  }

  bool quotedString(std::string *out) {
    const char quote = text_[pos_++];
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_++];
      if (c == '\\' && pos_ < text_.size()) {
        c = text_[pos_++];
        c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
      }
      out->push_back(c);
    }
    if (pos_ == text_.size())
      return fail("unterminated string");
    ++pos_;
    return true;
  }

  bool identifier(std::string *out) {
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum((unsigned char)text_[pos_]) ||
                                   text_[pos_] == '_' || text_[pos_] == '.'))
      ++pos_;
    *out = std::string(text_.substr(start, pos_ - start));
    return !out->empty();
  }

  void skipSpace() {
    while (pos_ < text_.size()) {
      if (text_[pos_] == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n')
          ++pos_;
      } else if (std::isspace((unsigned char)text_[pos_])) {
        ++pos_;
      } else {
        return;
      }
    }
  }

  bool peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool consume(char c) {
    if (!peek(c))
      return false;
    ++pos_;
    return true;
  }

  bool fail(const std::string &message) {
    if (!error_.empty())
      return false;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      col = text_[i] == '\n' ? 1 : col + 1;
      line += text_[i] == '\n';
    }
    error_ = "text proto " + std::to_string(line) + ":" + std::to_string(col) +
             ": " + message;
    return false;
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

} // namespace

const TextProtoField *TextProtoField::find(std::string_view n) const {
  for (const TextProtoField &f : fields)
    if (f.name == n)
      return &f;
  return nullptr;
}

std::vector<const TextProtoField *>
TextProtoField::findAll(std::string_view n) const {
  std::vector<const TextProtoField *> out;
  for (const TextProtoField &f : fields)
    if (f.name == n)
      out.push_back(&f);
  return out;
}

Result<TextProtoField> parseTextProto(std::string_view text) {
  if (int64_t(text.size()) > kMaxPerfTableFileBytes)
    return tableTooLargeError("text proto", int64_t(text.size()));
  return TextProtoParser(text).parseRoot();
}

} // namespace shardlab::cost
