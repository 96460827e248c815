#include "world/inference/inference_process.hpp"

#include <algorithm>

#include "sim/simulator.hpp"
#include "sim/snapshot_archive.hpp"

namespace schedsim {

std::string InferenceProcess::apply_action(WorldContext& ctx, const Action& a, Span<DeviceId> devices) {
  const int s = a.job;
  if (s < 0 || s > 1'000'000) return "no such inference service (index " + std::to_string(s) + ")";
  if (static_cast<std::size_t>(s) >= held_.size()) held_.resize(static_cast<std::size_t>(s) + 1);
  std::vector<DeviceId>& held = held_[static_cast<std::size_t>(s)];
  const std::int64_t owner = Simulator::service_owner(s);
  const ClusterState& cluster = ctx.cluster();
  for (DeviceId d : devices) {
    if (d < 0 || d >= ctx.spec().num_devices()) return "device " + std::to_string(d) + " does not exist";
    if (cluster.owner(d) == owner) continue;
    if (cluster.is_failed(d)) {
      const bool taken_back = (ctx.reasons(d) & device_reason::kTakenBack) != 0;
      return "device " + std::to_string(d) + (taken_back ? " has been taken back by its spot provider" : " has failed and is under repair");
    }
    if (!cluster.is_free(d)) return "device " + std::to_string(d) + " is not free";
  }
  scratch_.assign(devices.begin(), devices.end());
  std::sort(scratch_.begin(), scratch_.end());
  if (std::adjacent_find(scratch_.begin(), scratch_.end()) != scratch_.end()) return "a device is listed twice";
  dropped_.clear();
  added_.clear();
  for (DeviceId d : held) {
    if (!std::binary_search(scratch_.begin(), scratch_.end(), d)) dropped_.push_back(d);
  }
  for (DeviceId d : scratch_) {
    if (cluster.owner(d) != owner) added_.push_back(d);
  }
  ctx.release_held(dropped_, owner);
  ctx.hold_devices(added_, owner);
  held = scratch_;
  if (!dropped_.empty()) ctx.mark_decision_point();  // freed devices: the policy may use them
  return {};
}

void InferenceProcess::lose_held_device(WorldContext& ctx, DeviceId d) {
  const std::int64_t service = ctx.cluster().owner(d);
  std::vector<DeviceId>& held = held_[static_cast<std::size_t>(Simulator::service_owner(0) - service)];
  held.erase(std::remove(held.begin(), held.end(), d), held.end());
  const DeviceId gone[] = {d};
  ctx.release_held(Span<DeviceId>(gone, 1), service);  // out of service: it goes to the failed state
}

void InferenceProcess::snapshot(SnapshotArchive& ar) { ar(held_); }

}  // namespace schedsim
