// The small sections of a run: seed, name, metrics, information and policy.
#include "scenario/scenario.hpp"
#include "scenario/section_registry.hpp"

namespace schedsim::sections {

ScenarioSection seed_section() {
  ScenarioSection s;
  s.key = "seed";
  s.parse = [](const ConfigNode& node, SectionParse& p) { p.scenario.seed = node.as_seed(); };
  s.to_yaml = [](const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) { doc["seed"] = c.seed; };
  return s;
}

ScenarioSection name_section() {
  ScenarioSection s;
  s.key = "name";
  s.parse = [](const ConfigNode& node, SectionParse& p) { p.scenario.name = node.as_string(); };
  s.to_yaml = [](const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) {
    if (!c.name.empty()) doc["name"] = c.name;
  };
  return s;
}

ScenarioSection metrics_section() {
  ScenarioSection s;
  s.key = "metrics";
  s.parse = [](const ConfigNode& node, SectionParse& p) { p.scenario.metrics_window = MeasurementWindowConfig::parse(node); };
  s.to_yaml = [](const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) { doc["metrics"] = c.metrics_window.to_yaml(); };
  return s;
}

// After the workload: without `information:` the level follows from it.
ScenarioSection information_section() {
  ScenarioSection s;
  s.key = "information";
  s.parse = [](const ConfigNode& node, SectionParse& p) { p.scenario.information = InformationModel::parse(node); };
  s.absent = [](SectionParse& p) { p.scenario.information = default_information(p.scenario.workload); };
  s.to_yaml = [](const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) { doc["information"] = c.information.to_yaml(); };
  return s;
}

namespace {

void parse_policy(const ConfigNode& policy, SectionParse& p) {
  // Validates name and options now, before anything runs. What the information level
  // cannot serve is refused when a run builds the policy (policy_context): `compare
  // --policies` never builds the scenario's own one.
  p.registry.create(policy);
  p.scenario.policy = YAML::Clone(policy.yaml());
  p.scenario.policy_source = p.root.source();
}

}  // namespace

ScenarioSection policy_section() {
  ScenarioSection s;
  s.key = "policy";
  s.parse = parse_policy;
  s.absent = [](SectionParse& p) { parse_policy(ConfigNode(YAML::Node("fifo"), p.root.source(), "policy"), p); };
  s.to_yaml = [](const ScenarioConfig&, const YAML::Node& resolved_policy, YAML::Node& doc) { doc["policy"] = resolved_policy; };
  return s;
}

}  // namespace schedsim::sections
