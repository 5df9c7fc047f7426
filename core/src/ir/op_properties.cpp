// The op property lists (see op_properties.h).
#include "ir/op_properties.h"
#include "ir/op_registry.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>

namespace shardlab {

const std::vector<std::string_view> &elementwiseOps() {
  // Sorted (binary search). CHLO's unary ops and its non-broadcasting
  // binary ops map elements one to one, as StableHLO's do.
  static const std::vector<std::string_view> ops = {
      "chlo.acos",
      "chlo.acosh",
      "chlo.asin",
      "chlo.asinh",
      "chlo.atan",
      "chlo.atanh",
      "chlo.bessel_i1e",
      "chlo.conj",
      "chlo.cosh",
      "chlo.digamma",
      "chlo.erf",
      "chlo.erf_inv",
      "chlo.erfc",
      "chlo.is_inf",
      "chlo.is_neg_inf",
      "chlo.is_pos_inf",
      "chlo.lgamma",
      "chlo.next_after",
      "chlo.polygamma",
      "chlo.sinh",
      "chlo.square",
      "chlo.tan",
      "chlo.zeta",
      "stablehlo.abs",
      "stablehlo.add",
      "stablehlo.and",
      "stablehlo.atan2",
      "stablehlo.cbrt",
      "stablehlo.ceil",
      "stablehlo.clamp",
      "stablehlo.compare",
      "stablehlo.complex",
      "stablehlo.convert",
      "stablehlo.cosine",
      "stablehlo.count_leading_zeros",
      "stablehlo.divide",
      "stablehlo.exponential",
      "stablehlo.exponential_minus_one",
      "stablehlo.floor",
      "stablehlo.imag",
      "stablehlo.is_finite",
      "stablehlo.log",
      "stablehlo.log_plus_one",
      "stablehlo.logistic",
      "stablehlo.maximum",
      "stablehlo.minimum",
      "stablehlo.multiply",
      "stablehlo.negate",
      "stablehlo.not",
      "stablehlo.or",
      "stablehlo.popcnt",
      "stablehlo.power",
      "stablehlo.real",
      "stablehlo.reduce_precision",
      "stablehlo.remainder",
      "stablehlo.round_nearest_afz",
      "stablehlo.round_nearest_even",
      "stablehlo.rsqrt",
      "stablehlo.select",
      "stablehlo.shift_left",
      "stablehlo.shift_right_arithmetic",
      "stablehlo.shift_right_logical",
      "stablehlo.sign",
      "stablehlo.sine",
      "stablehlo.sqrt",
      "stablehlo.subtract",
      "stablehlo.tan",
      "stablehlo.tanh",
      "stablehlo.uniform_dequantize",
      "stablehlo.uniform_quantize",
      "stablehlo.xor"};
  return ops;
}

bool isElementwise(const Operation &op) {
  if (op.is("stablehlo.bitcast_convert"))
    return op.numOperands() == 1 && op.numResults() == 1 &&
           op.operand(0)->type->rank() == op.result(0)->type->rank();
  if (op.is("sdy.propagation_barrier") || op.is("sdy.sharding_constraint") ||
      op.is("sdy.reshard"))
    return true;
  if (op.info && op.info->name == op.name)
    return op.info->elementwise_name;
  const std::vector<std::string_view> &ops = elementwiseOps();
  return std::binary_search(ops.begin(), ops.end(), op.name);
}

const Attr *makeStablehloEnum(AttrArena &arena, std::string_view kind,
                              std::string_view value) {
  std::string text = "#stablehlo<";
  text.append(kind).append(" ").append(value).append(">");
  return arena.opaque(std::move(text));
}

std::optional<std::string_view> stablehloEnum(const Attr *attr,
                                              std::string_view kind) {
  if (!attr || attr->kind != AttrKind::Opaque)
    return std::nullopt;
  std::string_view text = attr->text;
  constexpr std::string_view kPrefix = "#stablehlo<";
  if (text.size() < kPrefix.size() + kind.size() + 3 ||
      text.substr(0, kPrefix.size()) != kPrefix ||
      text.substr(kPrefix.size(), kind.size()) != kind ||
      text[kPrefix.size() + kind.size()] != ' ' || text.back() != '>')
    return std::nullopt;
  std::string_view value = text.substr(kPrefix.size() + kind.size() + 1);
  value.remove_suffix(1);
  if (value.empty() || value.find_first_of(" <>,") != std::string_view::npos)
    return std::nullopt;
  return value;
}

bool isBlockReturn(const Operation &op) {
  return op.is("func.return") || op.is("stablehlo.return") ||
         op.is("sdy.return");
}

bool isStableHloCollective(const Operation &op) {
  return op.is("stablehlo.all_gather") || op.is("stablehlo.all_reduce") ||
         op.is("stablehlo.all_to_all") || op.is("stablehlo.reduce_scatter") ||
         op.is("stablehlo.collective_permute") ||
         op.is("stablehlo.collective_broadcast");
}

bool insideManualComputation(const Operation &op) {
  for (const Operation *p = op.parentOp(); p; p = p->parentOp())
    if (p->is("sdy.manual_computation"))
      return true;
  return false;
}

std::string_view customCallTarget(const Operation &op) {
  if (!op.is("stablehlo.custom_call") && !op.is("mhlo.custom_call"))
    return {};
  const Attr *target = op.attrs.get("call_target_name");
  return target && target->kind == AttrKind::String
             ? std::string_view(target->str())
             : std::string_view();
}

bool isFusedAttention(const Operation &op) {
  return customCallTarget(op).starts_with("__cudnn$fmha");
}

bool isFusedAttentionBackward(const Operation &op) {
  return isFusedAttention(op) &&
         customCallTarget(op).find("Backward") != std::string_view::npos;
}

bool isCausalAttention(const Operation &op) {
  const std::optional<std::string> mask =
      backendConfigField(op, {"cudnn_fmha_backend_config", "mask_type"});
  return mask && mask->find("CAUSAL") != std::string::npos; // PADDING_CAUSAL
}

std::optional<std::string>
backendConfigField(const Operation &op,
                   std::initializer_list<std::string_view> path) {
  const Attr *config = op.attrs.get("backend_config");
  if (!config || config->kind != AttrKind::String)
    return std::nullopt;
  const nlohmann::json root = nlohmann::json::parse(
      config->str(), /*callback=*/nullptr, /*allow_exceptions=*/false);
  const nlohmann::json *at = &root;
  for (std::string_view key : path) {
    if (!at->is_object())
      return std::nullopt;
    const auto it = at->find(key);
    if (it == at->end())
      return std::nullopt;
    at = &*it;
  }
  if (at->is_string())
    return at->get<std::string>();
  if (at->is_number() || at->is_boolean())
    return at->dump();
  return std::nullopt;
}

std::optional<double>
backendConfigNumber(const Operation &op,
                    std::initializer_list<std::string_view> path) {
  const std::optional<std::string> text = backendConfigField(op, path);
  if (!text)
    return std::nullopt;
  // std::from_chars for double is not in every libc++ Emscripten ships.
  char *end = nullptr;
  const double value = std::strtod(text->c_str(), &end);
  if (text->empty() || end != text->c_str() + text->size())
    return std::nullopt;
  return value;
}

} // namespace shardlab
