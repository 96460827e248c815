// The scenario's `datacenters:` map (docs/energy.md, docs/config.md): several sites, each
// with its node groups, PUE, UTC offset and price / carbon signals, the WAN between them
// and what moving a job between them costs. Parsed strictly; signal files are loaded at
// parse time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "world/energy/energy_config.hpp"
#include "world/thermal/thermal_config.hpp"
#include "sim/cluster_spec.hpp"
#include "base/config_node.hpp"
#include "world/geography/datacenters.hpp"

namespace schedsim {

// A `nodes:` list ({count, type, devices_per_node} maps), with `total_devices` counting
// across calls (limits apply to the whole scenario).
std::vector<NodeGroup> parse_node_groups(const ConfigNode& nodes, std::int64_t& total_devices);

// Size limits of a scenario (docs/config.md#limits), checked before anything is built.
inline constexpr std::size_t kMaxDatacenters = 1'000;    // the WAN model keeps every pair's link
inline constexpr std::size_t kMaxNodeGroups = 100'000;   // per cluster or datacenter

struct DatacenterConfig {
  std::string name;
  std::string provider;  // the market provider owning the site; "" = the site's own name
  std::vector<NodeGroup> nodes;
  double pue = 1.0;
  double utc_offset_h = 0.0;
  double home_weight = 1.0;
  std::optional<SignalsConfig> signals;
  std::optional<ThermalConfig> thermal;
};

struct WanLinkConfig {
  std::string a, b;
  double bandwidth_gbit_s = 10.0;
  double latency_ms = 100.0;
};

struct DatacentersConfig {
  std::vector<DatacenterConfig> sites;
  double default_bandwidth_gbit_s = 10.0;
  double default_latency_ms = 100.0;
  std::vector<WanLinkConfig> links;
  double checkpoint_gb = 10.0;
  double restart_s = 60.0;
  bool allowed_home_only = false;

  static DatacentersConfig parse(const ConfigNode& node, std::int64_t& total_devices);
  YAML::Node to_yaml() const;
  // Every site's node groups, in site order: the simulator's cluster.
  std::vector<NodeGroup> cluster() const;
  int largest_site_devices() const;
  // The WAN matrix (sites x sites), defaults overridden by `links`.
  std::vector<std::vector<WanLink>> wan() const;
};

}  // namespace schedsim
