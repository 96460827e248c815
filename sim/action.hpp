// Decisions are batches of actions. A policy fills an ActionBatch at a decision point;
// the kernel validates every action in order and applies it, or rejects it with a
// PolicyError naming the policy, the time, the action and the reason.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cluster_spec.hpp"
#include "sim/job.hpp"
#include "base/span.hpp"
#include "base/tick.hpp"

namespace schedsim {

enum class ActionKind : std::uint8_t {
  kStart,    // run a pending job on exactly num_gpus free devices (gang: all or nothing);
             // elastic jobs on any count in [min_gpus, max_gpus]
  kPreempt,  // stop a running job: it saves a checkpoint, then returns to the queue
  kMove,     // migrate or resize a running job to a new device set (may overlap the old)
  kHold,     // set the devices an inference service holds (its replicas) to exactly these;
             // `job` is the service index (sim/inference_service.hpp), not a job
  kSetCooling,  // set a datacenter's cooling set-point (sim/thermal.hpp): `job` is the
                // datacenter index (0 for one cluster), `value` the set-point in °C
  kBind,    // non-gang placement: add free devices to a pending rigid job's bound set; the
            // job holds them without progress and starts once num_gpus are bound
  kUnbind,  // release every device bound to a pending job (timeouts, deadlock recovery)
};

const char* to_string(ActionKind k);

struct Action {
  ActionKind kind = ActionKind::kStart;
  JobSlot job = kNoJob;
  std::uint32_t first_device = 0;  // offset into the batch's device buffer
  std::uint32_t num_devices = 0;
  double value = 0.0;  // kSetCooling: the set-point, °C
};

class ActionBatch {
 public:
  void start(JobSlot job, Span<DeviceId> devices) { add(ActionKind::kStart, job, devices); }
  void preempt(JobSlot job) { add(ActionKind::kPreempt, job, {}); }
  void move(JobSlot job, Span<DeviceId> devices) { add(ActionKind::kMove, job, devices); }
  void hold(int service, Span<DeviceId> devices) { add(ActionKind::kHold, service, devices); }
  // Binds `devices` (free, not yet bound to it) to the pending rigid `job`; once its bound
  // set reaches num_gpus the kernel starts it there, as a start would (docs/policies.md).
  void bind(JobSlot job, Span<DeviceId> devices) { add(ActionKind::kBind, job, devices); }
  // Releases every device bound to the pending `job` (nothing bound: no effect).
  void unbind(JobSlot job) { add(ActionKind::kUnbind, job, {}); }
  void set_cooling_setpoint(int datacenter, double setpoint_c) {
    add(ActionKind::kSetCooling, datacenter, {});
    actions_.back().value = setpoint_c;
  }
  // Asks for a decision point at `t` (the earliest of the requests counts) even if no
  // other event happens then: how a policy that defers jobs gets back to them.
  void wake_at(Tick t) {
    if (t < wake_) wake_ = t;
  }
  Tick wake_time() const { return wake_; }
  void clear() {
    actions_.clear();
    devices_.clear();
    wake_ = Tick::max();
  }
  std::size_t size() const { return actions_.size(); }
  bool empty() const { return actions_.empty(); }
  const Action& operator[](std::size_t i) const { return actions_[i]; }
  Span<DeviceId> devices(const Action& a) const { return Span<DeviceId>(devices_.data() + a.first_device, a.num_devices); }

 private:
  void add(ActionKind kind, JobSlot job, Span<DeviceId> devices) {
    actions_.push_back(Action{kind, job, static_cast<std::uint32_t>(devices_.size()), static_cast<std::uint32_t>(devices.size()), 0.0});
    devices_.insert(devices_.end(), devices.begin(), devices.end());
  }

  std::vector<Action> actions_;
  std::vector<DeviceId> devices_;  // one flat buffer: no allocation per action
  Tick wake_ = Tick::max();
};

}  // namespace schedsim
