// How far step estimates have landed from measured steps: the band the
// published-runs benchmark (bench/published) found, for estimates whose
// step is dominated by the same kind of cost.
//
// Bands are kept for two schedules, since overlap moves the estimate: XLA's
// default (one collective stream, no pipeliner) and the overlapped one the
// runs had (--pipeline-collectives with --stream-per-link); an estimate
// takes the band of the schedule it was made with.
//
// Each published run's estimate is classed by the share of its step
// that is exposed communication (compute-bound below 1/4, communication-
// bound above 3/5, mixed between); the band of a class is the p10 and p90
// of measured step / estimated step over its runs. A class with fewer than
// three runs takes the band of all runs. An estimate on fewer than half the
// devices of the smallest run, or more than twice the largest, gets no band:
// nothing was measured at its scale. Example: an estimate of 2.8 s with
// 2.4 s exposed is communication-bound; if that class measured 0.20-0.36,
// the step such runs took was 0.56-1.0 s.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace shardlab::schedule {

struct ValidationBand {
  /// compute-bound, mixed, communication-bound, all (too few runs of this
  /// kind) or none (no run at this scale: low, high and runs are 0)
  std::string kind;
  double low = 0;       ///< p10 of measured / estimated step
  double high = 0;      ///< p90
  int runs = 0;         ///< published runs the band is taken over
  std::string basis;    ///< where the runs are listed
  std::string note;     ///< why there is no band, when kind is none
  std::string schedule; ///< how the runs were estimated for this band
};

/// The schedules bands are kept for: the two the published runs were
/// estimated with. An estimate made with only one of --pipeline-collectives
/// and --stream-per-link takes XLA's default band (no run was estimated
/// that way; the band of the closest schedule is not known to be closer).
enum class BandSchedule {
  XlaDefault, ///< one collective stream, no pipeliner
  Overlapped, ///< the collective pipeliner and a stream per link
};

/// The band for an estimate of a step on `devices` devices with this step
/// and exposed communication, made with `schedule` (nullopt for a step of
/// zero).
std::optional<ValidationBand>
validationBand(double step_us, double exposed_comm_us, int64_t devices,
               BandSchedule schedule = BandSchedule::XlaDefault);

/// The class of an estimate: compute-bound, mixed or communication-bound.
std::string costKind(double step_us, double exposed_comm_us);

} // namespace shardlab::schedule
