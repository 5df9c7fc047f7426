// The IR verifier driver: visits ops in pre-order as MLIR's verifier does
// (an op's attributes and invariants on entrance, its region-dependent
// checks on exit) and stops at the first op that fails.
//
// The pass runner verifies after every pass, and most passes change a few
// functions of a module or none. So verifyModule remembers two fingerprints
// of each top-level op it found valid (names, attributes, operands, types
// and nesting: attributes and types are uniqued, so their addresses stand
// for their contents), one of the op itself and one of its body, and
// verifies again only the functions whose fingerprints changed: whole when
// the body changed, only the function op's own checks (its attributes and
// argument and result shardings) when only the op did. Anything else at the
// top level that changed (a mesh, a symbol added or gone) means everything
// is verified again, since functions read meshes by name.
#include "verify/verifier.h"

#include "ir/op_registry.h"

#include "support/word_hash.h"
#include "verify_ops.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>

namespace shardlab {

namespace verify {
namespace {

bool isIsolatedFromAbove(const Operation &op) {
  return (op.info && op.info->isolated_from_above) || op.is("func.func") ||
         op.is("sdy.manual_computation") || op.is("sdy.named_computation");
}

// Whether `value` is defined inside one of `root`'s regions.
bool definedInside(const Value &value, const Operation &root) {
  Operation *scope = nullptr;
  if (value.isBlockArgument()) {
    Region *region = value.owner_block ? value.owner_block->parent : nullptr;
    scope = region ? region->parent : nullptr;
  } else {
    scope = value.defining_op->parentOp();
  }
  for (; scope; scope = scope->parentOp())
    if (scope == &root)
      return true;
  return false;
}

// IsolatedFromAbove: no op in `root`'s regions uses a value from outside.
bool verifyIsolation(VerifyContext &ctx, Operation &root) {
  bool ok = true;
  walk(root, [&](Operation &user) {
    for (size_t i = 0; ok && i < user.numOperands(); ++i) {
      if (user.operand(i) && !definedInside(*user.operand(i), root)) {
        ctx.opError(user, "using value defined outside the region");
        ctx.note(root.loc, "required by region isolation constraints");
        ok = false;
      }
    }
  });
  return ok;
}

// The attributes MLIR requires of the ops whose custom form reads them
// (a generic form may leave them out).
bool verifyRequiredAttrs(VerifyContext &ctx, Operation &op) {
  struct Required {
    std::string_view op, attr;
    AttrKind kind;
  };
  static const Required kRequired[] = {
      {"func.func", "sym_name", AttrKind::String},
      {"func.func", "function_type", AttrKind::TypeAttr},
      {"func.call", "callee", AttrKind::SymbolRef},
      {"stablehlo.custom_call", "call_target_name", AttrKind::String},
      {"sdy.mesh", "sym_name", AttrKind::String},
      {"sdy.mesh", "mesh", AttrKind::Mesh},
      {"sdy.sharding_group", "group_id", AttrKind::Integer},
      {"sdy.sharding_constraint", "sharding", AttrKind::Sharding},
      {"sdy.reshard", "sharding", AttrKind::Sharding},
      {"sdy.propagation_barrier", "allowed_direction", AttrKind::String},
  };
  // Only func, sdy and custom_call ops are listed: one look at the
  // dialect passes over the rest.
  std::string_view dialect = op.dialect();
  if (dialect != "func" && dialect != "sdy" && !op.is("stablehlo.custom_call"))
    return true;
  for (const Required &required : kRequired) {
    if (!op.is(required.op))
      continue;
    const Attr *attr = op.attrs.get(required.attr);
    if (!attr) {
      ctx.opError(op,
                  "requires attribute '" + std::string(required.attr) + "'");
      return false;
    }
    if (attr->kind != required.kind ||
        (required.kind == AttrKind::TypeAttr &&
         std::get<Type>(attr->payload)->kind != TypeKind::Function)) {
      ctx.opError(op, "attribute '" + std::string(required.attr) +
                          "' has the wrong kind");
      return false;
    }
  }
  return true;
}

// Every block of a known op's region ends with a terminator, as MLIR
// requires (passes rely on it: they read and replace the terminator).
bool verifyTerminators(VerifyContext &ctx, Operation &op) {
  if (!op.info)
    return true;
  for (size_t r = 0; r < op.numRegions(); ++r)
    for (auto &block : op.region(r).blocks) {
      Operation *last = block->back();
      if (!last) {
        ctx.opError(op, "empty block: expect at least a terminator");
        return false;
      }
      // An op of another dialect may be a terminator (test.terminator).
      if (last->info && !last->is("func.return") &&
          !last->is("stablehlo.return") && !last->is("sdy.return") &&
          !last->is("mhlo.return")) {
        ctx.opError(*last, "block with no terminator, has '" +
                               std::string(last->name) + "'");
        return false;
      }
    }
  return true;
}

// MLIR: "symbol declaration cannot have public visibility".
bool verifyDeclaration(VerifyContext &ctx, Operation &op) {
  if (!op.is("func.func") || (op.numRegions() && !op.region(0).empty()))
    return true;
  const Attr *visibility = op.attrs.get("sym_visibility");
  if (visibility && visibility->kind == AttrKind::String &&
      visibility->str() != "public")
    return true;
  ctx.opError(op, "symbol declaration cannot have public visibility");
  return false;
}

// A StableHLO elementwise op of the registry (its own entry: the verifier
// asks for every op, and this is two loads and a compare).
bool hasElementwiseShapes(const Operation &op) {
  return op.info && op.info->elementwise_name && op.info->name == op.name &&
         op.dialect() == "stablehlo";
}

bool verifyOnEntrance(VerifyContext &ctx, Operation &op) {
  // Ops without attributes skip the call (most ops, every op verified).
  return verifyRequiredAttrs(ctx, op) && verifyDeclaration(ctx, op) &&
         verifyTerminators(ctx, op) &&
         (op.attrs.entries().empty() || verifyDiscardableAttrs(ctx, op)) &&
         verifySdyOp(ctx, op) &&
         (!hasElementwiseShapes(op) || verifyElementwiseShapes(ctx, op));
}

// Region-dependent checks; the function-interface checks of func.func run
// after its body (verifyWithRegions), as in MLIR.
bool verifyOnExit(VerifyContext &ctx, Operation &op) {
  if (isIsolatedFromAbove(op) && !verifyIsolation(ctx, op))
    return false;
  return !op.is("func.func") || verifyFuncShardings(ctx, op);
}

bool verifyTree(VerifyContext &ctx, Operation &op) {
  if (!verifyOnEntrance(ctx, op))
    return false;
  for (size_t r = 0; r < op.numRegions(); ++r)
    for (auto &block : op.region(r).blocks)
      for (Operation *child = block->front(); child;
           child = child->nextInBlock())
        if (!verifyTree(ctx, *child))
          return false;
  return verifyOnExit(ctx, op);
}

uint64_t mixPointer(uint64_t hash, const void *pointer) {
  return mixWord(hash, uint64_t(reinterpret_cast<uintptr_t>(pointer)));
}

uint64_t mixAttrs(uint64_t hash, std::span<const NamedAttr> entries) {
  hash = mixWord(hash, entries.size());
  for (const NamedAttr &entry : entries)
    hash = mixPointer(mixPointer(hash, entry.name.data()), entry.value);
  return hash;
}

// The fingerprint of `op` itself: its name and attributes.
inline uint64_t ownFingerprint(const Operation &op, uint64_t hash) {
  hash = mixWord(mixPointer(hash, op.name.data()), op.name.size());
  hash = mixAttrs(hash, op.attrs.entries());
  if (op.hasProps())
    hash = mixAttrs(hash, op.props().entries());
  return hash;
}

// The fingerprint of `op`'s operands and results.
inline uint64_t valuesFingerprint(const Operation &op, uint64_t hash) {
  const size_t num_operands = op.numOperands();
  hash = mixWord(hash, num_operands);
  for (size_t i = 0; i < num_operands; ++i)
    hash = mixPointer(hash, op.operand(i));
  const size_t num_results = op.numResults();
  hash = mixWord(hash, num_results);
  for (size_t i = 0; i < num_results; ++i)
    hash = mixPointer(mixPointer(hash, op.result(i)), op.result(i)->type);
  return hash;
}

// The fingerprint of what `op` holds: its operands, results and everything
// nested in it. Ops without regions (nearly all) are hashed in the loop
// over their block, without a call each.
uint64_t bodyFingerprint(const Operation &op, uint64_t hash) {
  hash = mixWord(valuesFingerprint(op, hash), op.numRegions());
  for (size_t r = 0; r < op.numRegions(); ++r)
    for (const auto &block : op.region(r).blocks) {
      hash = mixWord(hash, block->numArguments());
      for (size_t i = 0; i < block->numArguments(); ++i) {
        const Value *arg = block->argument(i);
        hash = mixPointer(mixPointer(hash, arg), arg->type);
      }
      for (const Operation *child = block->front(); child;
           child = child->nextInBlock()) {
        hash = ownFingerprint(*child, hash);
        hash = child->numRegions()
                   ? bodyFingerprint(*child, hash)
                   : mixWord(valuesFingerprint(*child, hash), 0);
      }
      hash = mixWord(hash, 0xB10C);
    }
  return hash;
}

// A top-level op's two fingerprints. A function's body print also covers
// its function type: the checks of its return read it.
Module::VerifiedOp topLevelPrints(const Operation &op) {
  uint64_t body = 0;
  if (op.is("func.func"))
    body = mixPointer(body, op.attrs.get("function_type"));
  return {&op, ownFingerprint(op, 0), bodyFingerprint(op, body)};
}

using Fingerprints = std::vector<Module::VerifiedOp>;

Fingerprints fingerprintsOf(Module &module) {
  Fingerprints prints;
  for (const Operation *op = module.body().front(); op; op = op->nextInBlock())
    prints.push_back(topLevelPrints(*op));
  return prints;
}

// What verifying a function reads of the other top-level ops: which ops
// there are, in order, and for a mesh its symbol and its axes. A mesh that
// only gained an attribute (-sdy-lift-inlined-meshes tags each with its
// stablehlo form) is verified again alone; any other top-level op that is
// not a function counts with its whole fingerprint.
uint64_t nonFunctionInterface(const Fingerprints &ops) {
  uint64_t hash = 0;
  for (const Module::VerifiedOp &entry : ops) {
    const Operation *op = entry.op;
    if (op->is("func.func"))
      continue;
    if (op->is("sdy.mesh"))
      hash = mixPointer(
          mixPointer(mixPointer(hash, op), op->attrs.get("sym_name")),
          op->attrs.get("mesh"));
    else
      hash = mixWord(mixWord(mixPointer(hash, op), entry.own), entry.body);
  }
  return hash;
}

bool byOp(const Module::VerifiedOp &a, const Module::VerifiedOp &b) {
  return a.op < b.op;
}

// The checks of a function that read the function op itself (its
// attributes, argument and result shardings), not its body: enough when
// only the op changed (-sdy-propagate-to-func-results sets result
// shardings).
bool verifyFunctionItself(VerifyContext &ctx, Operation &func) {
  return verifyOnEntrance(ctx, func) && verifyFuncShardings(ctx, func);
}

} // namespace
} // namespace verify

namespace verify {

// Every symbol of the module names one op (MLIR's symbol table verifier).
bool verifyUniqueSymbols(VerifyContext &ctx, Module &module) {
  std::unordered_map<std::string_view, const Operation *> seen;
  for (const Operation *op = module.body().front(); op;
       op = op->nextInBlock()) {
    const Attr *sym = op->attrs.get("sym_name");
    if (!sym || sym->kind != AttrKind::String)
      continue;
    auto [it, fresh] = seen.emplace(sym->str(), op);
    if (fresh)
      continue;
    ctx.plainError(*op, "redefinition of symbol named '" + sym->str() + "'");
    ctx.note(it->second->loc, "see existing symbol definition here");
    return false;
  }
  return true;
}

} // namespace verify

bool verifyModule(Module &module, DiagnosticEngine &diags) {
  // What functions read of the other top-level ops first: it decides whether
  // any function may be skipped. Functions are then fingerprinted and, when
  // changed, verified one at a time, while their ops are still in the
  // caches (two whole-module walks missed them at 100k ops).
  verify::Fingerprints now;
  for (const Operation *op = module.body().front(); op; op = op->nextInBlock())
    now.push_back(op->is("func.func") ? Module::VerifiedOp{op, 0, 0}
                                      : verify::topLevelPrints(*op));
  const uint64_t interface = verify::nonFunctionInterface(now);
  // Without a previous run, or when what functions read of the others
  // changed, everything is verified.
  const bool incremental = !module.verified_top_level.empty() &&
                           interface == module.verified_interface;
  std::vector<Module::VerifiedOp> &before = module.verified_top_level;
  std::sort(before.begin(), before.end(), verify::byOp);
  verify::VerifyContext ctx(module, diags);
  if (!verify::verifyUniqueSymbols(ctx, module)) {
    module.verified_top_level.clear();
    return false;
  }
  size_t i = 0;
  for (Operation *op = module.body().front(); op; op = op->nextInBlock(), ++i) {
    Module::VerifiedOp &print = now[i];
    if (op->is("func.func"))
      print = verify::topLevelPrints(*op);
    auto it = incremental ? std::lower_bound(before.begin(), before.end(),
                                             print, verify::byOp)
                          : before.end();
    bool known = it != before.end() && it->op == op;
    if (known && it->own == print.own && it->body == print.body)
      continue;
    bool ok = known && it->body == print.body && op->is("func.func")
                  ? verify::verifyFunctionItself(ctx, *op)
                  : verify::verifyTree(ctx, *op);
    if (!ok) {
      module.verified_top_level.clear();
      return false;
    }
  }
  module.verified_top_level = std::move(now);
  module.verified_interface = interface;
  return true;
}

bool verifiedAsIs(Module &module) {
  if (module.verified_top_level.empty())
    return false;
  verify::Fingerprints now = verify::fingerprintsOf(module);
  if (verify::nonFunctionInterface(now) != module.verified_interface ||
      now.size() != module.verified_top_level.size())
    return false;
  std::vector<Module::VerifiedOp> before = module.verified_top_level;
  std::sort(before.begin(), before.end(), verify::byOp);
  std::sort(now.begin(), now.end(), verify::byOp);
  for (size_t i = 0; i < now.size(); ++i)
    if (now[i].op != before[i].op || now[i].own != before[i].own ||
        now[i].body != before[i].body)
      return false;
  return true;
}

void recordVerified(Module &module) {
  verify::Fingerprints now = verify::fingerprintsOf(module);
  module.verified_interface = verify::nonFunctionInterface(now);
  module.verified_top_level = std::move(now);
}

} // namespace shardlab
