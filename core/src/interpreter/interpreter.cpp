// The evaluator: runs a function's body op by op, with the values of the
// enclosing scopes visible inside regions; control flow (call, while, if,
// case) and reductions run their regions; everything else is one of the op
// families of ops.h.
#include "indexing.h"
#include "ir/op_properties.h"
#include "ops.h"

#include "rules/stablehlo_attrs.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace shardlab::interpreter {
namespace {

using detail::Operands;
using detail::opError;

/// Values of one scope; lookups fall back to the enclosing scopes.
struct Scope {
  const Scope *parent = nullptr;
  std::unordered_map<const Value *, Tensor> values;
  const Tensor *find(const Value *v) const {
    for (const Scope *s = this; s; s = s->parent)
      if (auto it = s->values.find(v); it != s->values.end())
        return &it->second;
    return nullptr;
  }
};

class Evaluator {
public:
  Evaluator(Module &module, const RunOptions &options, RunResult &out)
      : module_(module), options_(options), out_(out) {}

  Result<std::vector<Tensor>> callFunction(Operation &func,
                                           const std::vector<Tensor> &args) {
    if (!func.numRegions() || func.region(0).empty())
      return opError(func, "function has no body");
    if (++depth_ > 256)
      return opError(func, "calls nested more than 256 deep");
    Result<std::vector<Tensor>> r =
        runBlock(func.region(0).front(), args, nullptr);
    --depth_;
    return r;
  }

private:
  Result<std::vector<Tensor>>
  runBlock(Block &block, const std::vector<Tensor> &args, const Scope *parent) {
    Scope scope;
    scope.parent = parent;
    if (args.size() != block.numArguments())
      return makeError("block of " + std::to_string(block.numArguments()) +
                       " arguments called with " + std::to_string(args.size()));
    for (size_t i = 0; i < args.size(); ++i)
      scope.values[block.argument(i)] = args[i];
    for (Operation &op : block) {
      if (isBlockReturn(op)) {
        std::vector<Tensor> results;
        for (size_t i = 0; i < op.numOperands(); ++i) {
          const Tensor *t = scope.find(op.operand(i));
          if (!t)
            return opError(op, "operand " + std::to_string(i) + " unknown");
          results.push_back(*t);
        }
        return results;
      }
      Result<bool> ran = runOp(op, scope);
      if (!ran)
        return ran.error();
    }
    return makeError("block ends without a return");
  }

  Result<Operands> operandsOf(Operation &op, const Scope &scope) {
    Operands in;
    for (size_t i = 0; i < op.numOperands(); ++i) {
      const Tensor *t = scope.find(op.operand(i));
      if (!t)
        return opError(op, "operand " + std::to_string(i) +
                               " has no value (defined by an op not run)");
      in.push_back(t);
    }
    return in;
  }

  Result<std::vector<Type>> resultTypes(Operation &op) {
    std::vector<Type> types;
    for (size_t i = 0; i < op.numResults(); ++i) {
      Type t = op.result(i)->type;
      if (!t || !t->isRankedTensor() || !t->hasStaticShape())
        return opError(op, "result " + std::to_string(i) +
                               " is not a static tensor (dynamic shapes are "
                               "not run by the interpreter)");
      if (!elementLayout(t->element).supported() &&
          !uniformQuant(t->element->text))
        return opError(op, "element type " + t->element->text +
                               " is not run by the interpreter");
      types.push_back(t);
    }
    return types;
  }

  Result<bool> bind(Operation &op, Scope &scope,
                    Result<std::vector<Tensor>> results) {
    if (!results)
      return results.error();
    if (results->size() != op.numResults())
      return opError(op, "produced " + std::to_string(results->size()) +
                             " results for " + std::to_string(op.numResults()));
    for (size_t i = 0; i < results->size(); ++i) {
      out_.elements += (*results)[i].size();
      scope.values[op.result(i)] = std::move((*results)[i]);
    }
    return true;
  }

  Result<bool> runOp(Operation &op, Scope &scope) {
    if (++out_.ops_run > options_.max_ops)
      return opError(op, "more than " + std::to_string(options_.max_ops) +
                             " ops run (a loop that does not end?)");
    Result<Operands> in = operandsOf(op, scope);
    if (!in)
      return in.error();
    Result<std::vector<Type>> types = resultTypes(op);
    if (!types)
      return types.error();
    return bind(op, scope, evaluate(op, *in, *types, scope));
  }

