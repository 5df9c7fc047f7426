// Rendering of estimates and their explanations as text and JSON.
#include "shardlab/cost/estimate.h"

#include <nlohmann/json.hpp>

#include <sstream>

namespace shardlab::cost {

std::string toText(const Estimate &e) {
  std::ostringstream out;
  out.precision(10);
  out << "time_us = " << e.time_us << "\nmodel: " << e.explanation.model;
  if (!e.explanation.key.empty())
    out << "\nkey: " << e.explanation.key;
  for (const Neighbour &n : e.explanation.neighbours) {
    out << "\nneighbour (";
    for (size_t i = 0; i < n.point.size(); ++i)
      out << (i ? ", " : "") << n.point[i];
    out << ") value " << n.value << " weight " << n.weight;
  }
  for (const Term &t : e.explanation.terms)
    out << "\n" << t.name << " = " << t.value << " " << t.unit;
  if (!e.explanation.note.empty())
    out << "\nnote: " << e.explanation.note;
  return out.str();
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
