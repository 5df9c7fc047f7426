// Internal to the API: diagnostics as JSON, the one writer every reply
// uses. Each diagnostic is {"severity", "message", "line", "column",
// "range": {"start": {"line", "column"}, "end": {...}}, "related":
// [{"line", "column", "message"}]} (schemas/api/common.schema.json).
// `range` is the diagnostic's own range when it has one (a func argument),
// else the token at line:column of `source`, the text the diagnostics are
// about; line and column are 1-based, 0 when unknown.
#pragma once

#include "json_options.h"
#include "shardlab/ir/diagnostics.h"

#include <string>
#include <string_view>
#include <vector>

namespace shardlab::api::detail {

json diagnosticsJson(const std::vector<Diagnostic> &diagnostics,
                     std::string_view source);

/// {"ok": false, "error", "diagnostics"}.
json failureReply(const std::string &error,
                  const std::vector<Diagnostic> &diagnostics,
                  std::string_view source);

} // namespace shardlab::api::detail
