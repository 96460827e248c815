// `schedsim trace inspect`: what a trace holds, read through the same validating reader
// the simulator uses.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace schedsim {

struct TraceInspection {
  std::string path, format;
  std::uint64_t jobs = 0;
  std::uint64_t jobs_with_estimate = 0;
  double first_submit_s = 0, last_submit_s = 0;
  double gpu_hours = 0;  // sum of num_gpus x duration
  std::map<int, std::uint64_t> gpu_histogram;  // GPU count -> jobs
  double mean_duration_s = 0;
  std::vector<std::pair<double, double>> duration_percentiles;  // (q, seconds)
  std::vector<std::string> warnings;
};

// `format` may be "auto" (guessed from the header).
TraceInspection inspect_trace(const std::string& path, const std::string& format);
std::string inspection_text(const TraceInspection& t);
nlohmann::ordered_json inspection_json(const TraceInspection& t);

}  // namespace schedsim
