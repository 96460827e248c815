// What a policy sees of one job: SchedulerView::job() returns this view, not the kernel's
// JobState. It holds a pointer to the kernel's record and offers accessors for what a
// real scheduler knows: the request (all of JobSpec but the work it needs), the job's
// place in its life (status, devices, rate, preemptions) and the work it has attained.
// The true duration and the remaining work are not among them: a policy asks the
// scenario's information model (policies/information.hpp) for a job's size and time left,
// and the kernel's own models (physics, geography) for what depends on the request.
// Accessors are named after the JobSpec / JobState fields they read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/job.hpp"
#include "base/tick.hpp"

namespace schedsim {

class Geography;
class InformationModel;
class PhysicsModel;
class SchedulerView;

class JobView {
 public:
  // The request.
  const std::string& id() const { return s_->spec.id; }
  Tick submit() const { return s_->spec.submit; }
  int num_gpus() const { return s_->spec.num_gpus; }
  // Elastic jobs run on any device count in [min_gpus, max_gpus]; 0 = rigid.
  int min_gpus() const { return s_->spec.min_gpus; }
  int max_gpus() const { return s_->spec.max_gpus; }
  bool is_elastic() const { return s_->spec.is_elastic(); }
  // Share of each GPU in thousandths (1000 = whole GPUs); fractional jobs share a device.
  int gpu_milli() const { return s_->spec.gpu_milli; }
  bool is_fractional() const { return s_->spec.is_fractional(); }
  std::int64_t device_milli() const { return s_->spec.device_milli(); }
  const std::string& model() const { return s_->spec.model; }
  const std::string& gpu_type() const { return s_->spec.gpu_type; }
  // Production schedulers' fields: owner, queue / partition, priority, deadline.
  const std::string& user() const { return s_->spec.user; }
  const std::string& group() const { return s_->spec.group; }
  double priority() const { return s_->spec.priority; }
  double deadline_s() const { return s_->spec.deadline_s; }  // absolute, NaN = none
  const std::string& home_region() const { return s_->spec.home_region; }
  const std::vector<std::string>& allowed_regions() const { return s_->spec.allowed_regions; }
  // The user's runtime estimate as the scenario provides it (a trace column, a wall-time
  // limit), NaN when unknown. The size a policy may rank by is the information model's
  // estimated_total_s(), which falls back to other sources by the scenario's level.
  double estimate_s() const { return s_->spec.estimate_s; }
  bool has_estimate() const { return s_->spec.has_estimate(); }

  // Its life in the kernel.
  JobStatus status() const { return s_->status; }
  std::uint64_t arrival_seq() const { return s_->arrival_seq; }  // a stable tie-breaker
  Tick start() const { return s_->start; }                        // first start
  const std::vector<DeviceId>& devices() const { return s_->devices; }              // while running or stopping
  const std::vector<DeviceId>& bound_devices() const { return s_->bound_devices; }  // pending, ActionBatch::bind
  Tick placed_since() const { return s_->placed_since; }  // last change of the device set
  std::uint32_t preemptions() const { return s_->preemptions; }
  std::int32_t site() const { return s_->site; }  // datacenter of the last placement, -1 = none
  // What the hardware gives on the current placement (work-seconds per second), and the
  // rate now: 0 while a checkpoint save / restore stalls the job until stall_end().
  double physics_rate() const { return s_->physics_rate; }
  Tick stall_end() const { return s_->stall_end; }
  // The instant the kernel last brought the job's progress record up to date (it does so at
  // every change of the job's rate, stall, remaining work or status): an answer a policy
  // computed from the record stays valid while this and stall_end() are unchanged.
  Tick progress_as_of() const { return s_->last_update; }
  bool stalled(Tick now) const { return s_->stalled(now); }
  double rate(Tick now) const { return s_->rate(now); }
  // Attained service: work executed so far, work-seconds at rate 1 (elapsed run time
  // times the observed rate), known at every information level.
  double attained_work_s(Tick now) const { return s_->spec.duration_s - remaining_work_s(now); }

 private:
  friend class SchedulerView;     // makes views of its job table
  friend class InformationModel;  // the one reader of the true duration and remaining work
  friend class PhysicsModel;      // the kernel's models take the request (JobSpec) itself
  friend class Geography;
  explicit JobView(const JobState* state) : s_(state) {}
  // The kernel's remaining work at `now`: exact at last_update, then advancing at rate(now).
  double remaining_work_s(Tick now) const {
    const double elapsed_s = (now - s_->last_update).seconds();
    const double r = s_->remaining_work_s - s_->rate(now) * (elapsed_s > 0 ? elapsed_s : 0.0);
    return r > 0 ? r : 0.0;
  }
  const JobSpec& request() const { return s_->spec; }
  const JobState* s_;
};

}  // namespace schedsim
