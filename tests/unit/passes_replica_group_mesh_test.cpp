// Reading and rewriting StableHLO replica_group_mesh_axes / mesh text, which
// lift-inlined-meshes and inline-meshes use on collectives' replica groups.
#include "passes/replica_group_mesh.h"

#include <doctest/doctest.h>

using namespace shardlab;

TEST_CASE("replica_group_mesh_axes text splits around its mesh") {
  auto groups = splitReplicaGroupMeshAxes(
      "#stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = "
      "[#stablehlo.axis_ref<name = \"x\">]>");
  REQUIRE(groups);
  CHECK(groups->mesh == "@mesh_0");
  CHECK(groups->symbol() == std::optional<std::string>("mesh_0"));
  groups->mesh = "@other";
  CHECK(groups->text() == "#stablehlo.replica_group_mesh_axes<mesh = @other, "
                          "axes = [#stablehlo.axis_ref<name = \"x\">]>");

  auto nested = splitReplicaGroupMeshAxes(
      "#stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes = "
      "[#stablehlo.mesh_axis<name = \"z,>\", size = 4>]>, axes = []>");
  REQUIRE(nested);
  CHECK(nested->symbol() == std::nullopt);
  CHECK(nested->after == ", axes = []>");

  CHECK_FALSE(splitReplicaGroupMeshAxes("dense<[[0, 1]]> : tensor<1x2xi64>"));
  CHECK_FALSE(splitReplicaGroupMeshAxes("#stablehlo.replica_group_mesh_axes<"));
}

TEST_CASE("StableHLO meshes read in both axis spellings and print back") {
  auto long_form = parseStablehloMesh(
      "#stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = \"a\", size = 2>, "
      "#stablehlo.mesh_axis<name = \"b\", size = 4>]>");
  REQUIRE(long_form);
  REQUIRE(long_form->axes.size() == 2);
  CHECK(long_form->axes[1].name == "b");
  CHECK(long_form->axes[1].size == 4);
  CHECK(long_form->device_ids.empty());

  std::string printed = "#stablehlo.mesh<axes=[<name = \"x\", size = 2>], "
                        "device_ids=dense<[1, 0]> : tensor<2xi64>>";
  auto short_form = parseStablehloMesh(printed);
  REQUIRE(short_form);
  CHECK(short_form->device_ids == std::vector<int64_t>{1, 0});
  CHECK(printStablehloMesh(*short_form) == printed);

  Mesh maximal{{}, {7}};
  CHECK(printStablehloMesh(maximal) ==
        "#stablehlo.mesh<axes=[], device_ids=dense<7> : tensor<1xi64>>");
  CHECK_FALSE(parseStablehloMesh("#stablehlo.mesh<axes = [<name = \"x\">]>"));
  CHECK_FALSE(parseStablehloMesh("#sdy.mesh<[\"x\"=2]>"));
}
