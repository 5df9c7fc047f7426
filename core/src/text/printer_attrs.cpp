// Printing of attributes in MLIR's canonical spelling, including the sdy
// attributes (meshes, shardings, sharding rules).
#include "printer.h"

#include "support/decimal.h"
#include "text/char_class.h"
#include "text/float_text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace shardlab {

namespace {

std::string factorSymbol(int64_t index) {
  constexpr int64_t kLastLetter = 'z' - 'i';
  if (index <= kLastLetter)
    return std::string(1, static_cast<char>('i' + index));
  return "z_" + std::to_string(index - kLastLetter);
}

} // namespace

namespace {

bool isSymbolIdentifier(std::string_view name) {
  return !name.empty() && isIdStart(name[0]) && isIdentifierBody(name);
}

// The characters MLIR escapes in a string literal.
bool needsEscape(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return c == '"' || c == '\\' || u < 0x20 || u >= 0x7f;
}

template <class Out> void appendEscapedChar(Out &out, char c) {
  if (c == '\\') {
    out += "\\\\";
    return;
  }
  char buffer[4];
  std::snprintf(buffer, sizeof(buffer), "\\%02X",
                static_cast<unsigned char>(c));
  out += std::string_view(buffer, 3);
}

// `"value"`: runs of characters that need no escape are appended whole
// (axis names are printed in every sharding).
template <class Out> void appendEscaped(Out &out, std::string_view value) {
  out += '"';
  size_t start = 0;
  for (size_t i = 0; i < value.size(); ++i)
    if (needsEscape(value[i])) {
      out += value.substr(start, i - start);
      appendEscapedChar(out, value[i]);
      start = i + 1;
    }
  out += value.substr(start);
  out += '"';
}

template <class Out> void appendSymbol(Out &out, std::string_view name) {
  out += '@';
  if (isSymbolIdentifier(name))
    out += name;
  else
    appendEscaped(out, name);
}

} // namespace

void appendSymbolName(std::string &out, std::string_view name) {
  appendSymbol(out, name);
}
void appendSymbolName(TextSink &out, std::string_view name) {
  appendSymbol(out, name);
}
void appendEscapedString(std::string &out, std::string_view value) {
  appendEscaped(out, value);
}
void appendEscapedString(TextSink &out, std::string_view value) {
  appendEscaped(out, value);
}

void Printer::printAxisRef(const AxisRef &axis) {
  appendEscapedString(out_, axis.name);
  if (axis.sub) {
    out_ += ":(";
    out_.appendDecimal(axis.sub->pre_size);
    out_ += ')';
    out_.appendDecimal(axis.sub->size);
  }
}

void Printer::printAxisRefList(const std::vector<AxisRef> &axes) {
  out_ += '{';
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i)
      out_ += ", ";
    printAxisRef(axes[i]);
  }
  out_ += '}';
}

void Printer::printMesh(const Mesh &mesh) {
  out_ += "<[";
  for (size_t i = 0; i < mesh.axes.size(); ++i) {
    if (i)
      out_ += ", ";
    appendEscapedString(out_, mesh.axes[i].name);
    out_ += '=';
    out_.appendDecimal(mesh.axes[i].size);
  }
  out_ += ']';
  if (!mesh.device_ids.empty()) {
    out_ += ", device_ids=[";
    for (size_t i = 0; i < mesh.device_ids.size(); ++i) {
      if (i)
        out_ += ", ";
      out_.appendDecimal(mesh.device_ids[i]);
    }
    out_ += ']';
  }
  out_ += '>';
}

