// Checks a partitioning by its numbers: runs a module as written (one
// device, the global run), then partitions it (propagation, explicit
// collectives, the per-device program), runs that program on simulated
// devices, puts their results back together by the output shardings and
// compares with the global run. The module's own check.* calls run on
// every device as well.
//
//   auto outcome = partition_check::checkPartitioned(text, {.seed = 3});
//   outcome.status    // Match, Mismatch (a partitioning bug) or NotRun
//   outcome.mesh      // the random mesh seed 3 chose: <["a"=2, "b"=3]>
//   outcome.shardings // what was put on each input
//
// With a seed, the mesh and the inputs' shardings are random (sub-axes,
// open and replicated dimensions, sizes the axes do not divide): the
// entry's arguments, or, for a self-checking module without arguments,
// the constants its computation starts from. Without one, the module's own
// mesh and shardings are used. Inputs of a function with arguments are
// random values from the seed (0 without one).
#pragma once

#include "shardlab/interpreter/interpreter.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::partition_check {

struct Options {
  std::string entry = "main";
  /// Random mesh and input shardings from this seed; nullopt: the module's.
  std::optional<uint64_t> seed;
  /// The largest random mesh.
  int64_t max_devices = 8;
  /// Random float inputs multiplied by this power of two (exact in every
  /// float type). A deep step on unit-scale inputs (activations and
  /// gradients of 1e6 with cancellation) rounds past the comparison's
  /// tolerance in every partitioning alike; scaled down it does not.
  double input_scale = 1;
  /// Also run the gpu stage's passes (gpuSteps()) on the per-device
  /// program: then what runs is the program the scheduler estimates.
  bool gpu_passes = false;
  /// Each float result is compared within a few units of its format's
  /// precision relative to the larger of its own largest value and this
  /// fraction of the largest value among all the results (numpy's atol
  /// beside rtol). 0: relative to its own only. A result computed by
  /// cancellation (a gradient that is zero but for rounding) is noise
  /// relative to itself; a floor compares it on the step's scale.
  double tolerance_floor = 0;
  /// The work both runs may do together (interpreter::RunOptions::max_work;
  /// 0: no limit). Past it the check is not run, on any machine alike.
  int64_t max_work = 0;
  /// Keep the per-device program's text in the outcome.
  bool keep_program = false;
  /// A per-device program to check in place of shardlab's partitioning of
  /// the module (another tool's, such as Shardy's sdy_opt's, for the same
  /// module and its own shardings): its entry's argument and result
  /// shardings say which shard of each input a device gets and how the
  /// results are put together. Not with a seed.
  std::optional<std::string> program;
  /// A change made to the per-device program before it runs: the seam
  /// through which a deliberately faulty build (shardlab-run-faulty) drops
  /// a collective or shifts a slice, to show that the check fails.
  std::function<void(Module &)> after_partition;
  /// Called after each collective of the per-device run, with what every
  /// device held before and after it.
  std::function<void(const interpreter::CollectiveStep &)> on_collective;
};

enum class Status {
  Match,    ///< every device's checks pass and the results equal the global
  Mismatch, ///< they do not: a partitioning bug (message says where)
  NotRun,   ///< the module cannot be checked (message says why)
};

struct Outcome {
  Status status = Status::NotRun;
  /// The stage that decided: "global run", "partition", "devices",
  /// "checks", "results", or "" when it matched.
  std::string stage;
  std::string message;
  std::string mesh;                   ///< `<["a"=2, "b"=3]>`
  std::vector<std::string> shardings; ///< `%cst_0 (line 5): <@mesh, [...]>`
  int64_t devices = 1;
  int64_t global_checks_passed = 0; ///< the module's checks, run globally
  int64_t global_checks_run = 0;
  int64_t checks_passed = 0; ///< over all devices
  int64_t checks_run = 0;
  bool exact = false; ///< every result equal bit for bit
  /// The work done (Options::max_work's units): drawing the inputs, the
  /// global run and the devices' run.
  int64_t work = 0;
  std::string program; ///< the per-device program, when kept
  /// The global run: its results, checks and counts.
  interpreter::RunResult global;
  /// The module the global run ran, which owns its results' types.
  std::shared_ptr<Module> global_module;
};

Outcome checkPartitioned(std::string_view text, const Options &options);

/// Reads a choice of shardings as the CLI and the API spell it: "module"
/// (the module's own: `seed` unset) or "random:SEED"; false for anything
/// else (then `options` is unchanged).
bool readShardingsChoice(std::string_view text, Options &options);

/// Inputs for the arguments of `entry` (a function with a body) drawn from
/// `seed` (an empty tensor for an argument without a static type): integers in
/// [-5, 5] (bools 0/1), floats in [-4, 4] on a grid of 1/256 (exact in every
/// float type with 8 bits), times `scale` (a power of two). The partition
/// check feeds the same ones to the global run and, as shards, to the
/// devices.
std::vector<interpreter::Tensor> randomInputs(Operation &entry, uint64_t seed,
                                              double scale = 1);

/// The global run as the partition check makes it: `options.entry` of
/// `module` on randomInputs(entry, `seed`) when it takes arguments (what
/// shardlab-run and `execute` run without shardings).
interpreter::RunResult runGlobally(Module &module,
                                   const interpreter::RunOptions &options,
                                   uint64_t seed = 0, double input_scale = 1);

/// Whether `scale` is a positive power of two (an input scale that keeps
/// the random inputs exact).
bool isInputScale(double scale);

/// "match", "mismatch", "not run".
std::string_view statusName(Status status);

} // namespace shardlab::partition_check
