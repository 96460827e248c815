// The scenario's section registry (scenario/section_registry.hpp): every top-level key
// the parser accepts is one section, the valid-keys and resolved-YAML orders are those of
// before the registry, and a document with every section round-trips through to_yaml.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "scenario/scenario.hpp"
#include "scenario/section_registry.hpp"
#include "scenario/simulation_setup.hpp"
#include "base/error.hpp"

using namespace schedsim;

namespace {

// Every section but `datacenters:` (which excludes `signals:`, `energy.pue` and `cluster.nodes`).
const char* kEverySection = R"(seed: 7
name: every-section
cluster:
  nodes: [{count: 2, type: V100, devices_per_node: 8}]
  topology: {nodes_per_rack: 2}
accelerators: {V100: {idle_w: 100}}
workload_profiles: {DLRM: {efficiency: 0.5}}
workload: {synthetic: {num_jobs: 5}}
policy: fifo
physics: {}
energy: {pue: 1.2}
signals: {price: 50, carbon: {diurnal: {mean: 300, amplitude: 50}}}
failures: {checkpoint: {interval_s: 1000, cost_s: 100}}
inference: {services: [{name: s, rate: {diurnal: {mean_rps: 5}}, capacity_rps: {V100: 10}, slo_p99_s: 1, max_replicas: 2}]}
market: {offers: [{type: V100, on_demand_usd_h: 2}]}
metrics: {window: {warmup_jobs: 1}}
information: none
env: {max_candidates: 8}
train: {total_steps: 1000, seed: 3}
)";

const char* kDatacenters = R"(datacenters:
  sites:
    - {name: A, nodes: [{count: 1, type: V100, devices_per_node: 8}]}
    - {name: B, nodes: [{count: 1, type: V100, devices_per_node: 8}]}
workload: {synthetic: {num_jobs: 5}}
)";

std::vector<std::string> keys_of(const YAML::Node& map) {
  std::vector<std::string> out;
  for (const auto& kv : map) out.push_back(kv.first.Scalar());
  return out;
}

ScenarioConfig parse_text(const std::string& text, const std::string& source) {
  return ScenarioConfig::parse(ConfigNode::load_string(text, source), builtin_policies());
}

// The resolved YAML of `text`, and that of the resolved YAML read back: equal when every
// section writes what its parser reads.
std::pair<std::string, std::string> round_trip(const std::string& text) {
  const ScenarioConfig first = parse_text(text, "t.yaml");
  const std::string once = YAML::Dump(first.to_yaml(first.policy));
  const ScenarioConfig second = parse_text(once, "resolved.yaml");
  return {once, YAML::Dump(second.to_yaml(second.policy))};
}

}  // namespace

TEST_CASE("section registry: the valid keys and the resolved YAML keep their orders", "[config][sections]") {
  CHECK(scenario_section_keys() == std::vector<std::string>{"seed", "name", "cluster", "workload", "policy", "accelerators", "workload_profiles", "physics",
                                                            "energy", "signals", "failures", "env", "train", "datacenters", "inference", "market",
                                                            "metrics", "information"});
  CHECK(scenario_resolved_keys() == std::vector<std::string>{"seed", "name", "cluster", "workload", "policy", "accelerators", "workload_profiles", "physics",
                                                             "energy", "signals", "datacenters", "inference", "market", "failures", "metrics", "env",
                                                             "information"});
  // One section per key, parsed in a fixed order (train first: its messages come before
  // the cluster's; env last: it checks the thermal models).
  std::vector<std::string> parse_order;
  for (const ScenarioSection& s : scenario_sections()) parse_order.emplace_back(s.key);
  CHECK(parse_order == std::vector<std::string>{"seed", "name", "train", "cluster", "datacenters", "accelerators", "workload_profiles", "physics", "energy",
                                                "signals", "inference", "metrics", "market", "failures", "workload", "information", "policy", "env"});
}

TEST_CASE("section registry: a document with every section round-trips through to_yaml", "[config][sections]") {
  // The two documents together give every key the parser accepts.
  std::set<std::string> given;
  for (const char* text : {kEverySection, kDatacenters}) {
    for (const auto& k : keys_of(YAML::Load(text))) given.insert(k);
  }
  const std::vector<std::string>& all = scenario_section_keys();
  CHECK(given == std::set<std::string>(all.begin(), all.end()));

  const auto [once, twice] = round_trip(kEverySection);
  CHECK(once == twice);
  // Every section but train: and datacenters: is written, in the resolved order.
  std::vector<std::string> want = scenario_resolved_keys();
  want.erase(std::find(want.begin(), want.end(), "datacenters"));
  CHECK(keys_of(YAML::Load(once)) == want);
  // env: as written; train: typed in the scenario, not written.
  CHECK(YAML::Load(once)["env"]["max_candidates"].as<int>() == 8);
  const ScenarioConfig s = parse_text(kEverySection, "t.yaml");
  REQUIRE(s.env);
  CHECK(s.env->max_candidates == 8);
  REQUIRE(s.train);
  CHECK(s.train->total_steps == 1000);
  CHECK(s.train->seed == 3);

  const auto [dc_once, dc_twice] = round_trip(kDatacenters);
  CHECK(dc_once == dc_twice);
  CHECK(keys_of(YAML::Load(dc_once)) == std::vector<std::string>{"seed", "workload", "policy", "datacenters", "metrics", "information"});
}

