// The thermal model (sim/thermal.hpp) as a world process: outside-temperature steps are
// its events (kind 11), cooling set-point actions (ActionKind::kSetCooling) are applied
// here, and throttling is its rate factor (the slowest device's speed, power caps
// included). The next step is scheduled at the end of each instant, only while a live
// event lies at or after it, so a run still ends at its last real event.
#pragma once

#include "sim/world_process.hpp"

namespace schedsim {

class ThermalModel;

class ThermalProcess final : public WorldProcess {
 public:
  // `model` must outlive the process; its device speeds include the power caps'.
  explicit ThermalProcess(ThermalModel& model) : model_(model) {}

  const char* name() const override { return "thermal"; }
  std::uint32_t hooks() const override { return kStart | kEvents | kRateFactor | kActions | kEndOfInstant | kSnapshot; }
  const ThermalModel& model() const { return model_; }

  void start(WorldContext& ctx) override;
  std::vector<std::uint32_t> event_kinds() const override { return {event_kind::kThermalStep}; }
  void handle(WorldContext& ctx, const Event& e) override;
  double rate_factor(const JobState& j) const override;
  std::vector<ActionKind> action_kinds() const override { return {ActionKind::kSetCooling}; }
  std::string apply_action(WorldContext& ctx, const Action& a, Span<DeviceId> devices) override;
  void end_of_instant(WorldContext& ctx) override { schedule_step(ctx); }
  SnapshotSlot snapshot_slot() const override { return SnapshotSlot::kAfterDeviceTable; }
  void snapshot(SnapshotArchive& ar) override;
  void expose(ExposedModels& m) const override { m.thermal = &model_; }

 private:
  // Running jobs on a device whose speed changed get their rate recomputed.
  void rerate(WorldContext& ctx);
  void schedule_step(WorldContext& ctx);

  ThermalModel& model_;
  bool step_pending_ = false;  // a kThermalStep event is in the queue
};

}  // namespace schedsim
