// Estimate: a time in microseconds plus an Explanation of how it was made
// (model, table key, neighbours and weights, formula terms), for tooltips,
// the CLI and tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardlab::cost {

/// How estimates are made: bit-for-bit XLA, or shardlab's accurate mode.
enum class EstimateMode { Compatible, Accurate };

/// One named quantity of a formula, with its unit.
struct Term {
  std::string name;
  double value = 0;
  std::string unit;
};

/// One table point that contributed to an interpolated value.
struct Neighbour {
  std::vector<int64_t> point;
  double value = 0;
  double weight = 1;
};

struct Explanation {
  std::string model; // e.g. "collective-table/exact-nearest"
  std::string key;   // table key used, if any
  std::vector<Neighbour> neighbours;
  std::vector<Term> terms;
  std::string note;
  /// Set when the query lay beyond what the table measured and the
  /// estimate extrapolates (`4194304000 B > 1073741824 B, the largest`).
  std::string extrapolated;
};

struct Estimate {
  double time_us = 0;
  Explanation explanation;
};

/// Multi-line human-readable rendering of an explanation.
std::string toText(const Estimate &estimate);
/// JSON object text: {"time_us", "model", "key", "explanation": {...}}.
std::string toJson(const Estimate &estimate);

} // namespace shardlab::cost
