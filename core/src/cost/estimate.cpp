// Rendering of estimates and their explanations as text and JSON.
#include "shardlab/cost/estimate.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <string>

namespace shardlab::cost {

namespace {

// `value` as `std::ostream` with precision 10 writes it (%.10g), without
// a stream: the scheduler writes one explanation per op.
void appendNumber(std::string &out, double value) {
  char buffer[32];
  const int length = std::snprintf(buffer, sizeof buffer, "%.10g", value);
  out.append(buffer, size_t(std::max(length, 0)));
}

} // namespace

std::string toText(const Estimate &e) {
  std::string out = "time_us = ";
  appendNumber(out, e.time_us);
  out += "\nmodel: ";
  out += e.explanation.model;
  if (!e.explanation.key.empty()) {
    out += "\nkey: ";
    out += e.explanation.key;
  }
  for (const Neighbour &n : e.explanation.neighbours) {
    out += "\nneighbour (";
    for (size_t i = 0; i < n.point.size(); ++i) {
      if (i)
        out += ", ";
      out += std::to_string(n.point[i]);
    }
    out += ") value ";
    appendNumber(out, n.value);
    out += " weight ";
    appendNumber(out, n.weight);
  }
  for (const Term &t : e.explanation.terms) {
    out += "\n";
    out += t.name;
    out += " = ";
    appendNumber(out, t.value);
    out += " ";
    out += t.unit;
  }
  if (!e.explanation.note.empty()) {
    out += "\nnote: ";
    out += e.explanation.note;
  }
  return out;
}

std::string toJson(const Estimate &e) {
  nlohmann::json neighbours = nlohmann::json::array();
  for (const Neighbour &n : e.explanation.neighbours)
    neighbours.push_back(
        {{"point", n.point}, {"value", n.value}, {"weight", n.weight}});
  nlohmann::json terms = nlohmann::json::array();
  for (const Term &t : e.explanation.terms)
    terms.push_back({{"name", t.name}, {"value", t.value}, {"unit", t.unit}});
  nlohmann::json j = {{"time_us", e.time_us},
                      {"model", e.explanation.model},
                      {"explanation",
                       {{"key", e.explanation.key},
                        {"neighbours", neighbours},
                        {"terms", terms},
                        {"note", e.explanation.note}}}};
  return j.dump();
}

} // namespace shardlab::cost
