// Parsing of replica-group text: `[G,S]<=[d...]T(p...)` and `{{0,1},{2,3}}`.
#include "shardlab/cost/device_groups.h"

#include <cctype>

namespace shardlab::cost {
namespace {

class Cursor {
public:
  explicit Cursor(std::string_view text) : text_(text) {}
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace((unsigned char)text_[pos_]))
      ++pos_;
  }
  bool consume(std::string_view token) {
    skipSpace();
    if (text_.substr(pos_, token.size()) != token)
      return false;
    pos_ += token.size();
    return true;
  }
  bool peek(char c) {
    skipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool integer(int64_t *out) {
    skipSpace();
    size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit((unsigned char)text_[pos_])) {
      if (value > (int64_t{1} << 40))
        return false;
      value = value * 10 + (text_[pos_++] - '0');
    }
    *out = value;
    return pos_ > start;
  }
  bool atEnd() {
    skipSpace();
    return pos_ == text_.size();
  }
  size_t pos() const { return pos_; }

private:
  std::string_view text_;
  size_t pos_ = 0;
};

// Parses `<open> int, int, ... <close>` (possibly empty).
bool intList(Cursor &c, char open, char close, std::vector<int64_t> *out) {
  if (!c.consume(std::string_view(&open, 1)))
    return false;
  if (c.consume(std::string_view(&close, 1)))
    return true;
  do {
    int64_t v = 0;
    if (!c.integer(&v))
      return false;
    out->push_back(v);
  } while (c.consume(","));
  return c.consume(std::string_view(&close, 1));
}

Result<ReplicaGroups> parseIota(Cursor &c, std::string_view text) {
  std::vector<int64_t> shape;
  IotaGroups iota;
  if (!intList(c, '[', ']', &shape) || shape.size() != 2 || !c.consume("<=") ||
      !intList(c, '[', ']', &iota.reshape_dims))
    return makeError("replica groups '" + std::string(text) +
                     "': expected [G,S]<=[dims] with optional T(perm)");
  if (c.consume("T") && !intList(c, '(', ')', &iota.transpose_perm))
    return makeError("replica groups '" + std::string(text) +
                     "': expected T(perm) after the reshape dims");
  iota.num_groups = shape[0];
  iota.group_size = shape[1];
  if (iota.transpose_perm.empty())
    for (size_t i = 0; i < iota.reshape_dims.size(); ++i)
      iota.transpose_perm.push_back(static_cast<int64_t>(i));
  ReplicaGroups g = ReplicaGroups::fromIota(iota);
  Result<std::vector<std::vector<int64_t>>> check = expandIota(g.iota);
  if (!check)
    return makeError("replica groups '" + std::string(text) +
                     "': " + check.error().message);
  return g;
}

Result<ReplicaGroups> parseLists(Cursor &c, std::string_view text) {
  std::vector<std::vector<int64_t>> lists;
  c.consume("{");
  if (!c.consume("}")) {
    do {
      std::vector<int64_t> group;
      if (!intList(c, '{', '}', &group))
        return makeError("replica groups '" + std::string(text) +
                         "': expected {{ids},{ids},...}");
      lists.push_back(group);
    } while (c.consume(","));
    if (!c.consume("}"))
      return makeError("replica groups '" + std::string(text) +
                       "': missing closing '}'");
  }
  for (const auto &g : lists)
    if (g.size() != lists[0].size())
      return makeError("replica groups '" + std::string(text) +
                       "': all groups must have the same size");
  return ReplicaGroups::fromLists(std::move(lists));
}

} // namespace

Result<ReplicaGroups> parseReplicaGroups(std::string_view text) {
  Cursor c(text);
  Result<ReplicaGroups> out =
      c.peek('[') ? parseIota(c, text) : parseLists(c, text);
  if (out && !c.atEnd())
    return makeError("replica groups '" + std::string(text) +
                     "': unexpected text at offset " + std::to_string(c.pos()));
  return out;
}

} // namespace shardlab::cost
