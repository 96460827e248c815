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
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/observer.hpp"

namespace schedsim {

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
};

// Linear-interpolation percentile (q in [0, 100]) of `sorted`, which must be sorted and
// non-empty.
double percentile_sorted(const std::vector<double>& sorted, double q);

class MetricsCollector : public Observer {
 public:
  static constexpr double kSlowdownTau_s = 10.0;

  explicit MetricsCollector(int num_devices) : num_devices_(num_devices) {}

  void on_job_arrival(const JobState& job) override;
  void on_job_end(const JobState& job) override;
  void on_job_dropped(const JobSpec& job, const std::string& reason) override;

  // Sorts the stored samples; call once at the end of the run.
  Summary summarize();
  // Every completed job's JCT, sorted (after summarize()).
  const std::vector<double>& sorted_jct_s() const { return jct_s_; }

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
};

}  // namespace schedsim
