// The pass registry: every pass and pipeline shardlab knows, keyed by
// Shardy's flag names (`sdy-basic-propagate`, `sdy-import-pipeline`, ...),
// each declared once with its stage, summary, description and typed options
// (the role of Shardy's passes.td). `shardlab-opt --help`, `--help-pass`,
// docs/passes.md and the option checks all read these declarations.
//
// Options are written as Shardy writes them:
//   -sdy-basic-propagate="conservative-propagation=true keep-sharding-rules"
// A bare name means "true". A name the pass does not declare, or a value of
// the wrong type (`conservative-propagation=maybe`), is an error naming the
// pass, the option and the options the pass has.
#pragma once

#include "shardlab/ir/diagnostics.h"
#include "shardlab/ir/ir.h"
#include "shardlab/support/result.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace shardlab {

struct PassInfo;
class PassOptions;

/// Options as written on a command line or by a pipeline: name → text.
using RawPassOptions = std::map<std::string, std::string>;

/// Runs a pass over `module`; reports problems through `diags` and returns
/// false on failure.
using PassFn = bool (*)(Module &module, const PassOptions &options,
                        DiagnosticEngine &diags);

enum class OptionType { Bool, Int, String };

/// A bool option's value as MLIR spells it ("true"/"1", "false"/"0");
/// nullopt for anything else. Also read by shardlab-opt's own bool flags.
std::optional<bool> parseBoolOption(std::string_view text);

/// One option a pass accepts.
struct OptionDecl {
  std::string_view name;
  OptionType type = OptionType::Bool;
  std::string_view default_value = "false";
  std::string_view help;
  /// For a String option with a fixed set of values: "a|b|c".
  std::string_view choices = {};
};

/// The stages, in pipeline order; `PassInfo::stage` is one of them.
inline constexpr std::string_view kPassStages[] = {
    "import", "propagation", "export", "canonicalize",
    "xla",    "strategy",    "gpu"};

struct PassInfo {
  std::string_view flag;        ///< without the leading '-'
  std::string_view stage;       ///< one of kPassStages
  std::string_view summary;     ///< one line, for --help
  std::string_view description; ///< paragraphs, for --help-pass and docs
  std::vector<OptionDecl> options;
  PassFn run = nullptr; ///< null: known to Shardy, not implemented yet
  /// The pass only removes attributes that no check but their own reads
  /// (sdy.sharding_rule): what it leaves of a valid module is valid. The
  /// runner then records the module as verified without checking it again,
  /// when it was verified just before the pass.
  bool keeps_valid = false;
};

/// The typed options of one pass invocation: every declared option has a
/// value (given or its default). Reading an option the pass does not declare
/// is a bug in shardlab and aborts with a message.
class PassOptions {
public:
  PassOptions() = default;
  /// Checks `raw` against `pass`'s declarations and fills in defaults; an
  /// error naming the pass and its options on an unknown option or a bad
  /// value.
  static Result<PassOptions> resolve(const PassInfo &pass,
                                     const RawPassOptions &raw);

  bool flag(std::string_view name) const;
  int64_t integer(std::string_view name) const;
  const std::string &text(std::string_view name) const;
  /// Whether the option was given rather than defaulted.
  bool isSet(std::string_view name) const;
  /// The options that were given, as written (normalised), for forwarding.
  RawPassOptions given() const;

private:
  const std::string &value(std::string_view name, OptionType type) const;

  const PassInfo *pass_ = nullptr;
  std::map<std::string, std::string, std::less<>> values_;
  std::set<std::string, std::less<>> given_;
};

/// Wall-clock time of every pass run on a module, nested as the pipelines
/// nest; recorded while a Module points at one (shardlab-opt -mlir-timing).
struct PassTiming {
  struct Entry {
    std::string flag;
    int depth = 0;      ///< 0: run directly; 1: inside a pipeline; ...
    double seconds = 0; ///< including nested passes
  };
  std::vector<Entry> entries; ///< in the order the passes started
  int depth = 0;              ///< nesting of the pass running now
};

/// Records the wall time from construction to destruction as one entry of
/// `module.timing` (nothing when it is unset).
class PassTimingScope {
public:
  PassTimingScope(Module &module, std::string_view name);
  ~PassTimingScope();
  PassTimingScope(const PassTimingScope &) = delete;
  PassTimingScope &operator=(const PassTimingScope &) = delete;

private:
  PassTiming *timing_;
  size_t entry_ = 0;
  std::chrono::steady_clock::time_point start_;
};

/// The report MLIR's -mlir-timing prints: total, then one line per pass with
/// its wall time and share of the total, nested passes indented.
std::string formatPassTiming(const PassTiming &timing);

/// Every pass and pipeline, stage by stage, in --help order.
const std::vector<PassInfo> &allPasses();
const PassInfo *lookupPass(std::string_view flag);

/// Parses `a=1 b="x y" c` into raw options; an error on unbalanced quotes.
Result<RawPassOptions> parsePassOptions(std::string_view text);

/// `--help-pass=FLAG`: the pass's summary, description and options.
std::string passHelp(const PassInfo &pass);
/// docs/passes.md: every pass by stage, generated from the declarations.
std::string passesMarkdown();

} // namespace shardlab