void Printer::printTensorSharding(const TensorSharding &sharding) {
  out_ += '<';
  if (sharding.mesh.inline_mesh) {
    out_ += "mesh";
    printMesh(*sharding.mesh.inline_mesh);
  } else {
    appendSymbolName(out_, sharding.mesh.symbol);
  }
  out_ += ", [";
  for (size_t d = 0; d < sharding.dims.size(); ++d) {
    const DimSharding &dim = sharding.dims[d];
    if (d)
      out_ += ", ";
    out_ += '{';
    for (size_t i = 0; i < dim.axes.size(); ++i) {
      if (i)
        out_ += ", ";
      printAxisRef(dim.axes[i]);
    }
    if (!dim.closed)
      out_ += dim.axes.empty() ? "?" : ", ?";
    out_ += '}';
    if (dim.priority) {
      out_ += 'p';
      out_.appendDecimal(*dim.priority);
    }
  }
  out_ += ']';
  if (!sharding.replicated.empty()) {
    out_ += ", replicated=";
    printAxisRefList(sharding.replicated);
  }
  if (!sharding.unreduced.empty()) {
    out_ += ", unreduced=";
    if (sharding.unreduced_kind == ReductionKind::Max)
      out_ += "max";
    else if (sharding.unreduced_kind == ReductionKind::Min)
      out_ += "min";
    printAxisRefList(sharding.unreduced);
  }
  out_ += '>';
}

static void printRule(TextSink &out, const OpShardingRule &rule) {
  auto mappings = [&](const std::vector<OpShardingRule::TensorMapping> &list) {
    out += '(';
    for (size_t t = 0; t < list.size(); ++t) {
      if (t)
        out += ", ";
      out += '[';
      for (size_t d = 0; d < list[t].size(); ++d) {
        if (d)
          out += ", ";
        for (int64_t factor : list[t][d])
          out += factorSymbol(factor);
      }
      out += ']';
    }
    out += ')';
  };
  out += "<";
  mappings(rule.operands);
  out += "->";
  mappings(rule.results);
  if (!rule.factor_sizes.empty()) {
    out += " {";
    for (size_t i = 0; i < rule.factor_sizes.size(); ++i) {
      if (i)
        out += ", ";
      out += factorSymbol(static_cast<int64_t>(i));
      out += '=';
      out.appendDecimal(rule.factor_sizes[i]);
    }
    out += '}';
  }
  auto special = [&](const char *keyword, const std::vector<int64_t> &list) {
    if (list.empty())
      return;
    out += std::string(" ") + keyword + "={";
    for (size_t i = 0; i < list.size(); ++i)
      out += (i ? ", " : "") + factorSymbol(list[i]);
    out += '}';
  };
  special("reduction", rule.reduction);
  special("need_replication", rule.need_replication);
  special("permutation", rule.permutation);
  special("blocked_propagation", rule.blocked_propagation);
  if (rule.is_custom)
    out += ", custom";
  out += '>';
}

// One part of a dense element (an integer, a float or half a complex).
static void printDensePart(TextSink &out, const ElementLayout &layout,
                           uint64_t bits) {
  if (layout.float_format)
    out += formatFloatLiteral(bits, *layout.float_format);
  else if (layout.is_bool)
    out += bits ? "true" : "false";
  else if (layout.is_unsigned)
    out.appendUnsignedDecimal(bits);
  else
    out.appendDecimal(integerOfBits(bits, layout));
}

static void printDenseElement(TextSink &out, const DenseReader &reader,
                              int64_t index) {
  if (reader.layout().kind != ElementLayout::Kind::Complex) {
    printDensePart(out, reader.layout(), reader.bits(index));
    return;
  }
  out += '(';
  printDensePart(out, reader.layout(), reader.bits(index, 0));
  out += ',';
  printDensePart(out, reader.layout(), reader.bits(index, 1));
  out += ')';
}

static void printDenseNested(TextSink &out, const DenseReader &reader,
                             const std::vector<int64_t> &shape, size_t dim,
                             int64_t &next) {
  if (dim == shape.size()) {
    printDenseElement(out, reader, next++);
    return;
  }
  out += '[';
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i)
      out += ", ";
    printDenseNested(out, reader, shape, dim + 1, next);
  }
  out += ']';
}

// The storage bytes in hex, as MLIR writes literals of more than 100
// elements (i1 packed eight to a byte, the first in the lowest bit).
static void printDenseHex(TextSink &out, const DenseElements &dense,
                          const DenseReader &reader) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  auto byte = [&](uint8_t b) {
    out += kDigits[b >> 4];
    out += kDigits[b & 0xF];
  };
  out += "\"0x";
  if (reader.layout().is_bool) {
    for (int64_t i = 0; i < reader.size(); i += 8) {
      uint8_t packed = 0;
      for (int64_t bit = 0; bit < 8 && i + bit < reader.size(); ++bit)
        packed |= static_cast<uint8_t>((reader.bits(i + bit) & 1) << bit);
      byte(packed);
    }
  } else {
    for (uint8_t b : dense.data)
      byte(b);
  }
  out += '"';
}

