// The call graph of a module's func.func ops as Shardy's passes see it:
// MLIR's CallGraph traversed in (reverse) post-order from its external node,
// MLIR's SymbolTable insertion with `_N` renaming, Shardy's recursive func
// cloning (sdy.original_func_name), and the func argument/result sharding
// lists that getFuncArgShardings / getFuncResultShardings build.
#pragma once

#include "shardlab/ir/ir.h"
#include "shardlab/sharding/sharding.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace shardlab {

/// Funcs with a body in call-graph post-order (callees before callers), as
/// Shardy's iterateFuncs; `pre_order` gives the reverse (callers first).
std::vector<Operation *> funcsInCallOrder(Module &module, bool pre_order);

/// Shardy's walkCalls: every func.call of every func, funcs in call order
/// (post-order unless `pre_order`), calls of one func in program order. The
/// order is computed before the first call is visited, so funcs inserted by
/// `fn` are not walked.
void walkCalls(Module &module, const std::function<void(Operation &)> &fn,
               bool pre_order = false);

/// Every func.call nested under `root`, in program order.
std::vector<Operation *> callsUnder(Operation &root);

/// Every sdy.named_computation under `root`, inner ones before the ones
/// holding them (MLIR's post-order walk).
std::vector<Operation *> namedComputationsPostOrder(Operation &root);

/// MLIR's SymbolTable::insert on the module body: appends `func` and, when
/// its name is taken, renames it `name_N` with a counter shared by every
/// insertion through this table. Returns the inserted op.
class SymbolInserter {
public:
  explicit SymbolInserter(Module &module) : module_(module) {}
  Operation *insert(std::unique_ptr<Operation> func);

private:
  Module &module_;
  unsigned counter_ = 0;
};

/// The `sym_name` of a func (or any symbol op).
std::string_view symbolName(const Operation &op);
/// The func a func.call calls; nullptr when it does not resolve.
Operation *calleeOf(Module &module, const Operation &call);
void setCallee(Operation &call, std::string_view name, Context &ctx);
/// `sdy.original_func_name` of a func, or its own name.
std::string originalFuncName(const Operation &func);

/// Clones `func` (tagging it with its original name) and, recursively, every
/// func its clone calls; inserts the callee clones and returns the clone of
/// `func` itself, not yet inserted.
std::unique_ptr<Operation> cloneFuncRecursively(Module &module, Operation &func,
                                                SymbolInserter &symbols);

/// Shardy's getFuncArgShardings / getFuncResultShardings: nothing when no
/// argument (result) has a sharding on a non-maximal mesh; otherwise one
/// sharding per argument (result), fully open on that mesh where missing.
std::optional<std::vector<TensorSharding>> funcArgShardings(Module &module,
                                                            Operation &func);
std::optional<std::vector<TensorSharding>> funcResultShardings(Module &module,
                                                               Operation &func);

/// The per-value `sdy.sharding` of an op, or nothing.
std::optional<std::vector<TensorSharding>> opShardings(const Operation &op);

/// The argument and result types of a func.
const std::vector<Type> &funcInputTypes(const Operation &func);
const std::vector<Type> &funcResultTypes(const Operation &func);

/// A private func.func `name` with the given signature and no body yet.
std::unique_ptr<Operation> makePrivateFunc(Context &ctx, std::string_view name,
                                           const std::vector<Type> &inputs,
                                           const std::vector<Type> &results,
                                           Location loc);

/// Moves every block of `from` into `to` (which must be empty).
void moveRegionBlocks(Region &from, Region &to);

/// Replaces the terminator of `block` by a `name` op with its operands.
void replaceTerminator(Block &block, std::string_view name, Context &ctx);

} // namespace shardlab
