#include "sim/invariant_checker.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/error.hpp"
#include "sim/simulator.hpp"

namespace schedsim {
namespace {

[[noreturn]] void violated(const JobState& job, const std::string& what) {
  throw InvariantError("invariant violated for job '" + job.spec.id + "': " + what);
}

}  // namespace

void InvariantChecker::on_job_start(const JobState& job) {
  if (job.start < job.spec.submit) violated(job, "started at " + format_seconds(job.start) + " s, before it arrived");
  const int n = static_cast<int>(job.devices.size());
  const bool count_ok = job.spec.is_elastic() ? (n >= job.spec.min_gpus && n <= job.spec.max_gpus) : n == job.spec.num_gpus;
  if (!count_ok) violated(job, "runs on " + std::to_string(n) + " devices, which its request does not allow");
}

void InvariantChecker::on_job_end(const JobState& job) {
  if (job.end < job.start) violated(job, "ended before it started");
  // Work conserved: the integral of the rate over the job's life is its work, up to
  // the rounding of event times to the microsecond (at most one per rate change).
  // Rolled-back work was done twice: work done minus work lost is the job's work.
  const double events = 2.0 + job.preemptions + job.moves + job.loss_spike_restarts + job.failure_restarts;
  const double tolerance = 1e-6 * events * std::max(1.0, job.physics_rate) + 1e-9 * (job.spec.duration_s + job.lost_work_s);
  if (std::fabs(job.work_done_s - job.lost_work_s - job.spec.duration_s) > tolerance) {
    violated(job, "did " + std::to_string(job.work_done_s) + " s of work, lost " + std::to_string(job.lost_work_s) + ", for " +
                      std::to_string(job.spec.duration_s) + " s asked (work not conserved)");
  }
  if (job.overhead_device_us + job.checkpoint_device_us + job.restart_device_us + job.lost_device_us > job.device_us) {
    violated(job, "spent more device-time on checkpoints, restarts and lost work than it held devices");
  }
  if (job.overhead_device_us < 0 || job.checkpoint_device_us < 0 || job.restart_device_us < 0 || job.lost_device_us < 0) {
    violated(job, "has negative overhead device-time");
  }
}

void InvariantChecker::after_event(const Simulator& sim) {
  ++checks_;
  if (sim.now() < last_time_) throw InvariantError("time went backwards to " + format_seconds(sim.now()) + " s");
  last_time_ = sim.now();
  const ClusterState& state = sim.cluster_state();
  const int n = state.spec().num_devices();
  seen_owner_.assign(static_cast<std::size_t>(n), ClusterState::kNoOwner);
  seen_milli_.assign(static_cast<std::size_t>(n), 0);
  std::size_t running = 0, pending = 0;
  int held = 0;
  sim.for_each_job([&](const JobState& j) {
    if (j.spec.submit > sim.now()) violated(j, "is in the system before its submit time");
    // Work conserved at every instant: progress (done - lost) + remaining = duration, and
    // progress never below the newest committed checkpoint.
    const double progress = j.work_done_s - j.lost_work_s;
    const double tol = 1e-6 * (2.0 + j.preemptions + j.moves + j.loss_spike_restarts + j.failure_restarts) * std::max(1.0, j.physics_rate) + 1e-9 * (j.spec.duration_s + j.lost_work_s);
    if (std::fabs(progress + j.remaining_work_s - j.spec.duration_s) > tol) violated(j, "progress + remaining work != duration (work not conserved)");
    if (!j.checkpoints.empty() && progress + tol < j.checkpoints.back().progress_s) violated(j, "has less progress than its last committed checkpoint");
    if (j.status == JobStatus::kPending) {
      ++pending;
      if (!j.devices.empty()) violated(j, "is pending but holds devices");
      return;
    }
    if (j.status != JobStatus::kRunning && j.status != JobStatus::kStopping) violated(j, "is in the system but neither pending nor placed");
    ++running;
    for (DeviceId d : j.devices) {
      auto& seen = seen_owner_[static_cast<std::size_t>(d)];
      if (j.spec.is_fractional()) {  // a share: the device must be shared, never held whole
        if (seen >= 0) violated(j, "shares device " + std::to_string(d) + " with a job that holds it whole (double-booked)");
        if (!state.is_shared(d)) violated(j, "holds a share of device " + std::to_string(d) + " which the cluster does not mark shared");
        if (seen == ClusterState::kNoOwner) ++held;
        seen = ClusterState::kShared;
        seen_milli_[static_cast<std::size_t>(d)] += j.spec.gpu_milli;
        continue;
      }
      if (seen != ClusterState::kNoOwner) violated(j, "shares device " + std::to_string(d) + " with another job (double-booked)");
      seen = state.owner(d);
      if (state.is_free(d)) violated(j, "holds device " + std::to_string(d) + " which the cluster marks free");
      if (state.is_shared(d)) violated(j, "holds device " + std::to_string(d) + " whole while the cluster marks it shared");
      ++held;
    }
  });
  for (int s = 0; s < sim.num_services(); ++s) {  // inference replicas
    for (DeviceId d : sim.service_devices(s)) {
      auto& seen = seen_owner_[static_cast<std::size_t>(d)];
      if (seen != ClusterState::kNoOwner || state.owner(d) != Simulator::service_owner(s)) {
        throw InvariantError("device " + std::to_string(d) + " of inference service " + std::to_string(s) + " is double-booked or not marked held");
      }
      seen = state.owner(d);
      ++held;
    }
  }
  if (held + state.free_devices() + state.failed_devices() != n) {
    throw InvariantError("device accounting broken: " + std::to_string(held) + " held + " + std::to_string(state.free_devices()) +
                         " free + " + std::to_string(state.failed_devices()) + " failed != " + std::to_string(n) + " devices");
  }
  for (DeviceId d = 0; d < n; ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (!state.is_free(d) && !state.is_failed(d) && seen_owner_[i] == ClusterState::kNoOwner) {
      throw InvariantError("device " + std::to_string(d) + " is marked allocated but no running job holds it");
    }
    // Milli capacity: the shares of running jobs never exceed the device, and match the
    // cluster's own count.
    if (seen_milli_[i] > ClusterState::kWholeMilli) {
      throw InvariantError("device " + std::to_string(d) + " over-allocated: running jobs hold " + std::to_string(seen_milli_[i]) + " milli of 1000");
    }
    if (seen_owner_[i] == ClusterState::kShared && ClusterState::kWholeMilli - state.free_milli(d) != seen_milli_[i]) {
      throw InvariantError("device " + std::to_string(d) + " milli accounting broken: jobs hold " + std::to_string(seen_milli_[i]) +
                           ", the cluster counts " + std::to_string(ClusterState::kWholeMilli - state.free_milli(d)));
    }
  }
  if (running != sim.num_running() || pending != sim.num_pending()) throw InvariantError("job counts out of step with the job table");
}

}  // namespace schedsim
