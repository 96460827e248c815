// LAS: least attained service first (Tiresias' 2D-LAS when discretized): attained
// service is GPUs x executed time (or executed time alone, thresholds_s); discretized
// queues with thresholds, a starvation guard, and demotion at the next decision point or
// exactly at the crossing (a policy timer).
#pragma once

#include <cstdint>
#include <vector>

#include "policies/queue_order.hpp"
#include "policies/registry.hpp"

namespace schedsim {

// What attained service counts: GPUs x executed time (Tiresias' 2D-LAS, dlas-gpu), or
// executed time alone (Tiresias' dlas). Executed time is work done, in work-seconds
// (wall seconds at rate 1).
enum class LasService : std::uint8_t { kGpuTime, kTime };

// When a running job that crosses a threshold is demoted: at the next decision point
// (arrival, completion, ...), or exactly at the crossing (a policy timer).
enum class LasDemotion : std::uint8_t { kNextEvent, kExact };

struct LasOptions {
  bool discretized = true;
  LasService service = LasService::kGpuTime;
  LasDemotion demotion = LasDemotion::kNextEvent;
  // Queue boundaries in attained service (GPU-seconds, or seconds for LasService::kTime),
  // increasing: a job with less service than thresholds[0] is in queue 0 (served first),
  // and so on.
  std::vector<double> thresholds = {3600.0};
  // A queued job that has waited longer than this multiple of its executed time (since
  // its last promotion) goes back to the first queue; 0 turns the guard off.
  double starvation_multiple = 10.0;
};

// The LAS order with `defaults` for its keys (presets change them).
OrderKind las_order(const LasOptions& defaults = {});
PolicyInfo las_policy_info();

}  // namespace schedsim
