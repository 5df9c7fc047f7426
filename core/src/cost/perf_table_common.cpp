// Dtype helpers and semantic validation shared by table loaders and writers.
#include "shardlab/cost/perf_table.h"

#include <cmath>
#include <set>
#include <tuple>

namespace shardlab::cost {

int64_t dtypeBytes(std::string_view t) {
  if (t == "f64" || t == "s64" || t == "u64" || t == "c64")
    return 8;
  if (t == "f32" || t == "s32" || t == "u32" || t == "tf32")
    return 4;
  if (t == "bf16" || t == "f16" || t == "s16" || t == "u16")
    return 2;
  if (t == "s8" || t == "u8" || t == "pred" || t.substr(0, 2) == "f8")
    return 1;
  if (t == "c128")
    return 16;
  return 0;
}

std::string gemmDtypeKey(const GemmEntry &e) {
  return e.lhs_dtype + "x" + e.rhs_dtype + "->" + e.out_dtype;
}

Result<std::vector<std::string>> splitGemmDtypeKey(std::string_view key) {
  const size_t arrow = key.find("->");
  const size_t x = key.find('x');
  if (arrow == std::string_view::npos || x == std::string_view::npos ||
      x > arrow || key.find('x', x + 1) < arrow)
    return makeError("dtype key '" + std::string(key) +
                     "': expected \"<lhs>x<rhs>-><out>\"");
  std::vector<std::string> out = {std::string(key.substr(0, x)),
                                  std::string(key.substr(x + 1, arrow - x - 1)),
                                  std::string(key.substr(arrow + 2))};
  for (const std::string &t : out)
    if (dtypeBytes(t) == 0)
      return makeError("dtype key '" + std::string(key) +
                       "': unknown element type '" + t + "'");
  return out;
}

namespace {

std::string entryPath(const char *array, size_t i) {
  return std::string(array) + "[" + std::to_string(i) + "]";
}

std::string collectiveIdentity(const CollectiveEntry &e) {
  std::string id = e.op + "|" + e.dtype + "|" + std::to_string(e.bytes) + "|" +
                   std::to_string(e.devices_per_group) + "|";
  if (e.comm_type)
    id += toText(*e.comm_type);
  if (e.permute_type)
    id += toText(*e.permute_type);
  if (e.replica_groups) {
    id += '|';
    id += toText(*e.replica_groups);
  }
  return id;
}

void checkCollective(const CollectiveEntry &e, const std::string &path,
                     std::vector<std::string> *errors) {
  if (e.bytes <= 0)
    errors->push_back(path + ".bytes: expected an integer >= 1");
  if (e.devices_per_group < 2)
    errors->push_back(path + ".devices_per_group: expected an integer >= 2");
  if (!(e.throughput_bytes_per_s > 0) ||
      !std::isfinite(e.throughput_bytes_per_s))
    errors->push_back(path + ".throughput_bytes_per_s: expected a finite "
                             "number > 0");
  const bool permute = e.op == "collective-permute";
  if (permute && !e.permute_type)
    errors->push_back(path + ".permute_type: required for "
                             "collective-permute");
  if (!permute && !e.comm_type)
    errors->push_back(path + ".comm_type: required for " + e.op);
}

void checkGemm(const GemmEntry &e, const std::string &path,
               std::vector<std::string> *errors) {
  constexpr int64_t kMaxDim = int64_t{1} << 40;
  if (e.b <= 0 || e.m <= 0 || e.n <= 0 || e.k <= 0 || e.b > kMaxDim ||
      e.m > kMaxDim || e.n > kMaxDim || e.k > kMaxDim)
    errors->push_back(path + ": expected b, m, n, k in [1, 2^40]");
  if (!(e.flop_per_s > 0) || !std::isfinite(e.flop_per_s))
    errors->push_back(path + ".flop_per_s: expected a finite number > 0");
}

} // namespace

Result<bool> validatePerfTable(const PerfTable &table) {
  std::vector<std::string> errors;
  if (table.metadata.source != "measured" &&
      table.metadata.source != "analytical")
    errors.push_back("metadata.source: expected \"measured\" or "
                     "\"analytical\", got \"" +
                     table.metadata.source + "\"");
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < table.collectives.size(); ++i) {
    checkCollective(table.collectives[i], entryPath("collectives", i), &errors);
    auto [it, fresh] =
        seen.emplace(collectiveIdentity(table.collectives[i]), i);
    if (!fresh)
      errors.push_back(entryPath("collectives", i) + ": duplicate of " +
                       entryPath("collectives", it->second) +
                       " (same op, kind, dtype, bytes, group)");
  }
  seen.clear();
  for (size_t i = 0; i < table.gemms.size(); ++i) {
    const GemmEntry &g = table.gemms[i];
    checkGemm(g, entryPath("gemms", i), &errors);
    const std::string id = gemmDtypeKey(g) + "|" + std::to_string(g.b) + "," +
                           std::to_string(g.m) + "," + std::to_string(g.n) +
                           "," + std::to_string(g.k);
    auto [it, fresh] = seen.emplace(id, i);
    if (!fresh)
      errors.push_back(entryPath("gemms", i) + ": duplicate of " +
                       entryPath("gemms", it->second) +
                       " (same b, m, n, k and dtypes)");
  }
  if (!errors.empty()) {
    std::string msg;
    for (size_t i = 0; i < errors.size() && i < 50; ++i)
      msg += i > 0 ? "\n" + errors[i] : errors[i];
    return makeError(msg);
  }
  return true;
}

Result<bool> checkFullGemmGrid(const PerfTable &table,
                               std::string_view dtype_key) {
  std::set<int64_t> bs, ms, ns, ks;
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> present;
  for (const GemmEntry &g : table.gemms) {
    if (gemmDtypeKey(g) != dtype_key)
      continue;
    bs.insert(g.b), ms.insert(g.m), ns.insert(g.n), ks.insert(g.k);
    present.insert({g.b, g.m, g.n, g.k});
  }
  for (int64_t b : bs)
    for (int64_t m : ms)
      for (int64_t n : ns)
        for (int64_t k : ks)
          if (present.count({b, m, n, k}) == 0)
            return makeError(
                "gemms (" + std::string(dtype_key) +
                "): not a full grid, missing b=" + std::to_string(b) +
                " m=" + std::to_string(m) + " n=" + std::to_string(n) +
                " k=" + std::to_string(k));
  return true;
}

} // namespace shardlab::cost
