// The sdy sharding and mesh syntax as JSON values, for editors: the core's
// own parser reads attribute text into structured values and its printer
// writes them back, so a tool that edits shardings (the playground's
// structured editor) needs no grammar of its own. Same conventions as
// api.h; shapes in schemas/api/sharding-syntax.schema.json.
//
//   parseShardingsJson({"shardings": ["<@mesh, [{\"x\", ?}p1, {}]>"],
//                       "meshes": ["<[\"x\"=2, \"y\"=4]>"]})
//   -> {"ok": true,
//       "shardings": [{"ok": true, "sharding": {"mesh": {"symbol": "mesh"},
//          "dims": [{"axes": [{"name": "x"}], "closed": false,
//                    "priority": 1}, {"axes": [], "closed": true}],
//          "replicated": [], "unreduced": [], "unreduced_kind": "sum"}}],
//       "meshes": [{"ok": true, "mesh": {"axes": [{"name": "x", "size": 2},
//          {"name": "y", "size": 4}], "device_ids": []}}]}
//
// Texts are what follows the mnemonic (`#sdy.sharding<...>`,
// `sdy.mesh @m = <...>`): a body that does not parse is
// {"ok": false, "error"} in its slot. printShardingsJson takes the same
// values and returns the bodies: {"ok", "shardings": [text], "meshes":
// [text]}.
#pragma once

#include <string>
#include <string_view>

namespace shardlab::api {

std::string parseShardingsJson(std::string_view request_json);
std::string printShardingsJson(std::string_view request_json);

} // namespace shardlab::api
