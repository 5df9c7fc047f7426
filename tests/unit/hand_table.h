// A performance table written for the tests that work a step's time out by
// hand: GEMMs at one FLOP rate, each collective at the time the test gives
// it (LAT + B / BW, say). Written as table JSON, so that the tests read it
// through the loader, as a table file is read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardlab::test {

class HandTable {
public:
  /// A table for `gpus` GPUs in one NVLink domain.
  explicit HandTable(int64_t gpus) : gpus_(gpus) {}

  /// Every GEMM with b = 1 and m, n and k among `sizes`, of `dtype`
  /// operands and result, at `flop_per_s`.
  HandTable &gemms(const std::vector<int64_t> &sizes, const std::string &dtype,
                   double flop_per_s) {
    for (int64_t m : sizes)
      for (int64_t n : sizes)
        for (int64_t k : sizes)
          add(gemms_, "{\"b\":1,\"m\":" + std::to_string(m) + ",\"n\":" +
                          std::to_string(n) + ",\"k\":" + std::to_string(k) +
                          ",\"lhs_dtype\":\"" + dtype + "\",\"rhs_dtype\":\"" +
                          dtype + "\",\"out_dtype\":\"" + dtype +
                          "\",\"flop_per_s\":" + std::to_string(flop_per_s) +
                          "}");
    return *this;
  }

  /// One `op` ("all-reduce", ...) in groups of `group` devices, `bytes` by
  /// XLA's convention, taking `time_us`. `scheme` is the transfer scheme:
  /// a comm_type ("single_partition") or, for a collective-permute, a
  /// permute_type ("intra_partition_one_way").
  HandTable &collective(const std::string &op, const std::string &scheme,
                        const std::string &dtype, int64_t bytes, int64_t group,
                        double time_us) {
    const char *kind =
        op == "collective-permute" ? "permute_type" : "comm_type";
    add(collectives_, "{\"op\":\"" + op + "\",\"" + kind + "\":\"" + scheme +
                          "\",\"dtype\":\"" + dtype +
                          "\",\"bytes\":" + std::to_string(bytes) +
                          ",\"devices_per_group\":" + std::to_string(group) +
                          ",\"num_groups\":" + std::to_string(gpus_ / group) +
                          ",\"nodes\":1,\"time_us\":{\"median\":" +
                          std::to_string(time_us) + "}}");
    return *this;
  }

  std::string json() const {
    return "{\"format\":\"shardlab-perf-table\",\"version\":1,\"metadata\":{"
           "\"source\":\"analytical\",\"device\":{\"name\":\"test\","
           "\"sm_version\":\"sm_90\",\"gpu_count\":" +
           std::to_string(gpus_) +
           "},\"partition_size\":" + std::to_string(gpus_) +
           "},\"collectives\":[" + collectives_ + "],\"gemms\":[" + gemms_ +
           "]}";
  }

private:
  static void add(std::string &list, const std::string &entry) {
    list += (list.empty() ? "" : ",") + entry;
  }
  int64_t gpus_;
  std::string gemms_, collectives_;
};

} // namespace shardlab::test
