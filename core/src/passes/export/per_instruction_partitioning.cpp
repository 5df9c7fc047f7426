// -sdy-per-instruction-partitioning: partitions the ops a filter selects one
// at a time, leaving the rest of the module global. Each selected op
// becomes a manual computation over all its mesh's axes whose body is the
// op's per-device form (a reshard: the collectives it lowers to):
//
//   %d = stablehlo.dot %l, %r {sdy.sharding = <[<@m, [{"x"}, {"y"}]>]>}
// becomes
//   %d = sdy.manual_computation(%l, %r) in_shardings=[<@m, [{"x"}, {}]>,
//        <@m, [{}, {"y"}]>] out_shardings=[<@m, [{"x"}, {"y"}]>]
//        manual_axes={"x", "y"} (%a: tensor<4x32xf32>, %b: tensor<32x8xf32>) {
//     %0 = stablehlo.dot %a, %b : (...) -> tensor<4x8xf32>
//     sdy.return %0 : tensor<4x8xf32>
//   } : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
//
// An operand its sharding does not divide is padded with zeros first, and a
// padded result is sliced back to its shape after. The filter is a list of
// op names without their dialect (`dot,constant,reshard`) or a range of op
// positions in the module (`selectLow=0, selectHigh=3`, both inclusive).
#include "export_passes.h"
#include "global_to_local.h"
#include "local_builder.h"
#include "reshard_to_collectives_state.h"

#include "passes/pass_utils.h"
#include "sharding/sharding_utils.h"
#include "shardlab/ir/sharding_access.h"

#include <algorithm>
#include <sstream>

namespace shardlab {
namespace {

/// Which ops the filter option selects.
struct OpFilter {
  std::vector<std::string> names;
  int64_t low = -1, high = -1; ///< a position range when low >= 0

  bool selects(const Operation &op, int64_t position) const {
    if (low >= 0)
      return position >= low && position <= high;
    const std::string_view name = op.name.substr(op.name.find('.') + 1);
    return std::find(names.begin(), names.end(), name) != names.end();
  }
};

std::string trimmed(std::string text) {
  const char *space = " \t'\"";
  text.erase(0, text.find_first_not_of(space));
  text.erase(text.find_last_not_of(space) + 1);
  return text;
}

Result<OpFilter> parseFilter(const std::string &text) {
  OpFilter filter;
  std::stringstream parts(trimmed(text));
  std::string part;
  while (std::getline(parts, part, ',')) {
    part = trimmed(part);
    const size_t eq = part.find('=');
    if (eq == std::string::npos) {
      if (!part.empty())
        filter.names.push_back(part);
      continue;
    }
    const std::string key = trimmed(part.substr(0, eq));
    const std::string value = trimmed(part.substr(eq + 1));
    char *end = nullptr;
    const long long number = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end || number < 0 ||
        (key != "selectLow" && key != "selectHigh"))
      return makeError("filter: '" + part +
                       "' is not selectLow=N or selectHigh=N");
    (key == "selectLow" ? filter.low : filter.high) = number;
  }
  if ((filter.low >= 0) != (filter.high >= 0))
    return makeError("filter: give both selectLow and selectHigh");
  return filter;
}

class Partitioner {
public:
  Partitioner(Module &module, DiagnosticEngine &diags)
      : module_(module), ctx_(module.ctx()), diags_(diags) {}

  /// Wraps `op` in a manual computation; false on an error.
  bool partition(Operation &op);

private:
  Value *padded(Value *value, const TensorSharding &sharding, const Mesh &mesh,
                Operation &before);

