#include "sim/invariant_checker.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "base/error.hpp"
#include "sim/simulator.hpp"

namespace schedsim {

InvariantChecker::InvariantChecker(std::size_t log_events) : log_(std::max<std::size_t>(log_events, 1)) {}

void InvariantChecker::log(Entry e) {
  e.seq = checks_ + 1;  // the event being processed
  log_[log_next_] = std::move(e);
  log_next_ = (log_next_ + 1) % log_.size();
  log_size_ = std::min(log_size_ + 1, log_.size());
}

std::vector<std::string> InvariantChecker::recent_events() const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < log_size_; ++i) {
    const Entry& e = log_[(log_next_ + log_.size() - log_size_ + i) % log_.size()];
    std::ostringstream line;
    line << "event " << e.seq << " t=" << format_seconds(e.time) << " s: ";
    switch (e.kind) {
      case 'a': line << "arrival of job '" << e.job << "' asking " << e.a << " devices"; break;
      case 's': line << "start of job '" << e.job << "' on " << e.a << " devices"; break;
      case 'e': line << "end of job '" << e.job << "' (" << to_string(static_cast<JobStatus>(e.a)) << ")"; break;
      case 'd': line << "job '" << e.job << "' dropped"; break;
      default: line << "state: " << e.a << " pending, " << e.b << " running"; break;
    }
    out.push_back(line.str());
  }
  return out;
}

void InvariantChecker::fail(const std::string& what) const {
  std::string msg = what + "\nthe last " + std::to_string(log_size_) + " events, oldest first:";
  for (const std::string& line : recent_events()) msg += "\n  " + line;
  throw InvariantError(msg);
}

void InvariantChecker::fail_job(const JobState& job, const std::string& what) const {
  fail("invariant violated for job '" + job.spec.id + "': " + what);
}

void InvariantChecker::on_job_arrival(const JobState& job) { log({job.spec.submit, 0, 'a', job.spec.id, job.spec.num_gpus, 0}); }

void InvariantChecker::on_job_dropped(const JobSpec& job, const std::string& /*reason*/) { log({job.submit, 0, 'd', job.id, 0, 0}); }

void InvariantChecker::on_job_start(const JobState& job) {
  log({job.start, 0, 's', job.spec.id, static_cast<std::int64_t>(job.devices.size()), 0});
  if (job.start < job.spec.submit) fail_job(job, "started at " + format_seconds(job.start) + " s, before it arrived");
  const int n = static_cast<int>(job.devices.size());
  const bool count_ok = job.spec.is_elastic() ? (n >= job.spec.min_gpus && n <= job.spec.max_gpus) : n == job.spec.num_gpus;
  if (!count_ok) fail_job(job, "runs on " + std::to_string(n) + " devices, which its request does not allow");
}

void InvariantChecker::on_job_end(const JobState& job) {
  log({job.end, 0, 'e', job.spec.id, static_cast<std::int64_t>(job.status), 0});
  if (job.end < job.start) fail_job(job, "ended before it started");
  // Work conserved: the integral of the rate over the job's life is its work, up to
  // the rounding of event times to the microsecond (at most one per rate change).
  // Rolled-back work was done twice: work done minus work lost is the job's work.
  const double events = 2.0 + job.preemptions + job.moves + job.loss_spike_restarts + job.failure_restarts;
  const double tolerance = 1e-6 * events * std::max(1.0, job.physics_rate) + 1e-9 * (job.spec.duration_s + job.lost_work_s);
  if (std::fabs(job.work_done_s - job.lost_work_s - job.spec.duration_s) > tolerance) {
    fail_job(job, "did " + std::to_string(job.work_done_s) + " s of work, lost " + std::to_string(job.lost_work_s) + ", for " +
                      std::to_string(job.spec.duration_s) + " s asked (work not conserved)");
  }
  if (job.overhead_device_us + job.checkpoint_device_us + job.restart_device_us + job.lost_device_us > job.device_us) {
    fail_job(job, "spent more device-time on checkpoints, restarts and lost work than it held devices");
  }
  if (job.overhead_device_us < 0 || job.checkpoint_device_us < 0 || job.restart_device_us < 0 || job.lost_device_us < 0) {
    fail_job(job, "has negative overhead device-time");
  }
  if (meter_) ended_jobs_kwh_ += meter_->ended_job_kwh(job);
}

