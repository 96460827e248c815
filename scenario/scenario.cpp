#include "scenario/scenario.hpp"

#include "scenario/default_scenario.hpp"
#include "scenario/section_registry.hpp"
#include "base/error.hpp"

namespace schedsim {

const char* default_scenario_yaml() { return kDefaultScenarioYaml; }

ScenarioConfig ScenarioConfig::parse(const ConfigNode& root, const PolicyRegistry& registry) {
  root.expect_keys(scenario_section_keys());
  ScenarioConfig s;
  s.source = root.source();
  SectionParse p{root, registry, s, 0, std::nullopt};
  parse_sections(p);
  return s;
}

PolicyContext policy_context(const ScenarioConfig& s) {
  return PolicyContext{s.seed, &s.accelerators, s.env_yaml, s.inference ? s.inference->services : nullptr, s.information.with_seed(s.seed)};
}

InformationModel default_information(const WorkloadConfig& workload) {
  // Only a synthetic workload that generates estimates is known, before its jobs are read,
  // to give every job one: it defaults to them. A trace (whose estimate column, if any,
  // is only seen when the run reads it) and a synthetic workload without estimates are
  // non-clairvoyant. Oracle is opt-in.
  if (workload.synthetic && workload.synthetic->estimate_error_sigma >= 0) return InformationModel::estimates(EstimateSource::kTrace);
  return InformationModel::none();
}

bool information_serves(const ScenarioConfig& scenario, const PolicyRegistry& registry, const std::string& policy) {
  try {
    registry.create(policy, policy_context(scenario));
  } catch (const InformationRefused&) {
    return false;
  }
  return true;
}

int ScenarioConfig::num_devices() const {
  int n = 0;
  for (const auto& g : cluster) n += g.count * g.devices_per_node;
  return n;
}

std::int64_t ScenarioConfig::origin_utc_us() const {
  std::int64_t origin_us = 1'672'531'200'000'000LL;
  if (signals) origin_us = signals->origin_utc_us;
  if (datacenters && datacenters->sites.front().signals) origin_us = datacenters->sites.front().signals->origin_utc_us;
  return origin_us;
}

YAML::Node ScenarioConfig::to_yaml(const YAML::Node& resolved_policy) const { return sections_to_yaml(*this, resolved_policy); }

ScenarioConfig load_scenario(const std::string& path, const std::vector<std::string>& overrides, std::optional<std::uint64_t> seed,
                             const PolicyRegistry& registry) {
  return load_scenario(path.empty() ? ConfigNode::load_string(default_scenario_yaml(), "built-in default scenario") : ConfigNode::load_file(path),
                       overrides, seed, registry);
}

ScenarioConfig load_scenario(const ConfigNode& root, const std::vector<std::string>& overrides, std::optional<std::uint64_t> seed,
                             const PolicyRegistry& registry) {
  YAML::Node doc = root.yaml();
  if (!doc.IsMap()) root.fail("the scenario must be a YAML map with keys seed, cluster, workload, policy");
  // Each override's value is remembered, so that a bad value is reported as the --set
  // option that gave it rather than as the file.
  std::vector<ConfigNode::Override> applied;
  for (const auto& o : overrides) applied.push_back({apply_override(doc, o), o});
  // An empty file (or one of comments only) is not a scenario missing 'cluster'.
  if (doc.size() == 0) root.fail("the scenario is empty; it needs at least cluster and workload (`schedsim default-config` prints a complete one)");
  ScenarioConfig s = ScenarioConfig::parse(root.with_overrides(std::move(applied)), registry);
  if (seed) {
    if (*seed > kMaxSeed) throw InputError("seed", "must be an integer in 0..9223372036854775807 (2^63-1), got " + std::to_string(*seed));
    s.seed = *seed;
  }
  return s;
}

}  // namespace schedsim
