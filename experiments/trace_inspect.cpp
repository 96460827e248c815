#include "experiments/trace_inspect.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "sim/metrics.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_source.hpp"

namespace schedsim {

TraceInspection inspect_trace(const std::string& path, const std::string& format) {
  TraceInspection t;
  t.path = path;
  t.format = format == "auto" ? detect_trace_format(path) : format;
  TraceJobSource source(path, t.format, t.warnings);
  std::vector<double> durations;
  JobSpec job;
  double sum = 0;
  while (source.next(job)) {
    if (t.jobs == 0) t.first_submit_s = job.submit.seconds();
    t.last_submit_s = job.submit.seconds();
    ++t.jobs;
    if (job.has_estimate()) ++t.jobs_with_estimate;
    ++t.gpu_histogram[job.num_gpus];
    t.gpu_hours += job.num_gpus * job.duration_s / 3600.0;
    durations.push_back(job.duration_s);
    sum += job.duration_s;
  }
  t.mean_duration_s = sum / static_cast<double>(t.jobs);
  std::sort(durations.begin(), durations.end());
  for (double q : {0.0, 10.0, 50.0, 90.0, 99.0, 100.0}) t.duration_percentiles.emplace_back(q, percentile_sorted(durations, q));
  return t;
}

std::string inspection_text(const TraceInspection& t) {
  std::ostringstream out;
  char buf[256];
  out << t.path << " (format " << t.format << ")\n";
  out << "  jobs                " << t.jobs << (t.jobs_with_estimate ? " (" + std::to_string(t.jobs_with_estimate) + " with runtime estimates)" : "") << '\n';
  std::snprintf(buf, sizeof buf, "  submit times        %.0f s .. %.0f s (span %.2f days)\n", t.first_submit_s, t.last_submit_s,
                (t.last_submit_s - t.first_submit_s) / 86400.0);
  out << buf;
  std::snprintf(buf, sizeof buf, "  GPU demand          %.1f GPU-hours\n", t.gpu_hours);
  out << buf;
  out << "  GPUs per job        jobs      share\n";
  for (const auto& [gpus, n] : t.gpu_histogram) {
    std::snprintf(buf, sizeof buf, "    %6d          %7llu    %6.2f%%\n", gpus, static_cast<unsigned long long>(n), 100.0 * static_cast<double>(n) / static_cast<double>(t.jobs));
    out << buf;
  }
  std::snprintf(buf, sizeof buf, "  duration (s)        mean %.1f\n", t.mean_duration_s);
  out << buf;
  for (const auto& [q, v] : t.duration_percentiles) {
    const char* label = q == 0 ? "min" : q == 100 ? "max" : nullptr;
    if (label) std::snprintf(buf, sizeof buf, "    %-6s            %.1f\n", label, v);
    else std::snprintf(buf, sizeof buf, "    p%-5.0f            %.1f\n", q, v);
    out << buf;
  }
  for (const auto& w : t.warnings) out << "  warning: " << w << '\n';
  return out.str();
}

nlohmann::ordered_json inspection_json(const TraceInspection& t) {
  nlohmann::ordered_json j;
  j["path"] = t.path;
  j["format"] = t.format;
  j["jobs"] = t.jobs;
  j["jobs_with_estimate"] = t.jobs_with_estimate;
  j["first_submit_s"] = t.first_submit_s;
  j["last_submit_s"] = t.last_submit_s;
  j["gpu_hours"] = t.gpu_hours;
  auto hist = nlohmann::ordered_json::object();
  for (const auto& [gpus, n] : t.gpu_histogram) hist[std::to_string(gpus)] = n;
  j["gpu_histogram"] = hist;
  j["mean_duration_s"] = t.mean_duration_s;
  auto pct = nlohmann::ordered_json::object();
  for (const auto& [q, v] : t.duration_percentiles) {
    char key[16];
    std::snprintf(key, sizeof key, "p%.0f", q);
    pct[key] = v;
  }
  j["duration_percentiles_s"] = pct;
  j["warnings"] = t.warnings;
  return j;
}

}  // namespace schedsim
