#include "sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "sim/error.hpp"

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
    case JobStatus::kCompleted: return "completed";
  }
  return "unknown";
}

Simulator::Simulator(const ClusterSpec& cluster, JobSource& source, Policy& policy, SimulatorOptions options)
    : spec_(cluster), source_(source), policy_(policy), options_(options), source_name_(source.describe()), cluster_(cluster) {
  view_.now_ = &now_;
  view_.state_ = &cluster_;
  view_.jobs_ = &jobs_;
  view_.pending_head_ = &pending_head_;
  view_.num_pending_ = &num_pending_;
  view_.num_running_ = &num_running_;
}

std::string Simulator::where(const JobSpec& spec) const {
  std::string w = source_name_;
  if (spec.source_line > 0) w += ":" + std::to_string(spec.source_line);
  return w + ": job '" + spec.id + "'";
}

void Simulator::pull_next_arrival() {
  while (source_.next(next_job_)) {
    const JobSpec& j = next_job_;
    // The sources validate their input; these guards keep a faulty source from
    // corrupting the run.
    if (j.num_gpus < 1) throw InputError(where(j), "asks for " + std::to_string(j.num_gpus) + " GPUs; must be at least 1");
    if (!(j.duration_s > 0) || !std::isfinite(j.duration_s)) {
      throw InputError(where(j), "duration must be a positive finite number of seconds");
    }
    if (j.submit < last_submit_) {
      throw InputError(where(j), "submitted at " + format_seconds(j.submit) + " s, before the previous job (" +
                                     format_seconds(last_submit_) + " s); the source must be sorted by submit time");
    }
    last_submit_ = j.submit;
    if (j.num_gpus > spec_.num_devices()) {
      if (options_.oversized == OversizedMode::kError) {
        throw InputError(where(j), "asks for " + std::to_string(j.num_gpus) + " GPUs but the cluster has " +
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

void Simulator::push_pending(JobSlot slot) {
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  j.prev_pending = pending_tail_;
  j.next_pending = kNoJob;
  if (pending_tail_ != kNoJob) jobs_[static_cast<std::size_t>(pending_tail_)].next_pending = slot;
  else pending_head_ = slot;
  pending_tail_ = slot;
  ++num_pending_;
}

void Simulator::remove_pending(JobSlot slot) {
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  if (j.prev_pending != kNoJob) jobs_[static_cast<std::size_t>(j.prev_pending)].next_pending = j.next_pending;
  else pending_head_ = j.next_pending;
  if (j.next_pending != kNoJob) jobs_[static_cast<std::size_t>(j.next_pending)].prev_pending = j.prev_pending;
  else pending_tail_ = j.prev_pending;
  j.prev_pending = j.next_pending = kNoJob;
  --num_pending_;
}

void Simulator::handle_arrival() {
  const JobSlot slot = alloc_slot();
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  std::swap(j.spec, next_job_);  // swap, not copy: reuses the slot's string buffers
  j.status = JobStatus::kPending;
  j.arrival_seq = next_arrival_seq_++;
  j.remaining_work_s = j.spec.duration_s;
  j.rate = 0.0;
  j.last_update = now_;
  j.completion_event = 0;
  j.devices.clear();
  push_pending(slot);
  ++stats_.jobs_arrived;
  dirty_ = true;
  for (Observer* o : observers_) o->on_job_arrival(j);
  policy_.on_job_queued(view_, slot);
  pull_next_arrival();
}

void Simulator::advance(JobState& j) {
  j.remaining_work_s -= j.rate * (now_ - j.last_update).seconds();
  j.last_update = now_;
}

void Simulator::schedule_completion(JobSlot slot) {
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  if (j.completion_event != 0) queue_.cancel(j.completion_event);
  j.completion_event = 0;
  if (j.rate <= 0.0) return;  // stalled: completes only when its rate is raised again
  const double left_s = std::max(0.0, j.remaining_work_s) / j.rate;
  j.completion_event = queue_.schedule(now_ + Tick::from_seconds(left_s), kCompletion, slot);
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
  const double tolerance = j.rate * 1e-6 + 1e-9 * j.spec.duration_s;
  if (std::fabs(j.remaining_work_s) > tolerance) {
    throw InvariantError("job '" + j.spec.id + "' completed with " + std::to_string(j.remaining_work_s) +
                         " s of work left (work not conserved)");
  }
  j.remaining_work_s = 0.0;
  j.rate = 0.0;
  j.completion_event = 0;
  j.status = JobStatus::kCompleted;
  j.end = now_;
  cluster_.release(j.devices, slot);
  --num_running_;
  ++stats_.jobs_completed;
  dirty_ = true;
  for (Observer* o : observers_) o->on_job_end(j);
  policy_.on_job_finished(view_, slot);
  free_slot(slot);
}

void Simulator::reject(std::size_t index, const Action& a, const std::string& why) const {
  std::string job = "job slot " + std::to_string(a.job);
  if (a.job >= 0 && static_cast<std::size_t>(a.job) < jobs_.size() && live_[static_cast<std::size_t>(a.job)]) {
    job = "job '" + jobs_[static_cast<std::size_t>(a.job)].spec.id + "'";
  }
  throw PolicyError("policy '" + policy_.name() + "' at t=" + format_seconds(now_) + " s: action #" + std::to_string(index) +
                    " (start " + job + "): " + why);
}

void Simulator::apply_start(const Action& a, Span<DeviceId> devices, std::size_t index) {
  if (a.job < 0 || static_cast<std::size_t>(a.job) >= jobs_.size() || !live_[static_cast<std::size_t>(a.job)]) {
    reject(index, a, "no such job in the system");
  }
  JobState& j = jobs_[static_cast<std::size_t>(a.job)];
  if (j.status != JobStatus::kPending) reject(index, a, std::string("the job is ") + to_string(j.status) + ", not pending");
  if (devices.size() != static_cast<std::size_t>(j.spec.num_gpus)) {
    reject(index, a, "gang scheduling needs exactly " + std::to_string(j.spec.num_gpus) + " devices, got " +
                         std::to_string(devices.size()));
  }
  for (DeviceId d : devices) {
    if (d < 0 || d >= spec_.num_devices()) {
      reject(index, a, "device " + std::to_string(d) + " does not exist (the cluster has devices 0.." +
                           std::to_string(spec_.num_devices() - 1) + ")");
    }
    if (!cluster_.is_free(d)) {
      const auto owner = static_cast<std::size_t>(cluster_.owner(d));
      reject(index, a, "device " + std::to_string(d) + " is already allocated to job '" + jobs_[owner].spec.id + "'");
    }
  }
  if (devices.size() > 1) {
    scratch_.assign(devices.begin(), devices.end());
    std::sort(scratch_.begin(), scratch_.end());
    auto dup = std::adjacent_find(scratch_.begin(), scratch_.end());
    if (dup != scratch_.end()) reject(index, a, "device " + std::to_string(*dup) + " is listed twice");
  }
  cluster_.allocate(devices, a.job);
  remove_pending(a.job);
  j.devices.assign(devices.begin(), devices.end());
  j.status = JobStatus::kRunning;
  j.start = now_;
  j.last_update = now_;
  j.rate = 1.0;
  ++num_running_;
  schedule_completion(a.job);
  ++stats_.actions;
  for (Observer* o : observers_) o->on_job_start(j);
}

void Simulator::decision_point() {
  batch_.clear();
  policy_.decide(view_, batch_);
  ++stats_.decision_points;
  for (std::size_t i = 0; i < batch_.size(); ++i) {
    const Action& a = batch_[i];
    switch (a.kind) {
      case ActionKind::kStart: apply_start(a, batch_.devices(a), i); break;
    }
  }
}

void Simulator::run() {
  pull_next_arrival();
  while (!queue_.empty()) {
    const Event e = queue_.pop();
    if (e.time < now_) throw InvariantError("time went backwards: event at " + format_seconds(e.time) + " s after " + format_seconds(now_) + " s");
    now_ = e.time;
    switch (e.kind) {
      case kArrival: handle_arrival(); break;
      case kCompletion: handle_completion(e); break;
      default: throw InvariantError("unknown event kind " + std::to_string(e.kind));
    }
    ++stats_.events;
    for (Observer* o : observers_) o->after_event(*this);
    // The next completion's job record was last touched long ago: start loading it now.
    if (!queue_.empty()) {
      const Event& next = queue_.peek();
      if (next.kind == kCompletion) __builtin_prefetch(&jobs_[static_cast<std::size_t>(next.arg)]);
    }
    if (dirty_ && (queue_.empty() || queue_.next_time() != now_)) {
      dirty_ = false;
      decision_point();
    }
  }
  if (num_pending_ > 0) {
    const JobState& j = jobs_[static_cast<std::size_t>(pending_head_)];
    throw PolicyError("policy '" + policy_.name() + "' left " + std::to_string(num_pending_) +
                      " jobs waiting with nothing left to happen (first: job '" + j.spec.id + "' asking for " +
                      std::to_string(j.spec.num_gpus) + " GPUs, " + std::to_string(cluster_.free_devices()) +
                      " free); the policy never started them");
  }
}

}  // namespace schedsim
