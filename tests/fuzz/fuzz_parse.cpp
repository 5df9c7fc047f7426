// libFuzzer target: parse, verify and print arbitrary bytes. Any crash,
// leak, sanitizer report or hang is a bug: bad input must only produce
// diagnostics.
#include "shardlab/text/text.h"
#include "verify/verifier.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  shardlab::DiagnosticEngine diags;
  auto module = shardlab::parseModule(text, diags);
  if (module && shardlab::verifyModule(*module, diags)) {
    std::string printed = shardlab::printModule(*module);
    shardlab::DiagnosticEngine again;
    auto reparsed = shardlab::parseModule(printed, again);
    if (reparsed)
      (void)shardlab::printModule(*reparsed);
  }
  return 0;
}
