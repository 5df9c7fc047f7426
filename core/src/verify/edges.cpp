// Propagation-edge attributes (`#sdy.propagation_edges<[{step-N = [{"x" =
// operand-0 -> [result-0]}]}]>`), which the parser keeps as opaque text:
// their type, step indices, value references and axes.
#include "verify_ops.h"

#include <cctype>
#include <set>

namespace shardlab::verify {

namespace {

struct ValueRef {
  bool operand = true;
  int64_t index = 0;
  bool operator<(const ValueRef &o) const {
    return operand != o.operand ? operand : index < o.index;
  }
  bool operator==(const ValueRef &) const = default;
};

struct Edge {
  std::string axis;
  ValueRef source;
  std::vector<ValueRef> targets;
};

struct EdgeStep {
  int64_t step = 0;
  std::vector<Edge> edges;
};

constexpr std::string_view kEdgesPrefix = "#sdy.propagation_edges<";

// A small scanner over the attribute text.
class EdgeScanner {
public:
  explicit EdgeScanner(std::string_view text) : text_(text) {}

  bool parse(std::vector<EdgeStep> &steps) {
    if (!word(kEdgesPrefix) || !punct('['))
      return false;
    if (punct(']'))
      return punct('>');
    do {
      EdgeStep step;
      if (!parseStep(step))
        return false;
      steps.push_back(std::move(step));
    } while (punct(','));
    return punct(']') && punct('>');
  }

private:
  void skip() {
    while (pos_ < text_.size() && std::isspace(uchar(text_[pos_])))
      ++pos_;
  }
  static unsigned char uchar(char c) { return static_cast<unsigned char>(c); }
  bool punct(char c) {
    skip();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool word(std::string_view w) {
    skip();
    if (text_.substr(pos_, w.size()) != w)
      return false;
    pos_ += w.size();
    return true;
  }
  std::string ident() {
    skip();
    std::string out;
    while (pos_ < text_.size() && std::isalpha(uchar(text_[pos_])))
      out += static_cast<char>(std::tolower(uchar(text_[pos_++])));
    return out;
  }
  bool integer(int64_t &value) {
    skip();
    bool negative = punct('-');
    size_t start = pos_;
    value = 0;
    while (pos_ < text_.size() && std::isdigit(uchar(text_[pos_])))
      value = value * 10 + (text_[pos_++] - '0');
    if (negative)
      value = -value;
    return pos_ > start;
  }
  bool separator() { return punct('-') || punct('_'); }
  bool valueRef(ValueRef &ref) {
    std::string kind = ident();
    ref.operand = kind == "operand";
    return (ref.operand || kind == "result") && separator() &&
           integer(ref.index);
  }
  bool axisRef(std::string &name) {
    if (!punct('"'))
      return false;
    size_t end = text_.find('"', pos_);
    if (end == std::string_view::npos)
      return false;
    name = std::string(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    int64_t pre = 0, size = 0;
    if (punct(':'))
      return punct('(') && integer(pre) && punct(')') && integer(size);
    return true;
  }
  bool parseEdge(Edge &edge) {
    if (!punct('{') || !axisRef(edge.axis) || !punct('=') ||
        !valueRef(edge.source) || !word("->") || !punct('['))
      return false;
    do {
      ValueRef target;
      if (!valueRef(target))
        return false;
      edge.targets.push_back(target);
    } while (punct(','));
    return punct(']') && punct('}');
  }
  bool parseStep(EdgeStep &step) {
    if (!punct('{') || ident() != "step" || !separator() ||
        !integer(step.step) || !punct('=') || !punct('['))
      return false;
    if (!punct(']')) {
      do {
        Edge edge;
        if (!parseEdge(edge))
          return false;
        step.edges.push_back(std::move(edge));
      } while (punct(','));
      if (!punct(']'))
        return false;
    }
    return punct('}');
  }

  std::string_view text_;
  size_t pos_ = 0;
};

bool isEdgesAttr(const Attr *attr) {
  return attr && attr->kind == AttrKind::Opaque &&
         std::string_view(attr->text).substr(0, kEdgesPrefix.size()) ==
             kEdgesPrefix;
}

bool verifySteps(VerifyContext &ctx, Operation &op,
                 const std::vector<EdgeStep> &steps) {
  std::set<int64_t> seen;
  for (const EdgeStep &step : steps) {
    if (step.step < 0)
      return ctx.opError(op, "propagation edges have negative step index: " +
                                 std::to_string(step.step));
    if (!seen.insert(step.step).second)
      return ctx.opError(op, "propagation edges have duplicate step index: " +
                                 std::to_string(step.step));
  }
  return true;
}

bool verifyRefInRange(VerifyContext &ctx, Operation &op, const ValueRef &ref) {
  size_t count = ref.operand ? op.numOperands() : op.numResults();
  if (ref.index >= 0 && static_cast<size_t>(ref.index) < count)
    return true;
  return ctx.opError(op, std::string("expected a value ref to have ") +
                             (ref.operand ? "an operand" : "a result") +
                             " index in range [0, " + std::to_string(count) +
                             "), got: " + std::to_string(ref.index));
}

bool verifyEdge(VerifyContext &ctx, Operation &op, int64_t step,
                const Edge &edge) {
  std::set<ValueRef> targets;
  for (const ValueRef &target : edge.targets) {
    if (target == edge.source)
      return ctx.opError(op, "propagation edges have a source that is the "
                             "same as a target");
    if (!targets.insert(target).second)
      return ctx.opError(op, "propagation edges have duplicate targets for "
                             "step index: " +
                                 std::to_string(step) +
                                 " and axis: " + edge.axis);
  }
  if (op.is("sdy.func_data_flow_edge"))
    return true;
  if (!verifyRefInRange(ctx, op, edge.source))
    return false;
  for (const ValueRef &target : edge.targets)
    if (!verifyRefInRange(ctx, op, target))
      return false;
  return true;
}

// The meshes of the shardings of the op's operands and results.
std::vector<const Mesh *> referencedMeshes(VerifyContext &ctx, Operation &op) {
  std::vector<const Mesh *> meshes;
  auto add = [&](Value *value) {
    if (const TensorSharding *sharding = shardingOf(value))
      meshes.push_back(ctx.lookupMesh(sharding->mesh));
  };
  for (size_t i = 0; i < op.numOperands(); ++i)
    add(op.operand(i));
  for (size_t i = 0; i < op.numResults(); ++i)
    add(op.result(i));
  return meshes;
}

bool verifyAxes(VerifyContext &ctx, Operation &op,
                const std::vector<EdgeStep> &steps) {
  std::vector<const Mesh *> meshes = referencedMeshes(ctx, op);
  if (meshes.empty())
    return ctx.opError(op, "expected propagation edges attr to reference a "
                           "sharding");
  for (const EdgeStep &step : steps)
    for (const Edge &edge : step.edges) {
      bool found = false;
      for (const Mesh *mesh : meshes)
        found = found || (mesh && mesh->axisSize(edge.axis).has_value());
      if (!found)
        return ctx.opError(op, "expected axis ref to be in one of the meshes");
    }
  return true;
}

bool verifyOpEdges(VerifyContext &ctx, Operation &op, const Attr &attr) {
  std::vector<EdgeStep> steps;
  if (!EdgeScanner(attr.text).parse(steps))
    return true; // Unparsed text: nothing reliable to check.
  if (!verifySteps(ctx, op, steps) || !verifyAxes(ctx, op, steps))
    return false;
  for (const EdgeStep &step : steps)
    for (const Edge &edge : step.edges)
      if (!verifyEdge(ctx, op, step.step, edge))
        return false;
  return true;
}

} // namespace

bool verifyPropagationEdgesAttr(VerifyContext &ctx, Operation &op,
                                const NamedAttr &attr) {
  if (attr.name == "sdy.propagation_edges") {
    if (!isEdgesAttr(attr.value))
      return ctx.opError(op, "should have a propagation edges attribute of "
                             "type PropagationEdgesAttr for attr named "
                             "'sdy.propagation_edges'");
    return verifyOpEdges(ctx, op, *attr.value);
  }
  bool ok = attr.value->kind == AttrKind::Array;
  if (ok)
    for (const Attr *element : attr.value->elements())
      ok = ok && isEdgesAttr(element);
  if (!ok)
    return ctx.opError(op, "should have a propagation edges attribute of type "
                           "ArrayAttr<PropagationEdgesAttr> for attr named "
                           "'sdy.result_propagation_edges' or "
                           "'sdy.block_arg_propagation_edges'");
  return true;
}

} // namespace shardlab::verify
