// `market:`: the compute market (docs/market.md): providers' offers and spot capacity.
#include "scenario/scenario.hpp"
#include "scenario/section_registry.hpp"

namespace schedsim::sections {

ScenarioSection market_section() {
  ScenarioSection s;
  s.key = "market";
  s.parse = [](const ConfigNode& node, SectionParse& p) {
    ScenarioConfig& c = p.scenario;
    c.market = MarketConfig::parse(node, c.cluster, c.datacenters ? &*c.datacenters : nullptr, c.accelerators, c.origin_utc_us());
  };
  s.to_yaml = [](const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) {
    if (c.market) doc["market"] = c.market->to_yaml();
  };
  return s;
}

}  // namespace schedsim::sections
