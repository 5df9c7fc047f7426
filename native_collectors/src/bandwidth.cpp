// nccl-tests' byte counts and bandwidth conventions.
#include "shardlab/collectors/bandwidth.h"

namespace shardlab::collectors {

std::string_view opName(CollOp op) {
  switch (op) {
  case CollOp::AllReduce:
    return "all-reduce";
  case CollOp::AllGather:
    return "all-gather";
  case CollOp::ReduceScatter:
    return "reduce-scatter";
  case CollOp::AllToAll:
    return "all-to-all";
  case CollOp::CollectivePermute:
    return "collective-permute";
  }
  return "?";
}

RankCounts collCounts(CollOp op, int64_t total_bytes, int64_t elem_bytes,
                      int64_t nranks) {
  RankCounts c;
  if (elem_bytes <= 0 || nranks <= 0 || total_bytes <= 0)
    return c;
  const int64_t count = total_bytes / elem_bytes;
  // all_gather.cu / reduce_scatter.cu: (count/nranks) & ~(16/eltSize - 1).
  const int64_t align = elem_bytes >= 16 ? 1 : 16 / elem_bytes;
  const int64_t base = (count / nranks) & ~(align - 1);
  switch (op) {
  case CollOp::AllReduce:
  case CollOp::CollectivePermute:
    c.send_count = c.recv_count = c.chunk = count;
    break;
  case CollOp::AllGather:
    c.send_count = c.chunk = base;
    c.recv_count = base * nranks;
    break;
  case CollOp::ReduceScatter:
    c.send_count = base * nranks;
    c.recv_count = c.chunk = base;
    break;
  case CollOp::AllToAll:
    c.chunk = count / nranks;
    c.send_count = c.recv_count = c.chunk * nranks;
    break;
  }
  const int64_t total =
      op == CollOp::ReduceScatter ? c.send_count : c.recv_count;
  c.bytes = total * elem_bytes;
  return c;
}

double busBwFactor(CollOp op, int64_t nranks) {
  if (nranks <= 0)
    return 0;
  const double n = static_cast<double>(nranks);
  switch (op) {
  case CollOp::AllReduce:
    return 2.0 * (n - 1) / n;
  case CollOp::AllGather:
  case CollOp::ReduceScatter:
  case CollOp::AllToAll:
    return (n - 1) / n;
  case CollOp::CollectivePermute:
    return 1.0;
  }
  return 0;
}

Bandwidth computeBandwidth(CollOp op, int64_t bytes, int64_t nranks,
                           double seconds) {
  Bandwidth b;
  if (seconds <= 0)
    return b;
  b.algbw_gb_per_s = static_cast<double>(bytes) / 1.0e9 / seconds;
  b.busbw_gb_per_s = b.algbw_gb_per_s * busBwFactor(op, nranks);
  return b;
}

double gemmFlops(int64_t b, int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(b) * static_cast<double>(m) *
         static_cast<double>(n) * static_cast<double>(k);
}

} // namespace shardlab::collectors