// MLIR's threshold for writing a literal's elements as one hex blob.
constexpr int64_t kHexElementsAbove = 100;

static void printDense(TextSink &out, const Attr &attr) {
  const auto &dense = std::get<DenseElements>(attr.payload);
  out += "dense<";
  const DenseReader reader = attr.denseReader();
  if (!reader.valid()) {
    out += dense.raw;
  } else if (dense.splat) {
    printDenseElement(out, reader, 0);
  } else if (reader.size() > kHexElementsAbove) {
    printDenseHex(out, dense, reader);
  } else if (reader.size() > 0) {
    int64_t next = 0;
    printDenseNested(out, reader, attr.type->shape, 0, next);
  }
  out += "> : ";
  out += attr.type->text;
}

void Printer::printAttr(const Attr *attr) {
  switch (attr->kind) {
  case AttrKind::Unit:
    out_ += "unit";
    return;
  case AttrKind::Bool:
    out_ += std::get<bool>(attr->payload) ? "true" : "false";
    return;
  case AttrKind::Integer:
    if (attr->type && attr->type->text == "i1") {
      out_ += attr->intValue() ? "true" : "false";
      return;
    }
    if (!attr->text.empty()) // wider than 64 bits: as written
      out_ += attr->text;
    else if (elementLayout(attr->type).is_unsigned)
      out_.appendUnsignedDecimal(static_cast<uint64_t>(attr->intValue()));
    else
      out_.appendDecimal(attr->intValue());
    out_ += " : ";
    out_ += attr->type->text;
    return;
  case AttrKind::Float:
    out_ += formatFloatLiteral(std::get<FloatBits>(attr->payload).bits,
                               *floatFormat(attr->type->text));
    out_ += " : ";
    out_ += attr->type->text;
    return;
  case AttrKind::String:
    appendEscapedString(out_, attr->str());
    return;
  case AttrKind::TypeAttr:
    out_ += std::get<Type>(attr->payload)->text;
    return;
  case AttrKind::Array:
    out_ += '[';
    for (size_t i = 0; i < attr->elements().size(); ++i) {
      if (i)
        out_ += ", ";
      printAttr(attr->elements()[i]);
    }
    out_ += ']';
    return;
  case AttrKind::DenseArray:
    out_ += "array<";
    out_ += attr->type->text;
    if (!attr->ints().empty()) {
      out_ += ": ";
      const ElementLayout layout = elementLayout(attr->type);
      for (size_t i = 0; i < attr->ints().size(); ++i) {
        if (i)
          out_ += ", ";
        printDensePart(out_, layout, static_cast<uint64_t>(attr->ints()[i]));
      }
    }
    out_ += '>';
    return;
  case AttrKind::Dict:
    if (!attr->text.empty()) { // a structured dialect attribute
      printDialectStruct(*attr);
      return;
    }
    out_ += '{';
    printNamedAttrs(attr->entries());
    out_ += '}';
    return;
  case AttrKind::SymbolRef:
    // Nested references (`@a::@b`) are kept as written.
    if (attr->str().find("::") != std::string::npos)
      out_ += '@' + attr->str();
    else
      appendSymbolName(out_, attr->str());
    return;
  case AttrKind::DenseElements:
    printDense(out_, *attr);
    return;
  case AttrKind::Sharding:
    out_ += "#sdy.sharding";
    printTensorSharding(attr->sharding());
    return;
  case AttrKind::ShardingPerValue:
    out_ += "#sdy.sharding_per_value<[";
    for (size_t i = 0; i < attr->shardings().size(); ++i) {
      if (i)
        out_ += ", ";
      printTensorSharding(attr->shardings()[i]);
    }
    out_ += "]>";
    return;
  case AttrKind::Mesh:
    out_ += "#sdy.mesh";
    printMesh(attr->mesh());
    return;
  case AttrKind::OpShardingRule:
    out_ += "#sdy.op_sharding_rule";
    printRule(out_, attr->rule());
    return;
  case AttrKind::Location:
    out_ += "loc(" + attr->text + ")";
    return;
  case AttrKind::ManualAxes:
    out_ += "#sdy<manual_axes";
    printSdyListBody(*attr);
    out_ += '>';
    return;
  case AttrKind::AxisRefList:
    out_ += "#sdy<axis_ref_list";
    printSdyListBody(*attr);
    out_ += '>';
    return;
  case AttrKind::AxisRefListList:
    out_ += "#sdy<list_of_axis_ref_lists";
    printSdyListBody(*attr);
    out_ += '>';
    return;
  case AttrKind::AllToAllParams:
    out_ += "#sdy<all_to_all_param_list";
    printSdyListBody(*attr);
    out_ += '>';
    return;
  default:
    out_ += attr->text;
    return;
  }
}

