// Which parts of a pipeline's output changed against its (printed) input,
// for the playground to highlight: the lines of the two texts are aligned
// on each line's "skeleton" (the op without its attribute dictionary and
// its trailing type), then each aligned pair that differs is changed from
// their common prefix to their common suffix; an output line aligned with
// none (an op the pipeline inserted, a collective) is changed whole.
//
//   input:  %0 = stablehlo.add %arg0, %arg0 : tensor<8xf32>
//   output: %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = ...} :
//   tensor<8xf32>
//           skeletons equal -> aligned; changed from the '{' to the
//           end of the sharding (columns in UTF-16 units, as an editor
//           counts them)
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace shardlab::api {

struct LineChange {
  uint32_t line = 0; ///< 1-based output line
  uint32_t from = 0; ///< 0-based UTF-16 column where the change starts
  uint32_t to = 0;   ///< ... and ends (exclusive)
  bool inserted = false;
};

/// The changed spans of `output` against `input`, by line.
std::vector<LineChange> changedSpans(std::string_view input,
                                     std::string_view output);

} // namespace shardlab::api
