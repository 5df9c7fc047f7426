// -xla-sdy-import-shardings: GSPMD `mhlo.sharding` strings to one Shardy
// mesh and `sdy.sharding`s (rules and a worked example in
// shardlab/sharding/hlo_sharding.h).
#include "passes/pass_utils.h"
#include "passes/xla_support.h"
#include "sharding/hlo_sharding.h"
#include "xla_passes.h"

#include <map>
#include <set>

namespace shardlab {

namespace {

constexpr std::string_view kHloSharding = "mhlo.sharding";

// One place that holds an `mhlo.sharding`: a func argument, a func result
// or an op (one sharding per result, a tuple when there are several).
struct Site {
  enum class Where { Arg, Result, Op } where;
  Operation *op;
  size_t index = 0;
  std::vector<Type> types; ///< the value(s) the sharding is for
  HloSharding sharding;
  bool empty = false; ///< `mhlo.sharding = ""`: no sharding
};

Type funcType(const Operation &func) {
  const Attr *type = func.attrs.get("function_type");
  return type ? std::get<Type>(type->payload) : nullptr;
}

bool readSite(Site &site, const Attr *text, Location loc,
              DiagnosticEngine &diags) {
  if (!text || text->kind != AttrKind::String) {
    diags.error(loc, "expected mhlo.sharding to be a string");
    return false;
  }
  if (text->str().empty()) {
    site.empty = true;
    return true;
  }
  Result<HloSharding> parsed = parseHloSharding(text->str());
  if (!parsed) {
    diags.error(loc, "cannot read mhlo.sharding \"" + text->str() +
                         "\": " + parsed.error().message);
    return false;
  }
  site.sharding = std::move(*parsed);
  return true;
}

bool collectSites(Module &module, std::vector<Site> &sites,
                  DiagnosticEngine &diags) {
  bool ok = true;
  forEachFunc(module, [&](Operation &func) {
    Type type = funcType(func);
    if (!type)
      return;
    for (size_t i = 0; i < type->members.size(); ++i)
      if (const Attr *text = getFuncArgAttr(func, i, kHloSharding)) {
        Site site{Site::Where::Arg, &func, i, {type->members[i]}, {}};
        ok = readSite(site, text, func.loc, diags) && ok;
        sites.push_back(std::move(site));
      }
    for (size_t i = 0; i < type->results.size(); ++i)
      if (const Attr *text = getFuncResultAttr(func, i, kHloSharding)) {
        Site site{Site::Where::Result, &func, i, {type->results[i]}, {}};
        ok = readSite(site, text, func.loc, diags) && ok;
        sites.push_back(std::move(site));
      }
    walk(func, [&](Operation &op) {
      const Attr *text = op.attrs.get(kHloSharding);
      if (!text)
        return;
      Site site{Site::Where::Op, &op, 0, {}, {}};
      for (size_t r = 0; r < op.numResults(); ++r)
        site.types.push_back(op.result(r)->type);
      ok = readSite(site, text, op.loc, diags) && ok;
      sites.push_back(std::move(site));
    });
  });
  return ok;
}

void collectKinds(const HloSharding &s, std::vector<const HloSharding *> &tiled,
                  std::set<int64_t> &maximal) {
  if (s.kind == HloSharding::Kind::Tuple)
    for (const HloSharding &element : s.tuple)
      collectKinds(element, tiled, maximal);
  else if (s.kind == HloSharding::Kind::Tiled)
    tiled.push_back(&s);
  else if (s.kind == HloSharding::Kind::Maximal)
    maximal.insert(s.device);
}

std::string maximalMeshName(int64_t device) {
  return "single_device_" + std::to_string(device);
}

class Importer {
public:
  Importer(Module &module, const Mesh &mesh, bool record_manual,
           DiagnosticEngine &diags)
      : module_(module), mesh_(mesh), record_manual_(record_manual),
        diags_(diags) {}

  /// The sharding of one value of `type`; nothing after a diagnostic.
  std::optional<TensorSharding> convert(const HloSharding &s, Type type,
                                        Location loc) {
    if (s.kind == HloSharding::Kind::Maximal) {
      TensorSharding out;
      out.mesh.symbol = maximalMeshName(s.device);
      return out;
    }
    if (s.kind == HloSharding::Kind::Tuple) {
      diags_.error(loc, "a tuple sharding for a value that is not a tuple");
      return std::nullopt;
    }
    const int64_t rank = type && type->isRankedTensor() ? type->rank() : 0;
    Result<TensorSharding> out =
        toTensorSharding(s, mesh_, "mesh", rank, &manual_axes_);
    if (!out) {
      diags_.error(loc, "cannot import mhlo.sharding: " + out.error().message);
      return std::nullopt;
    }
    return std::move(*out);
  }

