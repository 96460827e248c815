// Jobs: the immutable request read from a trace or generated (JobSpec) and the kernel's
// mutable record of its life (JobState).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <string>
#include <vector>

#include "sim/cluster_spec.hpp"
#include "sim/event_queue.hpp"
#include "base/tick.hpp"

namespace schedsim {

// Index of a live job in the simulator's slot table. Slots are reused after a job ends,
// so a slot is only meaningful while the job is in the system.
using JobSlot = std::int32_t;
constexpr JobSlot kNoJob = -1;

// The outcome a trace recorded for a job (Philly, Helios, Acme and SWF record them).
// Replaying failed and killed jobs as such is the failures model's job; readers only
// carry the value through.
enum class RecordedStatus : std::uint8_t { kUnknown, kCompleted, kFailed, kKilled };

const char* to_string(RecordedStatus s);

struct JobSpec {
  std::string id;
  Tick submit;
  int num_gpus = 1;
  // Work in seconds of run time at full speed (rate 1). Without slowdowns this is the
  // job's run time, as recorded in a trace.
  double duration_s = 0.0;
  // The user's runtime estimate (e.g. a trace column or a wall-time limit); NaN when
  // unknown. Policies see it (or a noisy draw, or the truth) only through the scenario's
  // information model (policies/information.hpp), never duration_s directly.
  double estimate_s = std::numeric_limits<double>::quiet_NaN();
  // Where the job came from, for error messages: line in the trace (0 = generated).
  std::int64_t source_line = 0;

  // Optional attributes that traces carry; empty / NaN / default when unknown.
  std::string user;        // submitting user or tenant
  std::string group;       // virtual cluster, queue or partition
  std::string model;       // workload profile or job type, e.g. "ResNet-50 (batch size 64)"
  std::string gpu_type;    // device type the job asked for ("" = any)
  int gpu_milli = 1000;    // share of each GPU in thousandths (fractional requests); 1000 = whole GPUs
  double iterations = std::numeric_limits<double>::quiet_NaN();  // total steps, when work is given in steps
  double deadline_s = std::numeric_limits<double>::quiet_NaN();  // absolute time, seconds
  double priority = 0.0;   // larger = more important
  RecordedStatus recorded_status = RecordedStatus::kUnknown;
  // Elastic jobs may run on any device count in [min_gpus, max_gpus]; 0 = rigid.
  int min_gpus = 0;
  int max_gpus = 0;
  // Several datacenters (sim/datacenters.hpp): the region the job is submitted to and the
  // regions it may run in; empty = drawn from the configured weights / every region.
  std::string home_region;
  std::vector<std::string> allowed_regions;

  bool is_elastic() const { return max_gpus > 0; }
  // Shares one device with other jobs (gpu_milli < 1000; only with num_gpus = 1).
  bool is_fractional() const { return gpu_milli < 1000; }
  // Device-time weight in thousandths of a device: num_gpus x gpu_milli.
  std::int64_t device_milli() const { return static_cast<std::int64_t>(num_gpus) * gpu_milli; }

