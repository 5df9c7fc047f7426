// shardingReport: load (GSPMD shardings imported), propagate with the
// propagation pipeline, print, run the export pipeline with explicit
// collectives, print, and list shardings and collectives. Errors come back in
// the report, never as exceptions.
#include "shardlab/api/sharding_report.h"

#include "passes/pass_utils.h"
#include "sharding/device_layout.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/sharding/format.h"
#include "shardlab/text/text.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace shardlab {

namespace {

// `x` or `x:(1)2`: an axis as text without the quotes of the sdy syntax.
std::string axisName(const AxisRef &axis) {
  std::string text = axisRefToString(axis);
  text.erase(std::remove(text.begin(), text.end(), '"'), text.end());
  return text;
}

// The axes of a collective's axes attribute (any of its three forms).
std::vector<AxisRef> collectiveAxes(const Operation &op) {
  std::vector<AxisRef> axes;
  for (const NamedAttr &entry : op.attrs.entries()) {
    const auto &payload = entry.value->payload;
    if (auto *flat = std::get_if<std::vector<AxisRef>>(&payload))
      axes.insert(axes.end(), flat->begin(), flat->end());
    if (auto *dims = std::get_if<std::vector<std::vector<AxisRef>>>(&payload))
      for (const auto &dim : *dims)
        axes.insert(axes.end(), dim.begin(), dim.end());
    if (auto *params = std::get_if<std::vector<AllToAllParam>>(&payload))
      for (const AllToAllParam &p : *params)
        axes.insert(axes.end(), p.axes.begin(), p.axes.end());
  }
  return axes;
}

bool isCollective(const Operation &op) {
  return op.is("sdy.all_gather") || op.is("sdy.all_slice") ||
         op.is("sdy.all_to_all") || op.is("sdy.collective_permute") ||
         op.is("sdy.all_reduce") || op.is("sdy.reduce_scatter");
}

// The op a collective is for: an all-reduce finishes the reduction of the
// op producing its operand (through other collectives); any other
// collective reshards for the first non-collective op using its chain.
const Operation *requiredBy(Operation &op) {
  if (op.is("sdy.all_reduce")) {
    const Operation *producer = op.operand(0)->defining_op;
    while (producer && isCollective(*producer))
      producer = producer->operand(0)->defining_op;
    if (producer)
      return producer;
  }
  Value *value = op.result(0);
  while (value->firstUse()) {
    Operation *user = value->firstUse()->owner;
    if (!isCollective(*user))
      return user;
    value = user->result(0);
  }
  return nullptr;
}

void collect(Module &module, ShardingReport &report) {
  walk(module.op(), [&](Operation &op) {
    for (size_t i = 0; i < op.numResults(); ++i)
      if (const TensorSharding *s = getSharding(op.result(i)))
        report.shardings.push_back({std::string(op.name), op.loc.line,
                                    static_cast<uint32_t>(i),
                                    shardingToString(*s)});
    if (!isCollective(op))
      return;
    CollectiveReport c;
    c.kind = std::string(op.name.substr(4));
    const std::vector<AxisRef> axes = collectiveAxes(op);
    for (const AxisRef &axis : axes)
      c.mesh_axes.push_back(axisName(axis));
    c.bytes_per_device = bytesPerDevice(module, op.operand(0));
    const Mesh *mesh = lookupMesh(module, opSharding(op, "out_sharding"));
    if (mesh) // the groups the partitioner writes into the collective
      c.device_groups = deviceGroups(*mesh, axes);
    const Operation *user = requiredBy(op);
    c.required_by = user ? std::string(user->name) : "";
    c.line = user ? user->loc.line : op.loc.line;
    report.collectives.push_back(std::move(c));
  });
}

} // namespace

ShardingReport shardingReport(std::string_view module_text) {
  ShardingReport report;
  DiagnosticEngine diags;
  LoadOptions load;
  load.import_gspmd = true;
  LoadedModule loaded = loadModule(module_text, diags, load);
  std::unique_ptr<Module> module = std::move(loaded.module);
  if (!module) {
    report.error = std::string(loaded.failed_stage) + " error";
    return report;
  }
  // The "explicit" pipeline's two steps, printed in between.
  Result<PassPipeline> named = buildNamedPipeline("explicit");
  if (!named) {
    report.error = named.error().message;
    return report;
  }
  const PassPipeline &explicit_steps = *named;
  PassPipeline propagate, lower;
  propagate.steps = {explicit_steps.steps.front()};
  lower.steps = {explicit_steps.steps.back()};
  report.propagation = std::string(propagate.steps.front().pass->flag);
  if (!runPassPipeline(*module, propagate, diags)) {
    report.error = "propagation failed";
    return report;
  }
  report.propagated_module = printModule(*module);
  if (!runPassPipeline(*module, lower, diags)) {
    report.error = "export failed";
    return report;
  }
  report.explicit_module = printModule(*module);
  collect(*module, report);
  report.ok = true;
  return report;
}

std::string shardingReportJson(const ShardingReport &report) {
  nlohmann::json j = {{"ok", report.ok},
                      {"error", report.error},
                      {"propagation", report.propagation},
                      {"propagated_module", report.propagated_module},
                      {"explicit_module", report.explicit_module}};
  j["shardings"] = nlohmann::json::array();
  for (const ValueShardingReport &s : report.shardings)
    j["shardings"].push_back({{"op", s.op},
                              {"line", s.line},
                              {"result", s.result},
                              {"sharding", s.sharding}});
  j["collectives"] = nlohmann::json::array();
  for (const CollectiveReport &c : report.collectives)
    j["collectives"].push_back({{"kind", c.kind},
                                {"mesh_axes", c.mesh_axes},
                                {"bytes_per_device", c.bytes_per_device},
                                {"device_groups", c.device_groups},
                                {"required_by", c.required_by},
                                {"line", c.line}});
  return j.dump();
}

} // namespace shardlab
