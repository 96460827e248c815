#include "sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/error.hpp"

namespace schedsim {
const char* to_string(RecordedStatus s) {
  switch (s) {
    case RecordedStatus::kUnknown: return "unknown";
    case RecordedStatus::kCompleted: return "completed";
    case RecordedStatus::kFailed: return "failed";
    case RecordedStatus::kKilled: return "killed";
  }
  return "unknown";
}

const char* to_string(JobStatus s) {
  switch (s) {
    case JobStatus::kPending: return "pending";
    case JobStatus::kRunning: return "running";
    case JobStatus::kStopping: return "stopping";
    case JobStatus::kCompleted: return "completed";
    case JobStatus::kFailed: return "failed";
    case JobStatus::kKilled: return "killed";
  }
  return "unknown";
}

const char* to_string(ActionKind k) {
  switch (k) {
    case ActionKind::kStart: return "start";
    case ActionKind::kPreempt: return "preempt";
    case ActionKind::kMove: return "move";
    case ActionKind::kHold: return "hold";
    case ActionKind::kSetCooling: return "set-cooling-setpoint";
    case ActionKind::kBind: return "bind";
    case ActionKind::kUnbind: return "unbind";
  }
  return "unknown";
}

Simulator::Simulator(const ClusterSpec& cluster, JobSource& source, Policy& policy, SimulatorOptions options)
    : spec_(cluster), source_(source), policy_(policy), options_(options), source_name_(source.describe()), cluster_(cluster), world_(*this) {
  view_.now_ = &now_;
  view_.state_ = &cluster_;
  view_.jobs_ = &jobs_;
  view_.pending_head_ = &pending_.head;
  view_.running_head_ = &running_.head;
  view_.num_pending_ = &num_pending_;
  view_.num_running_ = &num_running_;
  view_.events_ = &queue_;
  view_.service_devices_ = &no_services_;  // until a holder process registers
  view_.node_group_ = options_.node_group;
  view_.physics_ = options_.physics;
  view_.signals_ = options_.signals;
  view_.market_ = options_.market_view;
  policy_.on_run_start(view_);
}

std::string Simulator::where(const JobSpec& spec) const {
  std::string w = source_name_;
  if (spec.source_line > 0) w += ":" + std::to_string(spec.source_line);
  return w + ": job '" + spec.id + "'";
}

void Simulator::pull_next_arrival() {
  while (source_.next(next_job_)) {
    ++jobs_read_;
    const JobSpec& j = next_job_;
    // The sources validate their input; these guards keep a faulty source from
    // corrupting the run.
    if (j.num_gpus < 1) throw InputError(where(j), "asks for " + std::to_string(j.num_gpus) + " GPUs; must be at least 1");
    if (!(j.duration_s > 0) || !std::isfinite(j.duration_s)) {
      throw InputError(where(j), "duration must be a positive finite number of seconds");
    }
    if (j.gpu_milli < 1 || j.gpu_milli > 1000) {
      throw InputError(where(j), "gpu_milli is " + std::to_string(j.gpu_milli) + "; must be in [1, 1000] (1000 = whole GPUs)");
    }
    if (j.is_fractional() && (j.num_gpus != 1 || j.is_elastic())) {
      throw InputError(where(j), "a fractional request (gpu_milli " + std::to_string(j.gpu_milli) +
                                     " < 1000) must ask for exactly one GPU and not be elastic");
    }
    if (j.is_elastic() && !(j.min_gpus >= 1 && j.min_gpus <= j.num_gpus && j.num_gpus <= j.max_gpus)) {
      throw InputError(where(j), "elastic limits must satisfy 1 <= min_gpus <= num_gpus <= max_gpus");
    }
    if (j.submit < last_submit_) {
      throw InputError(where(j), "submitted at " + format_seconds(j.submit) + " s, before the previous job (" +
                                     format_seconds(last_submit_) + " s); the source must be sorted by submit time");
    }
    last_submit_ = j.submit;
    const int smallest = j.is_elastic() ? j.min_gpus : j.num_gpus;
    if (smallest > spec_.num_devices()) {
      if (options_.oversized == OversizedMode::kError) {
        throw InputError(where(j), "asks for " + std::to_string(smallest) + " GPUs but the cluster has " +
                                       std::to_string(spec_.num_devices()) +
                                       " in total; enlarge the cluster or set workload.oversized: drop to skip such jobs");
      }
      ++stats_.jobs_dropped_oversized;
      for (Observer* o : observers_) o->on_job_dropped(j, "oversized");
      continue;
    }
    has_next_job_ = true;
    queue_.schedule(j.submit < now_ ? now_ : j.submit, kArrival, 0);
    return;
  }
  has_next_job_ = false;
}

JobSlot Simulator::alloc_slot() {
  if (!free_slots_.empty()) {
    const JobSlot s = free_slots_.back();
    free_slots_.pop_back();
    live_[static_cast<std::size_t>(s)] = 1;
    return s;
  }
  jobs_.emplace_back();
  live_.push_back(1);
  return static_cast<JobSlot>(jobs_.size() - 1);
}

void Simulator::free_slot(JobSlot slot) {
  live_[static_cast<std::size_t>(slot)] = 0;
  free_slots_.push_back(slot);
}

void Simulator::list_push(JobList& list, JobSlot slot) {
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  j.prev_in_list = list.tail;
  j.next_in_list = kNoJob;
  if (list.tail != kNoJob) jobs_[static_cast<std::size_t>(list.tail)].next_in_list = slot;
  else list.head = slot;
  list.tail = slot;
}

void Simulator::list_remove(JobList& list, JobSlot slot) {
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  if (j.prev_in_list != kNoJob) jobs_[static_cast<std::size_t>(j.prev_in_list)].next_in_list = j.next_in_list;
  else list.head = j.next_in_list;
  if (j.next_in_list != kNoJob) jobs_[static_cast<std::size_t>(j.next_in_list)].prev_in_list = j.prev_in_list;
  else list.tail = j.prev_in_list;
  j.prev_in_list = j.next_in_list = kNoJob;
}

void Simulator::handle_arrival() {
  const JobSlot slot = alloc_slot();
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  // A move, not a swap (a swap is three moves of the whole spec): the sources set every
  // field they vary before the next arrival, and leave the others at their defaults.
  j.reset_for_arrival();  // JobState::for_each_field says which fields an arrival resets
  j.spec = std::move(next_job_);
  j.status = JobStatus::kPending;
  j.arrival_seq = next_arrival_seq_++;
  j.remaining_work_s = j.spec.duration_s;
  j.last_update = now_;
  j.checkpoints.assign(1, CheckpointMark{});  // the start: where a job without checkpoints rolls back to
  j.site = -1;
  j.bound_since = now_;
  if (SCHEDSIM_RARELY(!processes_.arrival.empty())) {
    for (WorldProcess* p : processes_.arrival) p->on_job_arrival(world_, slot);
  }
  list_push(pending_, slot);
  ++num_pending_;
  ++stats_.jobs_arrived;
  dirty_ = true;
  for (Observer* o : observers_) o->on_job_arrival(j);
  policy_.on_job_queued(view_, slot);
  pull_next_arrival();
}

void Simulator::advance(JobState& j) {
  const double rate = j.rate(j.last_update);
  const Tick elapsed = now_ - j.last_update;
  const double done = rate * elapsed.seconds();
  if (rate > 0.0) j.compute_device_us += elapsed.us() * static_cast<std::int64_t>(j.devices.size());
  j.remaining_work_s -= done;
  j.work_done_s += done;
  j.last_update = now_;
}

// Device-time of `us` microseconds on the job's devices, in device-microseconds: a
// fractional job counts its share (gpu_milli / 1000) of its one device.
namespace {
std::int64_t device_time_us(const JobState& j, std::int64_t us) {
  const auto n = static_cast<std::int64_t>(j.devices.size());
  return j.spec.is_fractional() ? us * n * j.spec.gpu_milli / 1000 : us * n;
}
}  // namespace

void Simulator::hold_devices(JobSlot slot, Span<DeviceId> devices) {
  ++stats_.placement_changes;
  const JobState& j = jobs_[static_cast<std::size_t>(slot)];
  if (j.spec.is_fractional()) {
    for (DeviceId d : devices) cluster_.allocate_share(d, j.spec.gpu_milli, slot);
  } else {
    cluster_.allocate(devices, slot);
  }
}

void Simulator::release_devices(JobSlot slot, Span<DeviceId> devices) {
  ++stats_.placement_changes;
  const JobState& j = jobs_[static_cast<std::size_t>(slot)];
  if (j.spec.is_fractional()) {
    for (DeviceId d : devices) cluster_.release_share(d, slot);
  } else {
    cluster_.release(devices, slot);
  }
  if (!cluster_.has_reasons()) return;
  for (DeviceId d : devices) {
    if (cluster_.out_of_service(d) && cluster_.is_free(d)) cluster_.mark_failed(d);
  }
}

void Simulator::account_devices(JobState& j) {
  j.device_us += device_time_us(j, (now_ - j.placed_since).us());
  j.held_us += (now_ - j.placed_since).us();
  j.placed_since = now_;
}

void Simulator::schedule_completion(JobSlot slot) {
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  if (j.completion_event != 0) queue_.cancel(j.completion_event);
  j.completion_event = 0;
  if (j.status != JobStatus::kRunning || j.stalled(now_) || j.physics_rate <= 0.0) return;  // resumes via a later event
  const double left_s = std::max(0.0, j.remaining_work_s) / j.physics_rate;
  j.completion_event = queue_.schedule(now_ + Tick::from_seconds(left_s), kCompletion, slot);
}

void Simulator::set_rate(JobSlot slot, double rate) {
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  if (!(rate >= 0.0) || !std::isfinite(rate)) throw InvariantError("physics gave job '" + j.spec.id + "' an invalid rate");
  if (rate == j.physics_rate) return;
  ++stats_.rate_changes;
  job_changed(slot, JobChange::kRate);
  advance(j);
  j.physics_rate = rate;
  schedule_completion(slot);
}

std::int64_t& Simulator::stall_account(JobState& j, StallKind kind) {
  switch (kind) {
    case StallKind::kCheckpoint: return j.checkpoint_device_us;
    case StallKind::kRestart: return j.restart_device_us;
    case StallKind::kNone:
    case StallKind::kPreemption: break;
  }
  return j.overhead_device_us;
}

// The job makes no progress for `seconds` while it holds its devices; the device-time is
// booked under `kind`: preemption overhead (checkpoint save or restore for preemption,
// migration, resize), periodic checkpoint, or restart after a failure.
void Simulator::stall(JobSlot slot, double seconds, StallKind kind) {
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  job_changed(slot, JobChange::kStall);
  advance(j);
  // A stall cut short (a preemption during a restore, a failure during a save...) books
  // only the part that elapsed.
  if (j.stall_kind != StallKind::kNone) cut_stall(j);
  if (j.stall_event != 0) queue_.cancel(j.stall_event);
  j.stall_event = 0;
  const Tick duration = Tick::from_seconds(seconds);
  j.stall_end = now_ + duration;
  j.stall_kind = kind;
  stall_account(j, kind) += duration.us() * static_cast<std::int64_t>(j.devices.size());
  if (duration.us() > 0) j.stall_event = queue_.schedule(j.stall_end, kStallEnd, slot);
  schedule_completion(slot);
}

void Simulator::placement_changed(JobSlot slot) {
  if (options_.physics) changed_.push_back(slot);
}

void Simulator::handle_stall_end(const Event& e) {
  const auto slot = static_cast<JobSlot>(e.arg);
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  if (!live_[static_cast<std::size_t>(slot)] || j.stall_event != e.id) throw InvariantError("stale stall event for job slot " + std::to_string(slot));
  j.stall_event = 0;
  j.stall_kind = StallKind::kNone;
  job_changed(slot, JobChange::kStall);
  advance(j);  // nothing done while stalled; moves last_update to now
  if (j.status == JobStatus::kStopping) {
    finish_stop(slot);
  } else {
    schedule_completion(slot);
    compute_begins(slot);
  }
}

void Simulator::unplace(JobSlot slot) {
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  job_changed(slot, JobChange::kPlacement);
  account_devices(j);
  release_devices(slot, j.devices);
  j.devices.clear();
  j.physics_rate = 0.0;
}

void Simulator::requeue(JobSlot slot) {
  jobs_[static_cast<std::size_t>(slot)].status = JobStatus::kPending;
  job_changed(slot, JobChange::kRequeued);
  list_remove(running_, slot);
  --num_running_;
  list_push(pending_, slot);
  ++num_pending_;
  placement_changed(slot);
  dirty_ = true;
  policy_.on_job_queued(view_, slot);
}

void Simulator::finish_stop(JobSlot slot) {
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  unplace(slot);
  j.has_checkpoint = true;
  if (marks_kept_ > 0) commit_checkpoint(j, CheckpointMark{j.spec.duration_s - j.remaining_work_s, j.compute_device_us - j.lost_device_us});
  requeue(slot);
}

void Simulator::handle_completion(const Event& e) {
  const auto slot = static_cast<JobSlot>(e.arg);
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  if (!live_[static_cast<std::size_t>(slot)] || j.status != JobStatus::kRunning || j.completion_event != e.id) {
    throw InvariantError("stale completion event for job slot " + std::to_string(slot));
  }
  advance(j);
  // Work conservation: the completion was scheduled for the instant the remaining work
  // reaches zero, up to the half-microsecond rounding of the event time.
  const double tolerance = j.physics_rate * 1e-6 + 1e-9 * j.spec.duration_s;
  if (std::fabs(j.remaining_work_s) > tolerance) {
    throw InvariantError("job '" + j.spec.id + "' completed with " + std::to_string(j.remaining_work_s) +
                         " s of work left (work not conserved)");
  }
  j.work_done_s += j.remaining_work_s;
  j.remaining_work_s = 0.0;
  j.completion_event = 0;
  j.status = JobStatus::kCompleted;
  progress_interrupted(slot, Interruption::kCompleted);
  if (SCHEDSIM_RARELY(!processes_.status.empty())) {
    for (const WorldProcess* p : processes_.status) p->completion_status(j, j.status);  // e.g. trace-recorded outcomes
  }
  j.end = now_;
  account_devices(j);
  release_devices(slot, j.devices);
  list_remove(running_, slot);
  job_changed(slot, JobChange::kEnded);
  --num_running_;
  ++stats_.jobs_completed;
  dirty_ = true;
  for (Observer* o : observers_) o->on_job_end(j);
  policy_.on_job_finished(view_, slot);
  placement_changed(slot);
  j.physics_rate = 0.0;
  free_slot(slot);
}

void Simulator::reject(std::size_t index, const Action& a, const std::string& why) const {
  std::string job = (a.kind == ActionKind::kSetCooling ? "datacenter " : "job slot ") + std::to_string(a.job);
  if (a.kind != ActionKind::kSetCooling && a.job >= 0 && static_cast<std::size_t>(a.job) < jobs_.size() && live_[static_cast<std::size_t>(a.job)]) {
    job = "job '" + jobs_[static_cast<std::size_t>(a.job)].spec.id + "'";
  }
  throw PolicyError("policy '" + policy_.name() + "' at t=" + format_seconds(now_) + " s: action #" + std::to_string(index) + " (" +
                    to_string(a.kind) + " " + job + "): " + why);
}

// Device-list checks shared by start and move: count (rigid or elastic), existence,
// availability (devices the job already holds count as available), duplicates, physics.
void Simulator::check_devices(const Action& a, Span<DeviceId> devices, std::size_t index, const JobState& j) {
  const std::size_t n = devices.size();
  if (j.spec.is_elastic()) {
    if (n < static_cast<std::size_t>(j.spec.min_gpus) || n > static_cast<std::size_t>(j.spec.max_gpus)) {
      reject(index, a, "the elastic job runs on " + std::to_string(j.spec.min_gpus) + " to " + std::to_string(j.spec.max_gpus) +
                           " devices, got " + std::to_string(n));
    }
  } else if (n != static_cast<std::size_t>(j.spec.num_gpus)) {
    reject(index, a, "gang scheduling needs exactly " + std::to_string(j.spec.num_gpus) + " devices, got " + std::to_string(n));
  }
  for (DeviceId d : devices) {
    if (d < 0 || d >= spec_.num_devices()) {
      reject(index, a, "device " + std::to_string(d) + " does not exist (the cluster has devices 0.." +
                           std::to_string(spec_.num_devices() - 1) + ")");
    }
    if (cluster_.is_failed(d)) reject(index, a, why_failed(d));
    if (j.spec.is_fractional()) {
      // The job's own share (on a move to the same device) counts as available.
      int available = cluster_.free_milli(d);
      for (const ClusterState::Share& s : cluster_.shares(d)) {
        if (s.owner == a.job) available += s.milli;
      }
      if (available < j.spec.gpu_milli) {
        reject(index, a, "device " + std::to_string(d) + " has " + std::to_string(available) + " milli free, the job asks for " +
                             std::to_string(j.spec.gpu_milli));
      }
    } else if (cluster_.is_shared(d)) {
      reject(index, a, "device " + std::to_string(d) + " is shared by fractional jobs; a whole-GPU job needs it free");
    } else if (!cluster_.is_free(d) && cluster_.owner(d) != a.job) {
      const std::int64_t owner = cluster_.owner(d);
      reject(index, a, "device " + std::to_string(d) + " is already allocated to " +
                           (owner >= 0 ? "job '" + jobs_[static_cast<std::size_t>(owner)].spec.id + "'" : "an inference service"));
    }
  }
  if (n > 1 && n <= 16) {
    // A node's worth of devices: pairwise, without copying and sorting. The message
    // names the smallest duplicate, as the sorted scan below does.
    DeviceId dup = -1;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t k = i + 1; k < n; ++k) {
        if (devices[i] == devices[k] && (dup < 0 || devices[i] < dup)) dup = devices[i];
      }
    }
    if (dup >= 0) reject(index, a, "device " + std::to_string(dup) + " is listed twice");
  } else if (n > 16) {
    scratch_.assign(devices.begin(), devices.end());
    std::sort(scratch_.begin(), scratch_.end());
    auto dup = std::adjacent_find(scratch_.begin(), scratch_.end());
    if (dup != scratch_.end()) reject(index, a, "device " + std::to_string(*dup) + " is listed twice");
  }
  if (options_.physics) {
    const std::string problem = options_.physics->placement_problem(j.spec, devices);
    if (!problem.empty()) reject(index, a, problem);
  }
  if (SCHEDSIM_RARELY(!processes_.veto.empty())) {
    for (const WorldProcess* p : processes_.veto) {  // datacenters
      const std::string problem = p->placement_problem(j.spec, devices);
      if (!problem.empty()) reject(index, a, problem);
    }
  }
}

