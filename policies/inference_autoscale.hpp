// inference: runs the scenario's inference services (`inference:`, sim/inference_service.hpp)
// in front of a training policy (`base`). Each service keeps a pool of max_replicas x
// gpus_per_replica devices in its datacenter, taken from free devices before the base
// policy sees them (replicas are allocations that compete with training). At every
// autoscaling tick it sets its active replica count:
//   reactive:   ceil(rate now / (capacity x target_utilization)), from the observed rate;
//   predictive: the fewest replicas whose M/M/c p99 meets the SLO at the largest rate the
//               forecast of the base curve (bursts and drops are not forecast) shows over
//               [now, now + interval_s + lead_s].
// With `lend: true` pool devices that no active replica needs are lent to running elastic
// training jobs of that datacenter (grown with a move, up to their max_gpus); when load
// returns the service takes them back by shrinking those jobs (a move, which pays the
// physics model's checkpoint save and restore: the preemption cost). Metrics (results.json
// -> inference): SLO violation minutes (the p99 of M/M/c at the rate and the replicas in
// service above the SLO, or unstable), replica-hours, and the device-hours training
// gained from borrowing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "policies/registry.hpp"

namespace schedsim {

struct ServiceMetrics {
  std::string name;
  double slo_violation_s = 0.0;
  double replica_s = 0.0;          // active replicas x time
  double borrowed_device_s = 0.0;  // pool devices lent to training x time
  std::uint64_t lends = 0;         // jobs grown onto lent devices
  std::uint64_t reclaims = 0;      // jobs shrunk to give devices back
  int peak_replicas = 0;
};

// Implemented by policies that run inference services; the runner reports these.
class InferenceMetricsSource {
 public:
  virtual ~InferenceMetricsSource() = default;
  virtual std::vector<ServiceMetrics> inference_metrics() const = 0;
};

PolicyInfo inference_policy_info();

}  // namespace schedsim
