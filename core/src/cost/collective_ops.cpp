// Collective op names and XLA's byte conventions for collectives.
#include "shardlab/cost/collective_model.h"

namespace shardlab::cost {
namespace {

struct OpName {
  CollectiveOp op;
  const char *name;
};

constexpr OpName kOpNames[] = {
    {CollectiveOp::AllReduce, "all-reduce"},
    {CollectiveOp::AllReduceStart, "all-reduce-start"},
    {CollectiveOp::AllGather, "all-gather"},
    {CollectiveOp::AllGatherStart, "all-gather-start"},
    {CollectiveOp::ReduceScatter, "reduce-scatter"},
    {CollectiveOp::AllToAll, "all-to-all"},
    {CollectiveOp::CollectivePermute, "collective-permute"},
    {CollectiveOp::CollectivePermuteStart, "collective-permute-start"},
    {CollectiveOp::Send, "send"},
    {CollectiveOp::Recv, "recv"},
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
  case CollectiveOp::AllReduceStart:
    return CollectiveOp::AllReduce;
  case CollectiveOp::AllGatherStart:
    return CollectiveOp::AllGather;
  case CollectiveOp::CollectivePermuteStart:
    return CollectiveOp::CollectivePermute;
  default:
    return op;
  }
}

bool requiresAccumulation(CollectiveOp op) {
  return op == CollectiveOp::AllReduce || op == CollectiveOp::AllReduceStart ||
         op == CollectiveOp::ReduceScatter;
}

bool isPermute(CollectiveOp op) {
  return asyncToSync(op) == CollectiveOp::CollectivePermute;
}

int64_t bytesTransferred(CollectiveOp op, const CollectiveShapes &s) {
  switch (asyncToSync(op)) {
  case CollectiveOp::ReduceScatter:
  case CollectiveOp::CollectivePermute:
  case CollectiveOp::Send:
  case CollectiveOp::Recv:
    return s.operand_bytes;
  default:
    return s.output_bytes;
  }
}

int64_t hbmBytesAccessed(CollectiveOp op, const CollectiveShapes &s,
                         int64_t group_size) {
  const int64_t n = group_size > 0 ? group_size : 1;
  switch (op) {
  case CollectiveOp::AllGather:
  case CollectiveOp::AllGatherStart: {
    const int64_t r = s.output_bytes / n;
    return r * (2 * n - 1) + r * n;
  }
  case CollectiveOp::ReduceScatter: {
    const int64_t r = s.operand_bytes / n;
    return r * n + r * (2 * n - 1);
  }
  case CollectiveOp::AllReduceStart:
    return s.output_bytes;
  case CollectiveOp::CollectivePermuteStart:
    // The start op returns the tuple (operand alias, output).
    return s.operand_bytes + s.operand_bytes + s.output_bytes;
  default:
    return s.operand_bytes + s.output_bytes;
  }
}

} // namespace shardlab::cost