  // The expressed-type tensor type of a quantized one (same shape).
  Type expressedType(Type quantized, const UniformQuant &q) {
    TypeContext &types = module_.ctx().types;
    return types.rankedTensor(quantized->shape, types.element(q.expressed));
  }

  Tensor dequantize(const Tensor &q) {
    const UniformQuant &p = *q.quant();
    Tensor out = Tensor::zeros(expressedType(q.type(), p));
    // In the expressed type (f32): (q - zero_point) * scale.
    const float scale = float(p.scale);
    for (int64_t i = 0; i < out.size(); ++i)
      out.setReal(i, double(float(q.integer(i) - p.zero_point) * scale));
    return out;
  }

  Tensor quantize(const Tensor &x, Type result) {
    Tensor out = Tensor::zeros(result);
    const UniformQuant &p = *out.quant();
    const float scale = float(p.scale);
    for (int64_t i = 0; i < out.size(); ++i) {
      const double v = std::nearbyint(double(float(x.real(i)) / scale)) +
                       double(p.zero_point);
      // A NaN converts to the integer 0, as XLA converts a NaN float to an
      // integer (the quantized result of 0 / 0 in the corpus says so).
      const double clamped = std::isnan(v)
                                 ? 0.0
                                 : std::min(std::max(v, double(p.storage_min)),
                                            double(p.storage_max));
      out.setInteger(i, uint64_t(int64_t(clamped)));
    }
    return out;
  }

  // An op with quantized operands or results runs on the dequantized
  // values; its quantized results are quantized again.
  Result<std::vector<Tensor>>
  dequantizeOpQuantize(Operation &op, const Operands &in,
                       const std::vector<Type> &types, const Scope &scope) {
    std::vector<Tensor> expressed;
    expressed.reserve(in.size());
    Operands plain;
    for (const Tensor *t : in) {
      if (t->quant()) {
        expressed.push_back(dequantize(*t));
        plain.push_back(&expressed.back());
      } else {
        plain.push_back(t);
      }
    }
    std::vector<Type> plain_types;
    for (Type t : types) {
      const std::optional<UniformQuant> q = uniformQuant(t->element->text);
      plain_types.push_back(q ? expressedType(t, *q) : t);
    }
    Result<std::vector<Tensor>> r =
        evaluatePlain(op, plain, plain_types, scope);
    if (!r)
      return r.error();
    for (size_t i = 0; i < r->size() && i < types.size(); ++i)
      if (uniformQuant(types[i]->element->text))
        (*r)[i] = quantize((*r)[i], types[i]);
    return r;
  }

  Result<std::vector<Tensor>> evaluate(Operation &op, const Operands &in,
                                       const std::vector<Type> &types,
                                       const Scope &scope) {
    const std::string_view name = op.name;
    if (name == "stablehlo.uniform_quantize" && in.size() == 1 &&
        types.size() == 1)
      return one(
          quantize(in[0]->quant() ? dequantize(*in[0]) : *in[0], types[0]));
    if (name == "stablehlo.uniform_dequantize" && in.size() == 1 &&
        in[0]->quant())
      return one(dequantize(*in[0]));
    bool quantized = false;
    for (const Tensor *t : in)
      quantized = quantized || t->quant();
    for (Type t : types)
      quantized = quantized || uniformQuant(t->element->text);
    if (quantized)
      return dequantizeOpQuantize(op, in, types, scope);
    return evaluatePlain(op, in, types, scope);
  }