TEST_CASE("section registry: without env: and train: the scenario holds neither", "[config][sections]") {
  const ScenarioConfig s = parse_text(kDatacenters, "t.yaml");
  CHECK_FALSE(s.env);
  CHECK_FALSE(s.train);
  CHECK_FALSE(s.to_yaml(s.policy)["env"]);
}

TEST_CASE("section registry: an unknown top-level key names every section", "[config][sections][bad-input]") {
  CHECK_THROWS_WITH(parse_text(std::string(kDatacenters) + "trian: {}\n", "t.yaml"),
                    "t.yaml:6: unknown key 'trian' (did you mean 'train'?); valid keys here: seed, name, cluster, workload, policy, accelerators, "
                    "workload_profiles, physics, energy, signals, failures, env, train, datacenters, inference, market, metrics, information");
  CHECK_THROWS_WITH(parse_text(std::string(kDatacenters) + "power: {}\n", "t.yaml"),
                    "t.yaml:6: unknown key 'power'; valid keys here: seed, name, cluster, workload, policy, accelerators, "
                    "workload_profiles, physics, energy, signals, failures, env, train, datacenters, inference, market, metrics, information");
}

TEST_CASE("section registry: required sections fail as before", "[config][sections][bad-input]") {
  CHECK_THROWS_WITH(parse_text("workload: {synthetic: {num_jobs: 5}}\n", "t.yaml"), "t.yaml:1: missing required key 'cluster'");
  CHECK_THROWS_WITH(parse_text("cluster: {nodes: [{count: 1, type: V100, devices_per_node: 8}]}\n", "t.yaml"), "t.yaml:1: missing required key 'workload'");
}

TEST_CASE("section registry: the build order lists exactly the sections that build", "[config][sections][build]") {
  // Today's construction order of the world (physics before the failures that read it,
  // datacenters before the thermal model that reads their sites).
  CHECK(scenario_build_keys() == std::vector<std::string>{"physics", "signals", "datacenters", "energy", "failures", "market"});
  std::set<std::string> with_hook;
  for (const ScenarioSection& s : scenario_sections()) {
    if (s.build) with_hook.emplace(s.key);
  }
  const std::vector<std::string> order = scenario_build_keys();
  CHECK(with_hook == std::set<std::string>(order.begin(), order.end()));
}

namespace {

std::vector<std::string> process_names(const SimulationSetup& setup) {
  std::vector<std::string> out;
  for (const WorldProcess* p : setup.world().processes()) out.emplace_back(p->name());
  return out;
}

}  // namespace

TEST_CASE("section registry: the sections build the world's processes, registered by rank", "[config][sections][build]") {
  const PolicyRegistry registry = builtin_policies();
  const std::string configs = std::string(SCHEDSIM_SOURCE_DIR) + "/experiments/configs/";
  std::vector<std::string> warnings;
  {
    const ScenarioConfig sc = load_scenario(configs + "llm_failures.yaml", {"workload.synthetic.num_jobs=5"}, std::nullopt, registry);
    SimulationSetup setup(sc, sc.seed, warnings);
    CHECK(setup.world().process(ProcessRank::kFailures) != nullptr);
    CHECK(setup.failures() != nullptr);
    CHECK(process_names(setup) == std::vector<std::string>{"failures"});
  }
  {
    const ScenarioConfig sc = load_scenario(configs + "default.yaml", {}, std::nullopt, registry);
    SimulationSetup setup(sc, sc.seed, warnings);
    CHECK(setup.world().process(ProcessRank::kFailures) == nullptr);
    CHECK(setup.failures() == nullptr);
    CHECK(process_names(setup).empty());
  }
  {
    // Datacenters are built before failures and the market, but their process is
    // registered after them (the order of event sequence numbers since before the registry).
    const ScenarioConfig sc = load_scenario(configs + "market_two_clouds.yaml", {"workload.synthetic.num_jobs=5"}, std::nullopt, registry);
    SimulationSetup setup(sc, sc.seed, warnings);
    CHECK(process_names(setup) == std::vector<std::string>{"failures", "spot market", "datacenters"});
    CHECK(setup.geography() != nullptr);
    CHECK(setup.market() != nullptr);
    CHECK(setup.simulator_options().market_view == setup.market());
  }
}
