// Roofline fusion model, NVLink ring model and analytical default tables.
#include "shardlab/cost/hardware.h"

#include <algorithm>

namespace shardlab::cost {

Result<Estimate> fusionRooflineEstimate(const HardwarePreset &hw,
                                        const FusionQuery &q) {
  if (q.flops < 0 || q.bytes_read < 0 || q.bytes_written < 0)
    return makeError("fusion: flops and byte counts must be >= 0");
  if (!(hw.hbm_bytes_per_s > 0))
    return makeError("preset '" + hw.name + "' has no HBM bandwidth");
  Result<double> peak = peakFlopRate(hw, q.dtype);
  if (!peak)
    return peak.error();
  const double compute_us = 1e6 * q.flops / *peak;
  const double memory_us =
      1e6 * double(q.bytes_read + q.bytes_written) / hw.hbm_bytes_per_s;
  const double exec_us =
      compute_us + memory_us -
      kMemoryComputeParallelism * std::min(compute_us, memory_us);
  const double launch_us = q.add_launch_overhead ? hw.kernel_launch_us : 0;
  Estimate e;
  e.time_us = exec_us + launch_us;
  e.explanation.model = "fusion-roofline";
  e.explanation.key = hw.name + "/" + q.dtype;
  e.explanation.terms = {{"compute", compute_us, "us"},
                         {"memory", memory_us, "us"},
                         {"exec", exec_us, "us"},
                         {"launch", launch_us, "us"}};
  e.explanation.note = "exec = compute + memory - 0.95 * min(compute, memory)";
  return e;
}

Result<Estimate> intraNodeCollectiveEstimate(const HardwarePreset &hw,
                                             CollectiveOp op, int64_t bytes,
                                             int64_t group_size) {
  if (bytes < 0 || group_size < 1 || !(hw.nvlink_bytes_per_s > 0))
    return makeError("intra-node collective: need bytes >= 0, a group of at "
                     "least one device and a preset NVLink bandwidth");
  const double n = double(group_size);
  double factor = (n - 1) / n;
  if (asyncToSync(op) == CollectiveOp::AllReduce)
    factor = 2 * (n - 1) / n;
  else if (isPermute(op) || op == CollectiveOp::Send ||
           op == CollectiveOp::Recv)
    factor = 1;
  const double wire_us = 1e6 * factor * double(bytes) / hw.nvlink_bytes_per_s;
  Estimate e;
  e.time_us = kNcclKernelLaunchOverheadUs + wire_us;
  e.explanation.model = "analytical/nvlink-ring";
  e.explanation.key = hw.name;
  e.explanation.terms = {{"launch", kNcclKernelLaunchOverheadUs, "us"},
                         {"algorithm_factor", factor, ""},
                         {"wire", wire_us, "us"}};
  e.explanation.note = "time = launch + factor * bytes / nvlink_bw";
  return e;
}

namespace {

void addCollectives(const HardwarePreset &hw, PerfTable *t) {
  const char *ops[] = {"all-reduce", "all-gather", "reduce-scatter",
                       "all-to-all"};
  for (const char *name : ops)
    for (int64_t size : {2, 4, 8}) {
      std::string groups = "[";
      groups += std::to_string(8 / size) + "," + std::to_string(size);
      groups += "]<=[8]";
      for (int64_t bytes = 1024; bytes <= (int64_t{1} << 30); bytes *= 4) {
        CollectiveEntry e;
        e.op = name;
        e.dtype = "f32";
        e.bytes = bytes;
        e.devices_per_group = size;
        e.num_groups = 8 / size;
        e.replica_groups = *parseReplicaGroups(groups);
        e.comm_type = CommType::SinglePartition;
        const double us = intraNodeCollectiveEstimate(
                              hw, *parseCollectiveOp(name), bytes, size)
                              ->time_us;
        e.time = TimeStats{};
        e.time->median_us = us;
        e.throughput_bytes_per_s = double(bytes) / (us * 1e-6);
        t->collectives.push_back(e);
      }
    }
}

void addGemms(const HardwarePreset &hw, PerfTable *t) {
  for (const char *dtype : {"bf16", "f32"})
    for (int64_t b : {1, 2, 4})
      for (int64_t m = 256; m <= 4096; m *= 2)
        for (int64_t n = 256; n <= 4096; n *= 2)
          for (int64_t k = 256; k <= 4096; k *= 2) {
            GemmEntry g{b, m, n, k, dtype, dtype, dtype, {}, 0};
            const int64_t s = dtypeBytes(dtype);
            FusionQuery q;
            q.flops = 2.0 * b * m * n * k;
            q.bytes_read = b * (m * k + k * n) * s;
            q.bytes_written = b * m * n * s;
            q.dtype = dtype;
            const double us = fusionRooflineEstimate(hw, q)->time_us;
            g.flop_per_s = q.flops / (us * 1e-6);
            t->gemms.push_back(g);
          }
}

} // namespace

PerfTable generateAnalyticalTable(const HardwarePreset &hw) {
  PerfTable t;
  t.metadata.source = "analytical";
  t.metadata.device_name = hw.device_name;
  t.metadata.sm_version = hw.sm_version;
  t.metadata.gpu_count = hw.gpus_per_node;
  t.metadata.partition_size = hw.gpus_per_node;
  t.metadata.topology = "1 node, NVLink, GPUs: ";
  t.metadata.topology += std::to_string(hw.gpus_per_node);
  t.metadata.collector_name = "shardlab GenerateAnalyticalTable";
  t.metadata.collector_version = std::to_string(1);
  t.metadata.collector_args = {std::string("preset=").append(hw.name)};
  t.metadata.description =
      "Analytical, not measured: NVLink ring model and GEMM roofline from "
      "the preset's public peak numbers (";
  t.metadata.description += hw.source;
  t.metadata.description += ").";
  addCollectives(hw, &t);
  addGemms(hw, &t);
  return t;
}

} // namespace shardlab::cost