void Simulator::apply_start(const Action& a, Span<DeviceId> devices, std::size_t index) {
  if (a.job < 0 || static_cast<std::size_t>(a.job) >= jobs_.size() || !live_[static_cast<std::size_t>(a.job)]) {
    reject(index, a, "no such job in the system");
  }
  JobState& j = jobs_[static_cast<std::size_t>(a.job)];
  if (j.status != JobStatus::kPending) reject(index, a, std::string("the job is ") + to_string(j.status) + ", not pending");
  check_devices(a, devices, index, j);
  if (!j.bound_devices.empty()) {
    // A start of a job with bound devices must keep every one of them.
    std::string missing;
    for (DeviceId d : j.bound_devices) {
      if (std::find(devices.begin(), devices.end(), d) == devices.end()) missing += (missing.empty() ? "" : ", ") + std::to_string(d);
    }
    if (!missing.empty()) {
      reject(index, a, "the job has devices " + device_list(j.bound_devices) + " bound; the start must include them all (missing: " + missing + ")");
    }
  }
  start_job(a.job, devices);
}

// Starts the pending job on `devices` (validated), taking those it does not hold yet
// (bound devices are its already): from a start, or from the bind that completes its set.
void Simulator::start_job(JobSlot slot, Span<DeviceId> devices) {
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  if (j.bound_devices.empty()) {
    hold_devices(slot, devices);
  } else {
    account_bound(j);
    scratch_.clear();
    for (DeviceId d : devices) {
      if (cluster_.owner(d) != slot) scratch_.push_back(d);
    }
    hold_devices(slot, scratch_);
    bound_total_ -= static_cast<int>(j.bound_devices.size());
    j.bound_devices.clear();
  }
  list_remove(pending_, slot);
  --num_pending_;
  list_push(running_, slot);
  job_changed(slot, JobChange::kStarted);
  ++num_running_;
  j.devices.assign(devices.begin(), devices.end());
  if (j.preemptions == 0) j.start = now_;
  j.status = JobStatus::kRunning;
  j.last_update = now_;
  j.placed_since = now_;
  j.stall_end = Tick();
  // Without physics every job runs at rate 1 at once; with it, the rate comes from the
  // rate update at the end of this instant.
  j.physics_rate = options_.physics ? 0.0 : rate_factor(j);
  placement_changed(slot);
  // Another datacenter than the one holding the checkpoint (the datacenters process): WAN
  // transfer plus restart.
  double relocation_s = 0.0;
  StartOverhead overhead;
  if (SCHEDSIM_RARELY(!processes_.overhead.empty())) {
    for (WorldProcess* p : processes_.overhead) p->start_overhead(world_, slot, devices, false, overhead);
    relocation_s += overhead.extra_s;
  }
  if (overhead.restart) {  // e.g. rolled back by a failure: restart overhead instead of a restore
    stall(slot, overhead.restart_s + relocation_s, StallKind::kRestart);
    if (j.stall_event == 0) compute_begins(slot);
  } else if (j.has_checkpoint && (options_.physics || relocation_s > 0.0)) {
    stall(slot, (options_.physics ? options_.physics->checkpoint_restore_s(j.spec, static_cast<int>(devices.size())) : 0.0) + relocation_s);
  } else {
    schedule_completion(slot);
    compute_begins(slot);
  }
  ++stats_.actions;
  for (Observer* o : observers_) o->on_job_start(j);
}

