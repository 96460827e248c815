// Run metrics, collected by an observer. Definitions (also in docs/metrics.md):
//   JCT            end - submit of a completed job
//   queue delay    time in the queue: JCT - time holding devices (for non-preemptive
//                  policies, first start - submit)
//   makespan       last completion - first submission
//   utilization    allocated device-seconds / (devices x makespan); a job's device time
//                  counts every device it held, checkpoint saves and restores included
//   bounded slowdown  max(1, JCT / max(run time, tau)), tau = 10 s (Feitelson), run time
//                  = time holding devices
//   percentiles    linear interpolation between order statistics (numpy's default)
//   JCT, queue delay and slowdown cover completed jobs only; jobs that end failed or
//   killed (trace-recorded outcomes) are counted apart but their device-time counts.
//   goodput        useful / allocated device-time; useful = allocated - preemption
//                  overhead - periodic checkpoints - restarts - lost (rolled-back)
//                  compute - the device-time of jobs that ended failed or killed
//   time averages  of the step functions allocated device-milli, queue length (pending
//                  jobs) and jobs in the system (arrived - ended), integrated exactly in
//                  integer units x microseconds: over the whole run [first submit, last
//                  end] and over the measurement window (MeasurementWindowConfig)
//   bound idle     device-time held bound by waiting jobs (non-gang placement), not in
//                  utilization; reported only for policies that may bind
//   offered load   (sum over admitted jobs of GPUs x share x duration_s at rate 1) /
//                  (devices x (last submit - first submit))
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "sim/observer.hpp"
#include "sim/output_fields.hpp"

namespace YAML {
class Node;
}

namespace schedsim {

class ConfigNode;

// The scenario's `metrics.window`: where the measurement window opens and closes
// (docs/metrics.md#measurement-window). It opens at the arrival of the first admitted
// job after the warm-up and closes at the last arrival (the drain excluded) or at the
// last completion.
struct MeasurementWindowConfig {
  enum class End : std::uint8_t { kLastArrival, kLastCompletion };
  // Admitted jobs that arrive before the window opens; unset = warmup_fraction of the
  // workload's job count.
  std::optional<std::uint64_t> warmup_jobs;
  double warmup_fraction = 0.1;
  End end = End::kLastArrival;

  // Parses the scenario's `metrics:` map (keys: window); throws InputError.
  static MeasurementWindowConfig parse(const ConfigNode& metrics);
  // The resolved `metrics:` map.
  YAML::Node to_yaml() const;
  // Jobs before the window for a workload of `expected_jobs` (0 = unknown: no warm-up
  // with a fraction, since the fraction has nothing to apply to).
  std::uint64_t warmup_job_count(std::uint64_t expected_jobs) const;
};

// Time averages over the measurement window; null (empty) when the window never opened
// or has no length.
struct WindowSummary {
  std::uint64_t warmup_jobs = 0;  // admitted jobs that arrived before it opened
  std::optional<double> start_s, end_s;
  std::uint64_t jobs_arrived = 0;  // admitted jobs that arrived after the one that opened it
  std::optional<double> gpu_utilization, mean_queue_length, mean_jobs_in_system;
};

struct Summary {
  std::uint64_t jobs_arrived = 0;
  std::uint64_t jobs_completed = 0;
  std::uint64_t jobs_failed = 0;   // ended failed as their trace recorded
  std::uint64_t jobs_killed = 0;   // ended killed or cancelled as their trace recorded
  std::uint64_t jobs_dropped_oversized = 0;
  // Empty when no job completed (written as null in JSON).
  std::optional<double> mean_jct_s, median_jct_s, p95_jct_s, p99_jct_s;
  std::optional<double> mean_queue_delay_s, p95_queue_delay_s;
  std::optional<double> mean_bounded_slowdown;
  double makespan_s = 0.0;
  std::optional<double> gpu_utilization;
  double allocated_gpu_hours = 0.0;
  // Preemption and migration: counts, and the device-time spent saving and restoring
  // checkpoints (included in allocated_gpu_hours).
  std::uint64_t preemptions = 0;
  std::uint64_t moves = 0;
  double checkpoint_overhead_gpu_hours = 0.0;
  // Failures model: restarts by cause, device-time of periodic checkpoints, of restarts
  // (including waiting for a repair on held devices) and of compute thrown away by
  // rollbacks; goodput (null when nothing was allocated).
  std::uint64_t restarts_loss_spike = 0;
  std::uint64_t restarts_device_failure = 0;
  double checkpoint_gpu_hours = 0.0;
  double restart_gpu_hours = 0.0;
  double lost_gpu_hours = 0.0;
  std::optional<double> goodput;
  // Non-gang placement (MetricsCollector::meter_bound_idle; unset otherwise): device-time
  // held bound by jobs that could not run yet, and its share of devices x makespan (null
  // like gpu_utilization). Not part of allocated_gpu_hours or gpu_utilization.
  std::optional<double> bound_idle_gpu_hours, bound_idle_fraction;
  // Time averages over [first submit, last end] (null like gpu_utilization), the
  // realised offered load (null with fewer than two distinct submit times) and the
  // measurement window.
  std::optional<double> mean_queue_length, mean_jobs_in_system;
  std::optional<double> offered_load;
  WindowSummary window;
};

// The fields of a run's summary and of its measurement window, in results.json order
// (results.json "summary" and "summary.window"; comparison.csv takes its columns from the
// same tables). A summary metric is one line here (and its docs/metrics.md entry).
const std::vector<ValueField<Summary>>& summary_fields();
const std::vector<ValueField<WindowSummary>>& window_fields();

// Linear-interpolation percentile (q in [0, 100]) of `sorted`, which must be sorted and
// non-empty.
double percentile_sorted(const std::vector<double>& sorted, double q);

// The completed jobs' JCT and queue-delay samples, held by someone other than the
// collector (MetricsCollector::take_samples_from): Python's simulate() keeps every job's
// times anyway, so the collector need not keep 16 bytes a job more. Each call replaces
// `out` with one value per completed job, in completion order, computed exactly as
// MetricsCollector::on_job_end computes it.
class CompletedJobSamples {
 public:
  virtual ~CompletedJobSamples() = default;
  virtual void jct_s(std::vector<double>& out) const = 0;          // (end - submit).seconds()
  virtual void queue_delay_s(std::vector<double>& out) const = 0;  // that - Tick::from_us(held_us).seconds()
};

class MetricsCollector : public Observer {
 public:
  static constexpr double kSlowdownTau_s = 10.0;

