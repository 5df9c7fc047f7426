// A Candidate row as JSON and back (see candidate_json.h).
#include "candidate_json.h"
#include "json_options.h"

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

void readNumbers(OptionReader &r, strategy::Candidate &c) {
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

void readLists(OptionReader &r, strategy::Candidate &c) {
  r.objects("shardings", [&](OptionReader &item) {
    strategy::ArgSharding &s = c.shardings.emplace_back();
    item.string("name", s.name);
    item.string("sharding", s.sharding);
  });
  r.objects("collectives", [&](OptionReader &item) {
    strategy::CollectiveTotals &t = c.collectives.emplace_back();
    item.string("kind", t.kind);
    item.integer("count", t.count);
    item.integer("bytes", t.bytes);
    item.number("comm_us", t.comm_us);
    item.number("exposed_us", t.exposed_us);
  });
  r.objects("largest_live", [&](OptionReader &item) {
    schedule::NamedBuffer &b = c.largest_live.emplace_back();
    item.string("name", b.name);
    item.integer("bytes", b.bytes);
  });
  r.strings("assumptions", c.assumptions);
}

} // namespace

json candidateJson(const strategy::Candidate &row) {
  json shardings = json::array();
  for (const strategy::ArgSharding &s : row.shardings)
    shardings.push_back({{"name", s.name}, {"sharding", s.sharding}});
  json collectives = json::array();
  for (const strategy::CollectiveTotals &t : row.collectives)
    collectives.push_back(collectiveJson(t));
  json largest_live = json::array();
  for (const schedule::NamedBuffer &b : row.largest_live)
    largest_live.push_back({{"name", b.name}, {"bytes", b.bytes}});
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
            {"peak_at", row.peak_at},
            {"largest_live", largest_live},
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
  OptionReader r(value, where, OptionReader::Fields::Required);
  r.string("name", c.name);
  r.string("description", c.description);
  r.string("mesh", c.mesh);
  r.boolean("is_user", c.is_user);
  r.boolean("ok", c.ok);
  if (r.get("error")) // a row that ran has none
    r.string("error", c.error);
  r.string("stage", c.stage);
  r.string("peak_at", c.peak_at);
  readNumbers(r, c);
  readLists(r, c);
  if (r.get("fits")) { // none where nothing says the device's memory
    bool fits = false;
    r.boolean("fits", fits);
    c.fits = fits;
  }
  if (!r.ok())
    return makeError(r.error());
  return c;
}

} // namespace shardlab::api::detail
