// `energy:`: the energy meter (docs/energy.md): device power, PUE, power caps, thermal model.
#include "scenario/scenario.hpp"
#include "scenario/section_registry.hpp"

namespace schedsim::sections {

ScenarioSection energy_section() {
  ScenarioSection s;
  s.key = "energy";
  s.parse = [](const ConfigNode& node, SectionParse& p) { p.scenario.energy = EnergyConfig::parse(node, p.scenario.cluster, p.scenario.accelerators); };
  s.absent = [](SectionParse& p) {
    const ScenarioConfig& c = p.scenario;
    if (c.datacenters && c.datacenters->sites.front().thermal) {
      p.root.child("datacenters").child("sites").at(0).child("thermal").fail("the thermal model needs an `energy:` map (the meter that applies its PUE)");
    }
  };
  s.to_yaml = [](const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) {
    if (c.energy) doc["energy"] = c.energy->to_yaml();
  };
  return s;
}

}  // namespace schedsim::sections
