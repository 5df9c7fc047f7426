// Whole-file reads and atomic writes (see file_io.h).
#include "shardlab/support/file_io.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace shardlab {

bool readFile(const std::string &path, std::string &text) {
  std::ostringstream buffer;
  if (path == "-") {
    buffer << std::cin.rdbuf();
  } else {
    std::ifstream file(path, std::ios::binary);
    if (!file)
      return false;
    buffer << file.rdbuf();
    if (file.bad())
      return false;
  }
  text = buffer.str();
  return true;
}

Status writeFileAtomically(const std::string &path, std::string_view text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      return makeError(tmp + ": cannot create the temporary file");
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return makeError(tmp + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return makeError(path + ": cannot rename the temporary file into place");
  }
  return success();
}

} // namespace shardlab
