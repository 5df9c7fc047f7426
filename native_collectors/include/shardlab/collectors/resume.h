// Resumable output: a table on disk is reopened, its finished points are
// skipped, new entries are appended and the file is rewritten atomically
// (through shardlab::cost::WritePerfTable) at most every few seconds, so an
// interrupted run leaves a valid partial table.
#pragma once

#include "shardlab/cost/perf_table.h"
#include "shardlab/support/result.h"

#include <set>
#include <string>

namespace shardlab::collectors {

struct OutputTable {
  cost::PerfTable table;
  std::set<std::string> done; // keys of entries already in the table
  bool resumed = false;
};

/// Opens `path` for a run with metadata `fresh`. A missing file (or
/// `overwrite`) gives an empty table. An existing one must be a valid table
/// from the same collector on the same device; its entries are kept, its
/// metadata replaced by `fresh`.
shardlab::Result<OutputTable> openOutputTable(const std::string &path,
                                              const cost::TableMetadata &fresh,
                                              bool overwrite);

/// Writes the table when forced or `min_interval_s` passed since the last
/// write; remembers the time of the last write.
class CheckpointWriter {
public:
  CheckpointWriter(std::string path, double min_interval_s)
      : path_(std::move(path)), min_interval_s_(min_interval_s) {}
  /// `now_s` is any monotonic clock in seconds. Returns true if written.
  shardlab::Result<bool> maybe(const cost::PerfTable &table, double now_s,
                               bool force);

private:
  std::string path_;
  double min_interval_s_;
  double last_s_ = -1e300;
};

} // namespace shardlab::collectors
