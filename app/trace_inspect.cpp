#include "app/trace_inspect.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "sim/metrics.hpp"
#include "base/rng.hpp"
#include "base/text_checks.hpp"
#include "traces/trace_reader.hpp"
#include "traces/temp_files.hpp"
#include "traces/trace_source.hpp"

namespace schedsim {

TraceInspection inspect_trace(const std::string& path, const std::string& format, const TraceOptions& options) {
  TraceInspection t;
  t.path = path;
  TraceJobSource source(path, format, options, t.warnings);  // detects "auto" itself: a pipe can be read only once
  t.format = source.format();
  t.rows_skipped = source.rows_skipped();
  std::vector<double> durations;
  JobSpec job;
  double sum = 0;
  while (source.next(job)) {
    if (t.jobs == 0) t.first_submit_s = job.submit.seconds();
    t.last_submit_s = job.submit.seconds();
    ++t.jobs;
    if (job.has_estimate()) ++t.jobs_with_estimate;
    if (job.gpu_milli < 1000) ++t.jobs_fractional_gpu;
    ++t.gpu_histogram[job.num_gpus];
    ++t.statuses[to_string(job.recorded_status)];
    t.gpu_hours += job.num_gpus * (job.gpu_milli / 1000.0) * job.duration_s / 3600.0;
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
  // The path, statuses and warnings are user text (a job id in a warning): escaped, so
  // they cannot rewrite the terminal; the JSON form escapes them as JSON does.
  out << terminal_safe(t.path) << " (format " << terminal_safe(t.format) << ")\n";
  out << "  jobs                " << t.jobs << (t.jobs_with_estimate ? " (" + std::to_string(t.jobs_with_estimate) + " with runtime estimates)" : "") << '\n';
  if (t.jobs_fractional_gpu) out << "  fractional GPU      " << t.jobs_fractional_gpu << " jobs ask for part of a GPU\n";
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
  out << "  recorded status\n";
  for (const auto& [status, n] : t.statuses) {
    std::snprintf(buf, sizeof buf, "    %-12s    %7llu    %6.2f%%\n", terminal_safe(status).c_str(), static_cast<unsigned long long>(n), 100.0 * static_cast<double>(n) / static_cast<double>(t.jobs));
    out << buf;
  }
  if (t.rows_skipped.empty()) {
    out << "  rows skipped        none\n";
  } else {
    out << "  rows skipped\n";
    for (const auto& [reason, n] : t.rows_skipped) {
      std::snprintf(buf, sizeof buf, "    %-18s  %7llu\n", reason.c_str(), static_cast<unsigned long long>(n));
      out << buf;
    }
  }
  for (const auto& w : t.warnings) out << "  warning: " << terminal_safe(w) << '\n';
  return out.str();
}

nlohmann::ordered_json inspection_json(const TraceInspection& t) {
  nlohmann::ordered_json j;
  j["path"] = t.path;
  j["format"] = t.format;
  j["jobs"] = t.jobs;
  j["jobs_with_estimate"] = t.jobs_with_estimate;
  j["jobs_fractional_gpu"] = t.jobs_fractional_gpu;
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
  auto statuses = nlohmann::ordered_json::object();
  for (const auto& [s, n] : t.statuses) statuses[s] = n;
  j["statuses"] = statuses;
  auto skipped = nlohmann::ordered_json::object();
  for (const auto& [r, n] : t.rows_skipped) skipped[r] = n;
  j["rows_skipped"] = skipped;
  j["warnings"] = t.warnings;
  return j;
}

std::uint64_t convert_trace(const std::string& path, const std::string& format, const TraceOptions& options, std::ostream& out) {
  std::vector<std::string> warnings;
  TraceJobSource source(path, format, options, warnings);
  for (const auto& w : warnings) std::fprintf(stderr, "schedsim: warning: %s\n", terminal_safe(w).c_str());
  const SchedsimColumns columns{true, true, true};
  write_schedsim_trace_header(out, columns);
  JobSpec job;
  std::uint64_t n = 0;
  while (source.next(job)) {
    write_schedsim_trace_row(out, job, columns);
    ++n;
  }
  return n;
}

void check_sample_options(const SampleOptions& o) {
  if (o.from_s && !(*o.from_s >= 0 && *o.from_s <= 1e12)) throw InputError("--from", "must be a number of seconds from 0 to 10^12");
  if (o.to_s && !(*o.to_s >= 0 && *o.to_s <= 1e12)) throw InputError("--to", "must be a number of seconds from 0 to 10^12");
  if (o.from_s && o.to_s && !(*o.to_s > *o.from_s)) throw InputError("--to", "must be later than --from");
  if (!(o.fraction > 0 && o.fraction <= 1)) throw InputError("--fraction", "must be in (0, 1], e.g. 0.1 keeps about one job in ten");
  if (!(o.load_scale > 0 && o.load_scale <= 1e6)) throw InputError("--load-scale", "must be a number > 0 (2 halves the gaps between submissions, doubling the load)");
  if (o.shift_to_s && !(*o.shift_to_s >= 0 && *o.shift_to_s <= 1e12)) throw InputError("--shift-to", "must be a number of seconds from 0 to 10^12");
}

std::uint64_t sample_trace(const std::string& path, const std::string& format, const TraceOptions& options, const SampleOptions& s,
                           std::ostream& out) {
  check_sample_options(s);
  std::vector<std::string> warnings;
  TraceJobSource source(path, format, options, warnings);
  for (const auto& w : warnings) std::fprintf(stderr, "schedsim: warning: %s\n", terminal_safe(w).c_str());
  Rng rng(s.seed, "trace.sample");
  const SchedsimColumns columns{true, true, true};
  write_schedsim_trace_header(out, columns);
  JobSpec job;
  std::uint64_t kept = 0;
  double origin_s = 0;
  while (source.next(job)) {
    const double t = job.submit.seconds();
    if (s.from_s && t < *s.from_s) continue;
    if (s.to_s && t >= *s.to_s) break;  // submit times are sorted
    // One draw per job in the window, so a job's fate does not depend on --fraction's
    // value for the others: a smaller fraction keeps a subset of a larger one.
    if (rng.uniform() >= s.fraction) continue;
    if (kept == 0) origin_s = t;
    const double start_s = s.shift_to_s ? *s.shift_to_s : origin_s;
    const double new_t = start_s + (t - origin_s) / s.load_scale;
    const double slack_s = job.deadline_s - t;
    job.submit = Tick::from_seconds(new_t);
    if (!std::isnan(job.deadline_s)) job.deadline_s = job.submit.seconds() + slack_s;
    write_schedsim_trace_row(out, job, columns);
    ++kept;
  }
  if (kept == 0) throw InputError(path, "the sample is empty: no job is in the window (check --from/--to against the trace's submit times)");
  return kept;
}

void write_streamed_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const std::string tmp = path + ".partial-" + std::to_string(::getpid());
  {  // what a killed earlier command left under this name goes first
    const std::filesystem::path p(path);
    const std::string prefix = p.filename().string() + ".partial-";
    remove_files_of_dead_processes(p.has_parent_path() ? p.parent_path().string() : ".", [&](const std::string& name) {
      const auto pid = pid_after_prefix(name, prefix);
      return pid && name.find('-', prefix.size()) == std::string::npos ? pid : std::nullopt;
    });
  }
  struct Cleanup {
    std::string p;
    bool keep = false;
    ~Cleanup() {
      if (keep) return;
      std::error_code ec;
      std::filesystem::remove(p, ec);
    }
  } cleanup{tmp};
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, "cannot write the file (is the folder writable?)");
    write(out);
    out.flush();
    if (!out) throw InputError(path, "write failed (disk full?)");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw InputError(path, "cannot rename the finished file into place: " + ec.message());
  cleanup.keep = true;
}

}  // namespace schedsim
