// The scenario's `market:` map (docs/market.md, docs/config.md): the offers under which
// providers sell the devices of their datacenters, parsed strictly against the cluster
// and the accelerator catalogue; price and availability files are loaded at parse time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "world/geography/datacenters_config.hpp"
#include "world/physics/accelerator_catalogue.hpp"
#include "sim/cluster_spec.hpp"
#include "base/config_node.hpp"
#include "world/market/market.hpp"

namespace schedsim {

// A price or an availability as written: a number, or a CSV file of (time, value) steps.
struct MarketSeriesSpec {
  double constant = 0.0;
  std::string file;                       // as written; "" = constant
  std::string time_column, value_column;  // "" = the defaults (see docs/market.md)
  std::shared_ptr<const StepSeries> series;

  YAML::Node to_yaml() const;
};

struct OfferConfig {
  std::string datacenter;  // site name ("cluster" without `datacenters:`)
  std::string type;        // the cluster's spelling of the catalogue type
  PriceKind kind = PriceKind::kOnDemand;
  int devices = 0;         // reserved / spot; on-demand takes the rest
  MarketSeriesSpec usd_h;  // USD per device-hour
  // Spot availability.
  SpotAvailability::Kind availability = SpotAvailability::Kind::kAlways;
  MarketSeriesSpec available_devices;  // kSeries
  double mean_up_h = 24.0, mean_down_h = 2.0, fraction_reclaimed = 1.0;  // kOnOff
};

struct MarketConfig {
  // Provider of the single implicit site when the scenario has no `datacenters:`.
  std::string provider = "cluster";
  std::vector<OfferConfig> offers;
  std::int64_t origin_utc_us = 0;  // simulated time 0 (the signals' origin)

  // `cluster` is the scenario's node groups (the datacenters' in order when `datacenters`
  // is given). Throws InputError naming the file, line and key.
  static MarketConfig parse(const ConfigNode& node, const std::vector<NodeGroup>& cluster, const DatacentersConfig* datacenters,
                            const AcceleratorCatalogue& catalogue, std::int64_t origin_utc_us);
  YAML::Node to_yaml() const;
  // The market over `cluster` (built from the same node groups).
  Market build(const ClusterSpec& cluster, const DatacentersConfig* datacenters) const;
};

}  // namespace schedsim
