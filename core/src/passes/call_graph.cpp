// The call graph of func.func ops (see call_graph.h).
#include "passes/call_graph.h"

#include "passes/pass_utils.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"

#include <unordered_map>

namespace shardlab {

namespace {

// MLIR's CallGraph over the funcs with a body: the external node has an
// edge to every func (module order); a func has one edge per distinct
// callee with a body, in the order of the first call.
struct CallGraph {
  std::vector<Operation *> funcs;
  std::vector<std::vector<size_t>> edges;
};

bool hasBody(const Operation &func) {
  return func.numRegions() && !func.region(0).empty();
}

CallGraph buildCallGraph(Module &module) {
  CallGraph graph;
  std::unordered_map<const Operation *, size_t> index;
  forEachFunc(module, [&](Operation &func) {
    if (!hasBody(func))
      return;
    index[&func] = graph.funcs.size();
    graph.funcs.push_back(&func);
  });
  graph.edges.resize(graph.funcs.size());
  for (size_t i = 0; i < graph.funcs.size(); ++i)
    for (Operation *call : callsUnder(*graph.funcs[i])) {
      auto it = index.find(calleeOf(module, *call));
      if (it == index.end())
        continue;
      std::vector<size_t> &out = graph.edges[i];
      bool seen = false;
      for (size_t target : out)
        seen = seen || target == it->second;
      if (!seen)
        out.push_back(it->second);
    }
  return graph;
}

// Depth-first post-order from the external node, as llvm::po_iterator.
std::vector<Operation *> postOrder(const CallGraph &graph) {
  std::vector<char> visited(graph.funcs.size(), 0);
  std::vector<Operation *> order;
  std::vector<std::pair<size_t, size_t>> stack;
  for (size_t root = 0; root < graph.funcs.size(); ++root) {
    if (visited[root])
      continue;
    visited[root] = 1;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      size_t node = stack.back().first;
      size_t next = stack.back().second++;
      if (next < graph.edges[node].size()) {
        size_t child = graph.edges[node][next];
        if (!visited[child]) {
          visited[child] = 1;
          stack.push_back({child, 0});
        }
        continue;
      }
      order.push_back(graph.funcs[node]);
      stack.pop_back();
    }
  }
  return order;
}

} // namespace

std::vector<Operation *> funcsInCallOrder(Module &module, bool pre_order) {
  std::vector<Operation *> order = postOrder(buildCallGraph(module));
  if (pre_order)
    return std::vector<Operation *>(order.rbegin(), order.rend());
  return order;
}

std::vector<Operation *> callsUnder(Operation &root) {
  std::vector<Operation *> calls;
  if (!root.pool().liveNamed("func.call"))
    return calls; // the walk could not find one
  walk(root, [&](Operation &op) {
    if (op.is("func.call"))
      calls.push_back(&op);
  });
  return calls;
}

namespace {

void collectNamedPostOrder(Operation &root, std::vector<Operation *> &out) {
  for (size_t r = 0; r < root.numRegions(); ++r)
    for (auto &block : root.region(r).blocks)
      for (Operation &op : *block) {
        collectNamedPostOrder(op, out);
        if (op.is("sdy.named_computation"))
          out.push_back(&op);
      }
}

} // namespace

std::vector<Operation *> namedComputationsPostOrder(Operation &root) {
  std::vector<Operation *> out;
  if (!root.pool().liveNamed("sdy.named_computation"))
    return out; // the walk could not find one
  collectNamedPostOrder(root, out);
  return out;
}

void walkCalls(Module &module, const std::function<void(Operation &)> &fn,
               bool pre_order) {
  for (Operation *func : funcsInCallOrder(module, pre_order))
    for (Operation *call : callsUnder(*func))
      fn(*call);
}

Operation *SymbolInserter::insert(std::unique_ptr<Operation> func) {
  std::string name(symbolName(*func));
  if (module_.lookupSymbol(name)) {
    std::string candidate;
    do {
      candidate = name + "_" + std::to_string(counter_++);
    } while (module_.lookupSymbol(candidate));
    Context &ctx = module_.ctx();
    func->attrs.set(ctx.intern("sym_name"), ctx.attrs.string(candidate));
  }
  return module_.body().push_back(std::move(func));
}

std::string_view symbolName(const Operation &op) {
  const Attr *name = op.attrs.get("sym_name");
  return name ? std::string_view(name->str()) : std::string_view();
}

Operation *calleeOf(Module &module, const Operation &call) {
  const Attr *callee = call.attrs.get("callee");
  return callee ? module.lookupSymbol(callee->str()) : nullptr;
}

void setCallee(Operation &call, std::string_view name, Context &ctx) {
  call.attrs.set(ctx.intern("callee"), ctx.attrs.symbol(std::string(name)));
}

