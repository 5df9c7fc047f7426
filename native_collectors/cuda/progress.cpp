// Progress bar on stderr.
#include "progress.h"

#include <cstdio>
#include <unistd.h>

namespace shardlab::collectors {

Progress::Progress(int64_t total, bool quiet)
    : total_(total), quiet_(quiet), tty_(isatty(2) != 0),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

void Progress::update(int64_t done, const std::string &label) {
  if (quiet_ || total_ <= 0)
    return;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_).count();
  if (!tty_ && since < 5.0 && done != total_)
    return;
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double eta = done > 0 ? elapsed * (total_ - done) / done : 0;
  const int width = 30;
  const int filled = static_cast<int>(width * done / total_);
  std::string bar(filled, '#');
  bar.resize(width, '.');
  std::fprintf(stderr, "%s[%s] %lld/%lld %-40s %5.0fs left%s", tty_ ? "\r" : "",
               bar.c_str(), static_cast<long long>(done),
               static_cast<long long>(total_), label.c_str(), eta,
               tty_ ? "" : "\n");
  std::fflush(stderr);
}

void Progress::finish(const std::string &summary) {
  if (!quiet_)
    std::fprintf(stderr, "%s%s\n", tty_ ? "\n" : "", summary.c_str());
}

double nowSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace shardlab::collectors
