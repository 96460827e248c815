// `physics:`: the speed model (on when the map is present), with its throughput matrix.
#include "sim/interrupt.hpp"
#include "parallelism/llm_plan_model.hpp"
#include "scenario/scenario.hpp"
#include "scenario/section_registry.hpp"
#include "scenario/world_build.hpp"

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

// The topology and the speed model, with the LLM jobs' parallelism plans; the racks group
// the nodes for placement.
void build_physics(const ScenarioConfig& s, WorldBuild& w) {
  if (!s.physics) return;
  w.topology = std::make_unique<TopologySpec>(w.cluster, s.topology, [&](const std::string& type) {
    return s.accelerators.get(type).intra_node_link_bytes_per_s;
  });
  w.physics = std::make_unique<ClusterPhysics>(w.cluster, *w.topology, s.accelerators, s.profiles, *s.physics, s.throughputs.get());
  // LLM jobs under a parallelism plan: the implementation lives in parallelism/, which
  // sim/ may not include; the physics model sees only the interface.
  if (!s.llm_plans.empty()) {
    auto plans = std::make_unique<LlmPlanModel>(s.llm_plans, s.topology);
    if (!plans->empty()) {
      w.plans = std::move(plans);
      w.physics->set_plan_model(w.plans.get());
    }
  }
  w.options.physics = w.physics.get();
  for (int n = 0; n < w.cluster.num_nodes(); ++n) w.node_rack.push_back(w.topology->rack_of_node(n));
  w.options.node_group = &w.node_rack;
}

}  // namespace

ScenarioSection physics_section() {
  ScenarioSection s;
  s.key = "physics";
  s.parse = parse_physics;
  s.check = check_physics;
  s.build = build_physics;
  s.to_yaml = [](const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) {
    if (c.physics) doc["physics"] = c.physics->to_yaml();
  };
  return s;
}

}  // namespace schedsim::sections
