// The scenario's `inference:` map (docs/config.md, docs/energy.md#inference-services):
// services with a request-rate curve (diurnal, or a CSV), bursts and drops, replica
// capacity by device type and a p99 SLO. Parsed strictly; files are loaded at parse time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "world/geography/datacenters_config.hpp"
#include "world/physics/accelerator_catalogue.hpp"
#include "sim/cluster_spec.hpp"
#include "base/config_node.hpp"
#include "world/inference/inference_service.hpp"

namespace schedsim {

struct InferenceConfig {
  std::shared_ptr<const std::vector<ServiceSpec>> services;
  YAML::Node resolved;  // every default filled in

  // `origin_utc_us` maps simulated time to UTC (the signals' origin); `datacenters` (may
  // be null) gives the names services may live in and their UTC offsets; `devices` the
  // cluster's device count (a service's pool must fit its datacenter).
  // With `cluster` (node groups) and `catalogue` a service may be request-level
  // (`requests` + `deployment` + `slo`, experiments/request_service.hpp): its deployment's
  // device must be the type its replicas run on; without them such a service is refused.
  static InferenceConfig parse(const ConfigNode& node, std::int64_t origin_utc_us, const DatacentersConfig* datacenters, int devices,
                               const std::vector<NodeGroup>* cluster = nullptr, const AcceleratorCatalogue* catalogue = nullptr);
};

}  // namespace schedsim
