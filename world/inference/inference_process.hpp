// Inference services' device holds as a world process: ActionKind::kHold sets the
// devices a service holds (its replicas), and a held device that goes out of service (a
// failure, a spot reclamation) is lost by the service at once, so the world's meter counts
// one replica device fewer. Policies read the holds through SchedulerView::service_devices.
#pragma once

#include <vector>

#include "sim/world_process.hpp"

namespace schedsim {

class InferenceProcess final : public WorldProcess {
 public:
  const char* name() const override { return "inference"; }
  std::uint32_t hooks() const override { return kActions | kHeldDevices | kSnapshot; }

  std::vector<ActionKind> action_kinds() const override { return {ActionKind::kHold}; }
  // A service's replicas: devices it newly holds must be free; devices it drops are free
  // at once (a replica stops serving without a checkpoint).
  std::string apply_action(WorldContext& ctx, const Action& a, Span<DeviceId> devices) override;
  void lose_held_device(WorldContext& ctx, DeviceId d) override;
  void expose(ExposedModels& m) const override { m.service_devices = &held_; }
  // Its table sits where the kernel's was (SnapshotSlot::kHeldDevices), so snapshot
  // bytes are what they were; the kernel checks it against the cluster's owners.
  SnapshotSlot snapshot_slot() const override { return SnapshotSlot::kHeldDevices; }
  void snapshot(SnapshotArchive& ar) override;

  const std::vector<std::vector<DeviceId>>& held() const { return held_; }

 private:
  std::vector<std::vector<DeviceId>> held_;  // by service, ascending device ids
  std::vector<DeviceId> scratch_, dropped_, added_;
};

}  // namespace schedsim