std::string originalFuncName(const Operation &func) {
  const Attr *original = func.attrs.get("sdy.original_func_name");
  if (original && original->kind == AttrKind::String)
    return original->str();
  return std::string(symbolName(func));
}

std::unique_ptr<Operation> cloneFuncRecursively(Module &module, Operation &func,
                                                SymbolInserter &symbols) {
  Context &ctx = module.ctx();
  ValueMap map;
  std::unique_ptr<Operation> clone = cloneOp(func, map);
  clone->attrs.set(ctx.intern("sdy.original_func_name"),
                   ctx.attrs.string(originalFuncName(func)));
  for (Operation *call : callsUnder(*clone)) {
    Operation *callee = calleeOf(module, *call);
    if (!callee)
      continue;
    Operation *inserted =
        symbols.insert(cloneFuncRecursively(module, *callee, symbols));
    setCallee(*call, symbolName(*inserted), ctx);
  }
  return clone;
}

const std::vector<Type> &funcInputTypes(const Operation &func) {
  return std::get<Type>(func.attrs.get("function_type")->payload)->members;
}

const std::vector<Type> &funcResultTypes(const Operation &func) {
  return std::get<Type>(func.attrs.get("function_type")->payload)->results;
}

namespace {

const TensorSharding *funcArgSharding(const Operation &func, size_t index) {
  const Attr *array = func.attrs.get("arg_attrs");
  if (!array || array->kind != AttrKind::Array ||
      index >= array->elements().size())
    return nullptr;
  const Attr *sharding = array->elements()[index]->get("sdy.sharding");
  return sharding && sharding->kind == AttrKind::Sharding
             ? &sharding->sharding()
             : nullptr;
}

size_t rankOf(Type type) {
  return type && type->isRankedTensor() ? type->shape.size() : 0;
}

// The list Shardy builds from per-index shardings: nothing unless one is on
// a non-maximal mesh; missing ones become fully open on that mesh.
std::optional<std::vector<TensorSharding>>
shardingListOf(Module &module, const std::vector<Type> &types,
               const std::function<const TensorSharding *(size_t)> &get) {
  const MeshRef *mesh = nullptr;
  for (size_t i = 0; i < types.size() && !mesh; ++i)
    if (const TensorSharding *sharding = get(i)) {
      const Mesh *resolved = lookupMesh(module, sharding->mesh);
      if (!resolved || !resolved->isMaximal())
        mesh = &sharding->mesh;
    }
  if (!mesh)
    return std::nullopt;
  std::vector<TensorSharding> list;
  for (size_t i = 0; i < types.size(); ++i) {
    const TensorSharding *sharding = get(i);
    list.push_back(sharding ? *sharding
                            : fullyOpenSharding(*mesh, rankOf(types[i])));
  }
  return list;
}

} // namespace

std::optional<std::vector<TensorSharding>> funcArgShardings(Module &module,
                                                            Operation &func) {
  return shardingListOf(module, funcInputTypes(func),
                        [&](size_t i) { return funcArgSharding(func, i); });
}

std::optional<std::vector<TensorSharding>>
funcResultShardings(Module &module, Operation &func) {
  return shardingListOf(module, funcResultTypes(func), [&](size_t i) {
    return getFuncResultSharding(func, i);
  });
}

std::optional<std::vector<TensorSharding>> opShardings(const Operation &op) {
  const Attr *attr = op.attrs.get("sdy.sharding");
  if (!attr || attr->kind != AttrKind::ShardingPerValue)
    return std::nullopt;
  return attr->shardings();
}

std::unique_ptr<Operation> makePrivateFunc(Context &ctx, std::string_view name,
                                           const std::vector<Type> &inputs,
                                           const std::vector<Type> &results,
                                           Location loc) {
  auto func = makeOp(ctx, "func.func", {}, {}, loc);
  func->attrs.set(ctx.intern("sym_name"), ctx.attrs.string(std::string(name)));
  func->attrs.set(ctx.intern("sym_visibility"), ctx.attrs.string("private"));
  Attr type{
      AttrKind::TypeAttr, ctx.types.function(inputs, results), nullptr, {}};
  func->attrs.set(ctx.intern("function_type"), ctx.attrs.make(std::move(type)));
  return func;
}

void moveRegionBlocks(Region &from, Region &to) {
  for (auto &block : from.blocks) {
    block->parent = &to;
    to.blocks.push_back(std::move(block));
  }
  from.blocks.clear();
}

void replaceTerminator(Block &block, std::string_view name, Context &ctx) {
  Operation *old = block.back();
  std::vector<Value *> operands;
  for (size_t i = 0; i < old->numOperands(); ++i)
    operands.push_back(old->operand(i));
  auto op = makeOp(ctx, name, operands, {}, old->loc);
  op->attrs = old->attrs;
  block.push_back(std::move(op));
  old->dropAllUses();
  eraseOp(*old);
}

} // namespace shardlab