std::string Simulator::device_list(Span<DeviceId> devices) {
  std::string out;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    std::size_t k = i;  // runs of consecutive ids as "a-b"
    while (k + 1 < devices.size() && devices[k + 1] == devices[k] + 1) ++k;
    if (!out.empty()) out += ", ";
    out += std::to_string(devices[i]);
    if (k > i) out += "-" + std::to_string(devices[k]);
    i = k;
  }
  return out;
}

void Simulator::account_bound(JobState& j) {
  j.bound_idle_device_us += static_cast<std::int64_t>(j.bound_devices.size()) * (now_ - j.bound_since).us();
  j.bound_since = now_;
}

// Binds free devices to a pending rigid job; the bind that completes the set starts it.
void Simulator::apply_bind(const Action& a, Span<DeviceId> devices, std::size_t index) {
  if (a.job < 0 || static_cast<std::size_t>(a.job) >= jobs_.size() || !live_[static_cast<std::size_t>(a.job)]) {
    reject(index, a, "no such job in the system");
  }
  JobState& j = jobs_[static_cast<std::size_t>(a.job)];
  if (j.status != JobStatus::kPending) reject(index, a, std::string("the job is ") + to_string(j.status) + ", not pending");
  if (j.spec.is_elastic()) reject(index, a, "devices are bound one by one to rigid jobs only; start the elastic job with a start action");
  if (j.spec.is_fractional()) reject(index, a, "devices are bound one by one to whole-GPU jobs only; start the fractional job with a start action");
  if (devices.empty()) reject(index, a, "a bind names at least one device");
  const std::size_t bound = j.bound_devices.size();
  const auto need = static_cast<std::size_t>(j.spec.num_gpus);
  if (bound + devices.size() > need) {
    reject(index, a, "the job asks for " + std::to_string(need) + " devices and has " + std::to_string(bound) + " bound; binding " +
                         std::to_string(devices.size()) + " more would exceed it");
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const DeviceId d = devices[i];
    if (d < 0 || d >= spec_.num_devices()) {
      reject(index, a, "device " + std::to_string(d) + " does not exist (the cluster has devices 0.." + std::to_string(spec_.num_devices() - 1) + ")");
    }
    if (std::find(devices.begin(), devices.begin() + static_cast<std::ptrdiff_t>(i), d) != devices.begin() + static_cast<std::ptrdiff_t>(i)) {
      reject(index, a, "device " + std::to_string(d) + " is listed twice");
    }
    if (cluster_.is_failed(d)) reject(index, a, why_failed(d));
    const std::int64_t owner = cluster_.owner(d);
    if (owner == a.job) reject(index, a, "device " + std::to_string(d) + " is already bound to this job");
    if (cluster_.is_shared(d)) reject(index, a, "device " + std::to_string(d) + " is shared by fractional jobs; binding needs it free");
    if (!cluster_.is_free(d)) {
      const bool other_pending = owner >= 0 && jobs_[static_cast<std::size_t>(owner)].status == JobStatus::kPending;
      reject(index, a, "device " + std::to_string(d) + (other_pending ? " is bound to job '" : " is already allocated to ") +
                           (owner >= 0 ? (other_pending ? "" : "job '") + jobs_[static_cast<std::size_t>(owner)].spec.id + "'" : "an inference service"));
    }
  }
  if (bound + devices.size() == need) {
    // The full set: the checks a start makes (physics, geography) on the whole set.
    scratch_.assign(j.bound_devices.begin(), j.bound_devices.end());
    scratch_.insert(scratch_.end(), devices.begin(), devices.end());
    const std::vector<DeviceId> all = scratch_;
    check_devices(a, all, index, j);
    start_job(a.job, all);
    return;
  }
  account_bound(j);
  cluster_.allocate(devices, a.job);
  bound_total_ += static_cast<int>(devices.size());
  j.bound_devices.insert(j.bound_devices.end(), devices.begin(), devices.end());
  ++stats_.actions;
  job_changed(a.job, JobChange::kPlacement);
}

