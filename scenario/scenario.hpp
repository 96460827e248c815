// A scenario: the whole YAML document of a run (seed, cluster, workload, policy), parsed
// strictly. The same document is accepted from the CLI and, later, from Python. Each
// top-level key is one section of scenario/section_registry.hpp (docs/config.md#sections).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "world/geography/datacenters_config.hpp"
#include "world/energy/energy_config.hpp"
#include "scenario/inference_config.hpp"
#include "world/market/market_config.hpp"
#include "policies/registry.hpp"
#include "scenario/sections/env_section.hpp"
#include "scenario/sections/train_section.hpp"
#include "world/physics/accelerator_catalogue.hpp"
#include "world/physics/cluster_physics.hpp"
#include "sim/cluster_spec.hpp"
#include "world/physics/topology.hpp"
#include "sim/training_plan.hpp"
#include "world/physics/workload_profiles.hpp"
#include "base/config_node.hpp"
#include "world/failures/failure_model.hpp"
#include "sim/metrics.hpp"
#include "traces/workload_config.hpp"

namespace schedsim {

struct ScenarioConfig {
  std::string source;  // where the document came from, for messages
  std::uint64_t seed = 1;
  std::string name;    // optional label, carried into results.json
  std::vector<NodeGroup> cluster;
  WorkloadConfig workload;
  YAML::Node policy;   // as written (a name or a map); built per run by the registry
  std::string policy_source;
  // Hardware: catalogues (built-in, merged with the scenario's `accelerators:` and
  // `workload_profiles:` maps), the network (`cluster.topology`) and the physics model,
  // which is on when the scenario has a `physics:` map.
  AcceleratorCatalogue accelerators = AcceleratorCatalogue::builtin();
  WorkloadProfileCatalogue profiles = WorkloadProfileCatalogue::builtin();
  YAML::Node accelerators_yaml, profiles_yaml;  // as written, for the resolved config
  TopologyConfig topology;
  std::optional<PhysicsConfig> physics;
  std::shared_ptr<const ThroughputMatrix> throughputs;  // physics.throughputs, loaded
  // LLM job classes with a parallelism plan (docs/parallelism.md, "In a run"): the
  // workload's models that name a model of the parallelism catalogue, with their `plan:`
  // (default auto). Empty: no job runs under a plan (outputs as before issue 26).
  std::vector<std::pair<std::string, PlanRequest>> llm_plans;
  // Energy metering (`energy:`) and price/carbon signals (`signals:`), docs/energy.md.
  std::optional<EnergyConfig> energy;
  std::optional<SignalsConfig> signals;
  // Several datacenters (`datacenters:`): then `cluster` is their node groups in order.
  std::optional<DatacentersConfig> datacenters;
  // Inference services (`inference:`): part of the world under every policy (metered by
  // sim/service_meter.hpp; autoscaled by the `inference` policy or the runner's default one).
  std::optional<InferenceConfig> inference;
  // The compute market (`market:`, docs/market.md): providers' offers and spot capacity.
  std::optional<MarketConfig> market;
  // Failures, restarts and checkpoints: on when the scenario has a `failures:` map.
  std::optional<FailureConfig> failures;
  // `metrics.window`: the measurement window of the time averages (docs/metrics.md).
  MeasurementWindowConfig metrics_window;
  // The `env:` map (RL environment options) and the `train:` map, parsed strictly by
  // every command (scenario/sections/env_section.hpp, train_section.hpp); empty when the
  // scenario has none.
  std::optional<rl::EnvConfig> env;
  std::optional<rl::TrainConfig> train;
  // Both as written: env for the rl policy (PolicyContext::env_yaml) and the resolved
  // YAML, train for messages with line numbers. Undefined when absent; env_source names
  // the document.
  YAML::Node env_yaml;
  std::string env_source;
  YAML::Node train_yaml;
  // What policies and the RL observation may know about job durations (`information:`,
  // docs/config.md#information); resolved from the workload when the scenario omits it.
  InformationModel information;

  // Throws InputError for unknown keys, wrong types, impossible values and policies
  // the registry does not know.
  static ScenarioConfig parse(const ConfigNode& root, const PolicyRegistry& registry);
  // The resolved document: every default filled in, the policy as `resolved_policy`.
  YAML::Node to_yaml(const YAML::Node& resolved_policy) const;
  int num_devices() const;
  // The UTC instant of simulated time 0: the signals' origin (the first datacenter's with
  // several), else 2023-01-01 UTC.
  std::int64_t origin_utc_us() const;
};

// What the scenario's policy is built with: the seed, the device catalogue, the `env:`
// map and the inference services.
PolicyContext policy_context(const ScenarioConfig& scenario);

// The information level of a scenario without `information:` (docs/config.md#information).
InformationModel default_information(const WorkloadConfig& workload);
// False when the scenario's information level refuses `policy` (a registered name built
// with its defaults): `compare` without --policy leaves it out.
bool information_serves(const ScenarioConfig& scenario, const PolicyRegistry& registry, const std::string& policy);

// The built-in default scenario (experiments/configs/default.yaml, compiled in).
const char* default_scenario_yaml();

// Loads a scenario from `path` ("" = the built-in default), applies --set overrides in
// order and, when given, the seed.
ScenarioConfig load_scenario(const std::string& path, const std::vector<std::string>& overrides, std::optional<std::uint64_t> seed,
                             const PolicyRegistry& registry);
// The same from a document already read (YAML text, or a tree built by the Python
// bindings from a dict).
ScenarioConfig load_scenario(const ConfigNode& root, const std::vector<std::string>& overrides, std::optional<std::uint64_t> seed,
                             const PolicyRegistry& registry);

}  // namespace schedsim