  bool has_estimate() const { return !std::isnan(estimate_s); }
};

// kStopping: preempted, still holding its devices while it saves a checkpoint; it
// returns to the queue when the save ends. kFailed / kKilled: ended as the trace
// recorded (failures model on, recorded outcomes kept separate).
enum class JobStatus : std::uint8_t { kPending, kRunning, kStopping, kCompleted, kFailed, kKilled };

// What a stalled job is doing (its device-time is booked under that heading).
enum class StallKind : std::uint8_t { kNone, kPreemption, kCheckpoint, kRestart };

// A committed checkpoint: progress saved (work-seconds) and the job's net compute
// device-time (compute - lost) at that moment, so that a rollback knows exactly how much
// device-time it throws away.
struct CheckpointMark {
  double progress_s = 0.0;
  std::int64_t compute_device_us = 0;
};

const char* to_string(JobStatus s);

// What happens to a JobState field when a job arrives in a reused slot
// (JobState::for_each_field): kDefault = back to its default value (vectors cleared),
// kSet = the kernel sets it from the arriving job, kKept = left as it is (set when used).
enum class OnArrival : std::uint8_t { kDefault, kSet, kKept };
// Marks, in JobState::for_each_field, where the per-job fields of the failures process's
// side table (world/failures/failure_process.hpp) sit in a job's snapshot record.
struct JobSideTable {};

struct JobState {
  JobSpec spec;
  JobStatus status = JobStatus::kPending;
  std::uint64_t arrival_seq = 0;  // 0, 1, 2... in arrival order: a stable tie-breaker
  Tick start;  // first start
  Tick end;
  std::vector<DeviceId> devices;  // held while running or stopping
  // Rate-based progress: remaining work is exact at last_update; between events the job
  // advances at rate() work-seconds per second: physics_rate, or 0 while stalled.
  double remaining_work_s = 0.0;
  double work_done_s = 0.0;     // sum of rate x time: equals duration_s at completion
  double physics_rate = 0.0;    // what the hardware gives on this placement
  Tick stall_end;               // checkpoint save/restore: no progress before this instant
  Tick last_update;
  EventId completion_event = 0;  // 0 = none scheduled
  EventId stall_event = 0;       // end of the current save/restore, 0 = none
  bool has_checkpoint = false;   // preempted before: the next start restores first
  // Accounting: device-time and wall time held (placed_since marks the last change of the
  // device set); end - submit - held = time spent waiting in the queue, preemptions included
  // and the part of it spent saving and restoring checkpoints.
  Tick placed_since;
  std::int64_t device_us = 0;
  std::int64_t held_us = 0;      // wall time holding devices (all placements)
  std::int64_t overhead_device_us = 0;
  std::uint32_t preemptions = 0;
  std::uint32_t moves = 0;       // migrations and resizes
  // Stalls, checkpoint marks and rollbacks (core: failures and spot reclamation roll
  // back); the failures process's timers live in its side table.
  StallKind stall_kind = StallKind::kNone;
  std::vector<CheckpointMark> checkpoints;  // [0] = the job's start; newest last
  double lost_work_s = 0.0;               // work rolled back (done again): work_done_s - lost_work_s = progress
  std::int64_t compute_device_us = 0;     // device-time while making progress
  std::int64_t lost_device_us = 0;        // compute device-time thrown away by rollbacks
  std::int64_t checkpoint_device_us = 0;  // stalled writing periodic checkpoints
  std::int64_t restart_device_us = 0;     // stalled restarting after a failure (and waiting for repair)
  std::uint32_t loss_spike_restarts = 0;
  std::uint32_t failure_restarts = 0;     // device or node failures that hit the job
  // Non-gang placement (ActionBatch::bind): devices held for the pending job, without
  // progress, since bound_since (last change of the set); bound_idle_device_us books
  // the device-time they were held so, up to bound_since.
  std::vector<DeviceId> bound_devices;
  Tick bound_since;
  std::int64_t bound_idle_device_us = 0;
  // Several datacenters: the site of the job's last placement (where its checkpoint is),
  // -1 before the first start or without a geography.
  std::int32_t site = -1;
  // Intrusive doubly linked list: pending jobs in queue order, or running/stopping jobs.
  JobSlot prev_in_list = kNoJob;
  JobSlot next_in_list = kNoJob;

  bool stalled(Tick now) const { return now < stall_end; }

  // Every field once, in snapshot order (the snapshot's byte layout), with what an
  // arrival does to it: f(field, OnArrival). A new field is added here and nowhere else
  // for reset and snapshot. JobSideTable marks where the failures process's per-job
  // fields go in the snapshot record.
  template <typename F>
  void for_each_field(F&& f) {
    using A = OnArrival;
    f(spec, A::kSet), f(status, A::kSet), f(arrival_seq, A::kSet), f(start, A::kKept), f(end, A::kKept), f(devices, A::kDefault);
    f(remaining_work_s, A::kSet), f(work_done_s, A::kDefault), f(physics_rate, A::kDefault), f(stall_end, A::kDefault), f(last_update, A::kSet);
    f(completion_event, A::kDefault), f(stall_event, A::kDefault), f(has_checkpoint, A::kDefault), f(placed_since, A::kKept);
    f(device_us, A::kDefault), f(held_us, A::kDefault), f(overhead_device_us, A::kDefault), f(preemptions, A::kDefault), f(moves, A::kDefault);
    f(stall_kind, A::kDefault), f(checkpoints, A::kSet);
    JobSideTable side_table;
    f(side_table, A::kKept);
    f(lost_work_s, A::kDefault), f(compute_device_us, A::kDefault), f(lost_device_us, A::kDefault), f(checkpoint_device_us, A::kDefault);
    f(restart_device_us, A::kDefault), f(loss_spike_restarts, A::kDefault), f(failure_restarts, A::kDefault), f(site, A::kSet);
    f(prev_in_list, A::kKept), f(next_in_list, A::kKept);
    f(bound_devices, A::kDefault), f(bound_since, A::kSet), f(bound_idle_device_us, A::kDefault);
  }
  // Resets the kDefault fields to a value-initialized T (every kDefault field's default
  // member initializer is that value; vectors are cleared, keeping their capacity); the
  // caller sets the kSet ones.
  void reset_for_arrival() {
    for_each_field([](auto& field, OnArrival what) {
      using T = std::decay_t<decltype(field)>;
      if (what != OnArrival::kDefault) return;
      if constexpr (std::is_same_v<T, std::vector<DeviceId>>) {
        field.clear();
      } else if constexpr (!std::is_same_v<T, JobSideTable>) {
        field = T{};
      }
    });
  }
  double rate(Tick now) const { return stalled(now) ? 0.0 : physics_rate; }
};

}  // namespace schedsim