  // `expected_jobs`: the workload's job count when known (JobSource::expected_jobs), for
  // a warm-up given as a fraction.
  explicit MetricsCollector(int num_devices, const MeasurementWindowConfig& window = {}, std::uint64_t expected_jobs = 0)
      : num_devices_(num_devices), window_config_(window), warmup_jobs_(window.warmup_job_count(expected_jobs)) {}

  // The policy may bind devices to waiting jobs: summarize() reports bound-idle time.
  void meter_bound_idle() { meter_bound_idle_ = true; }
  // summarize() takes the JCT and queue-delay samples from `samples` (which must see the
  // same job ends, e.g. another observer of the same run) instead of keeping its own;
  // the summary is the same bits. Not with snapshots: the samples are not the collector's
  // to save (snapshot() then throws std::logic_error).
  void take_samples_from(const CompletedJobSamples& samples) { samples_ = &samples; }

  void on_job_arrival(const JobState& job) override;
  void on_job_end(const JobState& job) override;
  void on_job_dropped(const JobSpec& job, const std::string& reason) override;
  // Integrates the step functions up to now, then takes the new levels.
  void after_event(const Simulator& sim) override;

  // Sorts the stored samples; call once at the end of the run.
  Summary summarize();
  // Every completed job's JCT, sorted (after summarize()).
  const std::vector<double>& sorted_jct_s() const { return jct_s_; }
  // The same, moved out (8 bytes a job not copied) when the collector is done with.
  std::vector<double> release_sorted_jct_s() { return std::move(jct_s_); }

  // Saves or restores the state (sim/snapshot_archive.hpp).
  void snapshot(SnapshotArchive& ar) override;

 private:
  int num_devices_;
  std::uint64_t arrived_ = 0;
  std::uint64_t dropped_oversized_ = 0;
  bool any_arrival_ = false;
  Tick first_submit_;
  Tick last_end_;
  std::vector<double> jct_s_;
  std::vector<double> queue_delay_s_;
  const CompletedJobSamples* samples_ = nullptr;  // when set, jct_s_ and queue_delay_s_ stay empty until summarize()
  std::uint64_t completed_ = 0;                   // completed jobs (jct_s_.size() when the collector keeps them)
  double sum_bounded_slowdown_ = 0.0;
  // Exact integer device-microseconds: no rounding drift over millions of jobs.
  __extension__ __int128 device_us_ = 0;
  __extension__ __int128 overhead_device_us_ = 0;
  std::uint64_t preemptions_ = 0;
  std::uint64_t moves_ = 0;
  std::uint64_t failed_ = 0, killed_ = 0;
  std::uint64_t restarts_loss_spike_ = 0, restarts_device_failure_ = 0;
  __extension__ __int128 checkpoint_device_us_ = 0;
  __extension__ __int128 restart_device_us_ = 0;
  __extension__ __int128 lost_device_us_ = 0;
  __extension__ __int128 unsuccessful_device_us_ = 0;  // device-time of jobs that ended failed or killed
  __extension__ __int128 bound_idle_device_us_ = 0;
  bool meter_bound_idle_ = false;

  // The step functions' integrals up to `at`: device-milli x us, jobs x us.
  __extension__ typedef __int128 Wide;
  struct Integrals {
    Tick at;
    Wide alloc_milli_us = 0, queue_us = 0, in_system_us = 0;
  };
  // Fills `out` from samples_ and checks it holds `completed` values.
  void take_samples(void (CompletedJobSamples::*which)(std::vector<double>&) const, std::vector<double>& out, std::uint64_t completed) const;
  std::optional<double> average(const Integrals& from, const Integrals& to, Wide Integrals::*field, double scale) const;
  MeasurementWindowConfig window_config_;
  std::uint64_t warmup_jobs_;
  std::uint64_t ended_ = 0;  // completed, failed or killed
  std::int64_t alloc_milli_ = 0, queue_ = 0, in_system_ = 0;  // levels since now_.at
  Integrals now_;
  std::uint64_t arrived_seen_ = 0, ended_seen_ = 0;  // counts at the previous event
  bool window_open_ = false;
  std::uint64_t arrived_at_open_ = 0;
  Integrals at_open_, at_last_arrival_, at_last_end_;
  // Offered load: demanded device-milli x work-seconds, summed in arrival order.
  double demand_milli_s_ = 0.0;
  Tick last_submit_;
};

}  // namespace schedsim