void Printer::printSdyListBody(const Attr &attr) {
  if (attr.kind == AttrKind::ManualAxes) {
    out_ += '{';
    const auto &axes = std::get<std::vector<std::string>>(attr.payload);
    for (size_t i = 0; i < axes.size(); ++i) {
      if (i)
        out_ += ", ";
      appendEscapedString(out_, axes[i]);
    }
    out_ += '}';
  } else if (attr.kind == AttrKind::AxisRefList) {
    printAxisRefList(std::get<std::vector<AxisRef>>(attr.payload));
  } else if (attr.kind == AttrKind::AxisRefListList) {
    const auto &dims =
        std::get<std::vector<std::vector<AxisRef>>>(attr.payload);
    out_ += '[';
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i)
        out_ += ", ";
      printAxisRefList(dims[i]);
    }
    out_ += ']';
  } else if (attr.kind == AttrKind::AllToAllParams) {
    const auto &params = std::get<std::vector<AllToAllParam>>(attr.payload);
    out_ += '[';
    for (size_t i = 0; i < params.size(); ++i) {
      if (i)
        out_ += ", ";
      printAxisRefList(params[i].axes);
      out_ += ": ";
      out_.appendDecimal(params[i].src_dim);
      out_ += "->";
      out_.appendDecimal(params[i].tgt_dim);
    }
    out_ += ']';
  }
}

// `#stablehlo.dot<key = [1, 2], ...>`: entries with empty lists are elided.
void Printer::printDialectStruct(const Attr &attr) {
  out_ += attr.text + "<";
  bool first = true;
  for (const NamedAttr &entry : attr.entries()) {
    if (entry.value->kind == AttrKind::DenseArray &&
        entry.value->ints().empty())
      continue;
    out_ += first ? "" : ", ";
    first = false;
    out_ += entry.name;
    out_ += " = ";
    if (entry.value->kind == AttrKind::DenseArray) {
      printIntList(entry.value->ints());
    } else {
      printAttr(entry.value);
    }
  }
  out_ += '>';
}

void Printer::printNamedAttr(const NamedAttr &attr) {
  if (!attr.name.empty() && !isDigit(attr.name[0]) &&
      isIdentifierBody(attr.name))
    out_ += attr.name;
  else
    appendEscapedString(out_, attr.name);
  if (attr.value->kind != AttrKind::Unit) {
    out_ += " = ";
    printAttr(attr.value);
  }
}

void Printer::printNamedAttrs(const std::vector<NamedAttr> &attrs) {
  for (size_t i = 0; i < attrs.size(); ++i) {
    if (i)
      out_ += ", ";
    printNamedAttr(attrs[i]);
  }
}

void Printer::printAttrDict(const AttrDict &dict,
                            std::span<const std::string_view> elided) {
  bool first = true;
  for (const NamedAttr &entry : dict.entries()) {
    if (std::any_of(elided.begin(), elided.end(), [&](std::string_view name) {
          return equalStrings(name, entry.name);
        }))
      continue;
    out_ += first ? " {" : ", ";
    first = false;
    printNamedAttr(entry);
  }
  if (!first)
    out_ += '}';
}

void Printer::printAttrDictWithKeyword(
    const AttrDict &dict, std::span<const std::string_view> elided) {
  size_t before = out_.size();
  printAttrDict(dict, elided);
  if (out_.size() != before)
    out_.insert(before, " attributes");
}

} // namespace shardlab
