// Reopening a partial table and checkpointing it atomically.
#include "shardlab/collectors/resume.h"

#include "shardlab/collectors/collective_plan.h"
#include "shardlab/collectors/gemm_plan.h"

#include <fstream>

namespace shardlab::collectors {
namespace {

bool fileExists(const std::string &path) {
  return static_cast<bool>(std::ifstream(path));
}

// Why an existing table cannot be continued by this run, "" if it can.
std::string mismatch(const cost::TableMetadata &old,
                     const cost::TableMetadata &fresh) {
  if (old.source != "measured")
    return "it is not a measured table (source \"" + old.source + "\")";
  if (old.collector_name != fresh.collector_name)
    return "it was written by '" + old.collector_name + "'";
  if (old.device_name != fresh.device_name)
    return "it was measured on '" + old.device_name + "', this is '" +
           fresh.device_name + "'";
  if (old.gpu_count != fresh.gpu_count)
    return "it was measured on " + std::to_string(old.gpu_count) +
           " GPU(s), this job has " + std::to_string(fresh.gpu_count);
  if (old.description != fresh.description)
    return "its settings differ: \"" + old.description + "\"";
  return "";
}

} // namespace

shardlab::Result<OutputTable> openOutputTable(const std::string &path,
                                              const cost::TableMetadata &fresh,
                                              bool overwrite) {
  OutputTable out;
  out.table.metadata = fresh;
  if (overwrite || !fileExists(path))
    return out;
  shardlab::Result<cost::PerfTable> old = cost::loadPerfTable(path);
  if (!old)
    return shardlab::makeError("cannot resume: " + old.error().message +
                               " (use --overwrite to start afresh)");
  const std::string why = mismatch(old->metadata, fresh);
  if (!why.empty())
    return shardlab::makeError("cannot resume " + path + ": " + why +
                               " (use --overwrite or another --out)");
  out.table.collectives = old->collectives;
  out.table.gemms = old->gemms;
  for (const cost::CollectiveEntry &e : out.table.collectives)
    out.done.insert(collectiveEntryKey(e));
  for (const cost::GemmEntry &e : out.table.gemms)
    out.done.insert(gemmEntryKey(e));
  out.resumed = true;
  return out;
}

shardlab::Result<bool> CheckpointWriter::maybe(const cost::PerfTable &table,
                                               double now_s, bool force) {
  if (!force && now_s - last_s_ < min_interval_s_)
    return false;
  shardlab::Result<bool> ok = cost::writePerfTable(table, path_);
  if (!ok)
    return ok.error();
  last_s_ = now_s;
  return true;
}

} // namespace shardlab::collectors
