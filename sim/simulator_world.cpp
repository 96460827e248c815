// The kernel's side of world processes (sim/world_process.hpp): registration, the
// WorldContext a process acts through, and the core actions it calls (stall cuts,
// checkpoint marks and rollbacks, evictions, device availability reasons).
//
// A job's progress is duration - remaining work. Committed checkpoints are marks of
// progress (JobState::checkpoints, [0] = the start); a rollback moves the progress back
// to a mark, adds the difference to lost_work_s (so work_done_s - lost_work_s stays the
// progress) and the compute device-time since the mark to lost_device_us.
#include <algorithm>

#include "base/error.hpp"
#include "sim/simulator.hpp"
#include "sim/snapshot_archive.hpp"

namespace schedsim {
namespace {

// Net compute device-time (compute - lost): what checkpoint marks stamp.
std::int64_t net_compute_device_us(const JobState& j) { return j.compute_device_us - j.lost_device_us; }
}  // namespace

void Simulator::add_process(WorldProcess& process) {
  if (started_) throw InvariantError(std::string("world process '") + process.name() + "' registered after the run started");
  ProcessLists& l = processes_;
  l.all.push_back(&process);
  const std::uint32_t hooks = process.hooks();
  const auto subscribe = [&](WorldProcess::Hook hook, std::vector<WorldProcess*>& list) {
    if (hooks & hook) list.push_back(&process);
  };
  subscribe(WorldProcess::kStart, l.start);
  subscribe(WorldProcess::kRateFactor, l.rate);
  subscribe(WorldProcess::kPlacementVeto, l.veto);
  subscribe(WorldProcess::kJobArrival, l.arrival);
  subscribe(WorldProcess::kComputeBegins, l.compute);
  subscribe(WorldProcess::kProgressInterrupted, l.interrupted);
  subscribe(WorldProcess::kStartOverhead, l.overhead);
  subscribe(WorldProcess::kCompletionStatus, l.status);
  subscribe(WorldProcess::kEndOfInstant, l.instant);
  if (hooks & WorldProcess::kSnapshot) {
    switch (process.snapshot_slot()) {
      case SnapshotSlot::kBeforeDeviceTable: l.snapshot_before_devices.push_back(&process); break;
      case SnapshotSlot::kAfterDeviceTable: l.snapshot_after_devices.push_back(&process); break;
      case SnapshotSlot::kAfterPhysics: l.snapshot_after_physics.push_back(&process); break;
      case SnapshotSlot::kHeldDevices: break;  // saved by snapshot_held, where the kernel's table was
    }
  }
  if (hooks & WorldProcess::kJobSnapshot) {
    if (l.job_snapshot) throw InvariantError(std::string("world processes '") + l.job_snapshot->name() + "' and '" + process.name() + "' both save fields in the job records");
    l.job_snapshot = &process;
  }
  if (hooks & WorldProcess::kEvents) {
    for (const std::uint32_t kind : process.event_kinds()) {
      const bool core = kind == kArrival || kind == kCompletion || kind == kStallEnd || kind == kWakeup;
      if (core || kind == 0 || kind > 1024) throw InvariantError(std::string("world process '") + process.name() + "' claims event kind " + std::to_string(kind) + ", which is not free");
      if (l.event_owner.size() <= kind) l.event_owner.resize(kind + 1, nullptr);
      if (l.event_owner[kind]) throw InvariantError(std::string("world processes '") + l.event_owner[kind]->name() + "' and '" + process.name() + "' both claim event kind " + std::to_string(kind));
      l.event_owner[kind] = &process;
    }
  }
  if (hooks & WorldProcess::kActions) {
    for (const ActionKind kind : process.action_kinds()) {
      const auto k = static_cast<std::size_t>(kind);
      if (l.action_owner.size() <= k) l.action_owner.resize(k + 1, nullptr);
      if (l.action_owner[k]) throw InvariantError(std::string("world processes '") + l.action_owner[k]->name() + "' and '" + process.name() + "' both claim the " + to_string(kind) + " action");
      l.action_owner[k] = &process;
    }
  }
  if (hooks & WorldProcess::kCheckpointMarks) marks_kept_ = std::max({marks_kept_, 1, process.checkpoint_marks_kept()});
  if (hooks & WorldProcess::kRateFactor) rate_factors_ = true;
  reasons_used_ = static_cast<DeviceReasons>(reasons_used_ | process.device_reasons_used());
  if (hooks & WorldProcess::kHeldDevices) {  // (worlds) the inference services' holds
    if (held_proc_) throw InvariantError(std::string("world processes '") + held_proc_->name() + "' and '" + process.name() + "' both hold service devices");
    held_proc_ = &process;
  }
  // (worlds) The models it shows policies: SchedulerView::geography(), thermal(), service_devices().
  process.expose(exposed_);
  view_.geography_ = exposed_.geography;
  view_.thermal_ = exposed_.thermal;
  if (exposed_.service_devices) view_.service_devices_ = exposed_.service_devices;
}

double Simulator::rate_factor(const JobState& j) const {
  double f = 1.0;
  for (const WorldProcess* p : processes_.rate) f *= p->rate_factor(j);  // stragglers, power caps, throttling
  return f;
}

void Simulator::compute_begins(JobSlot slot) {
  for (WorldProcess* p : processes_.compute) p->on_compute_begins(world_, slot);
}

void Simulator::progress_interrupted(JobSlot slot, Interruption why) {
  for (WorldProcess* p : processes_.interrupted) p->on_progress_interrupted(world_, slot, why);
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
  const auto keep = static_cast<std::size_t>(std::max(1, marks_kept_)) + 1;
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

void Simulator::evict(JobSlot slot, EvictRestart how) {
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  if (j.completion_event != 0) queue_.cancel(j.completion_event);
  j.completion_event = 0;
  unplace(slot);
  // kRestore: the restart reads the checkpoint back (one restore), unless there is
  // nothing to read; kRestart: the restart overhead replaces the restore.
  j.has_checkpoint = how == EvictRestart::kRestore && j.spec.duration_s - j.remaining_work_s > 0.0;
  j.stall_end = Tick();
  requeue(slot);
}

DeviceTaken Simulator::add_reason(DeviceId d, DeviceReasons reason) {
  cluster_.add_reason(d, reason);
  if (cluster_.is_failed(d)) return {};  // already out of service
  if (cluster_.is_free(d)) {
    cluster_.mark_failed(d);
    return {};
  }
  if (cluster_.is_shared(d)) return {DeviceTaken::kSharedJobs, kNoJob};
  const std::int64_t owner = cluster_.owner(d);
  if (owner >= 0) {
    const auto slot = static_cast<JobSlot>(owner);
    if (jobs_[static_cast<std::size_t>(slot)].status == JobStatus::kPending) {  // bound to a waiting job: it loses this one
      lose_bound_device(slot, d);
      return {DeviceTaken::kBoundJob, slot};
    }
    return {DeviceTaken::kPlacedJob, slot};
  }
  if (owner <= service_owner(0)) {  // a replica's device: the service loses it at once (the meter sees one fewer)
    take_from_service(d);
    return {DeviceTaken::kService, kNoJob};
  }
  return {};
}

void Simulator::clear_reason(DeviceId d, DeviceReasons reason) {
  cluster_.clear_reason(d, reason);
  // Devices a waiting job holds stay with it; devices with another reason stay failed.
  if (cluster_.is_failed(d) && !cluster_.out_of_service(d)) cluster_.mark_repaired(d);
}

void Simulator::take_from_service(DeviceId d) {
  if (!held_proc_) throw InvariantError("device " + std::to_string(d) + " is held by an inference service, but no process holds service devices");
  held_proc_->lose_held_device(world_, d);
}

void Simulator::snapshot_held(SnapshotArchive& ar) {
  if (held_proc_) {
    held_proc_->snapshot(ar);
    return;
  }
  ar(no_services_);  // an empty table, as the kernel wrote before holds were a process's
  ar.check(no_services_.empty(), "it holds devices for inference services, and this simulation has no inference process");
}

std::string Simulator::why_failed(DeviceId d) const {
  const bool reclaimed = (cluster_.reasons(d) & device_reason::kTakenBack) != 0;
  return "device " + std::to_string(d) + (reclaimed ? " has been taken back by its spot provider" : " has failed and is under repair");
}

// WorldContext: what a process may see and do, forwarded to the kernel.
bool WorldContext::holds_event(EventId id, std::uint32_t kind, std::int64_t arg) const { return sim_->queue_.holds(id, kind, arg); }
const ClusterSpec& WorldContext::spec() const { return sim_->spec_; }
bool WorldContext::world_idle() const { return !job_coming() && num_running() == 0 && !decision_pending() && !wakeup_pending(); }
void WorldContext::mark_decision_point() { sim_->dirty_ = true; }
void WorldContext::stall(JobSlot slot, double seconds, StallKind kind) { sim_->stall(slot, seconds, kind); }
void WorldContext::cut_stall(JobSlot slot) { sim_->cut_stall(sim_->jobs_[static_cast<std::size_t>(slot)]); }
CheckpointMark WorldContext::progress_mark(JobSlot slot) const {
  const JobState& j = job(slot);
  return CheckpointMark{j.spec.duration_s - j.remaining_work_s, net_compute_device_us(j)};
}
void WorldContext::commit_checkpoint(JobSlot slot, const CheckpointMark& mark) { sim_->commit_checkpoint(sim_->jobs_[static_cast<std::size_t>(slot)], mark); }
void WorldContext::rollback(JobSlot slot, int checkpoints_back) { sim_->rollback(sim_->jobs_[static_cast<std::size_t>(slot)], checkpoints_back); }
void WorldContext::interrupt_progress(JobSlot slot) { sim_->progress_interrupted(slot, Interruption::kEvicted); }
void WorldContext::evict(JobSlot slot, EvictRestart how) { sim_->evict(slot, how); }
void WorldContext::rate_factor_changed(JobSlot slot) {
  if (sim_->options_.physics) sim_->changed_.push_back(slot);  // the rate update at the instant's end applies the new factor
  else sim_->set_rate(slot, sim_->rate_factor(job(slot)));
}
void WorldContext::compute_begins(JobSlot slot) { sim_->compute_begins(slot); }
DeviceTaken WorldContext::add_reason(DeviceId d, DeviceReasons reason) { return sim_->add_reason(d, reason); }
void WorldContext::clear_reason(DeviceId d, DeviceReasons reason) { sim_->clear_reason(d, reason); }
DeviceReasons WorldContext::reasons(DeviceId d) const { return sim_->cluster_.reasons(d); }
DeviceReasons WorldContext::reasons_in_use() const { return sim_->reasons_used_; }
void WorldContext::hold_devices(Span<DeviceId> devices, std::int64_t owner) { sim_->cluster_.allocate(devices, owner); }
void WorldContext::release_held(Span<DeviceId> devices, std::int64_t owner) {
  sim_->cluster_.release(devices, owner);
  for (DeviceId d : devices) {
    if (sim_->cluster_.out_of_service(d)) sim_->cluster_.mark_failed(d);  // out of service: failed, not free
  }
}

}  // namespace schedsim