void Simulator::apply_unbind(const Action& a, std::size_t index) {
  if (a.job < 0 || static_cast<std::size_t>(a.job) >= jobs_.size() || !live_[static_cast<std::size_t>(a.job)]) {
    reject(index, a, "no such job in the system");
  }
  if (a.num_devices != 0) reject(index, a, "an unbind names no devices (it releases all the job's bound devices)");
  JobState& j = jobs_[static_cast<std::size_t>(a.job)];
  if (j.status != JobStatus::kPending) reject(index, a, std::string("the job is ") + to_string(j.status) + ", not pending");
  ++stats_.actions;
  if (j.bound_devices.empty()) return;
  account_bound(j);
  cluster_.release(j.bound_devices, a.job);
  bound_total_ -= static_cast<int>(j.bound_devices.size());
  j.bound_devices.clear();
  job_changed(a.job, JobChange::kPlacement);
  dirty_ = true;  // freed devices: the policy may use them
}

// A device bound to a pending job failed or was taken back: the job loses that device
// only and keeps waiting with the others (docs/policies.md).
void Simulator::lose_bound_device(JobSlot slot, DeviceId d) {
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  account_bound(j);
  j.bound_devices.erase(std::remove(j.bound_devices.begin(), j.bound_devices.end(), d), j.bound_devices.end());
  --bound_total_;
  const DeviceId gone[] = {d};
  cluster_.release(Span<DeviceId>(gone, 1), slot);
  cluster_.mark_failed(d);
  job_changed(slot, JobChange::kPlacement);
}

