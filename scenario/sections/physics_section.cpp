// `physics:`: the speed model (on when the map is present), with its throughput matrix.
#include "sim/interrupt.hpp"
#include "scenario/scenario.hpp"
#include "scenario/section_registry.hpp"

namespace schedsim::sections {

namespace {

void parse_physics(const ConfigNode& ph, SectionParse& p) {
  ScenarioConfig& s = p.scenario;
  s.physics = ph.is_null() ? PhysicsConfig{} : PhysicsConfig::parse(ph);
  if (!s.physics->throughputs.empty()) {
    s.throughputs = std::make_shared<const ThroughputMatrix>(ThroughputMatrix::load_file(
        s.physics->throughputs_resolved, [](const std::string& path) { throw_if_interrupted("reading the throughput matrix " + path); }));
  }
}

void check_physics(const ConfigNode& ph, SectionParse& p) {
  ScenarioConfig& s = p.scenario;
  // Physics needs every device type in the catalogue.
  if (auto datacenters = p.root.maybe_child("datacenters")) {
    const ConfigNode sites = datacenters->child("sites");
    for (std::size_t i = 0; i < sites.size(); ++i) {
      const ConfigNode nodes = sites.at(i).child("nodes");
      for (std::size_t k = 0; k < nodes.size(); ++k) s.accelerators.get(nodes.at(k).child("type"));
    }
  } else {
    const ConfigNode nodes = p.cluster->child("nodes");
    for (std::size_t i = 0; i < nodes.size(); ++i) s.accelerators.get(nodes.at(i).child("type"));
  }
  if (!s.physics->reference_device.empty()) s.accelerators.get(ph.child("reference_device"));
  // Topology errors (e.g. racks that split an NVLink domain) surface now, not mid-run.
  const ClusterSpec spec(s.cluster);
  TopologySpec(spec, s.topology, [&](const std::string& type) { return s.accelerators.get(type).intra_node_link_bytes_per_s; });
}

}  // namespace

ScenarioSection physics_section() {
  ScenarioSection s;
  s.key = "physics";
  s.parse = parse_physics;
  s.check = check_physics;
  s.to_yaml = [](const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) {
    if (c.physics) doc["physics"] = c.physics->to_yaml();
  };
  return s;
}

}  // namespace schedsim::sections
