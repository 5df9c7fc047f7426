// libFuzzer target over the cost model's table loaders: the shardlab JSON
// loader/validator and XLA's text-proto importers (collective profiles, GEMM
// tables). A table that loads must serialise and load again, and the
// interpolators built from it must answer queries without crashing. Any
// crash, leak, sanitizer report or hang is a bug: bad input must only
// produce error messages.
#include "shardlab/cost/collective_model.h"
#include "shardlab/cost/gemm_model.h"
#include "shardlab/cost/perf_table.h"
#include "shardlab/cost/xla_import.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace shardlab::cost;
using shardlab::Error;
using shardlab::makeError;
using shardlab::Result;

namespace {

void QueryCollectives(const PerfTable &table) {
  CollectiveQuery q;
  q.op = CollectiveOp::AllReduce;
  q.dtype = "f32";
  q.groups = *parseReplicaGroups("[2,4]<=[8]");
  for (EstimateMode mode : {EstimateMode::Compatible, EstimateMode::Accurate})
    for (TableInterpolation interp :
         {TableInterpolation::Nearest, TableInterpolation::GridSnap}) {
      CollectiveInterpolatorOptions options;
      options.mode = mode;
      options.interpolation = interp;
      auto ci = CollectiveInterpolator::create(table, options);
      if (!ci)
        continue;
      for (int64_t bytes : {int64_t{1}, int64_t{3000}, int64_t{1} << 40}) {
        q.bytes = bytes;
        (void)ci->estimateTime(q);
      }
    }
}

void QueryGemms(const PerfTable &table) {
  GemmQuery q;
  q.dims = {2, 300, 5000, 700};
  q.lhs_dtype = q.rhs_dtype = q.out_dtype = "bf16";
  for (EstimateMode mode : {EstimateMode::Compatible, EstimateMode::Accurate})
    for (GemmTableKind kind :
         {GemmTableKind::Default, GemmTableKind::UserProfiles}) {
      auto mi = MatmulInterpolator::create(table, kind, mode);
      if (mi)
        (void)mi->estimateTime(q);
    }
  if (!table.gemms.empty())
    (void)checkFullGemmGrid(table, gemmDtypeKey(table.gemms.front()));
}

// A loaded table must survive a write/read round trip and be queryable.
void Exercise(const PerfTable &table) {
  Result<PerfTable> again = parsePerfTable(serializePerfTable(table));
  if (!again)
    std::abort(); // the writer produced a table the loader rejects
  QueryCollectives(table);
  QueryGemms(table);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  if (Result<PerfTable> t = parsePerfTable(text))
    Exercise(*t);
  if (Result<PerfTable> t = importXlaCollectiveProfiles(text, "", 8))
    Exercise(*t);
  if (Result<PerfTable> t = importXlaGemmTable(text, ""))
    Exercise(*t);
  (void)listXlaDeviceKeys(text);
  return 0;
}
