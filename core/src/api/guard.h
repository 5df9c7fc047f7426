// Internal to the API: the last line of defence at the boundary. The core
// reports bad input as values; anything thrown anyway (allocation failure,
// a bug) becomes an error reply instead of crossing into JS or the CLI.
#pragma once

#include "json_options.h"

#include <exception>
#include <string>

namespace shardlab::api::detail {

/// Calls `body` (returning a reply string); converts exceptions to replies.
template <class Body> std::string guarded(Body &&body) noexcept {
  try {
    return body();
  } catch (const std::exception &e) {
    try {
      return errorReply(std::string("internal error: ") + e.what());
    } catch (...) {
    }
  } catch (...) {
  }
  return R"({"ok":false,"error":"internal error"})";
}

} // namespace shardlab::api::detail
