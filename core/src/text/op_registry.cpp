#include "shardlab/ir/op_registry.h"
#include "ops_common.h"

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
  }
  const OpInfo *lookup(std::string_view name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }

private:
  std::vector<OpInfo> func_ = funcOpInfos();
  std::vector<OpInfo> sdy_ = sdyOpInfos();
  std::vector<OpInfo> stablehlo_ = stablehloOpInfos();
  std::vector<OpInfo> chlo_ = chloOpInfos();
  std::unordered_map<std::string_view, const OpInfo *> by_name_;
};

} // namespace

const OpInfo *lookupOp(std::string_view name) {
  static const OpRegistry registry;
  return registry.lookup(name);
}

} // namespace shardlab
