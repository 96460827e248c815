// physics.mixed_types: forbid for the placements outside the queue engine (gandiva,
// elastic-goodput): the kernel refuses a device set that spans types, so such a job takes
// all its devices from one type where it can run. Without the rule (or with one type, or
// no physics) every helper here works over the whole cluster, as before.
#pragma once

#include <algorithm>
#include <vector>

#include "policies/placement.hpp"
#include "world/geography/datacenters.hpp"
#include "sim/action.hpp"
#include "sim/policy.hpp"

namespace schedsim {

inline int device_type_of(const ClusterSpec& spec, DeviceId d) { return spec.node(spec.node_of(d)).type_index; }

// The types a job of `n` devices may be placed on, in index order: {-1} (any devices)
// when the run allows mixed types; else each type where its estimated rate is above 0.
inline std::vector<int> placement_types(const SchedulerView& view, const JobView& job, int n) {
  const PhysicsModel* physics = view.physics();
  const int types = static_cast<int>(view.cluster().device_types().size());
  if (!physics || physics->allows_mixed_types() || types == 1) return {-1};
  std::vector<int> out;
  for (int t = 0; t < types; ++t) {
    if (physics->estimated_rate(job, t, n) > 0) out.push_back(t);
  }
  return out;
}

// `n` devices of type `type` (-1 = any) into `out`: first fit from the free ones, the rest
// from `released` (devices this decision freed), taken from its back. False, taking
// nothing, when together they hold fewer than `n` of that type.
inline bool first_fit_then_of_type(FreeDevices& free, const ClusterSpec& spec, int type, int n, std::vector<DeviceId>& released, std::vector<DeviceId>& out) {
  if (type < 0) return free.first_fit_then(n, released, out);
  int of_type = 0;
  for (DeviceId d : released) of_type += device_type_of(spec, d) == type ? 1 : 0;
  // As many from the free devices as there are (first_fit claims nothing when it fails).
  for (int from_free = n; from_free >= n - of_type && from_free >= 0; --from_free) {
    const std::size_t before = out.size();
    if (!free.first_fit(from_free, out, type)) continue;
    int rest = n - from_free;
    for (std::size_t i = released.size(); rest > 0 && i-- > 0;) {
      if (device_type_of(spec, released[i]) != type) continue;
      out.push_back(released[i]);
      released.erase(released.begin() + static_cast<std::ptrdiff_t>(i));
      --rest;
    }
    if (rest == 0) return true;
    out.resize(before);  // cannot happen: of_type counted them
    return false;
  }
  return false;
}

// Several datacenters: the kernel runs a job inside one it may run in. The datacenters a
// job may use, its home first, then the others in order; {-1} (anywhere) with one.
inline std::vector<int> placement_sites(const SchedulerView& view, const JobView& job) {
  const Geography* geo = view.geography();
  if (!geo || geo->num_sites() <= 1) return {-1};
  return geo->placement_order(job);
}

// The devices of type `type` (-1 = any) in datacenter `site` (-1 = any), ascending.
inline std::vector<DeviceId> devices_in(const SchedulerView& view, int type, int site) {
  const ClusterSpec& spec = view.cluster();
  std::vector<DeviceId> out;
  for (int k = 0; k < spec.num_nodes(); ++k) {
    const NodeSpec& ns = spec.node(k);
    if (type >= 0 && ns.type_index != type) continue;
    if (site >= 0 && view.geography()->site_of_device(ns.first_device) != site) continue;
    for (int d = 0; d < ns.num_devices; ++d) out.push_back(ns.first_device + d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// first_fit_then_of_type inside datacenter `site` (-1: the whole cluster, exactly
// first_fit_then_of_type): the lowest free ids of that type there, the rest from
// `released` devices of the same type and datacenter.
inline bool first_fit_then_in(FreeDevices& free, const SchedulerView& view, int type, int site, int n, std::vector<DeviceId>& released,
                              std::vector<DeviceId>& out) {
  if (site < 0) return first_fit_then_of_type(free, view.cluster(), type, n, released, out);
  const Geography& geo = *view.geography();
  auto in_class = [&](DeviceId d) { return geo.site_of_device(d) == site && (type < 0 || device_type_of(view.cluster(), d) == type); };
  const std::vector<DeviceId> candidates = devices_in(view, type, site);
  int of_class = 0;
  for (DeviceId d : released) of_class += in_class(d) ? 1 : 0;
  for (int from_free = n; from_free >= n - of_class && from_free >= 0; --from_free) {
    const std::size_t before = out.size();
    if (!free.first_fit_among(from_free, candidates, out)) continue;
    int rest = n - from_free;
    for (std::size_t i = released.size(); rest > 0 && i-- > 0;) {
      if (!in_class(released[i])) continue;
      out.push_back(released[i]);
      released.erase(released.begin() + static_cast<std::ptrdiff_t>(i));
      --rest;
    }
    if (rest == 0) return true;
    out.resize(before);
    return false;
  }
  return false;
}

// Free devices of type `type` not yet handed out by the start actions in `batch`.
inline int free_of_type(const SchedulerView& view, int type, const ActionBatch& batch) {
  const ClusterState& state = view.cluster_state();
  int n = 0;
  for (DeviceId d = state.next_free(0); d >= 0; d = state.next_free(d + 1)) n += device_type_of(view.cluster(), d) == type ? 1 : 0;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (batch[i].kind != ActionKind::kStart) continue;
    for (DeviceId d : batch.devices(batch[i])) n -= state.is_free(d) && device_type_of(view.cluster(), d) == type ? 1 : 0;
  }
  return n;
}

}  // namespace schedsim