void Simulator::apply_preempt(const Action& a, std::size_t index) {
  if (a.job < 0 || static_cast<std::size_t>(a.job) >= jobs_.size() || !live_[static_cast<std::size_t>(a.job)]) {
    reject(index, a, "no such job in the system");
  }
  if (a.num_devices != 0) reject(index, a, "a preemption names no devices");
  JobState& j = jobs_[static_cast<std::size_t>(a.job)];
  if (j.status != JobStatus::kRunning) reject(index, a, std::string("the job is ") + to_string(j.status) + ", not running");
  ++j.preemptions;
  ++stats_.preemptions;
  ++stats_.actions;
  j.status = JobStatus::kStopping;
  progress_interrupted(a.job, Interruption::kPreempted);  // the preemption's save supersedes a periodic one
  const double save_s = options_.physics ? options_.physics->checkpoint_save_s(j.spec, static_cast<int>(j.devices.size())) : 0.0;
  stall(a.job, save_s);  // also cancels the completion: a stopping job makes no progress
  if (j.stall_event == 0) finish_stop(a.job);  // free checkpoint: back in the queue at once
}

// A move pays save + restore on the new device set, during which the job makes no
// progress; devices it leaves are free at once. (A simplification: on a real cluster the
// old devices stay busy during the save; the wall-time cost is the same.)
void Simulator::apply_move(const Action& a, Span<DeviceId> devices, std::size_t index) {
  if (a.job < 0 || static_cast<std::size_t>(a.job) >= jobs_.size() || !live_[static_cast<std::size_t>(a.job)]) {
    reject(index, a, "no such job in the system");
  }
  JobState& j = jobs_[static_cast<std::size_t>(a.job)];
  if (j.status != JobStatus::kRunning) reject(index, a, std::string("the job is ") + to_string(j.status) + ", not running");
  check_devices(a, devices, index, j);
  double relocation_s = 0.0;  // the datacenters process's relocation
  if (SCHEDSIM_RARELY(!processes_.overhead.empty())) {
    StartOverhead overhead;
    for (WorldProcess* p : processes_.overhead) p->start_overhead(world_, a.job, devices, true, overhead);
    relocation_s += overhead.extra_s;
  }
  account_devices(j);
  progress_interrupted(a.job, Interruption::kMoving);  // e.g. the failures model: the move saves a checkpoint
  if (j.spec.is_fractional()) {  // one device: move the share unless it stays put
    if (devices[0] != j.devices[0]) {
      release_devices(a.job, j.devices);
      hold_devices(a.job, devices);
    }
  } else {  // release what the job leaves, then take what is new to it
    scratch_.clear();
    for (DeviceId d : j.devices) {
      if (std::find(devices.begin(), devices.end(), d) == devices.end()) scratch_.push_back(d);
    }
    release_devices(a.job, scratch_);
    scratch_.clear();
    for (DeviceId d : devices) {
      if (cluster_.owner(d) != a.job) scratch_.push_back(d);
    }
    cluster_.allocate(scratch_, a.job);
  }
  j.devices.assign(devices.begin(), devices.end());
  ++j.moves;
  ++stats_.moves;
  job_changed(a.job, JobChange::kPlacement);
  ++stats_.actions;
  placement_changed(a.job);
  double cost_s = 0.0;
  if (options_.physics) {
    const int n = static_cast<int>(devices.size());
    cost_s = options_.physics->checkpoint_save_s(j.spec, n) + options_.physics->checkpoint_restore_s(j.spec, n);
  }
  stall(a.job, cost_s + relocation_s);
  if (!options_.physics && rate_factors_) set_rate(a.job, rate_factor(j));  // stragglers, caps on the new devices
  if (j.stall_event == 0) compute_begins(a.job);
  for (Observer* o : observers_) o->on_job_start(j);
}

