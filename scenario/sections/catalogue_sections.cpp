// `accelerators:` and `workload_profiles:`: entries merged into the built-in catalogues.
#include "scenario/scenario.hpp"
#include "scenario/section_registry.hpp"

namespace schedsim::sections {

ScenarioSection accelerators_section() {
  ScenarioSection s;
  s.key = "accelerators";
  s.parse = [](const ConfigNode& node, SectionParse& p) {
    p.scenario.accelerators.merge(node);
    p.scenario.accelerators_yaml = sorted_copy(node.yaml());
  };
  s.to_yaml = [](const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) {
    if (c.accelerators_yaml.IsDefined() && !c.accelerators_yaml.IsNull()) doc["accelerators"] = c.accelerators_yaml;
  };
  return s;
}

ScenarioSection workload_profiles_section() {
  ScenarioSection s;
  s.key = "workload_profiles";
  s.parse = [](const ConfigNode& node, SectionParse& p) {
    p.scenario.profiles.merge(node);
    p.scenario.profiles_yaml = sorted_copy(node.yaml());
  };
  s.to_yaml = [](const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) {
    if (c.profiles_yaml.IsDefined() && !c.profiles_yaml.IsNull()) doc["workload_profiles"] = c.profiles_yaml;
  };
  return s;
}

}  // namespace schedsim::sections
