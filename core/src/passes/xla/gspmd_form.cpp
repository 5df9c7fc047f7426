// Automatic form detection: which modules are in GSPMD form, how many
// devices a module says it runs on, and the import every user-facing entry
// point runs before propagation.
#include "passes/xla_support.h"
#include "shardlab/passes/pass_manager.h"
#include "verify/verifier.h"
#include "xla_passes.h"

namespace shardlab {

int64_t declaredDeviceCount(Module &module) {
  int64_t count = 1;
  for (std::string_view name : {"mhlo.num_partitions", "mhlo.num_replicas"}) {
    const Attr *attr = module.op().attrs.get(name);
    if (attr && attr->kind == AttrKind::Integer && attr->intValue() > 0)
      count *= attr->intValue();
  }
  return count;
}

bool importGspmdForm(Module &module, DiagnosticEngine &diags, bool &imported) {
  // Older XLA dumps spell StableHLO ops as MHLO (mhlo.add, mhlo.while).
  convertMhloToStablehlo(module);
  imported = isGspmdModule(module);
  // The import is a step of its own, what it made of the input verified
  // (its passes one by one only with -verify-each).
  if (imported &&
      (!runNestedPass(module, "xla-sdy-stablehlo-import-pipeline", diags) ||
       !verifyModule(module, diags)))
    return false;
  // Meshes, or collectives that name their devices, say how the work is
  // split; without either the module is one program run everywhere.
  // Meshes are top-level ops: only a module without one is walked.
  bool has_mesh = false;
  for (const Operation &op : module.body())
    has_mesh = has_mesh || op.is("sdy.mesh");
  if (!has_mesh)
    walk(module.op(), [&](Operation &op) {
      has_mesh = has_mesh || op.attrs.get("replica_groups") ||
                 op.attrs.get("source_target_pairs");
    });
  const int64_t declared = declaredDeviceCount(module);
  if (!has_mesh && declared > 1)
    diags.warning(module.op().loc,
                  "the module says it runs on " + std::to_string(declared) +
                      " devices (mhlo.num_partitions x mhlo.num_replicas) "
                      "but nothing in it reads as a sharding: every device "
                      "is estimated to run the whole program");
  return true;
}

} // namespace shardlab
