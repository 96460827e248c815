#include "scenario/section_registry.hpp"

#include <algorithm>

#include "scenario/scenario.hpp"
#include "base/error.hpp"

namespace schedsim {

namespace sections {
// One per file of scenario/sections/ (catalogue_sections.cpp and run_sections.cpp hold
// several small ones).
ScenarioSection seed_section();
ScenarioSection name_section();
ScenarioSection train_section();
ScenarioSection cluster_section();
ScenarioSection datacenters_section();
ScenarioSection accelerators_section();
ScenarioSection workload_profiles_section();
ScenarioSection physics_section();
ScenarioSection energy_section();
ScenarioSection signals_section();
ScenarioSection inference_section();
ScenarioSection metrics_section();
ScenarioSection market_section();
ScenarioSection failures_section();
ScenarioSection workload_section();
ScenarioSection information_section();
ScenarioSection policy_section();
ScenarioSection env_section();
}  // namespace sections

namespace {

struct SectionRow {
  ScenarioSection section;
  int key_rank;   // place in the valid-keys list
  int yaml_rank;  // place in the resolved YAML; -1: not written
  // Place in the build order; -1: builds nothing. The order is that of the world's
  // construction before the sections built it (physics, signals, datacenters, energy,
  // failures, market): the signals' and datacenters' options override each other, the
  // energy's thermal model reads the datacenters' sites, the failures read the physics.
  int build_rank;
};

// Adding a section: one row (append it: parsed last, listed last, written last, built
// last when it has a build hook).
const std::vector<SectionRow>& table() {
  static const std::vector<SectionRow> rows = {
      // section (parse order)              valid keys  resolved YAML  build
      {sections::seed_section(),              0,          0,             -1},
      {sections::name_section(),              1,          1,             -1},
      {sections::train_section(),             12,         -1,            -1},
      {sections::cluster_section(),           2,          2,             -1},
      {sections::datacenters_section(),       13,         10,            2},
      {sections::accelerators_section(),      5,          5,             -1},
      {sections::workload_profiles_section(), 6,          6,             -1},
      {sections::physics_section(),           7,          7,             0},
      {sections::energy_section(),            8,          8,             3},
      {sections::signals_section(),           9,          9,             1},
      {sections::inference_section(),         14,         11,            -1},
      {sections::metrics_section(),           16,         14,            -1},
      {sections::market_section(),            15,         12,            5},
      {sections::failures_section(),          10,         13,            4},
      {sections::workload_section(),          3,          3,             -1},
      {sections::information_section(),       17,         16,            -1},
      {sections::policy_section(),            4,          4,             -1},
      {sections::env_section(),               11,         15,            -1},
  };
  return rows;
}

// The rows sorted by one of their ranks (rows with a negative rank left out).
std::vector<const SectionRow*> by_rank(int SectionRow::*rank) {
  std::vector<const SectionRow*> out;
  for (const SectionRow& r : table()) {
    if (r.*rank >= 0) out.push_back(&r);
  }
  std::sort(out.begin(), out.end(), [rank](const SectionRow* a, const SectionRow* b) { return a->*rank < b->*rank; });
  return out;
}

}  // namespace

const std::vector<ScenarioSection>& scenario_sections() {
  static const std::vector<ScenarioSection> all = [] {
    std::vector<ScenarioSection> out;
    for (const SectionRow& r : table()) out.push_back(r.section);
    return out;
  }();
  return all;
}

const std::vector<std::string>& scenario_section_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const SectionRow* r : by_rank(&SectionRow::key_rank)) out.emplace_back(r->section.key);
    return out;
  }();
  return keys;
}

std::vector<std::string> scenario_resolved_keys() {
  std::vector<std::string> out;
  for (const SectionRow* r : by_rank(&SectionRow::yaml_rank)) out.emplace_back(r->section.key);
  return out;
}

std::vector<std::string> scenario_build_keys() {
  std::vector<std::string> out;
  for (const SectionRow* r : by_rank(&SectionRow::build_rank)) out.emplace_back(r->section.key);
  return out;
}

void parse_sections(SectionParse& p) {
  for (const ScenarioSection& section : scenario_sections()) {
    if (auto node = p.root.maybe_child(section.key)) {
      section.parse(*node, p);
      if (section.check) section.check(*node, p);
    } else if (section.absent) {
      section.absent(p);
    }
  }
}

YAML::Node sections_to_yaml(const ScenarioConfig& s, const YAML::Node& resolved_policy) {
  YAML::Node doc(YAML::NodeType::Map);
  for (const SectionRow* r : by_rank(&SectionRow::yaml_rank)) {
    if (r->section.to_yaml) r->section.to_yaml(s, resolved_policy, doc);
  }
  return doc;
}

void build_sections(const ScenarioConfig& s, WorldBuild& world) {
  for (const SectionRow* r : by_rank(&SectionRow::build_rank)) {
    if (r->section.build) r->section.build(s, world);
  }
}

namespace sections {

YAML::Node sorted_copy(const YAML::Node& n) {
  if (n.IsMap()) {
    std::vector<std::string> keys;
    for (const auto& kv : n) keys.push_back(kv.first.Scalar());
    std::sort(keys.begin(), keys.end());
    YAML::Node out(YAML::NodeType::Map);
    for (const auto& k : keys) out[k] = sorted_copy(n[k]);
    return out;
  }
  if (n.IsSequence()) {
    YAML::Node out(YAML::NodeType::Sequence);
    for (std::size_t i = 0; i < n.size(); ++i) out.push_back(sorted_copy(n[i]));
    return out;
  }
  if (n.IsScalar()) return YAML::Node(n.Scalar());
  return YAML::Node(YAML::NodeType::Null);
}

}  // namespace sections

}  // namespace schedsim
