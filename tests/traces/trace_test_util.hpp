// Helpers for the trace tests: read a whole file through a format's reader, write gzip.
#pragma once

#include <zlib.h>

#include <string>
#include <vector>

#include "traces/trace_reader.hpp"

namespace schedsim::test {

struct ReadResult {
  std::vector<JobSpec> jobs;
  RowSkips skipped;
};

inline ReadResult read_trace(const std::string& path, const std::string& format, TraceOptions options = {}) {
  auto reader = open_trace_reader(path, format, options);
  ReadResult r;
  JobSpec j;
  while (reader->next(j)) r.jobs.push_back(j);
  r.skipped = reader->skipped();
  return r;
}

// The message of the InputError that reading throws ("no error" when none), with the
// folder part of the path dropped.
inline std::string read_trace_error(const std::string& path, const std::string& format, TraceOptions options = {}) {
  try {
    read_trace(path, format, options);
  } catch (const std::exception& e) {
    const std::string msg = e.what();
    const auto slash = msg.rfind('/', msg.find(':'));
    return slash == std::string::npos ? msg : msg.substr(slash + 1);
  }
  return "no error";
}

inline void write_gzip(const std::string& path, const std::string& content) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, content.data(), static_cast<unsigned>(content.size()));
  gzclose(f);
}

}  // namespace schedsim::test