  /// One sharding per value of `types`: the tuple's elements, or the same
  /// sharding for each.
  std::optional<std::vector<TensorSharding>>
  convertAll(const HloSharding &s, const std::vector<Type> &types,
             Location loc) {
    std::vector<TensorSharding> out;
    const bool tuple = s.kind == HloSharding::Kind::Tuple;
    if (tuple && s.tuple.size() != types.size()) {
      diags_.error(loc, "the tuple sharding has " +
                            std::to_string(s.tuple.size()) + " elements for " +
                            std::to_string(types.size()) + " values");
      return std::nullopt;
    }
    for (size_t i = 0; i < types.size(); ++i) {
      std::optional<TensorSharding> one =
          convert(tuple ? s.tuple[i] : s, types[i], loc);
      if (!one)
        return std::nullopt;
      out.push_back(std::move(*one));
    }
    return out;
  }

  bool apply(Site &site) {
    Context &ctx = module_.ctx();
    Operation &op = *site.op;
    if (site.where == Site::Where::Op) {
      op.attrs.erase(kHloSharding);
      if (site.empty)
        return true;
      manual_axes_.clear();
      auto all = convertAll(site.sharding, site.types, op.loc);
      if (!all)
        return false;
      op.attrs.set(ctx.intern("sdy.sharding"),
                   ctx.attrs.shardingPerValue(std::move(*all)));
      // The stablehlo import pipeline reads which axes a shard_map makes
      // manual from here, then drops the mark.
      if (record_manual_ && !manual_axes_.empty())
        op.attrs.set(ctx.intern("xla.sdy.manual_axes"),
                     ctx.attrs.make(Attr{
                         AttrKind::ManualAxes, manual_axes_, nullptr, {}}));
      return true;
    }
    const bool arg = site.where == Site::Where::Arg;
    const char *list = arg ? "arg_attrs" : "res_attrs";
    setOrEraseAttr(op, list,
                   withoutDictEntries(op.attrs.get(list), kHloSharding, ctx),
                   ctx);
    if (site.empty)
      return true;
    std::optional<TensorSharding> one =
        convert(site.sharding, site.types[0], op.loc);
    if (!one)
      return false;
    const Attr *attr = ctx.attrs.sharding(std::move(*one));
    if (arg)
      setFuncArgAttr(op, site.index, "sdy.sharding", attr, ctx);
    else
      setFuncResultAttr(op, site.index, "sdy.sharding", attr, ctx);
    return true;
  }

private:
  Module &module_;
  const Mesh &mesh_;
  bool record_manual_;
  DiagnosticEngine &diags_;
  std::vector<std::string> manual_axes_;
};

} // namespace

bool xlaImportShardingsPass(Module &module, const PassOptions &options,
                            DiagnosticEngine &diags) {
  std::vector<Site> sites;
  if (!collectSites(module, sites, diags))
    return false;
  if (sites.empty())
    return true;
  std::vector<const HloSharding *> tiled;
  std::set<int64_t> maximal;
  for (const Site &site : sites)
    if (!site.empty)
      collectKinds(site.sharding, tiled, maximal);
  Result<Mesh> mesh = commonMesh(tiled, "_axis_");
  if (!mesh) {
    diags.error(module.op().loc, "cannot import the module's mhlo.sharding "
                                 "strings into one mesh: " +
                                     mesh.error().message);
    return false;
  }
  Operation *first = module.body().front();
  insertMeshOp(module, first, "mesh", *mesh);
  for (int64_t device : maximal) {
    Mesh single;
    single.device_ids = {device};
    insertMeshOp(module, first, maximalMeshName(device), single);
  }
  Importer importer(module, *mesh, options.flag("record-manual-axes"), diags);
  bool ok = true;
  for (Site &site : sites)
    ok = importer.apply(site) && ok;
  return ok;
}

bool isGspmdModule(Module &module) {
  for (const Operation &op : module.body())
    if (op.is("sdy.mesh"))
      return false;
  bool found = false;
  walk(module.op(), [&](Operation &op) {
    if (found)
      return;
    if (op.attrs.get(kHloSharding)) {
      found = true;
      return;
    }
    if (!op.is("func.func"))
      return;
    for (std::string_view list : {"arg_attrs", "res_attrs"}) {
      const Attr *array = op.attrs.get(list);
      if (array && array->kind == AttrKind::Array)
        for (const Attr *dict : array->elements())
          found = found || (dict && dict->kind == AttrKind::Dict &&
                            dict->get(kHloSharding));
    }
  });
  return found;
}

} // namespace shardlab
