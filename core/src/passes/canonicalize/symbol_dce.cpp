// -symbol-dce: private functions and meshes nothing refers to are erased,
// until nothing more goes.
#include "canonicalize_passes.h"
#include "passes/call_graph.h"
#include "passes/call_graph_passes.h"
#include "passes/data_flow_edges.h"
#include "passes/pass_utils.h"
#include "shardlab/ir/sharding_access.h"

#include <map>
#include <set>
#include <unordered_map>

namespace shardlab {

namespace {

// Names of the symbols an attribute refers to (`@a`, `@a::@b` -> a).
void collectSymbolRefs(const Attr *attr, std::vector<std::string> &out) {
  if (!attr)
    return;
  if (attr->kind == AttrKind::SymbolRef) {
    const std::string &ref = attr->str();
    out.push_back(ref.substr(0, ref.find("::")));
  } else if (attr->kind == AttrKind::Array) {
    for (const Attr *element : attr->elements())
      collectSymbolRefs(element, out);
  } else if (attr->kind == AttrKind::Dict) {
    for (const NamedAttr &entry : attr->entries())
      collectSymbolRefs(entry.value, out);
  }
}

std::vector<std::string> symbolRefsUnder(Operation &root) {
  std::vector<std::string> refs;
  auto scan = [&](Operation &op) {
    for (const NamedAttr &entry : op.attrs.entries())
      collectSymbolRefs(entry.value, refs);
    for (const NamedAttr &entry : op.props().entries())
      collectSymbolRefs(entry.value, refs);
  };
  scan(root);
  walk(root, scan);
  return refs;
}

bool isPrivateSymbol(const Operation &op) {
  const Attr *vis = op.attrs.get("sym_visibility");
  return !symbolName(op).empty() && vis && vis->kind == AttrKind::String &&
         vis->str() == "private";
}

} // namespace

bool symbolDcePass(Module &module, const PassOptions &, DiagnosticEngine &) {
  // Only private symbols are ever erased: without any, there is nothing to
  // find out, and the scan of every attribute below is skipped.
  bool any_private = false;
  for (Operation &op : module.body())
    any_private = any_private || isPrivateSymbol(op);
  if (!any_private)
    return markUnchanged(module);
  std::set<std::string> live;
  std::vector<Operation *> worklist;
  for (Operation &op : module.body())
    if (!isPrivateSymbol(op)) {
      worklist.push_back(&op);
      live.insert(std::string(symbolName(op)));
    }
  while (!worklist.empty()) {
    Operation *op = worklist.back();
    worklist.pop_back();
    for (const std::string &ref : symbolRefsUnder(*op))
      if (Operation *target = module.lookupSymbol(ref))
        if (live.insert(ref).second)
          worklist.push_back(target);
  }
  bool erased = false;
  for (Operation *op = module.body().front(); op;) {
    Operation *next = op->nextInBlock();
    if (isPrivateSymbol(*op) && !live.count(std::string(symbolName(*op)))) {
      eraseOp(*op);
      erased = true;
    }
    op = next;
  }
  return erased || markUnchanged(module);
}

} // namespace shardlab
