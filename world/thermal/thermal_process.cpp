#include "world/thermal/thermal_process.hpp"

#include <algorithm>

#include "sim/snapshot_archive.hpp"
#include "world/thermal/thermal.hpp"
#include "sim/simulator.hpp"  // WorldContext's inline accessors

namespace schedsim {

void ThermalProcess::start(WorldContext& ctx) {
  model_.update(ctx.now());
  schedule_step(ctx);
}

void ThermalProcess::handle(WorldContext& ctx, const Event&) {
  step_pending_ = false;
  if (model_.update(ctx.now())) rerate(ctx);
  ctx.mark_decision_point();  // like a signal change: set-points may be revisited
}

double ThermalProcess::rate_factor(const JobState& j) const {
  // Throttled (and capped) devices: the slowest one sets the job's pace.
  const std::vector<double>& speed = model_.device_speed();
  double slowest = 1.0;
  for (DeviceId d : j.devices) slowest = std::min(slowest, speed[static_cast<std::size_t>(d)]);
  return slowest;
}

std::string ThermalProcess::apply_action(WorldContext& ctx, const Action& a, Span<DeviceId>) {
  if (a.num_devices != 0) return "a set-point action names no devices";
  std::string problem = model_.setpoint_problem(a.job, a.value);
  if (!problem.empty()) return problem;
  if (model_.set_setpoint(a.job, a.value)) rerate(ctx);
  return {};
}

void ThermalProcess::rerate(WorldContext& ctx) {
  for (JobSlot slot = ctx.first_running(); slot != kNoJob; slot = ctx.next_running(slot)) {
    const JobState& j = ctx.job(slot);
    if (j.status != JobStatus::kRunning) continue;  // a stopping job makes no progress
    bool hit = false;
    for (DeviceId d : j.devices) hit = hit || model_.speed_changed(d);
    if (hit) ctx.rate_factor_changed(slot);
  }
}

void ThermalProcess::schedule_step(WorldContext& ctx) {
  if (step_pending_ || ctx.queue_empty()) return;
  const Tick next = model_.next_change(ctx.now());
  if (next == Tick::max() || next > ctx.next_event_time()) return;
  ctx.schedule(next, event_kind::kThermalStep, 0);
  step_pending_ = true;
}

void ThermalProcess::snapshot(SnapshotArchive& ar) {
  ar(step_pending_);
  model_.snapshot(ar);
}

}  // namespace schedsim
