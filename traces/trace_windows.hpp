// Windows of a trace as episodes: `workload.trace.windows` cuts the trace's jobs (read
// once) into consecutive windows of a fixed number of jobs and assigns them, in
// chronological order, to a training, a validation and a test split. Each run (each RL
// episode) draws one window of its split from the run's seed, rebases its submit times to
// zero, optionally scales its arrival rate and shifts it in time. Training on the earliest
// windows and testing on the latest means no test job is ever seen in training.
// `more_traces` adds trace files (e.g. several clusters): each is cut and split by the
// same rule on its own, and a run draws among the split's windows of all files. A run may
// also replay only part of its window (`episode_jobs`, `start_jobs`), so no episode
// crosses from one split into another.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/config_node.hpp"
#include "sim/job_source.hpp"

namespace schedsim {

enum class WindowSplit : std::uint8_t { kTrain, kValidation, kTest };

const char* to_string(WindowSplit s);

struct TraceWindowConfig {
  // Jobs per window (required, >= 1). Windows do not overlap; the jobs after the last
  // whole window are not used.
  std::int64_t jobs = 0;
  // Shares of the windows, in trace order: the first `train` windows train, the next
  // `validation` validate (checkpoint selection), the rest test. Each in [0, 1], sum <= 1.
  double train_fraction = 0.6;       // key split.train, default 0.6
  double validation_fraction = 0.2;  // key split.validation, default 0.2 (test: the rest, 0.2)
  // Which split a run draws from (key `use`, default test: `schedsim run`/`compare` on
  // such a scenario evaluate on windows training never saw). `schedsim train` draws its
  // episodes from train and its evaluations from validation whatever this says.
  WindowSplit use = WindowSplit::kTest;
  // Arrival-rate factor drawn uniformly per run from [min, max] (key load_scale: a number
  // or [min, max], default 1): inter-arrival times are divided by it.
  double load_scale_min = 1.0;
  double load_scale_max = 1.0;
  // Offered load drawn uniformly per run from [min, max] (key offered_load: a number or
  // [min, max]; default none, 0 here): instead of a fixed factor, each run's arrivals are
  // scaled so that its jobs demand that share of the cluster while they arrive (GPU-seconds
  // at rate 1 / (cluster devices x arrival span), the comparison tables' "offered load").
  // Windows of a real trace differ in load by 10x and more; this makes every window a
  // queue of the intended depth. Excludes load_scale. Needs cluster_devices.
  double offered_load_min = 0.0;
  double offered_load_max = 0.0;
  // The cluster's device count, set by the scenario's workload check (the windows key
  // does not see the cluster); jobs larger than it are left out of the offered load
  // (workload.oversized: drop drops them).
  std::int64_t cluster_devices = 0;
  // Offset in seconds drawn uniformly per run from [0, max] and added to every rebased
  // submit time (key time_shift_s, default 0): lands windows at other hours of the
  // price/carbon signals.
  double time_shift_max_s = 0.0;
  // Jobs a run replays, drawn uniformly per run from [min, max] (key episode_jobs: a
  // number or [min, max], default: the whole window, `jobs`); max <= jobs.
  std::int64_t episode_jobs_min = 0;  // 0 = jobs
  std::int64_t episode_jobs_max = 0;
  // Offset of the run's first job in its window, in jobs, drawn uniformly per run from
  // [min, max] (key start_jobs, default 0); start max + episode_jobs max <= jobs.
  std::int64_t start_jobs_min = 0;
  std::int64_t start_jobs_max = 0;
  // More trace files read like `path` (same format and reader options), as written and
  // resolved (key more_traces, default none).
  std::vector<std::string> more_traces;
  std::vector<std::string> more_traces_resolved;

  static TraceWindowConfig parse(const ConfigNode& node);
  YAML::Node to_yaml() const;
};

// A trace's jobs cut into windows (immutable once built).
class TraceWindows {
 public:
  // `jobs` in submit order; `where` names the windows key in messages; `warnings` are the
  // reading pass's notes, repeated for every run. Throws InputError when a split with a
  // positive share gets no whole window.
  TraceWindows(std::vector<JobSpec> jobs, const TraceWindowConfig& config, std::string where, std::vector<std::string> warnings = {});
  // Several traces (`jobs_by_file[f]` in submit order, named `files[f]`), each cut into
  // windows and split on its own; a split's windows are those of every file, in file
  // order. Throws InputError when a split with a positive share gets no window in any file.
  TraceWindows(std::vector<std::vector<JobSpec>> jobs_by_file, std::vector<std::string> files, const TraceWindowConfig& config, std::string where,
               std::vector<std::string> warnings = {});
  const std::vector<std::string>& read_warnings() const { return warnings_; }
  // The file (its name as given) window `window` comes from.
  const std::string& file_of(int window) const { return files_[windows_[static_cast<std::size_t>(window)].file]; }
  int num_files() const { return static_cast<int>(files_.size()); }
  int total_windows() const { return static_cast<int>(windows_.size()); }

  int num_windows(WindowSplit split) const;
  // Index (over all windows, in trace order) of the window `seed` draws from `split`.
  int window_for(WindowSplit split, std::uint64_t seed) const;
  // The jobs of window `window` as a run sees them for `seed`: submit times rebased to
  // zero, divided by the drawn load scale, plus the drawn time shift; with episode_jobs /
  // start_jobs, only the drawn part of the window.
  std::vector<JobSpec> jobs_of(int window, std::uint64_t seed) const;
  // The arrival-rate factor that gives `jobs` (a run's part of a window, before rebasing)
  // the offered load drawn for `seed` from config().offered_load_{min,max}.
  double offered_load_scale(const std::vector<JobSpec>& jobs, std::uint64_t seed) const;
  const TraceWindowConfig& config() const { return config_; }
  std::size_t total_jobs() const;

 private:
  struct Window {
    std::size_t file = 0;
    std::size_t begin = 0;  // index of its first job in that file's jobs
  };
  void build(std::size_t total_jobs);
  std::vector<std::vector<JobSpec>> jobs_;  // by file
  std::vector<std::string> files_;
  std::vector<Window> windows_;             // train windows of every file, then validation, then test
  TraceWindowConfig config_;
  std::string where_;
  std::vector<std::string> warnings_;
  int train_ = 0, validation_ = 0, test_ = 0;  // windows per split, in that order
};

// What a run of a windowed trace pulls: one window's jobs.
class WindowJobSource : public JobSource {
 public:
  WindowJobSource(std::vector<JobSpec> jobs, std::string description) : jobs_(std::move(jobs)), description_(std::move(description)) {}
  bool next(JobSpec& out) override;
  std::string describe() const override { return description_; }
  std::uint64_t expected_jobs() const override { return jobs_.size(); }

 private:
  std::vector<JobSpec> jobs_;
  std::size_t next_ = 0;
  std::string description_;
};

// The windows of one configured trace, read the first time a run needs them and then
// shared by every run of the scenario (thread-safe: vector envs build episodes in
// parallel). Copies of a WorkloadConfig share it.
class TraceWindowCache {
 public:
  // `build` returns the windows (a std::unique_ptr<TraceWindows>); called once, or again
  // after it threw.
  template <class Build>
  const TraceWindows& get(Build&& build) const {
    std::call_once(once_, [&] { windows_ = build(); });
    return *windows_;
  }

 private:
  mutable std::once_flag once_;
  mutable std::unique_ptr<TraceWindows> windows_;
};

}  // namespace schedsim
