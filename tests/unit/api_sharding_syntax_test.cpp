// parseShardingsJson / printShardingsJson: the core's sharding and mesh
// syntax as JSON values, for editors; bad texts and values are errors in
// their slot or in the reply, never exceptions.
#include "shardlab/api/sharding_syntax.h"

#include "api_reply.h"

#include <doctest/doctest.h>

using nlohmann::json;
using namespace shardlab;

TEST_CASE("a sharding body parses into a value and prints back the same") {
  const std::string body =
      R"(<@mesh, [{"x", ?}p1, {"y":(2)2}], replicated={"z"}>)";
  json request = {{"shardings", {body}}, {"meshes", {R"(<["x"=2, "y"=4]>)"}}};
  json parsed = reply(api::parseShardingsJson(request.dump()));
  REQUIRE(parsed["ok"] == true);
  REQUIRE(parsed["shardings"][0]["ok"] == true);
  const json &sharding = parsed["shardings"][0]["sharding"];
  CHECK(sharding["mesh"] == json{{"symbol", "mesh"}});
  CHECK(sharding["dims"][0] ==
        json{{"axes", {{{"name", "x"}}}}, {"closed", false}, {"priority", 1}});
  CHECK(sharding["dims"][1]["axes"][0]["sub"] ==
        json{{"pre_size", 2}, {"size", 2}});
  CHECK(parsed["meshes"][0]["mesh"]["axes"][1] ==
        json{{"name", "y"}, {"size", 4}});
  json printed = reply(api::printShardingsJson(json{
      {"shardings", {sharding}},
      {"meshes", {parsed["meshes"][0]["mesh"]}}}.dump()));
  CHECK(printed["shardings"][0] == body);
  CHECK(printed["meshes"][0] == R"(<["x"=2, "y"=4]>)");
}

TEST_CASE("a body that does not parse is an error in its slot") {
  json request = {{"shardings", json::array({"<@mesh, [{", 3})},
                  {"meshes", json::array({R"(<["x"=0]>)"})}};
  json parsed = reply(api::parseShardingsJson(request.dump()));
  CHECK(parsed["ok"] == true);
  CHECK(parsed["shardings"][0]["ok"] == false);
  CHECK(parsed["shardings"][1]["ok"] == false);
  CHECK(parsed["meshes"][0]["ok"] == false);
}

TEST_CASE("a malformed value or an unknown field is an error reply") {
  json bad_axis = {{"mesh", {{"symbol", "m"}}},
                   {"dims", {{{"axes", {{{"name", ""}}}}, {"closed", true}}}}};
  json r =
      reply(api::printShardingsJson(json{{"shardings", {bad_axis}}}.dump()));
  CHECK(r["ok"] == false);
  CHECK(r["error"].get<std::string>().find("shardings[0]") == 0);
  r = reply(api::parseShardingsJson(R"({"sharding": []})"));
  CHECK(r["ok"] == false);
  CHECK(r["error"].get<std::string>().find("unknown field 'sharding'") !=
        std::string::npos);
  CHECK(reply(api::parseShardingsJson("not json"))["ok"] == false);
}
