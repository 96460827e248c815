// `inference:`: inference services, part of the world under every policy.
#include "scenario/scenario.hpp"
#include "scenario/section_registry.hpp"

namespace schedsim::sections {

ScenarioSection inference_section() {
  ScenarioSection s;
  s.key = "inference";
  s.parse = [](const ConfigNode& node, SectionParse& p) {
    ScenarioConfig& c = p.scenario;
    c.inference = InferenceConfig::parse(node, c.origin_utc_us(), c.datacenters ? &*c.datacenters : nullptr, static_cast<int>(p.total_devices), &c.cluster,
                                         &c.accelerators);
  };
  s.to_yaml = [](const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) {
    if (c.inference) doc["inference"] = c.inference->resolved;
  };
  return s;
}

}  // namespace schedsim::sections
