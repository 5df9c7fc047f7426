// Tensor sharding verification (see verify.h): Shardy's
// verifyTensorShardingAttr, verifyAxisRefList, verifySubAxes and
// verifyTensorShardingPerValueAttr.
#include "sharding/verify.h"
#include "shardlab/sharding/axis.h"
#include "shardlab/sharding/format.h"

#include "shardlab/sharding/shape.h"

#include <algorithm>

namespace shardlab {

ValueShapeInfo ValueShapeInfo::ranked(std::vector<int64_t> dims,
                                      std::string element_type) {
  ValueShapeInfo info;
  info.kind = Kind::Ranked;
  info.type_text = rankedTensorTypeToString(dims, element_type);
  info.dims = std::move(dims);
  info.element_type = std::move(element_type);
  return info;
}

ValueShapeInfo ValueShapeInfo::unranked(std::string element_type) {
  ValueShapeInfo info;
  info.kind = Kind::Unranked;
  info.type_text = "tensor<*x" + element_type + ">";
  info.element_type = std::move(element_type);
  return info;
}

ValueShapeInfo ValueShapeInfo::nonShaped(std::string type_text) {
  ValueShapeInfo info;
  info.kind = Kind::NonShaped;
  info.type_text = std::move(type_text);
  return info;
}

ValueShapeInfo ValueShapeInfo::tuple(std::vector<ValueShapeInfo> elements) {
  ValueShapeInfo info;
  info.kind = Kind::Tuple;
  info.type_text = "tuple<";
  for (size_t i = 0; i < elements.size(); ++i) {
    info.type_text += (i ? ", " : "") + elements[i].type_text;
  }
  info.type_text += ">";
  info.tuple_elements = std::move(elements);
  return info;
}

ValueShapeInfo ValueShapeInfo::none() {
  ValueShapeInfo info;
  info.kind = Kind::None;
  info.type_text = "<<NULL TYPE>>";
  return info;
}

bool ValueShapeInfo::isStaticRanked() const {
  return kind == Kind::Ranked &&
         std::find(dims.begin(), dims.end(), kDynamic) == dims.end();
}

std::optional<std::string>
AxisListChecker::check(const std::vector<AxisRef> &axes) {
  const AxisRef *prevSub = nullptr;
  for (const AxisRef &axis : axes) {
    if (!mesh_.axisSize(axis.name)) {
      return "unknown axis name: \"" + axis.name + "\"";
    }
    if (std::find(seen_.begin(), seen_.end(), axis) != seen_.end()) {
      return "duplicate axis ref: " + axisRefToString(axis);
    }
    seen_.push_back(axis);
    if (!axis.sub) {
      prevSub = &axis;
      continue;
    }
    sub_axes_[axis.name.str()].push_back(axis);
    if (prevSub && canMerge(*prevSub, axis)) {
      return "two consecutive sub-axes can be merged: " +
             axisRefToString(*prevSub) + ", " + axisRefToString(axis);
    }
    prevSub = &axis;
  }
  return std::nullopt;
}

std::optional<std::string>
AxisListChecker::checkSorted(const std::vector<AxisRef> &axes,
                             const std::string &what) {
  if (!std::is_sorted(axes.begin(), axes.end(), MeshAxisOrder{&mesh_})) {
    return what + " axes are not ordered w.r.t. mesh";
  }
  return check(axes);
}

namespace {

std::optional<std::string> checkOneSubAxis(const AxisRef &axis,
                                           int64_t axisSize) {
  const SubAxisInfo &info = *axis.sub;
  if (info.pre_size < 1) {
    return "sub-axis pre-size must be at least 1: " + axisRefToString(axis);
  }
  if (info.size <= 1) {
    return "sub-axis sizes must be greater than 1: " + axisRefToString(axis);
  }
  int64_t next = info.pre_size * info.size;
  if (axisSize % next != 0) {
    return "sub-axis next pre-size " + std::to_string(next) +
           " doesn't divide the size of the full axis " +
           std::to_string(axisSize) + ": " + axisRefToString(axis);
  }
  if (info.size == axisSize) {
    return "sub-axis size is equal to the full axis size: " +
           axisRefToString(axis);
  }
  return std::nullopt;
}

} // namespace

std::optional<std::string> AxisListChecker::checkSubAxes() const {
  for (const MeshAxis &meshAxis : mesh_.axes) {
    auto it = sub_axes_.find(meshAxis.name.str());
    if (it == sub_axes_.end() || it->second.empty()) {
      continue;
    }
    if (std::find(seen_.begin(), seen_.end(), fullAxis(meshAxis.name)) !=
        seen_.end()) {
      return "both sub-axis and full-axis are used for axis name: \"" +
             meshAxis.name + "\"";
    }
    std::vector<AxisRef> subs = it->second;
    std::sort(subs.begin(), subs.end(), axisRefLess);
    for (size_t i = 0; i < subs.size(); ++i) {
      if (auto error = checkOneSubAxis(subs[i], meshAxis.size)) {
        return error;
      }
      int64_t prevNext = i ? nextPreSizeOrFullSize(subs[i - 1], mesh_) : 1;
      if (prevNext > subs[i].sub->pre_size) {
        return "overlapping sub-axes: " + axisRefToString(subs[i - 1]) + ", " +
               axisRefToString(subs[i]);
      }
    }
  }
  return std::nullopt;
}

} // namespace shardlab
