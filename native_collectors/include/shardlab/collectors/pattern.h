// Data patterns that make collective results exactly checkable: small
// integers, exact in f32, f16, bf16 and s32 for groups of up to 254 ranks.
// Usable from host code and CUDA kernels (SHARDLAB_HD); the unit tests run
// each collective on the host over these inputs and compare with Expected.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SHARDLAB_HD __host__ __device__
#else
#define SHARDLAB_HD
#endif

namespace shardlab::collectors {

/// Which buffer of which collective a pattern describes.
enum class PatternKind : int {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  Permute,
};

/// Everything a rank needs to fill its input or check its output.
struct PatternSpec {
  PatternKind kind = PatternKind::AllReduce;
  int64_t rank = 0;    // position in the group
  int64_t nranks = 1;  // group size
  int64_t chunk = 0;   // per-rank (AG/RS) or per-peer (A2A) count
  int64_t source = -1; // permute: rank whose data this rank receives
};

/// The reduction pattern: 1 everywhere, plus i%3 on one rank per index, so
/// the sum over ranks is nranks + i%3.
SHARDLAB_HD inline int64_t reduceInput(int64_t rank, int64_t nranks,
                                       int64_t i) {
  return 1 + ((i + rank) % nranks == 0 ? i % 3 : 0);
}
/// A value that depends on the rank and the position (0..60).
SHARDLAB_HD inline int64_t tagValue(int64_t rank, int64_t peer, int64_t j) {
  return (rank * 7 + peer * 3 + j) % 61;
}

/// Value of element `i` of this rank's input (send) buffer.
SHARDLAB_HD inline int64_t inputValue(const PatternSpec &s, int64_t i) {
  switch (s.kind) {
  case PatternKind::AllReduce:
  case PatternKind::ReduceScatter:
    return reduceInput(s.rank, s.nranks, i);
  case PatternKind::AllToAll:
    return tagValue(s.rank, i / s.chunk, i % s.chunk);
  case PatternKind::AllGather:
  case PatternKind::Permute:
    return tagValue(s.rank, 0, i);
  }
  return 0;
}

/// Expected value of element `i` of this rank's output, -1 = not checked
/// (a permute rank that receives nothing).
SHARDLAB_HD inline int64_t expectedValue(const PatternSpec &s, int64_t i) {
  switch (s.kind) {
  case PatternKind::AllReduce:
    return s.nranks + i % 3;
  case PatternKind::ReduceScatter:
    return s.nranks + (s.rank * s.chunk + i) % 3;
  case PatternKind::AllGather:
    return tagValue(i / s.chunk, 0, i % s.chunk);
  case PatternKind::AllToAll:
    return tagValue(i / s.chunk, s.rank, i % s.chunk);
  case PatternKind::Permute:
    return s.source < 0 ? -1 : tagValue(s.source, 0, i);
  }
  return -1;
}

} // namespace shardlab::collectors
