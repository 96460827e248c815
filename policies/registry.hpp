// The policy registry: name -> description, documented options, factory. Built by
// builtin_policies() with one line per policy; an ordinary object, not a singleton, so
// tests and embedders can make their own.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "policies/information.hpp"
#include "world/physics/accelerator_catalogue.hpp"
#include "base/config_node.hpp"
#include "world/inference/inference_service.hpp"
#include "sim/policy.hpp"

namespace schedsim {

struct PolicyOptionDoc {
  std::string name;
  std::string default_value;
  std::string description;
};

// A policy built from config, with its fully resolved configuration (all defaults
// filled in), which goes into results.json.
struct PolicyInstance {
  std::unique_ptr<Policy> policy;
  YAML::Node resolved;  // {name: ..., option: value, ...}
};

// What a policy may know besides its options: the run's seed (for randomized
// placement; each policy derives its own stream from it).
struct PolicyContext {
  std::uint64_t seed = 0;
  // The scenario's device catalogue and its `env:` map (RL environment settings), for
  // policies that observe the cluster as the RL environment does (the `rl` policy).
  // Null/undefined when the policy is only being validated.
  const AcceleratorCatalogue* accelerators = nullptr;
  YAML::Node env_yaml;
  // The scenario's inference services (`inference:`), for the `inference` policy; null = none.
  std::shared_ptr<const std::vector<ServiceSpec>> services;
  // What the policy may know about job durations (the scenario's `information:`);
  // oracle unless the scenario says otherwise.
  InformationModel information;
};

struct PolicyInfo {
  std::string name;
  std::string description;  // one line
  std::vector<PolicyOptionDoc> options;
  // Builds the policy from its config map (which holds `name` and the options); rejects
  // unknown keys with the list of valid ones.
  std::function<PolicyInstance(const ConfigNode& config, const PolicyContext& context)> make;
  // Needs the scenario's `signals:` (price/carbon); `compare` without --policy skips it
  // on scenarios without them.
  bool needs_signals = false;
  // When set, the short form "NAME:VALUE" means {name: NAME, <argument_option>: VALUE}
  // (e.g. "rl:agent.pt"), and the policy is left out of "all" (it needs that value).
  std::string argument_option{};  // (an initializer, so aggregate initializations may leave it out)
  // Acts only through a thermal model (`thermal:`); `compare` without --policy skips it on
  // scenarios without one (it would repeat its base).
  bool needs_thermal = false;
};

class PolicyRegistry {
 public:
  void add(PolicyInfo info);
  const PolicyInfo* find(const std::string& name) const;
  const std::vector<PolicyInfo>& all() const { return policies_; }
  std::vector<std::string> names() const;
  // The policies that run without arguments (what "all" means in `schedsim compare`).
  std::vector<std::string> plain_names() const;
  // `node` is a name ("sjf") or a map ({name: sjf, by: estimate}). Throws InputError
  // for an unknown name (listing the registered ones) or bad options.
  PolicyInstance create(const ConfigNode& node, const PolicyContext& context = {}) const;
  PolicyInstance create(const std::string& name, const PolicyContext& context = {}) const;
  // Whether `name` is a registered policy or the "NAME:VALUE" short form of one.
  bool knows(const std::string& name) const;
  // "unknown policy 'sjff' (did you mean 'sjf'?); registered policies: ... (see `schedsim policies`)".
  std::string unknown_policy_message(const std::string& name) const;
  // " (did you mean 'sjf'?)" for a near miss of a registered name ("sjff"), else "".
  std::string suggest_policy(const std::string& name) const;

 private:
  std::vector<PolicyInfo> policies_;
};

// Every policy shipped with schedsim.
PolicyRegistry builtin_policies();

// A policy option that counts something (jobs per decision, reservations, moves): a
// positive integer of at most 1,000,000, or a located error saying so.
int policy_count_option(const ConfigNode& value);

}  // namespace schedsim