  Result<std::vector<Tensor>> evaluatePlain(Operation &op, const Operands &in,
                                            const std::vector<Type> &types,
                                            const Scope &scope) {
    const std::string_view name = op.name;
    if (name == "stablehlo.constant")
      return constant(op, types);
    if (name == "func.call" || name == "call")
      return call(op, in);
    if (name == "stablehlo.custom_call")
      return customCall(op, in, types);
    if (name.substr(0, 6) == "check.") // the check dialect's own ops
      return check(op, name, in, types);
    if (name == "stablehlo.while")
      return loop(op, in, scope);
    if (name == "stablehlo.if" || name == "stablehlo.case")
      return branch(op, in, scope);
    if (name == "stablehlo.reduce")
      return reduction(op, in, types, scope);
    if (name == "stablehlo.scatter")
      return detail::scatter(op, in, types, regionCombiner(op, scope));
    if (name == "stablehlo.reduce_window")
      return detail::reduceWindow(op, in, types, regionCombiner(op, scope));
    if (name == "stablehlo.sort")
      return detail::sort(op, in, types, regionCombiner(op, scope));
    if (name == "stablehlo.select_and_scatter" && types.size() == 1)
      return one(detail::selectAndScatter(op, in, types[0],
                                          regionCombiner(op, scope, 0),
                                          regionCombiner(op, scope, 1)));
    if (name == "chlo.top_k" && in.size() == 1)
      return detail::topK(op, *in[0], types);
    if (name == "stablehlo.reduce_precision" && types.size() == 1)
      return one(detail::reducePrecision(op, *in[0], types[0]));
    if (name == "stablehlo.gather" && types.size() == 1)
      return one(detail::gather(op, in, types[0]));
    if (name == "stablehlo.optimization_barrier" ||
        name == "sdy.sharding_constraint" || name == "sdy.reshard")
      return copies(in);
    if (types.size() == 1) {
      if (auto r = detail::elementwise(op, in, types[0]))
        return one(std::move(*r));
      if (auto r = detail::shapeOp(op, in, types[0]))
        return one(std::move(*r));
      if (name == "stablehlo.dot_general" || name == "stablehlo.dot")
        return one(detail::dotGeneral(op, in, types[0]));
      if (name == "stablehlo.convolution")
        return one(detail::convolution(op, in, types[0]));
      if (name == "stablehlo.fft")
        return one(detail::fft(op, *in[0], types[0]));
    }
    return opError(op, "not run by the interpreter");
  }

  static Result<std::vector<Tensor>> one(Result<Tensor> r) {
    if (!r)
      return r.error();
    return std::vector<Tensor>{std::move(*r)};
  }

  static Result<std::vector<Tensor>> copies(const Operands &in) {
    std::vector<Tensor> out;
    for (const Tensor *t : in)
      out.push_back(*t);
    return out;
  }

  Result<std::vector<Tensor>> constant(Operation &op,
                                       const std::vector<Type> &types) {
    const Attr *value = rules::findAttr(op, "value");
    if (!value || value->kind != AttrKind::DenseElements || types.size() != 1)
      return opError(op, "no dense `value`");
    const DenseReader reader = value->denseReader();
    if (!reader.valid())
      return opError(op, "a literal of this type is not run by the "
                         "interpreter");
    return std::vector<Tensor>{detail::fromLiteral(reader, types[0])};
  }

  Result<std::vector<Tensor>> call(Operation &op, const Operands &in) {
    const Attr *callee = op.attrs.get("callee");
    if (!callee)
      callee = op.props().get("callee");
    Operation *func = callee ? module_.lookupSymbol(callee->str()) : nullptr;
    if (!func)
      return opError(op, "callee not found");
    std::vector<Tensor> args;
    for (const Tensor *t : in)
      args.push_back(*t);
    return callFunction(*func, args);
  }

  Result<std::vector<Tensor>> customCall(Operation &op, const Operands &in,
                                         const std::vector<Type> &types) {
    const Attr *target = rules::findAttr(op, "call_target_name");
    const std::string name = target && target->kind == AttrKind::String
                                 ? target->str()
                                 : std::string();
    if (name.substr(0, 6) != "check.")
      return opError(op,
                     "custom_call @" + name + " is not run by the interpreter");
    return check(op, name, in, types);
  }

  // A check (custom call or op): recorded; check.eq also returns whether
  // it held.
  Result<std::vector<Tensor>> check(Operation &op, std::string_view name,
                                    const Operands &in,
                                    const std::vector<Type> &types) {
    std::optional<CheckResult> check = detail::runCheck(op, name, in);
    if (!check)
      return opError(op, std::string(name) + " is not run by the interpreter");
    const bool passed = check->passed;
    out_.checks.push_back(std::move(*check));
    std::vector<Tensor> results;
    for (Type t : types) { // check.eq returns whether it held
      Tensor r = Tensor::zeros(t);
      for (int64_t i = 0; i < r.size(); ++i)
        r.setInteger(i, passed);
      results.push_back(std::move(r));
    }
    return results;
  }

