// `schedsim trace inspect | convert | sample`: what a trace holds, the trace rewritten in
// schedsim's format, and a transformed sample of it. All read through the same
// validating reader (TraceJobSource) the simulator uses.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/trace_reader.hpp"

namespace schedsim {

struct TraceInspection {
  std::string path, format;
  std::uint64_t jobs = 0;
  std::uint64_t jobs_with_estimate = 0;
  std::uint64_t jobs_fractional_gpu = 0;  // gpu_milli < 1000
  double first_submit_s = 0, last_submit_s = 0;
  double gpu_hours = 0;  // sum of num_gpus x gpu_milli/1000 x duration
  std::map<int, std::uint64_t> gpu_histogram;  // GPU count -> jobs
  double mean_duration_s = 0;
  std::vector<std::pair<double, double>> duration_percentiles;  // (q, seconds)
  std::map<std::string, std::uint64_t> statuses;       // recorded status -> jobs
  std::map<std::string, std::uint64_t> rows_skipped;   // reason -> rows
  std::vector<std::string> warnings;
};

// `format` may be "auto" (guessed from the first line).
TraceInspection inspect_trace(const std::string& path, const std::string& format, const TraceOptions& options = {});
std::string inspection_text(const TraceInspection& t);
nlohmann::ordered_json inspection_json(const TraceInspection& t);

// Writes every job of the trace, sorted by submit time, in schedsim's CSV format with
// all optional columns. Returns the number of jobs written.
std::uint64_t convert_trace(const std::string& path, const std::string& format, const TraceOptions& options, std::ostream& out);

struct SampleOptions {
  std::optional<double> from_s, to_s;  // keep submit times in [from_s, to_s)
  double fraction = 1.0;               // keep each job with this probability (0, 1]
  std::uint64_t seed = 1;
  double load_scale = 1.0;             // > 1 divides the gaps between submissions by this
  std::optional<double> shift_to_s;    // the first kept job is submitted at this time
};

// Validates `o`; throws InputError naming the option.
void check_sample_options(const SampleOptions& o);
// Window, then subsample, then compress inter-arrival times, then shift; writes the kept
// jobs in schedsim's format and returns how many.
std::uint64_t sample_trace(const std::string& path, const std::string& format, const TraceOptions& options, const SampleOptions& s,
                           std::ostream& out);

// Writes a file under a temporary name and renames it into place when `write` returns,
// so a failed command leaves no partial file. The content streams: memory does not grow
// with its size.
void write_streamed_file(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace schedsim
