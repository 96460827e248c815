// Windows of a trace as episodes: `workload.trace.windows` cuts the trace's jobs (read
// once) into consecutive windows of a fixed number of jobs and assigns them, in
// chronological order, to a training, a validation and a test split. Each run (each RL
// episode) draws one window of its split from the run's seed, rebases its submit times to
// zero, optionally scales its arrival rate and shifts it in time. Training on the earliest
// windows and testing on the latest means no test job is ever seen in training.
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
  // Offset in seconds drawn uniformly per run from [0, max] and added to every rebased
  // submit time (key time_shift_s, default 0): lands windows at other hours of the
  // price/carbon signals.
  double time_shift_max_s = 0.0;

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
  const std::vector<std::string>& read_warnings() const { return warnings_; }

  int num_windows(WindowSplit split) const;
  // Index (over all windows, in trace order) of the window `seed` draws from `split`.
  int window_for(WindowSplit split, std::uint64_t seed) const;
  // The jobs of window `window` as a run sees them for `seed`: submit times rebased to
  // zero, divided by the drawn load scale, plus the drawn time shift.
  std::vector<JobSpec> jobs_of(int window, std::uint64_t seed) const;
  const TraceWindowConfig& config() const { return config_; }
  std::size_t total_jobs() const { return jobs_.size(); }

 private:
  std::vector<JobSpec> jobs_;
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
