// Text forms of sharding values (see format.h).
#include "shardlab/sharding/format.h"

#include "shardlab/sharding/shape.h"

namespace shardlab {

std::string axisRefToString(const AxisRef &axis) {
  std::string text = "\"" + axis.name + "\"";
  if (axis.sub) {
    text += ":(" + std::to_string(axis.sub->pre_size) + ")" +
            std::to_string(axis.sub->size);
  }
  return text;
}

std::string axisRefsJoined(const std::vector<AxisRef> &axes) {
  std::string text;
  for (size_t i = 0; i < axes.size(); ++i) {
    text += (i ? ", " : "") + axisRefToString(axes[i]);
  }
  return text;
}

std::string axisListToString(const std::vector<AxisRef> &axes) {
  return "[" + axisRefsJoined(axes) + "]";
}

std::string reductionKindName(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Max:
    return "max";
  case ReductionKind::Min:
    return "min";
  case ReductionKind::Sum:
    break;
  }
  return "sum";
}

std::string meshBodyToString(const Mesh &mesh) {
  std::string text = "<[";
  for (size_t i = 0; i < mesh.axes.size(); ++i) {
    text += (i ? ", \"" : "\"") + mesh.axes[i].name +
            "\"=" + std::to_string(mesh.axes[i].size);
  }
  text += "]";
  if (!mesh.device_ids.empty()) {
    text += ", device_ids=[";
    for (size_t i = 0; i < mesh.device_ids.size(); ++i) {
      text += (i ? ", " : "") + std::to_string(mesh.device_ids[i]);
    }
    text += "]";
  }
  return text + ">";
}

std::string meshToString(const Mesh &mesh) {
  return "#sdy.mesh" + meshBodyToString(mesh);
}

std::string meshRefToString(const MeshRef &ref) {
  if (ref.inline_mesh) {
    return "mesh" + meshBodyToString(*ref.inline_mesh);
  }
  return "@" + ref.symbol;
}

std::string dimShardingToString(const DimSharding &dim) {
  std::string text = "{" + axisRefsJoined(dim.axes);
  if (!dim.closed) {
    text += dim.axes.empty() ? "?" : ", ?";
  }
  text += "}";
  if (dim.priority) {
    text += "p" + std::to_string(*dim.priority);
  }
  return text;
}

std::string shardingBodyToString(const TensorSharding &sharding) {
  std::string text = "<" + meshRefToString(sharding.mesh) + ", [";
  for (size_t i = 0; i < sharding.dims.size(); ++i) {
    text += (i ? ", " : "") + dimShardingToString(sharding.dims[i]);
  }
  text += "]";
  if (!sharding.replicated.empty()) {
    text += ", replicated={" + axisRefsJoined(sharding.replicated) + "}";
  }
  if (!sharding.unreduced.empty()) {
    text += ", unreduced=";
    if (sharding.unreduced_kind != ReductionKind::Sum) {
      text += reductionKindName(sharding.unreduced_kind);
    }
    text += "{" + axisRefsJoined(sharding.unreduced) + "}";
  }
  return text + ">";
}

std::string shardingToString(const TensorSharding &sharding) {
  return "#sdy.sharding" + shardingBodyToString(sharding);
}

std::string factorSymbol(int64_t factor) {
  constexpr int64_t kStartAtZ = 'z' - 'i';
  if (factor >= 0 && factor <= kStartAtZ) {
    return std::string(1, static_cast<char>('i' + factor));
  }
  return "z_" + std::to_string(factor - kStartAtZ);
}

std::string rankedTensorTypeToString(const std::vector<int64_t> &dims,
                                     const std::string &element_type) {
  std::string text = "tensor<";
  for (int64_t dim : dims) {
    text += (dim == kDynamic ? std::string("?") : std::to_string(dim)) + "x";
  }
  return text + element_type + ">";
}

} // namespace shardlab
