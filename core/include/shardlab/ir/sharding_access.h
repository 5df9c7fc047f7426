// Reading and writing the sharding of a value wherever Shardy keeps it: a
// func argument's `sdy.sharding` arg attribute, a func result attribute,
// the sharding attribute of sdy ops (sharding, out_sharding, in/out
// shardings of manual and named computations), or an op's per-value
// `sdy.sharding`. Also resolves the mesh a sharding refers to.
#pragma once

#include "shardlab/ir/ir.h"
#include "shardlab/sharding/sharding.h"

namespace shardlab {

/// The sharding of `value`, or nullptr when it has none (fully open).
const TensorSharding *getSharding(Value *value);

/// Sets the sharding of `value` where getSharding reads it (creating the
/// per-value attribute with open shardings for the other results).
void setSharding(Value *value, const TensorSharding &sharding, Context &ctx);

/// Sharding of result `index` of a func.func (`res_attrs`), or nullptr.
const TensorSharding *getFuncResultSharding(const Operation &func,
                                            size_t index);
void setFuncResultSharding(Operation &func, size_t index,
                           const TensorSharding &sharding, Context &ctx);

/// Number of arguments / results of a func.func (from its function_type).
size_t funcNumInputs(const Operation &func);
size_t funcNumResults(const Operation &func);
/// Entry `name` of the attribute dictionary of argument / result `index` of
/// a func.func (`arg_attrs` / `res_attrs`), or nullptr.
const Attr *getFuncArgAttr(const Operation &func, size_t index,
                           std::string_view name);
const Attr *getFuncResultAttr(const Operation &func, size_t index,
                              std::string_view name);
/// Sets entry `name` of that dictionary (creating the dictionaries).
void setFuncArgAttr(Operation &func, size_t index, std::string_view name,
                    const Attr *value, Context &ctx);
void setFuncResultAttr(Operation &func, size_t index, std::string_view name,
                       const Attr *value, Context &ctx);

/// Mesh lookup, defined once: the `sdy.mesh` op named `symbol` (without
/// '@'); the inline mesh of `ref` or its symbol's; the mesh `sharding`
/// refers to. nullptr when unknown. MeshCache memoizes the symbol lookup.
const Mesh *lookupMesh(const Module &module, std::string_view symbol);
const Mesh *lookupMesh(const Module &module, const MeshRef &ref);
const Mesh *lookupMesh(const Module &module, const TensorSharding &sharding);

/// The bytes one device holds of `value`: its type's, divided along each
/// dimension as its sharding splits it (shards rounded up); the whole value
/// when it has no sharding.
int64_t bytesPerDevice(const Module &module, Value *value);

/// lookupMesh memoized by symbol, for a pass that resolves the same few
/// meshes for every op and adds or removes none while it is alive.
class MeshCache {
public:
  explicit MeshCache(const Module &module) : module_(module) {}
  const Mesh *get(const MeshRef &ref);
  const Mesh *of(const TensorSharding &sharding) { return get(sharding.mesh); }

private:
  const Module &module_;
  std::vector<std::pair<std::string, const Mesh *>> symbols_;
};

} // namespace shardlab
