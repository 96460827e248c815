#include "sim/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace schedsim {

double percentile_sorted(const std::vector<double>& sorted, double q) {
  const double pos = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

void MetricsCollector::on_job_arrival(const JobState& job) {
  if (!any_arrival_) first_submit_ = job.spec.submit;
  any_arrival_ = true;
  ++arrived_;
}

void MetricsCollector::on_job_dropped(const JobSpec& /*job*/, const std::string& reason) {
  if (reason == "oversized") ++dropped_oversized_;
}

void MetricsCollector::on_job_end(const JobState& job) {
  device_us_ += job.device_us;
  overhead_device_us_ += job.overhead_device_us;
  checkpoint_device_us_ += job.checkpoint_device_us;
  restart_device_us_ += job.restart_device_us;
  lost_device_us_ += job.lost_device_us;
  restarts_loss_spike_ += job.loss_spike_restarts;
  restarts_device_failure_ += job.failure_restarts;
  preemptions_ += job.preemptions;
  moves_ += job.moves;
  if (job.end > last_end_) last_end_ = job.end;
  if (job.status == JobStatus::kFailed || job.status == JobStatus::kKilled) {
    ++(job.status == JobStatus::kFailed ? failed_ : killed_);
    unsuccessful_device_us_ += job.device_us - job.overhead_device_us - job.checkpoint_device_us - job.restart_device_us - job.lost_device_us;
    return;
  }
  const double jct = (job.end - job.spec.submit).seconds();
  // Run time = time holding devices; the rest of the JCT was spent queued (before the
  // first start and after preemptions).
  const double run = Tick::from_us(job.held_us).seconds();
  jct_s_.push_back(jct);
  queue_delay_s_.push_back(jct - run);
  sum_bounded_slowdown_ += std::max(1.0, jct / std::max(run, kSlowdownTau_s));
}

Summary MetricsCollector::summarize() {
  Summary s;
  s.jobs_arrived = arrived_;
  s.jobs_completed = jct_s_.size();
  s.jobs_dropped_oversized = dropped_oversized_;
  s.allocated_gpu_hours = static_cast<double>(device_us_) / 1e6 / 3600.0;
  s.checkpoint_overhead_gpu_hours = static_cast<double>(overhead_device_us_) / 1e6 / 3600.0;
  s.preemptions = preemptions_;
  s.moves = moves_;
  s.jobs_failed = failed_;
  s.jobs_killed = killed_;
  s.restarts_loss_spike = restarts_loss_spike_;
  s.restarts_device_failure = restarts_device_failure_;
  constexpr double kUsPerHour = 3600e6;
  s.checkpoint_gpu_hours = static_cast<double>(checkpoint_device_us_) / kUsPerHour;
  s.restart_gpu_hours = static_cast<double>(restart_device_us_) / kUsPerHour;
  s.lost_gpu_hours = static_cast<double>(lost_device_us_) / kUsPerHour;
  if (device_us_ > 0) {
    const auto useful = device_us_ - overhead_device_us_ - checkpoint_device_us_ - restart_device_us_ - lost_device_us_ - unsuccessful_device_us_;
    s.goodput = static_cast<double>(useful) / static_cast<double>(device_us_);
  }
  if (jct_s_.empty()) return s;
  const auto n = static_cast<double>(jct_s_.size());
  // Sums in completion order, which is deterministic; sorting happens afterwards.
  s.mean_jct_s = std::accumulate(jct_s_.begin(), jct_s_.end(), 0.0) / n;
  s.mean_queue_delay_s = std::accumulate(queue_delay_s_.begin(), queue_delay_s_.end(), 0.0) / n;
  s.mean_bounded_slowdown = sum_bounded_slowdown_ / n;
  std::sort(jct_s_.begin(), jct_s_.end());
  std::sort(queue_delay_s_.begin(), queue_delay_s_.end());
  s.median_jct_s = percentile_sorted(jct_s_, 50);
  s.p95_jct_s = percentile_sorted(jct_s_, 95);
  s.p99_jct_s = percentile_sorted(jct_s_, 99);
  s.p95_queue_delay_s = percentile_sorted(queue_delay_s_, 95);
  s.makespan_s = (last_end_ - first_submit_).seconds();
  if (last_end_ > first_submit_) {
    s.gpu_utilization = static_cast<double>(device_us_) / (static_cast<double>(num_devices_) * static_cast<double>((last_end_ - first_submit_).us()));
  }
  return s;
}

}  // namespace schedsim