const std::vector<DeviceId>& Simulator::service_devices(int s) const {
  static const std::vector<DeviceId> kNone;
  return s >= 0 && s < num_services() ? services()[static_cast<std::size_t>(s)] : kNone;
}

void Simulator::apply(const ActionBatch& batch) {
  if (!paused_) throw InvariantError("Simulator::apply called outside a decision point");
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const Action& a = batch[i];
    const auto kind = static_cast<std::size_t>(a.kind);
    if (kind < processes_.action_owner.size() && processes_.action_owner[kind]) {  // a world process's action (e.g. thermal set-points)
      const std::string problem = processes_.action_owner[kind]->apply_action(world_, a, batch.devices(a));
      if (!problem.empty()) reject(i, a, problem);
      ++stats_.actions;
      continue;
    }
    switch (a.kind) {
      case ActionKind::kStart: apply_start(a, batch.devices(a), i); break;
      case ActionKind::kPreempt: apply_preempt(a, i); break;
      case ActionKind::kMove: apply_move(a, batch.devices(a), i); break;
      // World actions no registered process claims: the feature is not in this simulation.
      case ActionKind::kHold: reject(i, a, "no inference process holds devices for services in this simulation (world/inference/inference_process.hpp)");
      case ActionKind::kSetCooling: reject(i, a, "the scenario has no thermal model (add `thermal:` under `energy:` or under each datacenter)");
      case ActionKind::kBind: apply_bind(a, batch.devices(a), i); break;
      case ActionKind::kUnbind: apply_unbind(a, i); break;
    }
  }
  const Tick wake = batch.wake_time();
  if (wake > now_ && wake < wakeup_) {  // one pending wake-up: later requests are renewed when it fires
    wakeup_ = wake;
    queue_.schedule(wake, kWakeup, 0);
  }
}

