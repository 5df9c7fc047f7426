// Parsing of the sdy attributes: meshes, axis refs, tensor shardings,
// shardings per value and op sharding rules, with Shardy's parse errors
// (an inner error followed by the "failed to parse <Attr> parameter ..."
// chain that MLIR's generated parsers emit).
#include "parser.h"

#include "sharding/verify.h"
#include "shardlab/sharding/mesh.h"

namespace shardlab {

namespace {

const char kPerValueParamError[] =
    "failed to parse Sdy_TensorShardingPerValue parameter 'shardings' which "
    "is to be a `::llvm::ArrayRef<TensorShardingAttr>`";
const char kDimShardingsParamError[] =
    "failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to "
    "be a `::llvm::ArrayRef<DimensionShardingAttr>`";

} // namespace

bool Parser::chainError(std::string message) {
  diags_.error(loc(), std::move(message));
  failed_ = true;
  return false;
}

bool Parser::parseAxisRef(AxisRef &axis) {
  if (peek() != '"') {
    error("expected string");
    return chainError("failed to parse Sdy_AxisRef parameter 'name' which is "
                      "to be a `::llvm::StringRef`");
  }
  std::string name;
  if (!parseString(name))
    return false;
  axis.name = name;
  if (!tryChar(':'))
    return true;
  SubAxisInfo sub;
  if (!expectChar('(') || !parseInt(sub.pre_size) || !expectChar(')') ||
      !parseInt(sub.size))
    return false;
  axis.sub = sub;
  return true;
}

bool Parser::parseAxisRefList(std::vector<AxisRef> &axes) {
  if (!expectChar('{'))
    return false;
  if (tryChar('}'))
    return true;
  do {
    AxisRef axis;
    if (!parseAxisRef(axis))
      return chainError("failed to parse axis list which is expected to be "
                        "an `ArrayRef<AxisRefAttr>`");
    axes.push_back(std::move(axis));
  } while (tryChar(','));
  return expectChar('}');
}

bool Parser::parseDimShardingListList(std::vector<std::vector<AxisRef>> &dims) {
  if (!expectChar('['))
    return false;
  if (tryChar(']'))
    return true;
  do {
    std::vector<AxisRef> axes;
    if (!parseAxisRefList(axes))
      return false;
    dims.push_back(std::move(axes));
  } while (tryChar(','));
  return expectChar(']');
}

// `p<N>` right after a dimension sharding.
static bool parsePriorityText(Parser &parser, std::string_view id,
                              DimSharding &dim) {
  std::string got = "got: " + std::string(id);
  if (id.size() < 2 || id[0] != 'p' ||
      id.find_first_not_of("0123456789", 1) != std::string_view::npos)
    return parser.error("expecting priority in format 'p<number>', " + got);
  if (id.size() > 2 && id[1] == '0')
    return parser.error("priorities with leading zeros are not allowed, " +
                        got);
  if (id.size() > 20)
    return parser.error("expecting integer priority, " + got);
  uint64_t value = 0;
  for (char c : id.substr(1)) {
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (uint64_t{INT64_MAX} - digit) / 10)
      return parser.error("expecting integer priority, " + got);
    value = value * 10 + digit;
  }
  dim.priority = static_cast<int64_t>(value);
  return true;
}

bool Parser::parseDimSharding(DimSharding &dim) {
  if (!expectChar('{'))
    return false;
  if (tryChar('?')) {
    dim.closed = false;
  } else if (peek() != '}') {
    do {
      if (tryChar('?')) {
        dim.closed = false;
        break;
      }
      AxisRef axis;
      if (!parseAxisRef(axis))
        return false;
      dim.axes.push_back(std::move(axis));
    } while (tryChar(','));
  }
  if (!expectChar('}'))
    return false;
  skipSpace();
  std::string_view id = parseBareId();
  if (id.empty())
    return true;
  return parsePriorityText(*this, id, dim);
}

