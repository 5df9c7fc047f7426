// Per-rank element counts, XLA byte sizes and bandwidths of collectives, as
// nccl-tests defines them (src/<coll>.cu GetCollByteCount / Get*Bw):
//   algbw = S / t with S = AR buffer, AG output, RS input, A2A buffer,
//           send/recv buffer; busbw = algbw * factor, factor 2(n-1)/n for
//           AR, (n-1)/n for AG, RS and A2A, 1 for send/recv.
// S equals XLA's bytes_transferred, the table's `bytes`.
#pragma once

#include <cstdint>
#include <string_view>

namespace shardlab::collectors {

enum class CollOp {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  CollectivePermute,
};

/// The table's op name: all-reduce, all-gather, ...
std::string_view opName(CollOp op);

/// Element counts each rank sends and receives for one collective.
struct RankCounts {
  int64_t send_count = 0;
  int64_t recv_count = 0;
  int64_t chunk = 0; // per-peer block: AG/RS per-rank count, A2A per-peer
  int64_t bytes = 0; // S above (XLA bytes_transferred); 0 = nothing to send
};

/// nccl-tests' rounding: AG/RS per-rank counts rounded down to 16 bytes,
/// A2A per-peer counts rounded down to whole elements.
RankCounts collCounts(CollOp op, int64_t total_bytes, int64_t elem_bytes,
                      int64_t nranks);

/// busbw / algbw: 2(n-1)/n, (n-1)/n or 1 (0 for n = 1).
double busBwFactor(CollOp op, int64_t nranks);

struct Bandwidth {
  double algbw_gb_per_s = 0; // 1e9 bytes/s, as nccl-tests prints
  double busbw_gb_per_s = 0;
};
Bandwidth computeBandwidth(CollOp op, int64_t bytes, int64_t nranks,
                           double seconds);

/// 2*b*m*n*k.
double gemmFlops(int64_t b, int64_t m, int64_t n, int64_t k);

} // namespace shardlab::collectors