void Simulator::update_rates() {
  new_rates_.clear();
  options_.physics->update_rates(*this, changed_, new_rates_);
  changed_.clear();
  ++stats_.rate_updates;
  for (const auto& [slot, rate] : new_rates_) {
    if (slot < 0 || static_cast<std::size_t>(slot) >= jobs_.size() || !live_[static_cast<std::size_t>(slot)] ||
        jobs_[static_cast<std::size_t>(slot)].devices.empty()) {
      throw InvariantError("physics set a rate for job slot " + std::to_string(slot) + ", which holds no devices");
    }
    job_changed(slot, JobChange::kRate);  // its compute utilization may change with an equal rate
    set_rate(slot, rate_factors_ ? rate * rate_factor(jobs_[static_cast<std::size_t>(slot)]) : rate);
  }
}

// Not inlined into the dozen call sites of job_changed (sim/simulator.hpp).
__attribute__((noinline)) void Simulator::push_job_change(JobSlot slot, JobChange what) {
  for (Observer* o : change_observers_) o->on_job_changed(slot, what);
}

void Simulator::finish_instant(bool instant_over) {
  if (instant_over && !changed_.empty()) update_rates();
  if (instant_over && SCHEDSIM_RARELY(!processes_.instant.empty())) {
    for (WorldProcess* p : processes_.instant) p->end_of_instant(world_);
  }
  for (Observer* o : observers_) o->after_event(*this);
  // The next completion's job record was last touched long ago: start loading it now.
  if (!queue_.empty()) {
    const Event& next = queue_.peek();
    if (next.kind == kCompletion) __builtin_prefetch(&jobs_[static_cast<std::size_t>(next.arg)]);
  }
}

