// `failures:`: device failures, restarts and checkpoints (on when the map is present).
#include "scenario/scenario.hpp"
#include "scenario/section_registry.hpp"
#include "scenario/world_build.hpp"
#include "world/failures/failure_process.hpp"

namespace schedsim::sections {

ScenarioSection failures_section() {
  ScenarioSection s;
  s.key = "failures";
  s.parse = [](const ConfigNode& node, SectionParse& p) { p.scenario.failures = FailureConfig::parse(node); };
  s.check = [](const ConfigNode& f, SectionParse& p) {
    const ScenarioConfig& c = p.scenario;
    if (c.failures->checkpoint.policy != CheckpointConfig::Policy::kNone && c.failures->checkpoint.cost_s < 0.0 && !c.physics) {
      f.child("checkpoint").fail("needs cost_s (seconds per checkpoint) when the scenario has no `physics:` map to derive it from");
    }
    for (const auto& [type, mtbf] : c.failures->devices.mtbf_h_by_type) {
      bool found = false;
      for (const auto& g : c.cluster) found = found || g.type == type;
      if (!found) f.child("devices").child("mtbf_h_by_type").child(type).fail("no node group of the cluster has device type '" + type + "'");
    }
  };
  s.to_yaml = [](const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) {
    if (c.failures) doc["failures"] = c.failures->to_yaml();
  };
  // The failure model (its checkpoint costs from the physics, built before) and its process.
  s.build = [](const ScenarioConfig& c, WorldBuild& w) {
    if (!c.failures) return;
    w.failures = std::make_unique<FailureModel>(*c.failures, w.cluster, w.seed, w.physics.get());
    w.add_process(ProcessRank::kFailures, std::make_unique<FailureProcess>(*w.failures));
  };
  return s;
}

}  // namespace schedsim::sections
