// libFuzzer target: arbitrary bytes through the whole path behind
// shardlab-schedule (parse, verify, propagation, export to collectives,
// costed program, schedule), then the printed result read back. Any crash,
// leak, sanitizer report or hang is a bug: bad input must only produce
// diagnostics. Seed it with real modules (tests/fuzz/README.md).
#include "shardlab/cost/hardware.h"
#include "shardlab/cost/sol_model.h"
#include "shardlab/schedule/pipeline.h"
#include "shardlab/text/text.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {

shardlab::schedule::PipelineOptions h100Options() {
  shardlab::schedule::PipelineOptions o;
  o.program.hardware = *shardlab::cost::findHardwarePreset("h100");
  o.program.sol =
      shardlab::cost::solPlatformDefaults(o.program.hardware.device_name);
  return o;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const shardlab::schedule::PipelineOptions options = h100Options();
  std::string_view text(reinterpret_cast<const char *>(data), size);
  (void)shardlab::schedule::runSchedulePipeline(text, options);
  return 0;
}