// replicated={...} / unreduced=kind{...}, in either order.
bool Parser::parseShardingAxesLists(TensorSharding &sharding) {
  bool seen_replicated = false, seen_unreduced = false;
  while (tryChar(',')) {
    bool replicated = !seen_replicated && peekKeyword("replicated");
    bool unreduced = !seen_unreduced && peekKeyword("unreduced");
    if (!replicated && !unreduced)
      return chainError("failed to parse Sdy_TensorSharding, expected valid "
                        "named axis list after comma");
    const char *param = replicated ? "failed to parse Sdy_TensorSharding "
                                     "parameter 'replicated_axes'"
                                   : "failed to parse Sdy_TensorSharding "
                                     "parameter 'unreduced_axes'";
    parseBareId();
    bool has_equal = tryChar('=');
    if (replicated && !has_equal) {
      error("expected '='");
      return chainError(param);
    }
    if (unreduced) {
      if (tryKeyword("max"))
        sharding.unreduced_kind = ReductionKind::Max;
      else if (tryKeyword("min"))
        sharding.unreduced_kind = ReductionKind::Min;
      else
        tryKeyword("sum");
    }
    std::vector<AxisRef> &axes =
        replicated ? sharding.replicated : sharding.unreduced;
    if (!parseAxisRefList(axes))
      return chainError(param);
    (replicated ? seen_replicated : seen_unreduced) = true;
  }
  return true;
}

bool Parser::parseTensorShardingBody(TensorSharding &sharding) {
  tryPunct("#sdy.sharding"); // allowed inside per-value lists
  if (!expectChar('<'))
    return false;
  if (peek() == '@') {
    if (!parseSymbolName(sharding.mesh.symbol))
      return false;
  } else if (tryKeyword("mesh")) {
    Mesh mesh;
    if (!parseMesh(mesh))
      return false;
    sharding.mesh.inline_mesh = std::move(mesh);
  } else if (tryPunct("#sdy.mesh")) {
    Mesh mesh;
    if (!parseMesh(mesh))
      return false;
    sharding.mesh.inline_mesh = std::move(mesh);
  } else {
    return error("expected '@' or 'mesh'");
  }
  if (!expectChar(',') || !expectChar('['))
    return false;
  if (!tryChar(']')) {
    sharding.dims.reserve(4); // most tensors have at most 4 dimensions
    do {
      DimSharding dim;
      if (!parseDimSharding(dim))
        return chainError(kDimShardingsParamError);
      sharding.dims.push_back(std::move(dim));
    } while (tryChar(','));
    if (!expectChar(']'))
      return chainError(kDimShardingsParamError);
  }
  if (!parseShardingAxesLists(sharding))
    return false;
  return expectChar('>');
}

bool Parser::parseMesh(Mesh &mesh) {
  const char *axes_error = "failed to parse Sdy_Mesh parameter 'axes' which "
                           "is to be a `::llvm::ArrayRef<MeshAxisAttr>`";
  if (!expectChar('<') || !expectChar('['))
    return false;
  if (!tryChar(']')) {
    do {
      MeshAxis axis;
      std::string name;
      if (!parseString(name) || !expectChar('=') || !parseInt(axis.size))
        return chainError(std::string(mesh_error_prefix_) + axes_error);
      axis.name = name;
      if (axis.size < 1) {
        error("axis size must be at least 1, got: " +
              std::to_string(axis.size));
        return chainError(std::string(mesh_error_prefix_) + axes_error);
      }
      mesh.axes.push_back(std::move(axis));
    } while (tryChar(','));
    if (!expectChar(']'))
      return false;
  }
  if (tryChar(',')) {
    if (!expectKeyword("device_ids") || !expectChar('=') || !expectChar('['))
      return false;
    if (!tryChar(']')) {
      do {
        int64_t id = 0;
        if (!parseInt(id))
          return false;
        mesh.device_ids.push_back(id);
      } while (tryChar(','));
      if (!expectChar(']'))
        return false;
    }
  }
  Location end = loc();
  if (!expectChar('>'))
    return false;
  // An explicit iota order is the default and is dropped, as Shardy's
  // builder does, before verification.
  mesh = makeMesh(std::move(mesh.axes), std::move(mesh.device_ids));
  if (auto message = verifyMesh(mesh))
    return errorAt(end, std::string(mesh_error_prefix_) + *message);
  return true;
}

bool Parser::parseStringSet(std::vector<std::string> &values) {
  if (!expectChar('{'))
    return false;
  if (tryChar('}'))
    return true;
  do {
    std::string value;
    if (!parseString(value))
      return false;
    values.push_back(std::move(value));
  } while (tryChar(','));
  return expectChar('}');
}

