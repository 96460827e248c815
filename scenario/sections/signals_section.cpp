// `signals:`: price and carbon signals of the one cluster (docs/energy.md).
#include "scenario/scenario.hpp"
#include "scenario/section_registry.hpp"
#include "scenario/world_build.hpp"

namespace schedsim::sections {

ScenarioSection signals_section() {
  ScenarioSection s;
  s.key = "signals";
  s.parse = [](const ConfigNode& node, SectionParse& p) { p.scenario.signals = SignalsConfig::parse(node); };
  s.to_yaml = [](const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) {
    if (c.signals) doc["signals"] = c.signals->to_yaml();
  };
  s.build = [](const ScenarioConfig& c, WorldBuild& w) {
    if (!c.signals) return;
    w.signals = std::make_unique<GridSignals>(c.signals->build(w.seed));
    w.options.signals = w.signals.get();
  };
  return s;
}

}  // namespace schedsim::sections
