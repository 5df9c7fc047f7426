// A small protobuf text-format parser (no schema, no exceptions).
#include "shardlab/cost/xla_import.h"

#include <cctype>

namespace shardlab::cost {
namespace {

constexpr int kMaxDepth = 64;

class TextProtoParser {
public:
  explicit TextProtoParser(std::string_view text) : text_(text) {}

  Result<TextProtoField> ParseRoot() {
    TextProtoField root;
    root.is_message = true;
    if (!ParseFields(&root, '\0', 0))
      return MakeError(error_);
    return root;
  }

private:
  bool ParseFields(TextProtoField *msg, char close, int depth) {
    if (depth > kMaxDepth)
      return Fail("messages nested deeper than 64 levels");
    while (true) {
      SkipSpace();
      if (pos_ == text_.size())
        return close == '\0' || Fail("unexpected end of input");
      if (text_[pos_] == close) {
        ++pos_;
        return true;
      }
      if (!ParseField(msg, depth))
        return false;
      SkipSpace();
      if (pos_ < text_.size() && (text_[pos_] == ',' || text_[pos_] == ';'))
        ++pos_;
    }
  }

  bool ParseField(TextProtoField *msg, int depth) {
    std::string name;
    if (!Identifier(&name))
      return Fail("expected a field name");
    SkipSpace();
    const bool colon = Consume(':');
    SkipSpace();
    if (Peek('{') || Peek('<')) {
      const char close = text_[pos_++] == '{' ? '}' : '>';
      TextProtoField child{name, "", true, {}};
      if (!ParseFields(&child, close, depth + 1))
        return false;
      msg->fields.push_back(std::move(child));
      return true;
    }
    if (!colon)
      return Fail("expected ':' or '{' after '" + name + "'");
    if (Consume('['))
      return ParseList(msg, name);
    std::string value;
    if (!Scalar(&value))
      return false;
    msg->fields.push_back({name, value, false, {}});
    return true;
  }

  bool ParseList(TextProtoField *msg, const std::string &name) {
    SkipSpace();
    if (Consume(']'))
      return true;
    do {
      std::string value;
      SkipSpace();
      if (!Scalar(&value))
        return false;
      msg->fields.push_back({name, value, false, {}});
      SkipSpace();
    } while (Consume(','));
    return Consume(']') || Fail("expected ']' to close the list");
  }

  bool Scalar(std::string *out) {
    if (Peek('"') || Peek('\''))
      return QuotedString(out);
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum((unsigned char)text_[pos_]) ||
                                   std::string_view("-+._").find(text_[pos_]) !=
                                       std::string_view::npos))
      ++pos_;
    if (pos_ == start)
      return Fail("expected a value");
    *out = std::string(text_.substr(start, pos_ - start));
    return true;
  }

  bool QuotedString(std::string *out) {
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
      return Fail("unterminated string");
    ++pos_;
    return true;
  }

  bool Identifier(std::string *out) {
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum((unsigned char)text_[pos_]) ||
                                   text_[pos_] == '_' || text_[pos_] == '.'))
      ++pos_;
    *out = std::string(text_.substr(start, pos_ - start));
    return !out->empty();
  }

  void SkipSpace() {
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

  bool Peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool Consume(char c) {
    if (!Peek(c))
      return false;
    ++pos_;
    return true;
  }

  bool Fail(const std::string &message) {
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

const TextProtoField *TextProtoField::Find(std::string_view n) const {
  for (const TextProtoField &f : fields)
    if (f.name == n)
      return &f;
  return nullptr;
}

std::vector<const TextProtoField *>
TextProtoField::FindAll(std::string_view n) const {
  std::vector<const TextProtoField *> out;
  for (const TextProtoField &f : fields)
    if (f.name == n)
      out.push_back(&f);
  return out;
}

Result<TextProtoField> ParseTextProto(std::string_view text) {
  if (int64_t(text.size()) > kMaxPerfTableFileBytes)
    return TableTooLargeError("text proto", int64_t(text.size()));
  return TextProtoParser(text).ParseRoot();
}

} // namespace shardlab::cost
