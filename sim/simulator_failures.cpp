// The kernel's side of the failures model: loss spikes, device and node failures and
// repairs, periodic checkpoints. The model (sim/failure_model.hpp) draws the random
// times and computes intervals and costs; here they become events and rollbacks.
//
// A job's progress is duration - remaining work. Committed checkpoints are marks of
// progress (JobState::checkpoints, [0] = the start); a rollback moves the progress back
// to a mark, adds the difference to lost_work_s (so work_done_s - lost_work_s stays the
// progress) and the compute device-time since the mark to lost_device_us.
#include <algorithm>

#include "sim/error.hpp"
#include "sim/failure_model.hpp"
#include "sim/simulator.hpp"

namespace schedsim {
namespace {

// Net compute device-time (compute - lost): what checkpoint marks stamp.
std::int64_t net_compute_device_us(const JobState& j) { return j.compute_device_us - j.lost_device_us; }
}  // namespace

double Simulator::rate_factor(const JobState& j) const {
  double f = options_.failures ? options_.failures->straggler_factor(j.devices) : 1.0;
  for (WorldProcess* p : rate_procs_) f *= p->rate_factor(j);  // power caps, throttling (world processes)
  return f;
}

// Devices on a failed unit go from the job straight to the failed state, never free.
void Simulator::start_failures() {
  FailureModel& f = *options_.failures;
  device_down_.assign(static_cast<std::size_t>(spec_.num_devices()), 0);
  for (int u = 0; u < f.num_units(); ++u) {
    if (auto t = f.sample_time_to_failure_s(u)) queue_.schedule(now_ + Tick::from_seconds(*t), kUnitFailure, u);
  }
}

void Simulator::disarm_failure_timers(JobState& j) {
  for (EventId* id : {&j.loss_spike_event, &j.checkpoint_due_event, &j.checkpoint_commit_event}) {
    if (*id != 0) queue_.cancel(*id);
    *id = 0;
  }
}

// Ends the current stall now and books only the part that elapsed.
void Simulator::cut_stall(JobState& j) {
  if (j.stall_event != 0) queue_.cancel(j.stall_event);
  j.stall_event = 0;
  if (j.stalled(now_)) {
    stall_account(j, j.stall_kind) -= (j.stall_end - now_).us() * static_cast<std::int64_t>(j.devices.size());
    j.stall_end = now_;
  }
  j.stall_kind = StallKind::kNone;
}

void Simulator::commit_checkpoint(JobState& j, const CheckpointMark& mark) {
  j.checkpoints.push_back(mark);
  // Keep the start and as many marks as a rollback can reach.
  // (Without the failures model only the market's spot reclamation rolls back, one mark.)
  const int back = options_.failures ? options_.failures->config().loss_spikes.rollback_checkpoints : 1;
  const auto keep = static_cast<std::size_t>(std::max(1, back)) + 1;
  if (j.checkpoints.size() > keep) j.checkpoints.erase(j.checkpoints.begin() + 1);
}

void Simulator::rollback(JobState& j, int checkpoints_back) {
  const std::size_t n = j.checkpoints.size();
  const std::size_t index = n > static_cast<std::size_t>(checkpoints_back) ? n - static_cast<std::size_t>(checkpoints_back) : 0;
  const CheckpointMark target = j.checkpoints[index];
  const double progress = j.spec.duration_s - j.remaining_work_s;
  if (progress + 1e-9 * j.spec.duration_s < target.progress_s) throw InvariantError("job '" + j.spec.id + "' has less progress than its checkpoint");
  const double lost = std::max(0.0, progress - target.progress_s);
  j.remaining_work_s += lost;
  j.lost_work_s += lost;
  // Marks stamp the net compute device-time (compute - lost): what rolls back is the net
  // device-time since the mark, and time lost before is never booked twice.
  j.lost_device_us += net_compute_device_us(j) - target.compute_device_us;
  j.checkpoints.resize(index + 1);
}

// The job starts (or resumes) making progress: arm its loss-spike clock and its next
// periodic checkpoint.
void Simulator::begin_compute(JobSlot slot) {
  if (!options_.failures) return;
  FailureModel& f = *options_.failures;
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  if (j.status != JobStatus::kRunning || j.stalled(now_)) return;
  if (j.loss_spike_event == 0) {
    if (auto t = f.sample_time_to_spike_s(j.spec, static_cast<int>(j.devices.size()))) {
      j.loss_spike_event = queue_.schedule(now_ + Tick::from_seconds(*t), kLossSpike, slot);
    }
  }
  if (j.checkpoint_due_event == 0) {
    const double interval_s = f.checkpoint_interval_s(j.spec, j.devices);
    if (interval_s > 0.0) j.checkpoint_due_event = queue_.schedule(now_ + Tick::from_seconds(interval_s), kCheckpointDue, slot);
  }
}

void Simulator::handle_checkpoint_due(const Event& e) {
  const auto slot = static_cast<JobSlot>(e.arg);
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  if (!live_[static_cast<std::size_t>(slot)] || j.checkpoint_due_event != e.id) throw InvariantError("stale checkpoint event for job slot " + std::to_string(slot));
  j.checkpoint_due_event = 0;
  advance(j);
  if (j.remaining_work_s <= 1e-9 * j.spec.duration_s) return;  // finishing at this instant: nothing to save
  FailureModel& f = *options_.failures;
  const CheckpointMark mark{j.spec.duration_s - j.remaining_work_s, net_compute_device_us(j)};
  ++stats_.checkpoints;
  const double cost_s = f.checkpoint_cost_s(j.spec, static_cast<int>(j.devices.size()));
  const Tick cost = Tick::from_seconds(cost_s);
  if (cost.us() == 0) {
    commit_checkpoint(j, mark);
    begin_compute(slot);
    return;
  }
  j.pending_checkpoint = mark;
  j.checkpoint_commit_event = queue_.schedule(now_ + cost, kCheckpointCommit, slot);
  if (f.config().checkpoint.async) {
    // The job keeps computing; the next checkpoint waits until this one is written.
    const double interval_s = std::max(f.checkpoint_interval_s(j.spec, j.devices), cost_s);
    j.checkpoint_due_event = queue_.schedule(now_ + Tick::from_seconds(interval_s), kCheckpointDue, slot);
  } else {
    stall(slot, cost_s, StallKind::kCheckpoint);  // progress resumes (and the next interval starts) at the stall's end
  }
}

void Simulator::handle_checkpoint_commit(const Event& e) {
  const auto slot = static_cast<JobSlot>(e.arg);
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  if (!live_[static_cast<std::size_t>(slot)] || j.checkpoint_commit_event != e.id) throw InvariantError("stale checkpoint commit for job slot " + std::to_string(slot));
  j.checkpoint_commit_event = 0;
  commit_checkpoint(j, j.pending_checkpoint);
}

void Simulator::handle_loss_spike(const Event& e) {
  const auto slot = static_cast<JobSlot>(e.arg);
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  if (!live_[static_cast<std::size_t>(slot)] || j.loss_spike_event != e.id || j.status != JobStatus::kRunning) {
    throw InvariantError("stale loss-spike event for job slot " + std::to_string(slot));
  }
  j.loss_spike_event = 0;
  advance(j);
  ++j.loss_spike_restarts;
  ++stats_.loss_spikes;
  const LossSpikeConfig& c = options_.failures->config().loss_spikes;
  cut_stall(j);  // a checkpoint being written is lost
  disarm_failure_timers(j);
  rollback(j, c.rollback_checkpoints);
  stall(slot, c.restart_s, StallKind::kRestart);
  if (j.stall_event == 0) begin_compute(slot);
}

void Simulator::handle_unit_failure(const Event& e) {
  // Once no job is coming and none is running on a healthy cluster, failures change
  // nothing: the failure processes stop, and with them the run (jobs a policy left
  // waiting are then reported as such instead of waiting forever).
  if (!has_next_job_ && num_running_ == 0 && !dirty_) {
    // Failed devices that are down for repair (not only taken back by a spot provider).
    int under_repair = cluster_.failed_devices();
    if (!device_reclaimed_.empty()) {
      under_repair = 0;
      for (std::size_t d = 0; d < device_down_.size(); ++d) under_repair += device_down_[d] && cluster_.is_failed(static_cast<DeviceId>(d));
    }
    if (under_repair == 0) return;
  }
  const auto unit = static_cast<int>(e.arg);
  FailureModel& f = *options_.failures;
  ++stats_.unit_failures;
  const Tick repair_at = now_ + Tick::from_seconds(f.repair_s());
  hit_jobs_.clear();
  for (DeviceId d : f.unit_devices(unit)) {
    device_down_[static_cast<std::size_t>(d)] = 1;
    if (cluster_.is_free(d)) {
      cluster_.mark_failed(d);
    } else if (!cluster_.is_failed(d) && cluster_.owner(d) >= 0) {  // a job's device (it fails the job)
      const auto owner = static_cast<JobSlot>(cluster_.owner(d));
      if (jobs_[static_cast<std::size_t>(owner)].status == JobStatus::kPending) {  // bound to a waiting job: it loses this one
        lose_bound_device(owner, d);
        continue;
      }
      if (std::find(hit_jobs_.begin(), hit_jobs_.end(), owner) == hit_jobs_.end()) hit_jobs_.push_back(owner);
    } else if (cluster_.owner(d) <= service_owner(0)) {  // a replica's device: the service loses it at once (the meter sees one fewer)
      take_from_service(d);
    }
  }
  for (JobSlot slot : hit_jobs_) fail_job(slot, repair_at);
  queue_.schedule(repair_at, kUnitRepair, unit);
  dirty_ = true;  // capacity changed and jobs may be back in the queue: a decision point
}

void Simulator::handle_unit_repair(const Event& e) {
  const auto unit = static_cast<int>(e.arg);
  FailureModel& f = *options_.failures;
  for (DeviceId d : f.unit_devices(unit)) {
    device_down_[static_cast<std::size_t>(d)] = 0;
    if (cluster_.is_failed(d) && !unavailable(d)) cluster_.mark_repaired(d);  // devices a waiting job holds stay with it; spot devices taken back stay failed
  }
  if (auto t = f.sample_time_to_failure_s(unit)) queue_.schedule(now_ + Tick::from_seconds(*t), kUnitFailure, unit);
  dirty_ = true;
}

void Simulator::take_from_service(DeviceId d) {
  if (!held_proc_) throw InvariantError("device " + std::to_string(d) + " is held by an inference service, but no process holds service devices");
  held_proc_->lose_held_device(ctx_, d);
}

void Simulator::fail_job(JobSlot slot, Tick repair_at) {
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  const DeviceFailureConfig& c = options_.failures->config().devices;
  advance(j);
  ++j.failure_restarts;
  ++stats_.job_failure_hits;
  // A restart stall in progress (an earlier failure) may already reach past this repair.
  const Tick busy_until = j.stall_kind == StallKind::kRestart && j.stalled(now_) ? j.stall_end : now_;
  cut_stall(j);  // a checkpoint or preemption save being written is lost
  disarm_failure_timers(j);
  rollback(j, 1);
  if (j.status == JobStatus::kStopping || c.on_failure == DeviceFailureConfig::OnFailure::kRequeue) {
    requeue_after_failure(slot);
    return;
  }
  // Wait for the repair on the same devices, then restart.
  const Tick until = std::max(busy_until, repair_at + Tick::from_seconds(c.restart_s));
  stall(slot, (until - now_).seconds(), StallKind::kRestart);
  if (j.stall_event == 0) begin_compute(slot);
}

void Simulator::requeue_after_failure(JobSlot slot) {
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  if (j.completion_event != 0) queue_.cancel(j.completion_event);
  j.completion_event = 0;
  unplace(slot);
  j.has_checkpoint = false;  // the restart overhead replaces the restore
  j.needs_restart = true;
  j.stall_end = Tick();
  requeue(slot);
}

}  // namespace schedsim
