// inference: the autoscaler of the scenario's inference services (`inference:`,
// sim/inference_service.hpp), a decorator in front of a training policy (`base`). The
// services, their load and their SLO metering are the world's (sim/service_meter.hpp):
// they run under every policy, and the runner puts this autoscaler, with the scenario's
// `inference.autoscaler` settings, in front of any policy that scales no services itself
// (default_autoscaler below). Each service keeps a pool of max_replicas x
// gpus_per_replica devices in its datacenter, taken from free devices before the base
// policy sees them (replicas are allocations that compete with training). At every
// autoscaling tick it sets its active replica count:
//   reactive:   ceil(rate now / (capacity x target_utilization)), from the observed rate;
//   predictive: the fewest replicas whose M/M/c p99 meets the SLO at the largest rate the
//               forecast of the base curve (bursts and drops are not forecast) shows over
//               [now, now + interval_s + lead_s].
// It holds the pool with ActionBatch::hold (the meter reads the held devices from the
// kernel) and tells the meter which replicas of the pool are active. With `lend: true` pool devices that no active
// replica needs are lent to running elastic training jobs of that datacenter (grown with
// a move, up to their max_gpus); when load returns the service takes them back by
// shrinking those jobs (a move, which pays the physics model's checkpoint save and
// restore: the preemption cost). It reports the lending half of the metrics: the
// device-hours training gained from borrowing, lends and reclaims.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "policies/registry.hpp"
#include "world/inference/service_meter.hpp"

namespace schedsim {

// Implemented by policies that scale inference services: name, borrowed_device_s, lends
// and reclaims of each service (the SLO and replica fields are the meter's).
class InferenceMetricsSource {
 public:
  virtual ~InferenceMetricsSource() = default;
  virtual std::vector<ServiceMetrics> inference_metrics() const = 0;
};

// The autoscaler's settings: the `inference` policy's options, and the scenario's
// `inference.autoscaler` (the settings of the default autoscaler).
struct AutoscalerSettings {
  bool predictive = false;          // reactive (observed rate) or predictive (forecast curve)
  double target_utilization = 0.6;  // reactive: target replica utilization, (0, 1]
  double interval_s = 300.0;        // between autoscaling decisions
  double lead_s = 300.0;            // predictive: how far past the next interval it looks
  bool lend = true;                 // lend idle pool devices to running elastic training
};
// The settings a config map gives: `kind_key` (reactive | predictive; "autoscaler" in the
// policy's options, "name" in the scenario's map), target_utilization, interval_s,
// lead_s, lend, each defaulted. Other keys are the caller's to check.
AutoscalerSettings parse_autoscaler_settings(const ConfigNode& map, const std::string& kind_key);
// The scenario's `inference.autoscaler`: a name (reactive | predictive) or {name,
// target_utilization, interval_s, lead_s, lend}.
AutoscalerSettings parse_scenario_autoscaler(const ConfigNode& node);

PolicyInfo inference_policy_info();

// Whether `policy` scales services itself: it is an InferenceMetricsSource, or its
// resolved config names the `inference` policy anywhere (e.g. as a nested base).
bool scales_services(const Policy& policy, const YAML::Node& resolved);

// The default autoscaler in front of `base` (which must outlive it), as the `inference`
// policy with `settings`; it reports `base`'s name.
std::unique_ptr<Policy> default_autoscaler(Policy& base, const AutoscalerSettings& settings, std::shared_ptr<const std::vector<ServiceSpec>> services);

// {name: reactive|predictive, target_utilization, interval_s, lead_s, lend}.
YAML::Node autoscaler_yaml(const AutoscalerSettings& settings);

}  // namespace schedsim
