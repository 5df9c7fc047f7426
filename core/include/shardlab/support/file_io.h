// Whole-file reads and atomic writes for the command-line tools and the
// table writer: every file shardlab writes goes through a temporary file
// beside it and a rename, so a reader never sees half a file.
#pragma once

#include "shardlab/support/result.h"

#include <string>
#include <string_view>

namespace shardlab {

/// Reads the whole file at `path` (bytes as they are); "-" reads stdin.
/// False when it cannot be opened or read.
bool readFile(const std::string &path, std::string &text);

/// Writes `text` to `path` through `path.tmp` and a rename. On failure
/// the error says what failed; the temporary file is removed and `path`
/// is left as it was.
Status writeFileAtomically(const std::string &path, std::string_view text);

} // namespace shardlab
