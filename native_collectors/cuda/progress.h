// Progress and errors on stderr for the collector programs, plus the
// exception type they use internally (caught in main, printed as
// "error: ..."; never crosses a library boundary).
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace shardlab::collectors {

/// A fatal collector error with a user-facing message.
class CollectorError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A one-line progress bar (rewritten in place on a terminal, one line
/// every few seconds otherwise).
class Progress {
public:
  Progress(int64_t total, bool quiet);
  /// `done` points finished, `label` describes the current one.
  void update(int64_t done, const std::string &label);
  void finish(const std::string &summary);

private:
  int64_t total_;
  bool quiet_, tty_;
  std::chrono::steady_clock::time_point start_, last_;
};

/// Seconds on a monotonic clock.
double nowSeconds();

} // namespace shardlab::collectors
