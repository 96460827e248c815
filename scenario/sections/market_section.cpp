// `market:`: the compute market (docs/market.md): providers' offers and spot capacity.
#include "scenario/scenario.hpp"
#include "scenario/section_registry.hpp"
#include "scenario/world_build.hpp"
#include "world/market/spot_process.hpp"

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
  // The market policies see, and the process that revokes and returns spot capacity.
  s.build = [](const ScenarioConfig& c, WorldBuild& w) {
    if (!c.market) return;
    w.market = std::make_unique<Market>(c.market->build(w.cluster, c.datacenters ? &*c.datacenters : nullptr));
    w.options.market_view = w.market.get();
    w.add_process(ProcessRank::kSpot, std::make_unique<SpotProcess>(*w.market, w.seed));
  };
  return s;
}

}  // namespace schedsim::sections
