// GSPMD sharding strings: what is read, the pieces of a tile assignment,
// the mesh shared by several shardings, and the errors for bad strings.
#include "sharding/hlo_sharding.h"

#include "result_text.h"

#include <doctest/doctest.h>

using namespace shardlab;

namespace {

HloSharding read(const std::string &text) {
  Result<HloSharding> s = parseHloSharding(text);
  REQUIRE_MESSAGE(s.ok(), errorOf(s));
  return *s;
}

std::string parseErrorOf(const std::string &text) {
  Result<HloSharding> s = parseHloSharding(text);
  CHECK_FALSE(s.ok());
  return errorOf(s);
}

std::string dims(const TensorSharding &s) {
  std::string out;
  for (const DimSharding &dim : s.dims) {
    out += "{";
    for (const AxisRef &axis : dim.axes)
      out += axis.name + " ";
    out += dim.closed ? "}" : "?}";
  }
  return out;
}

} // namespace

TEST_CASE("GSPMD strings of every kind are read") {
  CHECK(read("{replicated}").kind == HloSharding::Kind::Replicated);
  CHECK(read("{unknown}").kind == HloSharding::Kind::Unknown);
  CHECK(read("{manual}").kind == HloSharding::Kind::Manual);
  HloSharding maximal = read("{maximal device=3}");
  CHECK(maximal.kind == HloSharding::Kind::Maximal);
  CHECK(maximal.device == 3);
  // An iota and the explicit list it stands for give the same devices.
  HloSharding iota = read("{devices=[2,4]<=[4,2]T(1,0)}");
  HloSharding list = read("{devices=[2,4]0,2,4,6,1,3,5,7}");
  CHECK(iota.devices == list.devices);
  HloSharding partial =
      read("{devices=[1,2,4]<=[8] last_tile_dim_replicate metadata={op_name="
           "\"x\"}}");
  CHECK(partial.numTensorDims() == 2);
  HloSharding manual =
      read("{devices=[2,1,4]<=[8] last_tile_dims={manual, replicated}}");
  CHECK(manual.numTensorDims() == 1);
  CHECK(manual.isManualSubgroup(1));
  HloSharding tuple = read("{{maximal device=0}, {replicated}}");
  REQUIRE(tuple.tuple.size() == 2);
  CHECK(tuple.tuple[1].kind == HloSharding::Kind::Replicated);
}

TEST_CASE("bad GSPMD strings say what was expected") {
  CHECK(
      parseErrorOf("{devices=[2,2]0,1,2}").find("expected 4 devices, got 3") !=
      std::string::npos);
  CHECK(parseErrorOf("{devices=[4]<=[8]}").find("the iota has 8 devices") !=
        std::string::npos);
  CHECK(parseErrorOf("{maximal}").find("device=N") != std::string::npos);
  CHECK(parseErrorOf("{tiled}").find("expected replicated") !=
        std::string::npos);
  CHECK(parseErrorOf("{replicated} x").find("unexpected text") !=
        std::string::npos);
  CHECK(parseErrorOf("{devices=[2]<=[2]T(0,1)}").find("transpose") !=
        std::string::npos);
}

TEST_CASE("the common mesh is the cuts of every tile assignment") {
  // XLA's own example (import_shardings.mlir): 32 devices cut at strides
  // 16 and 4 give axes 2, 4, 4.
  HloSharding a = read("{devices=[4,8]<=[8,4]T(1,0)}");
  HloSharding b = read("{devices=[1,2,16]<=[32] last_tile_dim_replicate}");
  HloSharding c =
      read("{devices=[4,4,2]<=[2,16]T(1,0) last_tile_dim_replicate}");
  Result<Mesh> mesh = commonMesh({&a, &b, &c}, "_axis_");
  REQUIRE_MESSAGE(mesh.ok(), errorOf(mesh));
  REQUIRE(mesh->axes.size() == 3);
  CHECK(mesh->axes[0].size == 2);
  CHECK(mesh->axes[1].size == 4);
  CHECK(mesh->axes[2].size == 4);
  auto sharding = [&](const HloSharding &s, int64_t rank) {
    Result<TensorSharding> out =
        toTensorSharding(s, *mesh, "mesh", rank, nullptr);
    REQUIRE_MESSAGE(out.ok(), errorOf(out));
    return dims(*out);
  };
  CHECK(sharding(a, 2) == "{_axis_2 }{_axis_0 _axis_1 }");
  CHECK(sharding(b, 2) == "{}{_axis_0 }");
  CHECK(sharding(c, 2) == "{_axis_1 }{_axis_2 }");
  CHECK(sharding(read("{unknown}"), 2) == "{?}{?}");
  Result<TensorSharding> bad = toTensorSharding(a, *mesh, "mesh", 3, nullptr);
  CHECK_FALSE(bad.ok());
  CHECK(errorOf(bad).find("rank 3") != std::string::npos);
}

