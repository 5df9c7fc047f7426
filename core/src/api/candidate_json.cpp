// A Candidate row as JSON and back (see candidate_json.h).
#include "candidate_json.h"

namespace shardlab::api::detail {
namespace {

using nlohmann::json;

json collectiveJson(const strategy::CollectiveTotals &t) {
  return {{"kind", t.kind},
          {"count", t.count},
          {"bytes", t.bytes},
          {"comm_us", t.comm_us},
          {"exposed_us", t.exposed_us}};
}

// Reads the fields of one JSON object, keeping the first error as
// "<where>.<key>: expected <what>".
class FieldReader {
public:
  FieldReader(const json &object, std::string where)
      : object_(object), where_(std::move(where)) {}

  void text(const char *key, std::string &out, bool required = true) {
    if (const json *v = field(key, "a string", required))
      v->is_string() ? void(out = v->get<std::string>())
                     : fail(key, "a string");
  }
  void boolean(const char *key, bool &out) {
    if (const json *v = field(key, "a boolean", true))
      v->is_boolean() ? void(out = v->get<bool>()) : fail(key, "a boolean");
  }
  void number(const char *key, double &out) {
    if (const json *v = field(key, "a number", true))
      v->is_number() ? void(out = v->get<double>()) : fail(key, "a number");
  }
  void integer(const char *key, int64_t &out) {
    if (const json *v = field(key, "an integer", true))
      v->is_number_integer() ? void(out = v->get<int64_t>())
                             : fail(key, "an integer");
  }
  void texts(const char *key, std::vector<std::string> &out) {
    const json *v = field(key, "an array of strings", true);
    if (v && !v->is_array())
      return fail(key, "an array of strings");
    for (const json &s : v ? *v : json::array()) {
      if (!s.is_string())
        return fail(key, "an array of strings");
      out.push_back(s.get<std::string>());
    }
  }
  /// An optional boolean: absent keeps `out` empty.
  void maybeBoolean(const char *key, std::optional<bool> &out) {
    if (const json *v = field(key, "a boolean", false))
      v->is_boolean() ? void(out = v->get<bool>()) : fail(key, "a boolean");
  }
  /// The array `key`, its items read by `item(reader of the item)`.
  template <typename Item> void objects(const char *key, Item item) {
    const json *v = field(key, "an array of objects", true);
    if (!v || !v->is_array())
      return v ? fail(key, "an array of objects") : void();
    for (size_t i = 0; i < v->size() && ok(); ++i) {
      const std::string at = where_ + "." + key + "[" + std::to_string(i) + "]";
      if (!(*v)[i].is_object())
        return fail(key, "an array of objects");
      FieldReader reader((*v)[i], at);
      item(reader);
      if (!reader.ok())
        error_ = reader.error();
    }
  }
  const json *optional(const char *key) const {
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  bool ok() const { return error_.empty(); }
  const std::string &error() const { return error_; }

private:
  const json *field(const char *key, const char *what, bool required) {
    if (!ok())
      return nullptr;
    const json *v = optional(key);
    if (!v && required)
      fail(key, what);
    return v;
  }
  void fail(const char *key, const std::string &what) {
    if (ok())
      error_ = where_ + "." + key + ": expected " + what;
  }

  const json &object_;
  std::string where_;
  std::string error_;
};

void readNumbers(FieldReader &r, strategy::Candidate &c) {
  r.number("step_time_us", c.step_time_us);
  r.number("compute_us", c.compute_us);
  r.number("comm_us", c.comm_us);
  r.number("exposed_comm_us", c.exposed_comm_us);
  r.number("hidden_comm_us", c.hidden_comm_us);
  r.integer("peak_memory_bytes", c.peak_memory_bytes);
  r.integer("argument_bytes", c.argument_bytes);
  r.integer("capacity_bytes", c.capacity_bytes);
  r.integer("uncosted_collectives", c.uncosted_collectives);
  r.number("elapsed_ms", c.elapsed_ms);
}

void readLists(FieldReader &r, strategy::Candidate &c) {
  r.objects("shardings", [&](FieldReader &item) {
    strategy::ArgSharding &s = c.shardings.emplace_back();
    item.text("name", s.name);
    item.text("sharding", s.sharding);
  });
  r.objects("collectives", [&](FieldReader &item) {
    strategy::CollectiveTotals &t = c.collectives.emplace_back();
    item.text("kind", t.kind);
    item.integer("count", t.count);
    item.integer("bytes", t.bytes);
    item.number("comm_us", t.comm_us);
    item.number("exposed_us", t.exposed_us);
  });
  r.texts("assumptions", c.assumptions);
}

} // namespace

json candidateJson(const strategy::Candidate &row) {
  json shardings = json::array();
  for (const strategy::ArgSharding &s : row.shardings)
    shardings.push_back({{"name", s.name}, {"sharding", s.sharding}});
  json collectives = json::array();
  for (const strategy::CollectiveTotals &t : row.collectives)
    collectives.push_back(collectiveJson(t));
  json j = {{"name", row.name},
            {"description", row.description},
            {"mesh", row.mesh},
            {"is_user", row.is_user},
            {"shardings", shardings},
            {"ok", row.ok},
            {"stage", row.stage},
            {"step_time_us", row.step_time_us},
            {"compute_us", row.compute_us},
            {"comm_us", row.comm_us},
            {"exposed_comm_us", row.exposed_comm_us},
            {"hidden_comm_us", row.hidden_comm_us},
            {"collectives", collectives},
            {"peak_memory_bytes", row.peak_memory_bytes},
            {"argument_bytes", row.argument_bytes},
            {"capacity_bytes", row.capacity_bytes},
            {"assumptions", row.assumptions},
            {"uncosted_collectives", row.uncosted_collectives},
            {"elapsed_ms", row.elapsed_ms}};
  if (!row.ok)
    j["error"] = row.error;
  if (row.fits)
    j["fits"] = *row.fits;
  return j;
}

Result<strategy::Candidate> candidateFromJson(const json &value,
                                              const std::string &where) {
  if (!value.is_object())
    return makeError(where + ": expected a Candidate object");
  strategy::Candidate c;
  FieldReader r(value, where);
  r.text("name", c.name);
  r.text("description", c.description);
  r.text("mesh", c.mesh);
  r.boolean("is_user", c.is_user);
  r.boolean("ok", c.ok);
  r.text("error", c.error, false);
  r.text("stage", c.stage);
  readNumbers(r, c);
  readLists(r, c);
  r.maybeBoolean("fits", c.fits);
  if (!r.ok())
    return makeError(r.error());
  return c;
}

} // namespace shardlab::api::detail