  Module &module_;
  Context &ctx_;
  DiagnosticEngine &diags_;
};

Value *Partitioner::padded(Value *value, const TensorSharding &sharding,
                           const Mesh &mesh, Operation &before) {
  const std::vector<int64_t> &shape = value->type->shape;
  const std::vector<int64_t> wanted = paddedShape(shape, sharding, mesh);
  if (wanted == shape)
    return value;
  LocalBuilder b(ctx_, before);
  Operation *pad = b.padHighWithZeros(value, wanted);
  pad->attrs.set(ctx_.intern("sdy.sharding"),
                 ctx_.attrs.shardingPerValue({sharding}));
  return pad->result(0);
}

bool Partitioner::partition(Operation &op) {
  const bool reshard = op.is("sdy.reshard");
  std::vector<TensorSharding> outs;
  for (size_t i = 0; i < op.numResults(); ++i) {
    const TensorSharding *s =
        reshard ? &opSharding(op) : getSharding(op.result(i));
    if (!s)
      return true; // nothing says how to partition it
    outs.push_back(*s);
  }
  if (outs.empty())
    return true;
  const Mesh *mesh = lookupMesh(module_, outs.front());
  if (!mesh || mesh->axes.empty())
    return true;
  std::vector<TensorSharding> ins;
  std::vector<Value *> operands;
  for (size_t i = 0; i < op.numOperands(); ++i) {
    Value *value = op.operand(i);
    const TensorSharding *s = getSharding(value);
    ins.push_back(
        s ? *s
          : fullyClosedSharding(outs.front().mesh, value->type->shape.size()));
    operands.push_back(padded(value, ins.back(), *mesh, op));
  }
  // The body, first in global form: the op (or the collectives of the
  // reshard) on padded arguments; then converted to local form.
  LocalBuilder b(ctx_, op);
  std::vector<std::string> axes;
  for (const MeshAxis &axis : mesh->axes)
    axes.push_back(axis.name.str());
  Operation *manual = b.create(
      "sdy.manual_computation", operands, {},
      {{"in_shardings", ctx_.attrs.shardingPerValue(ins)},
       {"out_shardings", ctx_.attrs.shardingPerValue(outs)},
       {"manual_axes",
        ctx_.attrs.make(Attr{AttrKind::ManualAxes, axes, nullptr, {}})}});
  Block &body = manual->addRegion().addBlock();
  std::vector<Value *> args;
  for (Value *operand : operands)
    args.push_back(body.addArgument(operand->type, op.loc));
  Operation *ret = body.push_back(makeOp(ctx_, "sdy.return", {}, {}, op.loc));
  std::vector<Value *> results;
  if (reshard) {
    // The argument carries the reshard's input sharding for the chain.
    Operation *anchor = body.insertBefore(
        ret, makeOp(ctx_, "sdy.reshard", {args[0]}, {args[0]->type}, op.loc));
    anchor->attrs.set(ctx_.intern("sharding"),
                      ctx_.attrs.sharding(outs.front()));
    CollectiveChain chain(ctx_, *anchor, *mesh, args[0], ins.front(),
                          outs.front());
    results.push_back(chain.insert());
    eraseOp(*anchor);
  } else {
    ValueMap map;
    Operation *copy = body.insertBefore(ret, cloneOp(op, map));
    for (size_t i = 0; i < args.size(); ++i) // each use its own argument
      copy->setOperand(i, args[i]);
    for (size_t i = 0; i < copy->numResults(); ++i) {
      // Padded operands give a result padded as its sharding needs.
      Value *result = copy->result(i);
      result->type = b.reshaped(
          result->type, paddedShape(result->type->shape, outs[i], *mesh));
      results.push_back(result);
    }
  }
  ret->setOperands(results);
  // Local form: the arguments' shards, then each op as the pass does it.
  for (size_t i = 0; i < args.size(); ++i)
    args[i]->type = b.reshaped(args[i]->type,
                               localShape(args[i]->type->shape, ins[i], *mesh));
  GlobalToLocal local(module_, diags_, {});
  if (!local.convertBody(body))
    return false;
  for (Operation &inner : body)
    inner.attrs.erase("sdy.sharding");
  // Results: the body's local results, times the shards of their sharding.
  std::vector<Type> result_types;
  for (size_t i = 0; i < ret->numOperands(); ++i) {
    std::vector<int64_t> shape = ret->operand(i)->type->shape;
    for (size_t d = 0; d < shape.size() && d < outs[i].dims.size(); ++d)
      shape[d] *= shardedSize(outs[i].dims[d], *mesh);
    result_types.push_back(b.reshaped(ret->operand(i)->type, shape));
  }
  manual->setResultTypes(result_types);
  // Padded results are sliced back to the op's shapes.
  Operation *after = op.nextInBlock();
  for (size_t i = 0; i < op.numResults(); ++i) {
    Value *value = manual->result(i);
    const std::vector<int64_t> &shape = op.result(i)->type->shape;
    if (value->type->shape != shape) {
      LocalBuilder post(ctx_, *after);
      Operation *slice = post.sliceFromStart(value, shape);
      slice->attrs.set(ctx_.intern("sdy.sharding"),
                       ctx_.attrs.shardingPerValue({outs[i]}));
      value = slice->result(0);
    }
    op.result(i)->replaceAllUsesWith(value);
  }
  eraseOp(op);
  return true;
}

} // namespace

bool perInstructionPartitioningPass(Module &module, const PassOptions &options,
                                    DiagnosticEngine &diags) {
  Result<OpFilter> filter = parseFilter(options.text("filter"));
  if (!filter) {
    diags.error(module.op().loc, filter.error().message);
    return false;
  }
  std::vector<Operation *> selected;
  int64_t position = 0;
  forEachFunc(module, [&](Operation &func) {
    walk(func, [&](Operation &op) {
      if (op.numRegions() == 0 && op.nextInBlock() != nullptr &&
          filter->selects(op, position++))
        selected.push_back(&op);
    });
  });
  if (selected.empty())
    return markUnchanged(module);
  Partitioner partitioner(module, diags);
  for (Operation *op : selected)
    if (!partitioner.partition(*op))
      return false;
  return true;
}

} // namespace shardlab
