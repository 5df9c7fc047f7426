// The op sharding rule registry: for every StableHLO op (and the custom_call
// targets Shardy knows) the OpShardingRule that Shardy's
// createOpShardingRule gives it, and the lookup that prefers a rule already
// attached to the op (`sdy.sharding_rule`, e.g. a user's custom rule).
#pragma once

#include "shardlab/ir/diagnostics.h"
#include "shardlab/ir/ir.h"
#include "shardlab/sharding/sharding.h"
#include "support/word_hash.h"

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace shardlab {

/// The name of the discardable attribute holding an op's rule.
inline constexpr std::string_view kShardingRuleAttr = "sdy.sharding_rule";

/// The registry's rule for `op`, or nullopt for ops without one (constants,
/// data-flow ops, terminators, unknown ops, malformed ops).
/// `conservative_propagation` blocks or drops factors that would need
/// communication (slice/pad/reduce_window/select_and_scatter, concat and
/// convolution spatial dims). Unknown custom calls and unknown ops get
/// Shardy's warning through `warnings`, at most once per kind per engine.
std::optional<OpShardingRule>
createOpShardingRule(Operation &op, bool conservative_propagation,
                     DiagnosticEngine *warnings = nullptr);

/// The rule already attached to `op` if any, else createOpShardingRule;
/// with `attach`, a created rule is stored on the op (in `ctx`'s arena).
std::optional<OpShardingRule>
getOrCreateShardingRule(Operation &op, Context &ctx,
                        bool conservative_propagation, bool attach,
                        DiagnosticEngine *warnings = nullptr);
/// Memo of createOpShardingRule within one context: a rule depends only on
/// the op's name, operand and result types and (non-sdy) attributes, so ops
/// that agree on all of them get the same rule attribute. Ops with regions
/// (whose bodies some rules read) are not memoized.
///
/// A key is words: the addresses of the op's name, its types, its
/// attributes' names and its attributes. Types and attributes are uniqued
/// (AttrArena), so equal addresses mean equal values; two spellings of one
/// name at two addresses only make two entries for one rule.
class RuleCache {
public:
  using Key = std::vector<uintptr_t>;
  /// The key of `op`; false when the op is not memoized.
  static bool key(const Operation &op, bool conservative, Key &out);
  const Attr *find(const Key &key) const {
    auto it = rules_.find(key);
    return it == rules_.end() ? nullptr : it->second;
  }
  void insert(const Key &key, const Attr *rule) { rules_.emplace(key, rule); }
  /// Storage for building keys, so a lookup does not allocate one.
  Key &scratch() { return scratch_; }

private:
  std::unordered_map<Key, const Attr *, WordsHash> rules_;
  Key scratch_;
};

/// getOrCreateShardingRule with `attach`, without copying the rule: the
/// attached rule (null when the op has none). With `cache`, ops equal to
/// one seen before share its rule instead of building it again.
const OpShardingRule *getOrAttachShardingRule(
    Operation &op, Context &ctx, bool conservative_propagation,
    DiagnosticEngine *warnings = nullptr, RuleCache *cache = nullptr);

} // namespace shardlab
