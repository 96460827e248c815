// The scenario's top-level sections as one table (docs/config.md#sections). Each section
// (seed, cluster, workload, energy, env, train, ...) is one ScenarioSection, defined in
// its own file under scenario/sections/; scenario/section_registry.cpp lists them. The
// table fixes three orders, so that messages and the resolved YAML stay as they were:
// the parse order (a section sees the ones parsed before it), the order of the valid keys
// in the unknown-key message, and the order of the keys in the resolved YAML; and a
// fourth, the build order: the sections whose `build` hook adds models and world
// processes to the world of a run (scenario/world_build.hpp), in the order they are built.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "policies/registry.hpp"
#include "base/config_node.hpp"

namespace schedsim {

struct ScenarioConfig;
struct WorldBuild;

// One parse of a document: the scenario being filled and what sections leave for the
// sections after them.
struct SectionParse {
  const ConfigNode& root;
  const PolicyRegistry& registry;
  ScenarioConfig& scenario;
  std::int64_t total_devices = 0;       // the cluster's devices (set by `cluster:` / `datacenters:`)
  std::optional<ConfigNode> cluster;    // the `cluster:` map (an empty one with `datacenters:` and no `cluster:`)
};

struct ScenarioSection {
  std::string_view key;  // the top-level key
  // Strict parse of root[key] into the scenario (unknown keys rejected, with did-you-mean);
  // may read the sections parsed before it.
  void (*parse)(const ConfigNode& node, SectionParse& p) = nullptr;
  // Checks against the rest of the scenario, right after parse. Null: none.
  void (*check)(const ConfigNode& node, SectionParse& p) = nullptr;
  // The key is absent: fill the defaults that depend on other sections, or fail for a
  // required section. Null: the member defaults of ScenarioConfig stand.
  void (*absent)(SectionParse& p) = nullptr;
  // Writes the section's part of the resolved YAML into `doc`. Null: not in it.
  void (*to_yaml)(const ScenarioConfig& s, const YAML::Node& resolved_policy, YAML::Node& doc) = nullptr;
  // What the section builds: adds its models, simulator options and world processes
  // (each with its registration rank) to `world`; does nothing when the scenario lacks
  // the section. Called in the build order, after the sections built before it (it may
  // read their models). Null: the section builds nothing.
  void (*build)(const ScenarioConfig& s, WorldBuild& world) = nullptr;
};

// The sections in parse order.
const std::vector<ScenarioSection>& scenario_sections();
// Every top-level key a scenario may have, in the order the unknown-key message lists them.
const std::vector<std::string>& scenario_section_keys();
// The keys in the order the resolved YAML writes them (train: is not written).
std::vector<std::string> scenario_resolved_keys();

// The keys of the sections with a build hook, in build order.
std::vector<std::string> scenario_build_keys();

// Runs every section's parse (or absent) and check, in parse order.
void parse_sections(SectionParse& p);
// Every section's part of the resolved YAML, in the resolved order.
YAML::Node sections_to_yaml(const ScenarioConfig& s, const YAML::Node& resolved_policy);
// Builds the world of `s` into `world`: every section's build hook, in build order.
void build_sections(const ScenarioConfig& s, WorldBuild& world);

namespace sections {
// A copy with map keys sorted, so the resolved config does not depend on the order the
// user wrote fields in (catalogue entries are order-free).
YAML::Node sorted_copy(const YAML::Node& n);
}  // namespace sections

}  // namespace schedsim
