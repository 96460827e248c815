#include "traces/workload_config.hpp"

#include <algorithm>

#include "traces/trace_reader.hpp"
#include "traces/trace_source.hpp"

namespace schedsim {

WorkloadConfig WorkloadConfig::parse(const ConfigNode& node, const TraceModelAssignment::NameResolver& resolve_profile) {
  node.expect_map({"trace", "synthetic", "oversized"});
  WorkloadConfig w;
  if (node.has("trace") == node.has("synthetic")) {
    node.fail("give exactly one of 'trace' (a file) or 'synthetic' (a generated workload)");
  }
  if (auto t = node.maybe_child("trace")) {
    if (t->is_scalar()) {
      TraceConfig tc;
      tc.path = t->as_string();
      tc.resolved_path = t->as_path();
      w.trace = tc;
    } else {
      t->expect_map({"path", "format", "on_bad_row", "sort_memory_jobs", "throughputs", "reference_device", "mapping", "job_table", "models", "windows"});
      const ConfigNode path = t->child("path");
      TraceConfig tc;
      tc.path = path.as_string();
      tc.resolved_path = path.as_path();
      if (auto f = t->maybe_child("format")) {
        const std::vector<std::string> names = trace_format_names();
        tc.format = f->as_string();
        if (std::find(names.begin(), names.end(), tc.format) == names.end()) {
          std::string list;
          for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
          f->fail("unknown trace format '" + tc.format + "'; known formats: " + list);
        }
      }
      if (auto b = t->maybe_child("on_bad_row")) {
        tc.options.on_bad_row = b->as_choice({"error", "skip"}) == "skip" ? BadRowMode::kSkip : BadRowMode::kError;
      }
      if (auto s = t->maybe_child("sort_memory_jobs")) tc.options.sort_memory_jobs = static_cast<std::size_t>(s->as_positive_int());
      auto only_for = [&](const char* key, const char* format) {
        if (auto k = t->maybe_child(key); k && tc.format != format) {
          k->fail(std::string("applies only to format: ") + format + " (this trace has format: " + tc.format + ")");
        }
      };
      only_for("throughputs", "gavel");
      only_for("reference_device", "gavel");
      only_for("mapping", "csv");
      only_for("job_table", "pai-tasks");
      if (auto j = t->maybe_child("job_table")) {
        tc.job_table = j->as_string();
        tc.options.job_table_path = j->as_path();
      }
      if (tc.format == "gavel") {
        if (!t->has("throughputs")) t->fail("format gavel needs 'throughputs': the path of Gavel's simulation_throughputs.json");
        const ConfigNode m = t->child("throughputs");
        tc.throughputs = m.as_string();
        tc.options.throughputs_path = m.as_path();
        if (auto d = t->maybe_child("reference_device")) tc.options.reference_device = d->as_string();
      }
      if (tc.format == "csv") {
        if (!t->has("mapping")) t->fail("format csv needs 'mapping': a map {columns: {job_id: ..., submit_time: ..., duration: ..., num_gpus: ...}} or the path of a YAML file holding one");
        const ConfigNode m = t->child("mapping");
        if (m.is_scalar()) {
          tc.options.mapping = CsvMapping::load_file(m.as_path());
        } else {
          tc.options.mapping = CsvMapping::parse(m);
        }
      }
      if (auto m = t->maybe_child("models")) tc.models = TraceModelAssignment::parse(*m, resolve_profile);
      if (auto win = t->maybe_child("windows")) {
        tc.windows = TraceWindowConfig::parse(*win);
        tc.windows_where = win->where();
        tc.window_cache = std::make_shared<TraceWindowCache>();
      }
      w.trace = tc;
    }
  }
  if (auto s = node.maybe_child("synthetic")) w.synthetic = SyntheticConfig::parse(*s);
  if (auto o = node.maybe_child("oversized")) {
    w.oversized = o->as_choice({"error", "drop"}) == "drop" ? OversizedMode::kDrop : OversizedMode::kError;
  }
  return w;
}

YAML::Node WorkloadConfig::to_yaml() const {
  YAML::Node n(YAML::NodeType::Map);
  if (trace) {
    YAML::Node t(YAML::NodeType::Map);
    t["path"] = trace->path;
    t["format"] = trace->format;
    t["on_bad_row"] = trace->options.on_bad_row == BadRowMode::kSkip ? "skip" : "error";
    t["sort_memory_jobs"] = static_cast<std::uint64_t>(trace->options.sort_memory_jobs);
    if (trace->format == "gavel") {
      t["throughputs"] = trace->throughputs;
      t["reference_device"] = trace->options.reference_device;
    }
    if (trace->options.mapping) t["mapping"] = trace->options.mapping->to_yaml();
    if (!trace->job_table.empty()) t["job_table"] = trace->job_table;
    if (trace->models) t["models"] = trace->models->to_yaml();
    if (trace->windows) t["windows"] = trace->windows->to_yaml();
    n["trace"] = t;
  }
  if (synthetic) n["synthetic"] = synthetic->to_yaml();
  n["oversized"] = oversized == OversizedMode::kDrop ? "drop" : "error";
  return n;
}

std::unique_ptr<JobSource> WorkloadConfig::make_source(std::uint64_t seed, std::vector<std::string>& warnings,
                                                      const std::function<void(const std::string&)>& poll_interrupt) const {
  if (trace) {
    TraceOptions options = trace->options;
    if (poll_interrupt) options.poll_interrupt = poll_interrupt;
    options.model_seed = seed;  // the run's seed draws the trace.models shares
    if (trace->windows) return make_window_source(seed, options, warnings);
    return std::make_unique<TraceJobSource>(trace->resolved_path, trace->format, options, warnings);
  }
  return std::make_unique<SyntheticJobSource>(*synthetic, seed);
}

std::unique_ptr<JobSource> WorkloadConfig::make_window_source(std::uint64_t seed, const TraceOptions& options, std::vector<std::string>& warnings) const {
  const TraceWindows& windows = trace->window_cache->get([&] {
    // Read once, without the models (they are drawn per run, from each run's seed).
    TraceOptions read_options = options;
    read_options.models = nullptr;
    std::vector<std::string> read_warnings;
    auto read = [&](const std::string& path) {
      TraceJobSource source(path, trace->format, read_options, read_warnings);
      std::vector<JobSpec> jobs;
      jobs.reserve(static_cast<std::size_t>(source.expected_jobs()));
      JobSpec j;
      while (source.next(j)) jobs.push_back(j);
      return jobs;
    };
    if (trace->windows->more_traces.empty()) {
      return std::make_unique<TraceWindows>(read(trace->resolved_path), *trace->windows, trace->windows_where, std::move(read_warnings));
    }
    // windows.more_traces: every file read like `path`, cut and split on its own.
    std::vector<std::vector<JobSpec>> jobs_by_file{read(trace->resolved_path)};
    std::vector<std::string> files{trace->path};
    for (std::size_t f = 0; f < trace->windows->more_traces.size(); ++f) {
      jobs_by_file.push_back(read(trace->windows->more_traces_resolved[f]));
      files.push_back(trace->windows->more_traces[f]);
    }
    return std::make_unique<TraceWindows>(std::move(jobs_by_file), std::move(files), *trace->windows, trace->windows_where, std::move(read_warnings));
  });
  warnings.insert(warnings.end(), windows.read_warnings().begin(), windows.read_warnings().end());
  const WindowSplit split = trace->windows->use;
  const int window = windows.window_for(split, seed);
  std::vector<JobSpec> jobs = windows.jobs_of(window, seed);
  if (options.models) {
    TraceModels::Tally tally;
    for (JobSpec& job : jobs) tally.add(options.models->apply(job, seed, trace->path));
    if (auto w = options.models->warning(tally, trace->path)) warnings.push_back(*w);
  }
  const std::string file = windows.num_files() > 1 ? windows.file_of(window) : trace->path;
  return std::make_unique<WindowJobSource>(std::move(jobs), file + " (" + to_string(split) + " window " + std::to_string(window) + " of " +
                                                                std::to_string(windows.num_windows(WindowSplit::kTrain) + windows.num_windows(WindowSplit::kValidation) +
                                                                               windows.num_windows(WindowSplit::kTest)) +
                                                                ")");
}

}  // namespace schedsim
