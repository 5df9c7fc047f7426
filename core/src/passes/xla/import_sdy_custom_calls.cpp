// -xla-sdy-import-sdy-custom-calls: the custom calls XLA carries Shardy ops
// through HLO in, back to sdy ops. `custom_call @xla.sdy.ShardingGroup(%x)
// {mhlo.frontend_attributes = {xla.sdy.sharding_group_id = "21 : i64"}}`
// becomes `sdy.sharding_group %x group_id=21`; a call without the id, or
// whose result is used, is an error.
#include "passes/pass_utils.h"
#include "passes/xla_support.h"
#include "xla_passes.h"

#include <cstdlib>

namespace shardlab {

bool xlaImportSdyCustomCallsPass(Module &module, const PassOptions &,
                                 DiagnosticEngine &diags) {
  std::vector<Operation *> calls;
  walk(module.op(), [&](Operation &op) {
    if (isCustomCall(&op, "xla.sdy.ShardingGroup"))
      calls.push_back(&op);
  });
  Context &ctx = module.ctx();
  bool ok = true;
  for (Operation *call : calls) {
    auto fail = [&](const std::string &message) {
      diags.error(call->loc, "failed to legalize operation '" +
                                 std::string(call->name) +
                                 "' that was explicitly marked illegal");
      diags.error(call->loc, message);
      ok = false;
    };
    const Attr *frontend = call->attrs.get("mhlo.frontend_attributes");
    const Attr *id = frontend && frontend->kind == AttrKind::Dict
                         ? frontend->get("xla.sdy.sharding_group_id")
                         : nullptr;
    if (!id || id->kind != AttrKind::String || call->numOperands() != 1) {
      fail("expected CustomCallOp with a sharding group id.");
      continue;
    }
    bool used = false;
    for (size_t i = 0; i < call->numResults(); ++i)
      used = used || call->result(i)->firstUse();
    if (used) {
      fail("xla.sdy.ShardingGroup CustomCallOp should have no uses.");
      continue;
    }
    auto group =
        makeOp(ctx, "sdy.sharding_group", {call->operand(0)}, {}, call->loc);
    group->attrs.set(
        ctx.intern("group_id"),
        ctx.attrs.integer(std::strtoll(id->str().c_str(), nullptr, 10),
                          ctx.types.element("i64")));
    call->parentBlock()->insertBefore(call, std::move(group));
    eraseOp(*call);
  }
  return ok;
}

} // namespace shardlab
