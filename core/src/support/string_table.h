// StringTable: an open-addressing hash table keyed by views of text that
// outlives it (a module's source, interned or static names). The parser's
// SSA names and type spellings and the op registry look strings up once or
// more per op; with stored hashes a probe compares characters only on a
// hash match, and no entry is a heap node.
#pragma once

#include "shardlab/support/string_hash.h"

#include <tsl/robin_map.h>

#include <functional>
#include <memory>
#include <string_view>
#include <utility>

namespace shardlab {

template <typename T>
using StringTable =
    tsl::robin_map<std::string_view, T, StringHash, StringEqual,
                   std::allocator<std::pair<std::string_view, T>>, true>;

} // namespace shardlab