bool Parser::parseAllToAllParamList(std::vector<AllToAllParam> &params) {
  if (!expectChar('['))
    return false;
  if (tryChar(']'))
    return true;
  do {
    AllToAllParam param;
    if (!parseAxisRefList(param.axes) || !expectChar(':') ||
        !parseInt(param.src_dim) || !expectPunct("->") ||
        !parseInt(param.tgt_dim))
      return false;
    params.push_back(std::move(param));
  } while (tryChar(','));
  return expectChar(']');
}

// `#sdy<kind body>`: the sdy attributes without a mnemonic of their own, as
// MLIR's generic form prints them (`#sdy<manual_axes{"a"}>`,
// `#sdy<axis_ref_list{"a"}>`, `#sdy<list_of_axis_ref_lists[{"a"}, {}]>`,
// `#sdy<all_to_all_param_list[{"a"}: 0->1]>`), or nullptr when `<` does
// not start one of them.
const Attr *Parser::parseSdyListAttr() {
  size_t start = pos_;
  if (!tryChar('<'))
    return nullptr;
  std::string_view kind = parseBareId();
  Attr attr;
  if (kind == "manual_axes") {
    std::vector<std::string> axes;
    if (!parseStringSet(axes))
      return nullptr;
    attr = Attr{AttrKind::ManualAxes, std::move(axes), nullptr, {}};
  } else if (kind == "axis_ref_list") {
    std::vector<AxisRef> axes;
    if (!parseAxisRefList(axes))
      return nullptr;
    attr = Attr{AttrKind::AxisRefList, std::move(axes), nullptr, {}};
  } else if (kind == "list_of_axis_ref_lists") {
    std::vector<std::vector<AxisRef>> dims;
    if (!parseDimShardingListList(dims))
      return nullptr;
    attr = Attr{AttrKind::AxisRefListList, std::move(dims), nullptr, {}};
  } else if (kind == "all_to_all_param_list") {
    std::vector<AllToAllParam> params;
    if (!parseAllToAllParamList(params))
      return nullptr;
    attr = Attr{AttrKind::AllToAllParams, std::move(params), nullptr, {}};
  } else {
    pos_ = start;
    return nullptr;
  }
  if (!expectChar('>'))
    return nullptr;
  return ctx_.attrs.make(std::move(attr));
}

const Attr *Parser::parseSdyAttr(std::string_view mnemonic) {
  if (mnemonic == "sdy.sharding") {
    TensorSharding sharding;
    if (!parseTensorShardingBody(sharding))
      return nullptr;
    return ctx_.attrs.sharding(std::move(sharding));
  }
  if (mnemonic == "sdy.sharding_per_value") {
    std::vector<TensorSharding> shardings;
    if (!expectChar('<') || !expectChar('['))
      return nullptr;
    if (!tryChar(']')) {
      do {
        TensorSharding sharding;
        if (!parseTensorShardingBody(sharding))
          return chainError(kPerValueParamError), nullptr;
        shardings.push_back(std::move(sharding));
      } while (tryChar(','));
      if (!expectChar(']'))
        return nullptr;
    }
    if (!expectChar('>'))
      return nullptr;
    return ctx_.attrs.shardingPerValue(std::move(shardings));
  }
  if (mnemonic == "sdy.mesh") {
    Mesh mesh;
    if (!parseMesh(mesh))
      return nullptr;
    Attr attr{AttrKind::Mesh, std::move(mesh), nullptr, {}};
    return ctx_.attrs.make(std::move(attr));
  }
  if (mnemonic == "sdy.op_sharding_rule") {
    OpShardingRule rule;
    if (!parseShardingRuleBody(rule))
      return nullptr;
    return ctx_.attrs.rule(std::move(rule));
  }
  if (mnemonic == "sdy") {
    if (const Attr *list = parseSdyListAttr())
      return list;
    if (failed())
      return nullptr;
  }
  // Other sdy attributes (propagation edges, origins, ...) are kept as text.
  size_t start = pos_ - mnemonic.size() - 1;
  return parseOpaqueAttr(start);
}

} // namespace shardlab
