// Shared by the fuzz targets: the readers take file paths, so each input is written to a
// per-process temporary file first; only schedsim's own InputError may leave a reader
// (any other exception is a bug: its message would not name the file, line and field).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.hpp"

namespace schedsim::fuzz {

// A file under the temp folder named after this process, so parallel fuzz jobs
// (-jobs=N) do not share it.
inline std::string scratch_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("schedsim-fuzz-" + std::to_string(::getpid()) + "-" + name)).string();
}

// Removes the scratch file when the process exits normally.
struct ScratchFile {
  std::string path;
  ~ScratchFile() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove(path, ec);
  }
};

inline const std::string& write_input(const std::string& name, const std::uint8_t* data, std::size_t size) {
  static ScratchFile scratch;
  std::string& path = scratch.path;
  path = scratch_path(name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}

// Runs `body`; an InputError is the expected outcome for bad input, anything else aborts
// (which libFuzzer reports as a crash and saves the input).
template <class Body>
void expect_input_errors_only(Body&& body) {
  try {
    body();
  } catch (const InputError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: unexpected exception (not an InputError): %s\n", e.what());
    std::abort();
  }
}

}  // namespace schedsim::fuzz
