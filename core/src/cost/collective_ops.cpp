// Collective op names and XLA's byte conventions for collectives.
#include "shardlab/cost/collective_model.h"

namespace shardlab::cost {
namespace {

struct OpName {
  CollectiveOp op;
  const char *name;
};

constexpr OpName kOpNames[] = {
    {CollectiveOp::kAllReduce, "all-reduce"},
    {CollectiveOp::kAllReduceStart, "all-reduce-start"},
    {CollectiveOp::kAllGather, "all-gather"},
    {CollectiveOp::kAllGatherStart, "all-gather-start"},
    {CollectiveOp::kReduceScatter, "reduce-scatter"},
    {CollectiveOp::kAllToAll, "all-to-all"},
    {CollectiveOp::kCollectivePermute, "collective-permute"},
    {CollectiveOp::kCollectivePermuteStart, "collective-permute-start"},
    {CollectiveOp::kSend, "send"},
    {CollectiveOp::kRecv, "recv"},
};

} // namespace

std::string_view toText(CollectiveOp op) {
  for (const OpName &n : kOpNames)
    if (n.op == op)
      return n.name;
  return "?";
}

Result<CollectiveOp> parseCollectiveOp(std::string_view text) {
  for (const OpName &n : kOpNames)
    if (text == n.name)
      return n.op;
  return makeError("unknown collective op '" + std::string(text) + "'");
}

CollectiveOp asyncToSync(CollectiveOp op) {
  switch (op) {
  case CollectiveOp::kAllReduceStart:
    return CollectiveOp::kAllReduce;
  case CollectiveOp::kAllGatherStart:
    return CollectiveOp::kAllGather;
  case CollectiveOp::kCollectivePermuteStart:
    return CollectiveOp::kCollectivePermute;
  default:
    return op;
  }
}

bool requiresAccumulation(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce ||
         op == CollectiveOp::kAllReduceStart ||
         op == CollectiveOp::kReduceScatter;
}

bool isPermute(CollectiveOp op) {
  return asyncToSync(op) == CollectiveOp::kCollectivePermute;
}

int64_t bytesTransferred(CollectiveOp op, const CollectiveShapes &s) {
  switch (asyncToSync(op)) {
  case CollectiveOp::kReduceScatter:
  case CollectiveOp::kCollectivePermute:
  case CollectiveOp::kSend:
  case CollectiveOp::kRecv:
    return s.operand_bytes;
  default:
    return s.output_bytes;
  }
}

int64_t hbmBytesAccessed(CollectiveOp op, const CollectiveShapes &s,
                         int64_t group_size) {
  const int64_t n = group_size > 0 ? group_size : 1;
  switch (op) {
  case CollectiveOp::kAllGather:
  case CollectiveOp::kAllGatherStart: {
    const int64_t r = s.output_bytes / n;
    return r * (2 * n - 1) + r * n;
  }
  case CollectiveOp::kReduceScatter: {
    const int64_t r = s.operand_bytes / n;
    return r * n + r * (2 * n - 1);
  }
  case CollectiveOp::kAllReduceStart:
    return s.output_bytes;
  case CollectiveOp::kCollectivePermuteStart:
    // The start op returns the tuple (operand alias, output).
    return s.operand_bytes + s.operand_bytes + s.output_bytes;
  default:
    return s.operand_bytes + s.output_bytes;
  }
}

} // namespace shardlab::cost
