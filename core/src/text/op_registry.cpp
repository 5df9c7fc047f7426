#include "ir/op_registry.h"
#include "ir/op_properties.h"
#include "ops_common.h"
#include "support/string_table.h"

#include <algorithm>

#include <deque>
#include <string>
#include <unordered_map>

namespace shardlab {

namespace {

// Built once on first use and immutable afterwards.
class OpRegistry {
public:
  OpRegistry() {
    for (auto *list : {&func_, &sdy_, &stablehlo_, &chlo_})
      for (const OpInfo &info : *list)
        by_name_.emplace(info.name, &info);
    addMhloAliases();
    for (const OpInfo &info : mhlo_)
      by_name_.emplace(info.name, &info);
    const std::vector<std::string_view> &elementwise = elementwiseOps();
    for (auto *list : {&func_, &sdy_, &stablehlo_, &chlo_, &mhlo_})
      for (OpInfo &info : *list)
        info.elementwise_name = std::binary_search(
            elementwise.begin(), elementwise.end(), info.name);
  }
  const OpInfo *lookup(std::string_view name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }

private:
  // MHLO, the dialect StableHLO came from, spells the same ops `mhlo.add`,
  // `mhlo.while`, ... in older XLA dumps and exports: each StableHLO op
  // reads and prints under that name too (unless MHLO has an entry of its
  // own, as mhlo.copy); -xla-sdy-mhlo-import-pipeline turns them into
  // StableHLO ops.
  void addMhloAliases() {
    for (const OpInfo &info : stablehlo_) {
      if (info.name.substr(0, 10) != "stablehlo.")
        continue;
      std::string alias = "mhlo." + std::string(info.name.substr(10));
      if (by_name_.count(alias))
        continue;
      alias_names_.push_back(std::move(alias));
      OpInfo copy = info;
      copy.name = alias_names_.back();
      mhlo_.push_back(std::move(copy));
    }
  }

  std::vector<OpInfo> func_ = funcOpInfos();
  std::vector<OpInfo> sdy_ = sdyOpInfos();
  std::vector<OpInfo> stablehlo_ = stablehloOpInfos();
  std::vector<OpInfo> chlo_ = chloOpInfos();
  std::deque<std::string> alias_names_; // stable storage for mhlo_ names
  std::vector<OpInfo> mhlo_;
  StringTable<const OpInfo *> by_name_;
};

} // namespace

const OpInfo *lookupOp(std::string_view name) {
  static const OpRegistry registry;
  return registry.lookup(name);
}

} // namespace shardlab
