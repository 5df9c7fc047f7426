// dataflowGraph: the entry function as a graph for the playground's Graph
// view (dataflow-graph.schema.json). Nodes are the function's arguments,
// its top-level ops (a while or a call is one node; constants are left out:
// they are everywhere and say nothing about sharding) and its results;
// edges are the values between them with their type and sharding.
// Collectives (sdy's explicit ones and StableHLO's) are marked so the view
// can highlight them.
#include "shardlab/api/playground_api.h"

#include "guard.h"
#include "passes/pass_utils.h"
#include "playground_internal.h"
#include "request_fields.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/sharding/format.h"
#include "shardlab/text/text.h"

#include <unordered_map>

namespace shardlab::api {
namespace {

using detail::dumpReply;
using detail::json;
using detail::OptionReader;

/// Nodes beyond this are left out (the reply says so): a browser draws a
/// few hundred nodes well, not tens of thousands.
constexpr size_t kMaxNodes = 600;

std::string shardingText(Value *value) {
  const TensorSharding *s = getSharding(value);
  return s ? shardingBodyToString(*s) : "";
}

struct GraphBuilder {
  json nodes = json::array(), edges = json::array();
  std::unordered_map<const Value *, int64_t> source; ///< value -> node id
  bool truncated = false;

  int64_t addNode(std::string name, const char *kind, const Location &loc,
                  std::string label) {
    int64_t id = int64_t(nodes.size());
    nodes.push_back({{"id", id},
                     {"name", std::move(name)},
                     {"kind", kind},
                     {"line", loc.line},
                     {"column", loc.col},
                     {"label", std::move(label)}});
    return id;
  }

  void addEdges(Operation &op, int64_t to) {
    for (size_t i = 0; i < op.numOperands(); ++i) {
      Value *v = op.operand(i);
      auto from = source.find(v);
      if (from == source.end())
        continue;
      edges.push_back({{"from", from->second},
                       {"to", to},
                       {"type", v->type ? v->type->text : ""},
                       {"sharding", shardingText(v)}});
    }
  }

  /// `text` is what `module` was parsed from: arguments keep their names.
  void build(const Module &module, Operation &func, std::string_view text) {
    Block &body = func.region(0).front();
    for (size_t i = 0; i < body.numArguments(); ++i) {
      Value *arg = body.argument(i);
      source[arg] =
          addNode(writtenArgumentName(module, func, text, i), "argument",
                  arg->loc, arg->type ? arg->type->text : "");
    }
    for (Operation &op : body) {
      if (op.is("stablehlo.constant"))
        continue;
      const bool output = op.is("func.return");
      if (!output && nodes.size() >= kMaxNodes) {
        truncated = true;
        continue;
      }
      const char *kind = output               ? "output"
                         : isCollectiveOp(op) ? "collective"
                                              : "op";
      std::string label =
          op.numResults() && op.result(0)->type ? op.result(0)->type->text : "";
      int64_t id = addNode(std::string(op.name), kind, op.loc, label);
      addEdges(op, id);
      for (size_t r = 0; r < op.numResults(); ++r)
        source[op.result(r)] = id;
    }
  }
};

std::string graphReply(std::string_view text, std::string_view options_json,
                       ViewCache *cache) {
  json options = detail::parseJson(options_json.empty() ? "{}" : options_json);
  if (!options.is_object())
    return detail::errorReply("options: expected a JSON object");
  OptionReader reader(options);
  reader.rejectUnknown(detail::fields::kDataflowGraphOptions);
  std::shared_ptr<detail::BeforeAfter> both =
      detail::parseBothCached(text, reader, cache);
  if (!reader.ok())
    return detail::errorReply(reader.error());
  if (!both->after)
    return dumpReply(
        detail::failureReply(both->error, both->diagnostics, text));
  Operation *func = both->after->mainFunc();
  if (!func || func->numRegions() == 0 || func->region(0).empty())
    return detail::errorReply("the module has no entry function");
  GraphBuilder graph;
  graph.build(*both->after, *func, text);
  const Attr *name = func->attrs.get("sym_name");
  return dumpReply({{"ok", true},
                    {"function", name ? name->str() : ""},
                    {"pipeline", both->pipeline},
                    {"nodes", std::move(graph.nodes)},
                    {"edges", std::move(graph.edges)},
                    {"truncated", graph.truncated}});
}

} // namespace

std::string dataflowGraphJson(std::string_view text,
                              std::string_view options_json, ViewCache *cache) {
  return detail::guarded([&] { return graphReply(text, options_json, cache); });
}

} // namespace shardlab::api
