// The `workload` section of a scenario: a trace file or a synthetic generator, and what
// to do with jobs larger than the cluster.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/config_node.hpp"
#include "sim/job_source.hpp"
#include "sim/simulator.hpp"
#include "traces/synthetic.hpp"
#include "traces/trace_models.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_windows.hpp"

namespace schedsim {

struct TraceConfig {
  std::string path;           // as written in the config (for the resolved config)
  std::string resolved_path;  // usable from the working directory
  std::string format = "schedsim";
  // Reader options; `options.throughputs_path` and `options.job_table_path` are
  // resolved, `throughputs` and `job_table` as written.
  TraceOptions options;
  std::string throughputs;
  std::string job_table;  // pai-tasks: the pai_job_table to join; empty = none
  // `models:`: profiles for the trace's jobs (traces/trace_models.hpp). The scenario turns
  // it, with its catalogue and physics setting, into options.models.
  std::optional<TraceModelAssignment> models;
  // `windows:`: each run replays one window of the trace (traces/trace_windows.hpp);
  // `windows_where` names the key in messages. The trace is read once per scenario, on
  // the first run, into `window_cache` (shared by copies of this config).
  std::optional<TraceWindowConfig> windows;
  std::string windows_where;
  std::shared_ptr<TraceWindowCache> window_cache;
};

struct WorkloadConfig {
  std::optional<TraceConfig> trace;
  std::optional<SyntheticConfig> synthetic;
  OversizedMode oversized = OversizedMode::kError;

  // `resolve_profile` checks the profile names of trace.models (empty: kept as written).
  static WorkloadConfig parse(const ConfigNode& node, const TraceModelAssignment::NameResolver& resolve_profile = {});
  YAML::Node to_yaml() const;
  // Opens the trace (validating every row) or sets up the generator. Trace notes such as
  // "sorted an unsorted trace" go to `warnings`.
  // `poll_interrupt` (may be empty) is called now and then while a trace is read and may
  // throw to stop it (TraceOptions::poll_interrupt).
  std::unique_ptr<JobSource> make_source(std::uint64_t seed, std::vector<std::string>& warnings,
                                         const std::function<void(const std::string&)>& poll_interrupt = {}) const;

 private:
  // trace->windows: the run's window of the trace (read once into trace->window_cache).
  std::unique_ptr<JobSource> make_window_source(std::uint64_t seed, const TraceOptions& options, std::vector<std::string>& warnings) const;
};

}  // namespace schedsim
