// Whole-file reads and atomic writes (see file_io.h).
#include "shardlab/support/file_io.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace shardlab {

namespace {

// All of `in`, through a stream buffer: for input whose size is unknown.
void readStream(std::istream &in, std::string &text) {
  std::ostringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
}

} // namespace

bool readFile(const std::string &path, std::string &text) {
  if (path == "-") {
    readStream(std::cin, text);
    return true;
  }
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return false;
  // A regular file is read at its size in one go: through a stringstream a
  // 1 MB module was copied three times as the buffer grew. (Not opened at
  // the end: that fails outright on a pipe, e.g. a shell's <(...).)
  file.seekg(0, std::ios::end);
  const std::streamoff size = file ? std::streamoff(file.tellg()) : -1;
  if (size <= 0) { // a pipe, or a file that reports no size (/proc)
    file.clear();
    file.seekg(0);
    file.clear(); // a pipe cannot seek; it is still at its start
    readStream(file, text);
    return !file.bad();
  }
  text.resize(static_cast<size_t>(size));
  file.seekg(0);
  file.read(text.data(), size);
  text.resize(static_cast<size_t>(file.gcount()));
  return !file.bad();
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