  Result<std::vector<Tensor>> regionResults(Operation &op, size_t region,
                                            const std::vector<Tensor> &args,
                                            const Scope &scope) {
    if (op.numRegions() <= region || op.region(region).empty())
      return opError(op, "region " + std::to_string(region) + " missing");
    return runBlock(op.region(region).front(), args, &scope);
  }

  Result<std::vector<Tensor>> loop(Operation &op, const Operands &in,
                                   const Scope &scope) {
    std::vector<Tensor> state;
    for (const Tensor *t : in)
      state.push_back(*t);
    while (true) {
      Result<std::vector<Tensor>> more = regionResults(op, 0, state, scope);
      if (!more)
        return more.error();
      if (more->size() != 1 || (*more)[0].size() != 1)
        return opError(op, "condition must yield one i1");
      if ((*more)[0].integer(0) == 0)
        return state;
      Result<std::vector<Tensor>> next = regionResults(op, 1, state, scope);
      if (!next)
        return next.error();
      state = std::move(*next);
    }
  }

  Result<std::vector<Tensor>> branch(Operation &op, const Operands &in,
                                     const Scope &scope) {
    if (in.size() != 1 || in[0]->size() != 1)
      return opError(op, "expected one scalar predicate or index");
    size_t region;
    if (op.is("stablehlo.if")) {
      region = in[0]->integer(0) != 0 ? 0 : 1;
    } else { // case: an index out of range runs the last branch
      const int64_t index = in[0]->integer(0);
      region = index < 0 || size_t(index) >= op.numRegions()
                   ? op.numRegions() - 1
                   : size_t(index);
    }
    return regionResults(op, region, {}, scope);
  }

  detail::Combiner regionCombiner(Operation &op, const Scope &scope,
                                  size_t region = 0) {
    return [this, &op, &scope, region](const std::vector<Tensor> &args) {
      return regionResults(op, region, args, scope);
    };
  }

  Result<std::vector<Tensor>> reduction(Operation &op, const Operands &in,
                                        const std::vector<Type> &types,
                                        const Scope &scope) {
    return detail::reduce(op, in, types, regionCombiner(op, scope));
  }

  Module &module_;
  const RunOptions &options_;
  RunResult &out_;
  int depth_ = 0;
};

// StableHLO's own interpreter tests name their one function after the
// test (`@cosine_op_test_bf16`); with no @main, that function is the entry.
Operation *onlyFunction(Module &module) {
  Operation *only = nullptr;
  for (Operation &op : module.body()) {
    if (!op.is("func.func"))
      continue;
    if (only)
      return nullptr;
    only = &op;
  }
  return only;
}

} // namespace

RunResult run(Module &module, const std::vector<Tensor> &args,
              const RunOptions &options) {
  RunResult out;
  Operation *func = module.lookupSymbol(options.entry);
  if (!func && options.entry == "main")
    func = onlyFunction(module);
  if (!func || !func->is("func.func")) {
    out.error = "no function @" + options.entry + " to run";
    return out;
  }
  if (!func->numRegions() || func->region(0).empty()) {
    out.error = "@" + options.entry + " has no body";
    return out;
  }
  Block &body = func->region(0).front();
  if (body.numArguments() != args.size()) {
    out.error = "@" + options.entry + " takes " +
                std::to_string(body.numArguments()) + " arguments and " +
                std::to_string(args.size()) +
                " were given (a module whose inputs are not in it, such as "
                "one with dynamic shapes, needs them)";
    return out;
  }
  Evaluator evaluator(module, options, out);
  Result<std::vector<Tensor>> results = evaluator.callFunction(*func, args);
  if (!results) {
    out.error = results.error().message;
    return out;
  }
  out.results = std::move(*results);
  out.ok = true;
  return out;
}

RunResult run(Module &module, const RunOptions &options) {
  return run(module, {}, options);
}

} // namespace shardlab::interpreter
