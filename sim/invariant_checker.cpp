#include "sim/invariant_checker.hpp"

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
  if (static_cast<int>(job.devices.size()) != job.spec.num_gpus) violated(job, "runs on a different number of devices than it asked for");
}

void InvariantChecker::on_job_end(const JobState& job) {
  if (job.end < job.start) violated(job, "ended before it started");
  // Without slowdowns a job runs at rate 1: its run time is its work, up to the
  // rounding of the completion to the microsecond.
  const double run_s = (job.end - job.start).seconds();
  if (std::fabs(run_s - job.spec.duration_s) > 1e-6 + 1e-12 * job.spec.duration_s) {
    violated(job, "ran " + std::to_string(run_s) + " s for " + std::to_string(job.spec.duration_s) + " s of work (work not conserved)");
  }
}

void InvariantChecker::after_event(const Simulator& sim) {
  ++checks_;
  if (sim.now() < last_time_) throw InvariantError("time went backwards to " + format_seconds(sim.now()) + " s");
  last_time_ = sim.now();
  const ClusterState& state = sim.cluster_state();
  const int n = state.spec().num_devices();
  seen_owner_.assign(static_cast<std::size_t>(n), ClusterState::kNoOwner);
  std::size_t running = 0, pending = 0;
  int held = 0;
  sim.for_each_job([&](const JobState& j) {
    if (j.spec.submit > sim.now()) violated(j, "is in the system before its submit time");
    if (j.status == JobStatus::kPending) {
      ++pending;
      if (!j.devices.empty()) violated(j, "is pending but holds devices");
      return;
    }
    if (j.status != JobStatus::kRunning) violated(j, "is in the system but neither pending nor running");
    ++running;
    for (DeviceId d : j.devices) {
      auto& seen = seen_owner_[static_cast<std::size_t>(d)];
      if (seen != ClusterState::kNoOwner) violated(j, "shares device " + std::to_string(d) + " with another job (double-booked)");
      seen = state.owner(d);
      if (state.is_free(d)) violated(j, "holds device " + std::to_string(d) + " which the cluster marks free");
      ++held;
    }
  });
  if (held + state.free_devices() != n) {
    throw InvariantError("device accounting broken: " + std::to_string(held) + " held + " + std::to_string(state.free_devices()) +
                         " free != " + std::to_string(n) + " devices");
  }
  for (DeviceId d = 0; d < n; ++d) {
    if (!state.is_free(d) && seen_owner_[static_cast<std::size_t>(d)] == ClusterState::kNoOwner) {
      throw InvariantError("device " + std::to_string(d) + " is marked allocated but no running job holds it");
    }
  }
  if (running != sim.num_running() || pending != sim.num_pending()) throw InvariantError("job counts out of step with the job table");
}

}  // namespace schedsim
