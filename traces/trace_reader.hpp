// Trace formats. A TraceReader turns the rows of one file into JobSpecs, in file order,
// validating every field: the first bad row throws InputError naming file, line and
// column. Formats are looked up by name (`workload.trace.format`).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/job.hpp"

namespace schedsim {

class TraceReader {
 public:
  virtual ~TraceReader() = default;
  // The next job in file order; false at the end of the file.
  virtual bool next(JobSpec& out) = 0;
};

struct TraceFormatInfo {
  std::string name;
  std::string description;
};

// The formats `open_trace_reader` accepts, with one-line descriptions.
std::vector<TraceFormatInfo> trace_formats();

// Throws InputError for an unknown format (listing the known ones), a missing file or a
// header that lacks a required column.
std::unique_ptr<TraceReader> open_trace_reader(const std::string& path, const std::string& format);

// Guesses the format from the header line ("auto" in the CLI); throws when unsure.
std::string detect_trace_format(const std::string& path);

// Writes jobs in schedsim's own CSV format (header included), e.g. for `trace convert`.
void write_schedsim_trace_header(std::ostream& out, bool with_estimates);
void write_schedsim_trace_row(std::ostream& out, const JobSpec& job, bool with_estimates);

}  // namespace schedsim
