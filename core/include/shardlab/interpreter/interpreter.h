// Runs a module's entry function on concrete tensors, as the StableHLO
// specification defines each op, and reports its `check.*` custom calls:
// the oracle of every JAX-exported test module, which computes from
// constant inputs and compares with the values JAX computed.
//
//   auto module = parseModule(text, diags);
//   interpreter::RunResult r = interpreter::run(*module);
//   r.ok                      // false: r.error says which op could not run
//   r.checks[0].passed        // check.expect_close(%2, %1) held
//
// An op or element type it does not run is an error naming it and its
// line, never a guess. Check tolerances: expect_eq and eq compare values
// exactly (a NaN equals a NaN); expect_close allows `max_ulp_difference`
// units in the last place (default 3); expect_almost_eq an absolute or
// relative difference of `tolerance` (default 1e-4).
#pragma once

#include "shardlab/interpreter/tensor.h"
#include "shardlab/ir/ir.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab::interpreter {

/// One `check.*` custom call as it ran.
struct CheckResult {
  std::string op; ///< check.expect_close, ...
  int64_t line = 0;
  bool passed = false;
  std::string detail;  ///< the first differing element, when it failed
  int64_t device = -1; ///< the simulated device that ran it, else -1
};

struct RunResult {
  bool ok = false;
  std::string error; ///< `line:col: stablehlo.fft: not run by the interpreter`
  std::vector<Tensor> results;
  std::vector<CheckResult> checks;
  int64_t ops_run = 0;
  int64_t elements = 0;     ///< result elements of every op run
  int64_t work = 0;         ///< see RunOptions::max_work
  bool over_budget = false; ///< stopped at RunOptions::max_work
  bool allChecksPassed() const {
    for (const CheckResult &c : checks)
      if (!c.passed)
        return false;
    return ok;
  }
};

/// The values one collective exchanged on the devices that ran it: what
/// each held before (its operands) and after (its results). The Devices
/// view of the playground shows them.
struct CollectiveStep {
  const Operation *op = nullptr;
  std::vector<int64_t> devices;            ///< each lane's device
  std::vector<std::vector<Tensor>> before; ///< [lane][operand]
  std::vector<std::vector<Tensor>> after;  ///< [lane][result]
};

struct RunOptions {
  /// The function to run; "main" also finds a module's only function when
  /// it has no @main (StableHLO's interpreter tests name theirs).
  std::string entry = "main";
  /// Stops with an error after this many ops (loops that do not end).
  int64_t max_ops = 100000000;
  /// Stops with an error (and `over_budget`) before the op that would take
  /// the run's work past this (0: no limit). One unit is an element
  /// produced or read, or a multiply-add of a dot or a convolution, on each
  /// device: a budget stops the same module at the same op on any machine,
  /// which a clock does not.
  int64_t max_work = 0;
  /// Called after every collective that ran (the values are copies, made
  /// only when this is set).
  std::function<void(const CollectiveStep &)> on_collective;
};

/// What a per-device program computed on each simulated device.
struct DevicesRunResult {
  bool ok = false;
  std::string error;
  std::vector<std::vector<Tensor>> results; ///< [device][result]
  std::vector<CheckResult> checks;          ///< every device's, in order
  int64_t ops_run = 0;                      ///< summed over devices
  int64_t elements = 0;
  int64_t work = 0;
  bool over_budget = false;
};

/// The function named `entry` with a body; for "main", a module's only
/// function when it has no @main. nullptr when there is none.
Operation *findEntry(Module &module, const std::string &entry);

/// Runs `options.entry` with no arguments (the self-checking modules' form).
RunResult run(Module &module, const RunOptions &options = {});
/// Runs `options.entry` on `args`.
RunResult run(Module &module, const std::vector<Tensor> &args,
              const RunOptions &options = {});

/// Runs a per-device program (SPMD: one program, num_partitions = the
/// number of devices, one replica) on simulated devices, device d with
/// `args[d]`. The devices run in step, op by op: `partition_id` is d,
/// `replica_id` 0, and the collectives (all_reduce, all_gather,
/// reduce_scatter, all_to_all, collective_permute, collective_broadcast)
/// exchange values as the StableHLO specification says, their groups read
/// by `replica_groups`, `channel_handle` and `use_global_device_ids`. A
/// loop whose condition differs between devices is an error.
///
///   device d:  %p = partition_id            -> d
///              %s = all_reduce(%x) {[[0,1],[2,3]]}  -> x0+x1 on 0 and 1
DevicesRunResult runOnDevices(Module &module,
                              const std::vector<std::vector<Tensor>> &args,
                              const RunOptions &options = {});

} // namespace shardlab::interpreter
