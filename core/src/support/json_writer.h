// Writing JSON text straight into a string, for replies and reports too
// large to build as a nlohmann tree first (a schedule report of 1M ops was
// 6 GB as a tree). JsonWriter tracks commas; strings are escaped as
// nlohmann::json dumps them (ensure_ascii off, invalid UTF-8 replaced with
// U+FFFD), numbers spelled as nlohmann spells them, so a parsed reply is the
// same whichever way it was written.
//
//   std::string out;
//   JsonWriter w(out);
//   w.beginObject().field("ok", true).key("ops").beginArray();
//   w.value(1.5).value("a\"b").endArray().endObject();
//   // out == R"({"ok":true,"ops":[1.5,"a\"b"]})"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab {

/// Appends `text` as a JSON string (quotes included). Runs of plain bytes are
/// copied 8 at a time; invalid UTF-8 is replaced as nlohmann does.
void appendJsonString(std::string &out, std::string_view text);

class JsonWriter {
public:
  explicit JsonWriter(std::string &out) : out_(out) {}

  JsonWriter &beginObject();
  JsonWriter &endObject();
  JsonWriter &beginArray();
  JsonWriter &endArray();
  /// The key of the next member of the current object.
  JsonWriter &key(std::string_view name);

  JsonWriter &value(std::string_view text);
  JsonWriter &value(const char *text) { return value(std::string_view(text)); }
  JsonWriter &value(const std::string &text) {
    return value(std::string_view(text));
  }
  JsonWriter &value(double number); ///< NaN and infinities as null
  JsonWriter &value(int64_t number);
  JsonWriter &value(int number) { return value(int64_t(number)); }
  JsonWriter &value(bool flag);
  JsonWriter &null();
  /// A value already written as JSON text.
  JsonWriter &raw(std::string_view json);

  template <typename T> JsonWriter &field(std::string_view name, const T &v) {
    return key(name).value(v);
  }

private:
  void beforeValue();

  std::string &out_;
  /// Per open object or array: whether a member was written.
  std::vector<bool> started_;
  bool after_key_ = false;
};

} // namespace shardlab