bool Simulator::advance() {
  if (paused_) {
    paused_ = false;
    finish_instant(true);
  } else if (!started_) {
    started_ = true;
    pull_next_arrival();
    if (reasons_used_ != device_reason::kNone) cluster_.enable_reasons();
    for (WorldProcess* p : processes_.start) p->start(world_);
  }
  bool boundary = true;  // between instants: the previous one is over
  while (!queue_.empty()) {
    if (boundary && boundary_hook_ && queue_.next_time() >= next_boundary_) {
      next_boundary_ = Tick::from_us((queue_.next_time().us() / boundary_every_.us() + 1) * boundary_every_.us());
      boundary_hook_();
    }
    const Event e = queue_.pop();
    if (e.time < now_) throw InvariantError("time went backwards: event at " + format_seconds(e.time) + " s after " + format_seconds(now_) + " s");
    // Jobs in system x elapsed time: sums to the total JCT over a run (the RL reward).
    job_seconds_in_system_ += static_cast<double>(num_pending_ + num_running_) * (e.time - now_).seconds();
    now_ = e.time;
    switch (e.kind) {
      case kArrival: handle_arrival(); break;
      case kCompletion: handle_completion(e); break;
      case kStallEnd: handle_stall_end(e); break;
      case kWakeup:
        if (e.time == wakeup_) wakeup_ = Tick::max();
        dirty_ = true;
        break;
      default:
        if (e.kind < processes_.event_owner.size() && processes_.event_owner[e.kind]) {
          processes_.event_owner[e.kind]->handle(world_, e);
          break;
        }
        throw InvariantError("unknown event kind " + std::to_string(e.kind));
    }
    ++stats_.events;
    const bool instant_over = queue_.empty() || queue_.next_time() != now_;
    // The last instant, with jobs still pending, is a decision point even when nothing in
    // it changed: a policy or an agent that waited at the previous one (expecting the
    // event that just passed to help) gets its last chance before the run ends. Runs that
    // finish never reach this with jobs pending, so their outputs do not change.
    // (No loop: resuming from that pause finds the queue empty unless the decision acted.)
    const bool last_chance = queue_.empty() && num_pending_ > 0;
    if (instant_over && (dirty_ || last_chance)) {
      dirty_ = false;
      paused_ = true;
      ++stats_.decision_points;
      return true;
    }
    finish_instant(instant_over);
    boundary = instant_over;
  }
  finished_ = true;
  return false;
}

void Simulator::run() {
  while (advance()) {
    do {
      batch_.clear();
      policy_.decide(view_, batch_);
      apply(batch_);
    } while (!batch_.empty() && policy_.decide_again_after_actions());
  }
  if (num_pending_ > 0) {
    const JobState& j = jobs_[static_cast<std::size_t>(pending_.head)];
    // Jobs holding bound devices while they wait (non-gang placement): a deadlock, named.
    std::string bound;
    int bound_total = 0;
    for (JobSlot s = pending_.head; s != kNoJob; s = jobs_[static_cast<std::size_t>(s)].next_in_list) {
      const JobState& p = jobs_[static_cast<std::size_t>(s)];
      if (p.bound_devices.empty()) continue;
      bound_total += static_cast<int>(p.bound_devices.size());
      bound += (bound.empty() ? "" : ", ") + ("job '" + p.spec.id + "' holds devices " + device_list(p.bound_devices)) + " of " +
               std::to_string(p.spec.num_gpus);
    }
    if (!bound.empty()) {
      bound = "; " + std::to_string(bound_total) + " GPUs are bound to waiting jobs that cannot start (deadlock: " + bound + ")";
    }
    throw PolicyError("policy '" + policy_.name() + "' left " + std::to_string(num_pending_) +
                      " jobs waiting with nothing left to happen (first: job '" + j.spec.id + "' asking for " +
                      std::to_string(j.spec.num_gpus) + " GPUs, " + std::to_string(cluster_.free_devices()) +
                      " free)" + bound + "; the policy never started them");
  }
}

}  // namespace schedsim
