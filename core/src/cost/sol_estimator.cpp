// The SoL latency estimator's option string, DCN dispatch and node costs.
#include "shardlab/cost/sol_model.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace shardlab::cost {
namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string_view::npos)
      end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// strtod/strtoll on a copy; nullopt unless the whole value parses.
std::optional<double> parseNumber(std::string_view v, bool integer) {
  const std::string text(v);
  if (text.empty())
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  const double value = integer ? double(std::strtoll(text.c_str(), &end, 10))
                               : std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

bool setOption(SolConfig *c, std::string_view key, double v) {
  if (key == "nccl_op_launch_us")
    c->nccl_op_launch_us = v;
  else if (key == "nic_speed_gbps")
    c->nic_speed_gbps = v;
  else if (key == "chunk_prep_us")
    c->chunk_prep_us = v;
  else if (key == "rtt_us")
    c->rtt_us = v;
  else if (key == "gpus_per_node")
    c->gpus_per_node = int64_t(v);
  else if (key == "chunk_size_bytes")
    c->chunk_size_bytes = int64_t(v);
  else if (key == "partition_size")
    c->partition_size = int64_t(v);
  else if (key == "ring_hop_us")
    c->ring_hop_us = v;
  else if (key == "tree_all_reduce")
    c->tree_all_reduce = v > 0;
  else
    return false;
  return true;
}

} // namespace

Result<SolConfig> applySolOptions(SolConfig config, std::string_view options) {
  for (std::string_view item : split(options, ',')) {
    item = trim(item);
    if (item.empty())
      continue;
    const size_t eq = item.find('=');
    const std::string_view key = trim(item.substr(0, eq));
    const std::string_view value =
        eq == std::string_view::npos ? "" : trim(item.substr(eq + 1));
    SolConfig probe;
    if (!setOption(&probe, key, 0))
      return makeError("unknown S-curve option '" + std::string(key) +
                       "' (known: nccl_op_launch_us, nic_speed_gbps, "
                       "chunk_prep_us, rtt_us, gpus_per_node, "
                       "chunk_size_bytes, partition_size, ring_hop_us, "
                       "tree_all_reduce)");
    // XLA: only nic_speed_gbps is a double; a value overrides iff > 0.
    const bool integer = key != "nic_speed_gbps" && key != "ring_hop_us";
    std::optional<double> v = parseNumber(value, integer);
    if (!v)
      return makeError(
          "S-curve option '" + std::string(key) + "': '" + std::string(value) +
          "' is not " +
          (integer ? "an integer (XLA's flag is one)" : "a number"));
    // shardlab's switch is set either way; XLA's keys only by a value > 0.
    if (*v > 0 || key == "tree_all_reduce")
      setOption(&config, key, *v);
  }
  return config;
}

} // namespace shardlab::cost
