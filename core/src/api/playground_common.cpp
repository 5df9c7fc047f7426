// Shared pieces of the playground entry points: parse + verify, pipelines
// by name, and finding ops and values by source position.
#include "playground_internal.h"

#include "shardlab/api/api.h"
#include "shardlab/api/playground_api.h"
#include "shardlab/passes/pass_manager.h"
#include "shardlab/sharding/format.h"
#include "shardlab/text/text.h"

namespace shardlab::api {

std::vector<std::string> pipelineFlags(std::string_view pipeline) {
  std::vector<std::string> flags;
  for (const NamedPipeline &named : namedPipelines())
    if (named.name == pipeline)
      for (const auto &[flag, options] : named.steps)
        flags.push_back("-" + std::string(flag) +
                        (options.empty() ? "" : "=" + std::string(options)));
  return flags;
}

namespace detail {

std::unique_ptr<Module> parseVerified(std::string_view text,
                                      DiagnosticEngine &diags) {
  LoadOptions load;
  load.import_gspmd = true;
  return loadModule(text, diags, load).module;
}

Status runFlags(Module &module, const std::vector<std::string> &flags,
                DiagnosticEngine &diags) {
  Result<RunRequest> request = parseRunFlags(flags);
  if (!request)
    return request.error();
  std::string failed;
  if (runPassPipeline(module, request->pipeline, diags, &failed))
    return success();
  return makeError(failed + " failed");
}

Result<PipelineChoice> pipelineOption(OptionReader &reader) {
  PipelineChoice choice{"pipeline", {}};
  reader.string("pipeline", choice.name);
  if (!reader.ok())
    return makeError(reader.error());
  if (choice.name == "none")
    return choice;
  if (Result<PassPipeline> known = buildNamedPipeline(choice.name); !known)
    return makeError("options.pipeline: " + known.error().message);
  choice.flags = pipelineFlags(choice.name);
  return choice;
}

bool positionOption(OptionReader &reader, Position &position) {
  reader.requiredInteger("line", position.line, 1);
  reader.integer("column", position.column, 0);
  return reader.ok();
}

namespace {

bool isContainer(const Operation &op) {
  return op.is("func.func") || op.is("builtin.module") || op.is("module");
}

// Among candidates on the position's line, the one starting nearest before
// the column (else the first).
template <class T>
T *nearest(const std::vector<T *> &candidates, const Position &position,
           uint32_t (*column)(const T &)) {
  T *best = nullptr;
  for (T *candidate : candidates) {
    uint32_t col = column(*candidate);
    if (col <= position.column && (!best || col >= column(*best)))
      best = candidate;
  }
  return best ? best : (candidates.empty() ? nullptr : candidates.front());
}

} // namespace

Operation *findOp(Module &module, const Position &position) {
  std::vector<Operation *> ops, containers;
  walk(module.op(), [&](Operation &op) {
    if (op.loc.line == position.line)
      (isContainer(op) ? containers : ops).push_back(&op);
  });
  auto col = +[](const Operation &op) { return op.loc.col; };
  return ops.empty() ? nearest(containers, position, col)
                     : nearest(ops, position, col);
}

Operation *sameOp(Module &other, const Operation &op) {
  Operation *found = nullptr;
  walk(other.op(), [&](Operation &candidate) {
    if (!found && candidate.name == op.name &&
        candidate.loc.line == op.loc.line && candidate.loc.col == op.loc.col)
      found = &candidate;
  });
  return found;
}

namespace {

// Every value defined in `module`, in walk order: each op's block
// arguments, then the nested ops' results.
std::vector<Value *> allValues(Module &module) {
  std::vector<Value *> values;
  auto blockArgs = [&](Operation &op) {
    for (size_t r = 0; r < op.numRegions(); ++r)
      for (auto &block : op.region(r).blocks)
        for (size_t i = 0; i < block->numArguments(); ++i)
          values.push_back(block->argument(i));
  };
  blockArgs(module.op());
  walk(module.op(), [&](Operation &op) {
    for (size_t i = 0; i < op.numResults(); ++i)
      values.push_back(op.result(i));
    blockArgs(op);
  });
  return values;
}

} // namespace

Value *findValue(Module &module, const Position &position) {
  std::vector<Value *> candidates;
  for (Value *value : allValues(module))
    if (value->loc.line == position.line)
      candidates.push_back(value);
  return nearest(
      candidates, position, +[](const Value &v) { return v.loc.col; });
}

Value *sameValue(Module &other, Value &value) {
  for (Value *candidate : allValues(other))
    if (candidate->loc.line == value.loc.line &&
        candidate->loc.col == value.loc.col &&
        candidate->index == value.index &&
        candidate->isBlockArgument() == value.isBlockArgument())
      return candidate;
  return nullptr;
}

namespace {

// The flags the views run for the "pipeline" option: the pipeline's, less
// the per-device steps (the views describe values in global terms: shape,
// sharding, shards per device; the "partition" pipeline's last steps pad
// and turn every type into a local one).
Result<std::pair<std::string, std::vector<std::string>>>
viewFlags(OptionReader &reader) {
  Result<PipelineChoice> choice = pipelineOption(reader);
  if (!choice)
    return choice.error();
  auto per_device = [](const std::string &flag) {
    const std::string_view name =
        std::string_view(flag).substr(1, flag.find('=') - 1);
    for (const auto &step : perDeviceSteps())
      if (step.first == name)
        return true;
    return false;
  };
  std::vector<std::string> flags;
  for (const std::string &flag : choice->flags)
    if (!per_device(flag))
      flags.push_back(flag);
  return std::pair{choice->name, std::move(flags)};
}

BeforeAfter runBoth(std::string_view text, std::string pipeline,
                    const std::vector<std::string> &flags) {
  BeforeAfter both;
  both.pipeline = std::move(pipeline);
  DiagnosticEngine diags;
  both.before = parseVerified(text, diags);
  both.after = both.before ? parseVerified(text, diags) : nullptr;
  if (!both.after)
    both.error = "invalid module";
  else if (Status ran = runFlags(*both.after, flags, diags); !ran) {
    both.error = ran.error().message;
    both.after.reset();
  }
  both.diagnostics = diags.diagnostics();
  return both;
}

} // namespace

std::shared_ptr<BeforeAfter>
parseBothCached(std::string_view text, OptionReader &reader, ViewCache *cache) {
  auto flags = viewFlags(reader);
  if (!flags) {
    auto failed = std::make_shared<BeforeAfter>();
    failed->error = flags.error().message;
    return failed;
  }
  std::string key;
  for (const std::string &flag : flags->second)
    key += flag + '\n';
  key += '\0';
  key += text;
  if (cache)
    if (std::shared_ptr<BeforeAfter> hit = cache->find(key))
      return hit;
  auto both =
      std::make_shared<BeforeAfter>(runBoth(text, flags->first, flags->second));
  if (cache && both->after)
    cache->store(std::move(key), both);
  return both;
}

} // namespace detail

ViewCache::ViewCache() = default;
ViewCache::~ViewCache() = default;

std::shared_ptr<detail::BeforeAfter>
ViewCache::find(const std::string &key) const {
  return key == key_ ? value_ : nullptr;
}

void ViewCache::store(std::string key,
                      std::shared_ptr<detail::BeforeAfter> value) {
  key_ = std::move(key);
  value_ = std::move(value);
}

namespace detail {

json axesJson(const std::vector<AxisRef> &axes) {
  json out = json::array();
  for (const AxisRef &axis : axes)
    out.push_back(axisRefToString(axis));
  return out;
}

} // namespace detail
} // namespace shardlab::api