void InvariantChecker::after_event(const Simulator& sim) {
  log({sim.now(), 0, 'x', "", static_cast<std::int64_t>(sim.num_pending()), static_cast<std::int64_t>(sim.num_running())});
  ++checks_;
  jobs_.clear();
  sim.for_each_job([&](const JobState& j) { jobs_.push_back(&j); });
  services_.clear();
  for (int svc = 0; svc < sim.num_services(); ++svc) services_.push_back(sim.service_devices(svc));
  check_state(sim.now(), sim.cluster_state(), jobs_, sim.num_running(), sim.num_pending(), sim.view().physics(), services_);
  if (meter_) check_energy(sim);
}

void InvariantChecker::check_energy(const Simulator& sim) {
  const double facility = meter_->facility_kwh(), jobs = meter_->jobs_kwh();
  const auto tol = [](double a, double b) { return 1e-9 * std::max(std::fabs(a), std::fabs(b)) + 1e-12; };
  if (!std::isfinite(facility) || !std::isfinite(jobs)) fail("energy: the facility or job energy is not finite");
  if (facility + tol(facility, last_facility_kwh_) < last_facility_kwh_) fail("energy: the facility energy decreased to " + std::to_string(facility) + " kWh");
  if (jobs + tol(jobs, last_jobs_kwh_) < last_jobs_kwh_) fail("energy: the jobs' energy decreased to " + std::to_string(jobs) + " kWh");
  if (jobs > facility + tol(jobs, facility)) {
    fail("energy not conserved: jobs used " + std::to_string(jobs) + " kWh, more than the whole facility's " + std::to_string(facility));
  }
  // With no job in the system, everything attributed to jobs belongs to ended jobs.
  if (sim.num_running() == 0 && sim.num_pending() == 0 && std::fabs(ended_jobs_kwh_ - jobs) > tol(ended_jobs_kwh_, jobs)) {
    fail("energy not conserved: the ended jobs used " + std::to_string(ended_jobs_kwh_) + " kWh in total, but " + std::to_string(jobs) +
         " kWh were attributed to jobs");
  }
  last_facility_kwh_ = facility;
  last_jobs_kwh_ = jobs;
}

