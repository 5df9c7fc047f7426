// writtenArgumentName: a function argument's name as the text wrote it,
// read back at the position the parser recorded (see text.h).
#include "shardlab/text/text.h"

#include <cctype>

namespace shardlab {

std::string writtenArgumentName(const Module &module, const Operation &func,
                                std::string_view text, size_t index) {
  const Attr *sym = func.attrs.get("sym_name");
  auto ranges = sym ? module.signature_ranges.find(sym->str())
                    : module.signature_ranges.end();
  std::string fallback = "%arg" + std::to_string(index);
  if (ranges == module.signature_ranges.end() ||
      index >= ranges->second.args.size())
    return fallback;
  const Location &at = ranges->second.args[index].start;
  size_t pos = 0;
  for (uint32_t line = 1; line < at.line && pos != std::string_view::npos;
       ++line)
    if ((pos = text.find('\n', pos)) != std::string_view::npos)
      ++pos;
  if (pos == std::string_view::npos || at.col == 0)
    return fallback;
  pos += at.col - 1;
  if (pos >= text.size() || text[pos] != '%')
    return fallback;
  size_t end = pos + 1;
  while (end < text.size() &&
         (std::isalnum(static_cast<unsigned char>(text[end])) ||
          text[end] == '_' || text[end] == '.' || text[end] == '$' ||
          text[end] == '-'))
    ++end;
  return end > pos + 1 ? std::string(text.substr(pos, end - pos)) : fallback;
}

} // namespace shardlab
