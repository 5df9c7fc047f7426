// What the per-device program pads: a value whose sharding does not divide
// one of its dimensions is padded up to the next multiple by
// -sdy-pad-for-divisibility, and every device computes ceil(size / shards)
// of it. Said once per value in the report's assumptions, since a batch
// passed per replica by mistake looks like a faster step otherwise.
#include "program_internal.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"

namespace shardlab::schedule::detail {
namespace {

constexpr size_t kMaxPaddingLines = 10;

std::string describePadding(const std::string &what, size_t dim, int64_t size,
                            int64_t shards) {
  const int64_t per_device = (size + shards - 1) / shards;
  char factor[32];
  std::snprintf(factor, sizeof factor, "%.2f",
                double(per_device * shards) / double(size));
  return "padding: " + what + " dimension " + std::to_string(dim) + " (" +
         std::to_string(size) + ") over " + std::to_string(shards) +
         " shards: " + std::to_string(per_device) + " per device (" +
         std::to_string(per_device * shards) + " in all, " +
         std::to_string(per_device * shards - size) +
         " of them padding: " + factor + "x the work)";
}

/// One line for the first dimension of `value` its sharding does not
/// divide; "" when all divide.
std::string paddingOf(const Module &module, Value *value,
                      const std::string &what) {
  const TensorSharding *sharding = getSharding(value);
  Type type = value->type;
  if (!sharding || !type || !type->isRankedTensor() || !type->hasStaticShape())
    return "";
  const Mesh *mesh = lookupMesh(module, *sharding);
  if (!mesh)
    return "";
  for (size_t d = 0; d < type->shape.size(); ++d) {
    const int64_t shards = shardedSizeAt(*sharding, d, *mesh);
    if (shards > 1 && type->shape[d] % shards != 0)
      return describePadding(what, d, type->shape[d], shards);
  }
  return "";
}

} // namespace

std::vector<std::string> paddingAssumptions(Module &module) {
  std::vector<std::string> lines;
  size_t more = 0;
  auto add = [&](std::string line) {
    if (line.empty())
      return;
    if (lines.size() < kMaxPaddingLines)
      lines.push_back(std::move(line));
    else
      ++more;
  };
  walk(module.op(), [&](Operation &op) {
    const std::string where =
        std::string(op.name) + "@" + std::to_string(op.loc.line);
    if (op.is("func.func") && op.numRegions() && !op.region(0).empty()) {
      Block &entry = op.region(0).front();
      for (size_t i = 0; i < entry.numArguments(); ++i)
        add(paddingOf(module, entry.argument(i),
                      where + " argument " + std::to_string(i)));
      return;
    }
    for (size_t r = 0; r < op.numResults(); ++r)
      add(paddingOf(module, op.result(r),
                    where + (op.numResults() > 1
                                 ? " result " + std::to_string(r)
                                 : std::string())));
  });
  if (more)
    lines.push_back("padding: and " + std::to_string(more) +
                    " more values whose sharding does not divide them");
  return lines;
}

} // namespace shardlab::schedule::detail
