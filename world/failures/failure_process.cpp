#include "world/failures/failure_process.hpp"

#include <algorithm>
#include <limits>

#include "base/error.hpp"
#include "sim/simulator.hpp"
#include "sim/snapshot_archive.hpp"

namespace schedsim {

std::uint32_t FailureProcess::hooks() const {
  return kStart | kEvents | kRateFactor | kJobArrival | kComputeBegins | kProgressInterrupted | kStartOverhead | kCompletionStatus |
         kSnapshot | kCheckpointMarks | kJobSnapshot;
}

std::vector<std::uint32_t> FailureProcess::event_kinds() const {
  return {event_kind::kLossSpike, event_kind::kCheckpointDue, event_kind::kCheckpointCommit, event_kind::kUnitFailure, event_kind::kUnitRepair};
}

FailureProcess::JobTimers& FailureProcess::grow(JobSlot slot) {
  const auto i = static_cast<std::size_t>(slot);
  jobs_.resize(i + 1);
  return jobs_[i];
}

FailureProcess::JobTimers FailureProcess::timers(JobSlot slot) const {
  const auto i = static_cast<std::size_t>(slot);
  return slot >= 0 && i < jobs_.size() ? jobs_[i] : JobTimers{};
}

// Devices on a failed unit go from the job straight to the failed state, never free.
void FailureProcess::start(WorldContext& ctx) {
  for (int u = 0; u < model_.num_units(); ++u) {
    if (auto t = model_.sample_time_to_failure_s(u)) ctx.schedule(ctx.now() + Tick::from_seconds(*t), event_kind::kUnitFailure, u);
  }
}

void FailureProcess::on_job_arrival(WorldContext&, JobSlot slot) {
  JobTimers& t = entry(slot);
  t.loss_spike_event = t.checkpoint_due_event = t.checkpoint_commit_event = 0;
  t.needs_restart = false;
}

void FailureProcess::handle(WorldContext& ctx, const Event& e) {
  switch (e.kind) {
    case event_kind::kLossSpike: handle_loss_spike(ctx, e); break;
    case event_kind::kCheckpointDue: handle_checkpoint_due(ctx, e); break;
    case event_kind::kCheckpointCommit: handle_checkpoint_commit(ctx, e); break;
    case event_kind::kUnitFailure: handle_unit_failure(ctx, e); break;
    case event_kind::kUnitRepair: handle_unit_repair(ctx, e); break;
    default: throw InvariantError("the failures process got event kind " + std::to_string(e.kind));
  }
}

void FailureProcess::disarm(WorldContext& ctx, JobSlot slot) {
  JobTimers& t = entry(slot);
  for (EventId* id : {&t.loss_spike_event, &t.checkpoint_due_event, &t.checkpoint_commit_event}) {
    if (*id != 0) ctx.cancel(*id);
    *id = 0;
  }
}

void FailureProcess::on_progress_interrupted(WorldContext& ctx, JobSlot slot, Interruption why) {
  if (why == Interruption::kMoving) {
    // The move saves everything: a checkpoint at the current progress.
    ctx.advance_job(slot);
    disarm(ctx, slot);
    ctx.commit_checkpoint(slot, ctx.progress_mark(slot));
    return;
  }
  disarm(ctx, slot);
}

void FailureProcess::start_overhead(WorldContext&, JobSlot slot, Span<DeviceId>, bool moving, StartOverhead& out) {
  JobTimers& t = entry(slot);
  if (moving || !t.needs_restart) return;
  t.needs_restart = false;  // rolled back by a failure: restart overhead instead of a restore
  out.restart = true;
  out.restart_s = model_.config().devices.restart_s;
}

void FailureProcess::completion_status(const JobState& j, JobStatus& status) const {
  // Trace-recorded outcomes: the job ran for its recorded time and ended as recorded.
  if (!model_.config().recorded_outcomes_separate) return;
  if (j.spec.recorded_status == RecordedStatus::kFailed) status = JobStatus::kFailed;
  if (j.spec.recorded_status == RecordedStatus::kKilled) status = JobStatus::kKilled;
}

// The job starts (or resumes) making progress: arm its loss-spike clock and its next
// periodic checkpoint.
void FailureProcess::on_compute_begins(WorldContext& ctx, JobSlot slot) {
  const JobState& j = ctx.job(slot);
  if (j.status != JobStatus::kRunning || j.stalled(ctx.now())) return;
  JobTimers& t = entry(slot);
  if (t.loss_spike_event == 0) {
    if (auto s = model_.sample_time_to_spike_s(j.spec, static_cast<int>(j.devices.size()))) {
      t.loss_spike_event = ctx.schedule(ctx.now() + Tick::from_seconds(*s), event_kind::kLossSpike, slot);
    }
  }
  if (t.checkpoint_due_event == 0) {
    const double interval_s = model_.checkpoint_interval_s(j.spec, j.devices);
    if (interval_s > 0.0) t.checkpoint_due_event = ctx.schedule(ctx.now() + Tick::from_seconds(interval_s), event_kind::kCheckpointDue, slot);
  }
}

void FailureProcess::handle_checkpoint_due(WorldContext& ctx, const Event& e) {
  const auto slot = static_cast<JobSlot>(e.arg);
  if (!ctx.is_live(slot) || entry(slot).checkpoint_due_event != e.id) throw InvariantError("stale checkpoint event for job slot " + std::to_string(slot));
  entry(slot).checkpoint_due_event = 0;
  ctx.advance_job(slot);
  const JobState& j = ctx.job(slot);
  if (j.remaining_work_s <= 1e-9 * j.spec.duration_s) return;  // finishing at this instant: nothing to save
  const CheckpointMark mark = ctx.progress_mark(slot);
  ++ctx.stats().checkpoints;
  const double cost_s = model_.checkpoint_cost_s(j.spec, static_cast<int>(j.devices.size()));
  const Tick cost = Tick::from_seconds(cost_s);
  if (cost.us() == 0) {
    ctx.commit_checkpoint(slot, mark);
    on_compute_begins(ctx, slot);
    return;
  }
  JobTimers& t = entry(slot);
  t.pending_checkpoint = mark;
  t.checkpoint_commit_event = ctx.schedule(ctx.now() + cost, event_kind::kCheckpointCommit, slot);
  if (model_.config().checkpoint.async) {
    // The job keeps computing; the next checkpoint waits until this one is written.
    const double interval_s = std::max(model_.checkpoint_interval_s(j.spec, j.devices), cost_s);
    t.checkpoint_due_event = ctx.schedule(ctx.now() + Tick::from_seconds(interval_s), event_kind::kCheckpointDue, slot);
  } else {
    ctx.stall(slot, cost_s, StallKind::kCheckpoint);  // progress resumes (and the next interval starts) at the stall's end
  }
}

void FailureProcess::handle_checkpoint_commit(WorldContext& ctx, const Event& e) {
  const auto slot = static_cast<JobSlot>(e.arg);
  if (!ctx.is_live(slot) || entry(slot).checkpoint_commit_event != e.id) throw InvariantError("stale checkpoint commit for job slot " + std::to_string(slot));
  JobTimers& t = entry(slot);
  t.checkpoint_commit_event = 0;
  ctx.commit_checkpoint(slot, t.pending_checkpoint);
}

void FailureProcess::handle_loss_spike(WorldContext& ctx, const Event& e) {
  const auto slot = static_cast<JobSlot>(e.arg);
  if (!ctx.is_live(slot) || entry(slot).loss_spike_event != e.id || ctx.job(slot).status != JobStatus::kRunning) {
    throw InvariantError("stale loss-spike event for job slot " + std::to_string(slot));
  }
  entry(slot).loss_spike_event = 0;
  ctx.advance_job(slot);
  ++ctx.job_record(slot).loss_spike_restarts;
  ++ctx.stats().loss_spikes;
  const LossSpikeConfig& c = model_.config().loss_spikes;
  ctx.cut_stall(slot);  // a checkpoint being written is lost
  disarm(ctx, slot);
  ctx.rollback(slot, c.rollback_checkpoints);
  ctx.stall(slot, c.restart_s, StallKind::kRestart);
  if (ctx.job(slot).stall_event == 0) on_compute_begins(ctx, slot);
}

void FailureProcess::handle_unit_failure(WorldContext& ctx, const Event& e) {
  // Once no job is coming and none is running on a healthy cluster, failures change
  // nothing: the failure processes stop, and with them the run (jobs a policy left
  // waiting are then reported as such instead of waiting forever).
  if (!ctx.job_coming() && ctx.num_running() == 0 && !ctx.decision_pending()) {
    // Failed devices that are down for repair (not only out of service for another reason).
    const ClusterState& c = ctx.cluster();
    int under_repair = c.failed_devices();
    if ((ctx.reasons_in_use() & ~device_reason::kUnderRepair) != 0) {
      under_repair = 0;
      for (DeviceId d = 0; d < ctx.spec().num_devices(); ++d) under_repair += (c.reasons(d) & device_reason::kUnderRepair) && c.is_failed(d);
    }
    if (under_repair == 0) return;
  }
  const auto unit = static_cast<int>(e.arg);
  ++ctx.stats().unit_failures;
  const Tick repair_at = ctx.now() + Tick::from_seconds(model_.repair_s());
  hit_jobs_.clear();
  for (DeviceId d : model_.unit_devices(unit)) {
    // Bound devices and a service's devices are taken by the kernel; a shared device
    // serves its jobs until they release it.
    const DeviceTaken taken = ctx.add_reason(d, device_reason::kUnderRepair);
    if (taken.holder != DeviceTaken::kPlacedJob) continue;
    if (std::find(hit_jobs_.begin(), hit_jobs_.end(), taken.job) == hit_jobs_.end()) hit_jobs_.push_back(taken.job);
  }
  for (JobSlot slot : hit_jobs_) fail_job(ctx, slot, repair_at);
  ctx.schedule(repair_at, event_kind::kUnitRepair, unit);
  ctx.mark_decision_point();  // capacity changed and jobs may be back in the queue
}

void FailureProcess::handle_unit_repair(WorldContext& ctx, const Event& e) {
  const auto unit = static_cast<int>(e.arg);
  // Devices a waiting job holds stay with it; spot devices taken back stay failed.
  for (DeviceId d : model_.unit_devices(unit)) ctx.clear_reason(d, device_reason::kUnderRepair);
  if (auto t = model_.sample_time_to_failure_s(unit)) ctx.schedule(ctx.now() + Tick::from_seconds(*t), event_kind::kUnitFailure, unit);
  ctx.mark_decision_point();
}

void FailureProcess::fail_job(WorldContext& ctx, JobSlot slot, Tick repair_at) {
  const DeviceFailureConfig& c = model_.config().devices;
  ctx.advance_job(slot);
  ++ctx.job_record(slot).failure_restarts;
  ++ctx.stats().job_failure_hits;
  const JobState& j = ctx.job(slot);
  // A restart stall in progress (an earlier failure) may already reach past this repair.
  const Tick busy_until = j.stall_kind == StallKind::kRestart && j.stalled(ctx.now()) ? j.stall_end : ctx.now();
  ctx.cut_stall(slot);  // a checkpoint or preemption save being written is lost
  disarm(ctx, slot);
  ctx.rollback(slot, 1);
  if (j.status == JobStatus::kStopping || c.on_failure == DeviceFailureConfig::OnFailure::kRequeue) {
    entry(slot).needs_restart = true;  // the restart overhead replaces the restore
    ctx.evict(slot, EvictRestart::kRestart);
    return;
  }
  // Wait for the repair on the same devices, then restart.
  const Tick until = std::max(busy_until, repair_at + Tick::from_seconds(c.restart_s));
  ctx.stall(slot, (until - ctx.now()).seconds(), StallKind::kRestart);
  if (j.stall_event == 0) on_compute_begins(ctx, slot);
}

void FailureProcess::snapshot(SnapshotArchive& ar) { model_.snapshot(ar); }

// Where JobState had these fields: between its checkpoint marks and lost_work_s.
void FailureProcess::snapshot_job(SnapshotArchive& ar, JobSlot slot) {
  JobTimers& t = entry(slot);
  ar(t.pending_checkpoint.progress_s, t.pending_checkpoint.compute_device_us, t.loss_spike_event, t.checkpoint_due_event, t.checkpoint_commit_event, t.needs_restart);
}

void FailureProcess::check_restored(const WorldContext& ctx, SnapshotArchive& ar) const {
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    const auto slot = static_cast<JobSlot>(i);
    if (!ctx.is_live(slot)) continue;
    const JobTimers& t = jobs_[i];
    const std::string who = "job slot " + std::to_string(i) + " ('" + ctx.job(slot).spec.id.substr(0, 40) + "')";
    const struct {
      EventId id;
      std::uint32_t kind;
      const char* what;
    } events[] = {{t.loss_spike_event, event_kind::kLossSpike, "loss spike"},
                  {t.checkpoint_due_event, event_kind::kCheckpointDue, "checkpoint"},
                  {t.checkpoint_commit_event, event_kind::kCheckpointCommit, "checkpoint commit"}};
    for (const auto& ev : events) {
      ar.check(ev.id == 0 || ctx.holds_event(ev.id, ev.kind, slot), who + "'s " + ev.what + " event " + std::to_string(ev.id) + " is not in the event queue");
    }
  }
}

void FailureProcess::check_event(const WorldContext& ctx, SnapshotArchive& ar, const Event& e, const std::string& what) const {
  switch (e.kind) {
    case event_kind::kLossSpike:
    case event_kind::kCheckpointDue:
    case event_kind::kCheckpointCommit: {
      const auto slot = static_cast<JobSlot>(e.arg);
      ar.check(e.arg >= 0 && e.arg <= std::numeric_limits<JobSlot>::max() && ctx.is_live(slot), what + " is about job slot " + std::to_string(e.arg) + ", which holds no job");
      const JobTimers t = timers(slot);
      const EventId recorded = e.kind == event_kind::kLossSpike ? t.loss_spike_event : e.kind == event_kind::kCheckpointDue ? t.checkpoint_due_event : t.checkpoint_commit_event;
      ar.check(recorded == e.id, what + " is not the one its job records");
      ar.check(e.kind != event_kind::kLossSpike || ctx.job(slot).status == JobStatus::kRunning, what + " is about a job that is not running");
      break;
    }
    default: ar.check(e.arg >= 0 && e.arg < model_.num_units(), what + " is about failure unit " + std::to_string(e.arg) + " of " + std::to_string(model_.num_units())); break;
  }
}

}  // namespace schedsim
