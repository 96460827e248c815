// Why an input file cannot be read, in words: a message that says "permission denied" or
// "is a directory" instead of a generic "(does it exist?)" or a std::filesystem error.
#pragma once

#include <string>

namespace schedsim {

// "" when `path` is a file this process can open for reading; otherwise the message for
// "PATH: <message>", naming the file as `kind` ("config file", "trace file"):
//   "cannot open the config file (does it exist?)"     missing (or a folder on the way)
//   "is a directory, not a config file"
//   "cannot open the config file: permission denied"
//   "cannot open the config file: <strerror>"           anything else
std::string file_open_problem(const std::string& path, const std::string& kind);

}  // namespace schedsim