TEST_CASE("shardings that share no mesh are an error, not a guess") {
  HloSharding a = read("{devices=[2,3]<=[6]}");
  HloSharding b = read("{devices=[3,2]<=[6]}");
  CHECK(errorOf(commonMesh({&a, &b}, "_axis_")).find("no one mesh") !=
        std::string::npos);
  HloSharding c = read("{devices=[4]<=[4]}");
  CHECK(errorOf(commonMesh({&a, &c}, "_axis_")).find("6 and 4 devices") !=
        std::string::npos);
}

TEST_CASE("a canonical GSPMD string survives import and export") {
  const char *strings[] = {
      "{devices=[4,8]<=[8,4]T(1,0)}",
      "{devices=[1,2,16]<=[32] last_tile_dim_replicate}",
      "{devices=[4,4,2]<=[2,16]T(1,0) last_tile_dim_replicate}",
      "{devices=[8,1,4]<=[2,4,4]T(1,0,2) last_tile_dim_replicate}",
      "{devices=[8,4]<=[32]}",
  };
  std::vector<HloSharding> all;
  for (const char *text : strings)
    all.push_back(read(text));
  std::vector<const HloSharding *> tiled;
  for (const HloSharding &s : all)
    tiled.push_back(&s);
  Result<Mesh> mesh = commonMesh(tiled, "_axis_");
  REQUIRE_MESSAGE(mesh.ok(), errorOf(mesh));
  for (size_t i = 0; i < all.size(); ++i) {
    Result<TensorSharding> sharding =
        toTensorSharding(all[i], *mesh, "mesh", 2, nullptr);
    REQUIRE_MESSAGE(sharding.ok(), errorOf(sharding));
    CHECK(hloShardingText(*sharding, *mesh) == strings[i]);
  }
  TensorSharding replicated;
  replicated.dims.resize(2);
  CHECK(hloShardingText(replicated, *mesh) == "{replicated}");
  CHECK(hloShardingV3Text(replicated, *mesh, true) == "{mesh[], replicated}");
  TensorSharding open = replicated;
  open.dims[0].closed = false;
  open.dims[1].axes.push_back({"_axis_0", std::nullopt});
  CHECK(hloShardingV3Text(open, *mesh, true) ==
        "{mesh['_axis_0'=2,'_axis_1'=4,'_axis_2'=4], [{?}, {'_axis_0'}]}");
}

TEST_CASE("HloShardingV3 strings are read back over inline meshes") {
  auto one = parseHloShardingV3("{mesh[a=8,b=8,c=8], [{b}, {?}]}");
  REQUIRE_MESSAGE(one.ok(), errorOf(one));
  REQUIRE(one->size() == 1);
  const TensorSharding &s = (*one)[0];
  REQUIRE(s.mesh.inline_mesh.has_value());
  CHECK(s.mesh.inline_mesh->axes.size() == 3);
  CHECK(s.mesh.inline_mesh->totalSize() == 512);
  CHECK(dims(s) == "{b }{?}");

  auto quoted = parseHloShardingV3(
      "{mesh['x'=2,'y'=4], [{'x', 'y':(2)2}], unreduced={'z'}}");
  REQUIRE_MESSAGE(quoted.ok(), errorOf(quoted));
  const TensorSharding &q = (*quoted)[0];
  REQUIRE(q.dims.size() == 1);
  REQUIRE(q.dims[0].axes.size() == 2);
  CHECK(q.dims[0].axes[1].sub == SubAxisInfo{2, 2});
  CHECK(q.unreduced.size() == 1);

  auto tuple = parseHloShardingV3(
      "{{maximal_mesh[device_id=0]}, {single_device[device_id=3]}}");
  REQUIRE_MESSAGE(tuple.ok(), errorOf(tuple));
  REQUIRE(tuple->size() == 2);
  CHECK((*tuple)[1].mesh.inline_mesh->isMaximal());
  CHECK((*tuple)[1].mesh.inline_mesh->device_ids == std::vector<int64_t>{3});

  auto replicated = parseHloShardingV3("{mesh[], replicated}");
  REQUIRE(replicated.ok());
  CHECK((*replicated)[0].dims.empty()); // the caller gives the rank

  CHECK(errorOf(parseHloShardingV3("{mesh[a=2], [{a}}")).find("column") !=
        std::string::npos);
  CHECK(
      errorOf(parseHloShardingV3("{devices=[2]<=[2]}")).find("expected mesh") !=
      std::string::npos);
}