void InvariantChecker::check_state(Tick now, const ClusterState& state, const std::vector<const JobState*>& jobs, std::size_t running_count,
                                   std::size_t pending_count, const PhysicsModel* physics, const std::vector<std::vector<DeviceId>>& service_devices) {
  if (now < last_time_) fail("time went backwards from " + format_seconds(last_time_) + " s to " + format_seconds(now) + " s");
  last_time_ = now;
  const int n = state.spec().num_devices();
  seen_owner_.assign(static_cast<std::size_t>(n), ClusterState::kNoOwner);
  seen_milli_.assign(static_cast<std::size_t>(n), 0);
  std::size_t running = 0, pending = 0;
  int held = 0;
  for (const JobState* jp : jobs) {
    const JobState& j = *jp;
    if (j.spec.submit > now) fail_job(j, "is in the system before its submit time");
    // Work conserved at every instant: progress (done - lost) + remaining = duration, and
    // progress never below the newest committed checkpoint.
    const double progress = j.work_done_s - j.lost_work_s;
    const double tol = 1e-6 * (2.0 + j.preemptions + j.moves + j.loss_spike_restarts + j.failure_restarts) * std::max(1.0, j.physics_rate) +
                       1e-9 * (j.spec.duration_s + j.lost_work_s);
    if (std::fabs(progress + j.remaining_work_s - j.spec.duration_s) > tol) fail_job(j, "progress + remaining work != duration (work not conserved)");
    if (!j.checkpoints.empty() && progress + tol < j.checkpoints.back().progress_s) fail_job(j, "has less progress than its last committed checkpoint");
    if (j.status == JobStatus::kPending) {
      ++pending;
      if (!j.devices.empty()) fail_job(j, "is pending but holds devices");
      // Bound devices (non-gang placement): held by this pending job alone, never free,
      // and fewer than it asks for (the bind that completes the set starts it).
      if (!j.bound_devices.empty() && (j.spec.is_elastic() || j.bound_devices.size() >= static_cast<std::size_t>(j.spec.num_gpus))) {
        fail_job(j, "has " + std::to_string(j.bound_devices.size()) + " devices bound, which its request does not allow while it waits");
      }
      for (DeviceId d : j.bound_devices) {
        if (d < 0 || d >= n) fail_job(j, "has device " + std::to_string(d) + " bound, which does not exist");
        auto& seen = seen_owner_[static_cast<std::size_t>(d)];
        if (seen != ClusterState::kNoOwner) fail_job(j, "has device " + std::to_string(d) + " bound, which another job holds or has bound (double-booked)");
        if (state.is_free(d) || state.is_failed(d) || state.is_shared(d) || state.owner(d) < 0) {
          fail_job(j, "has device " + std::to_string(d) + " bound, which the cluster does not mark held by a job");
        }
        seen = state.owner(d);
        ++held;
      }
      continue;
    }
    if (j.status != JobStatus::kRunning && j.status != JobStatus::kStopping) fail_job(j, "is in the system but neither pending nor placed");
    if (!j.bound_devices.empty()) fail_job(j, "is placed but still has bound devices");
    ++running;
    for (DeviceId d : j.devices) {
      if (d < 0 || d >= n) fail_job(j, "holds device " + std::to_string(d) + ", which does not exist");
      auto& seen = seen_owner_[static_cast<std::size_t>(d)];
      if (j.spec.is_fractional()) {  // a share: the device must be shared, never held whole
        if (seen >= 0) fail_job(j, "shares device " + std::to_string(d) + " with a job that holds it whole (double-booked)");
        if (!state.is_shared(d)) fail_job(j, "holds a share of device " + std::to_string(d) + " which the cluster does not mark shared");
        if (seen == ClusterState::kNoOwner) ++held;
        seen = ClusterState::kShared;
        seen_milli_[static_cast<std::size_t>(d)] += j.spec.gpu_milli;
        continue;
      }
      if (seen != ClusterState::kNoOwner) fail_job(j, "shares device " + std::to_string(d) + " with another job (double-booked)");
      seen = state.owner(d);
      if (state.is_free(d)) fail_job(j, "holds device " + std::to_string(d) + " which the cluster marks free");
      if (state.is_shared(d)) fail_job(j, "holds device " + std::to_string(d) + " whole while the cluster marks it shared");
      ++held;
    }
  }
  for (std::size_t s = 0; s < service_devices.size(); ++s) {  // inference replicas
    for (DeviceId d : service_devices[s]) {
      auto& seen = seen_owner_[static_cast<std::size_t>(d)];
      if (seen != ClusterState::kNoOwner || state.owner(d) != Simulator::service_owner(static_cast<int>(s))) {
        fail("device " + std::to_string(d) + " of inference service " + std::to_string(s) + " is double-booked or not marked held");
      }
      seen = state.owner(d);
      ++held;
    }
  }
  if (held + state.free_devices() + state.failed_devices() != n) {
    fail("device accounting broken: " + std::to_string(held) + " held + " + std::to_string(state.free_devices()) + " free + " +
         std::to_string(state.failed_devices()) + " failed != " + std::to_string(n) + " devices");
  }
  for (DeviceId d = 0; d < n; ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (!state.is_free(d) && !state.is_failed(d) && seen_owner_[i] == ClusterState::kNoOwner) {
      fail("device " + std::to_string(d) + " is marked allocated but no running job holds it and no pending job has it bound");
    }
    // Milli capacity: the shares of running jobs never exceed the device, and match the
    // cluster's own count.
    if (seen_milli_[i] > ClusterState::kWholeMilli) {
      fail("device " + std::to_string(d) + " over-allocated: running jobs hold " + std::to_string(seen_milli_[i]) + " milli of 1000");
    }
    if (seen_owner_[i] == ClusterState::kShared && ClusterState::kWholeMilli - state.free_milli(d) != seen_milli_[i]) {
      fail("device " + std::to_string(d) + " milli accounting broken: jobs hold " + std::to_string(seen_milli_[i]) + ", the cluster counts " +
           std::to_string(ClusterState::kWholeMilli - state.free_milli(d)));
    }
  }
  if (running != running_count || pending != pending_count) {
    fail("job counts out of step with the job table: " + std::to_string(running) + " running and " + std::to_string(pending) +
         " pending jobs in the table, the kernel counts " + std::to_string(running_count) + " and " + std::to_string(pending_count));
  }
  if (physics) {
    const std::string problem = physics->invariant_problem();
    if (!problem.empty()) fail("physics model state broken: " + problem);
  }
}

}  // namespace schedsim
