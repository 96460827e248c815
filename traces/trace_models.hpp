// Workload profiles for trace jobs: most public traces (ITP, Philly, Helios, Alibaba...)
// have no model column, and some name models the profile catalogue does not know. With
// the physics model on, such a job would silently run at rate 1 on every device type.
//
// TraceModelAssignment is the `workload.trace.models:` setting: either shares of
// profiles drawn per job, or rules by GPU count, duration and the job's own model name
// (first matching rule wins). TraceModels applies it to each job as the trace is read,
// checks that every model name is one the physics model knows, and counts the jobs left
// without a profile for the run's warning. Draws are a function of (run seed, job id,
// source line) only: the same seed gives the same assignment whatever the read order.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/config_node.hpp"
#include "sim/job.hpp"
#include "world/physics/throughput_matrix.hpp"
#include "sim/training_plan.hpp"
#include "world/physics/workload_profiles.hpp"

namespace schedsim {

// One rule of `workload.trace.models:` (a list). A job matches when every condition given
// holds; the rule then gives it `model`, or one of `shares` drawn by the job's seed.
struct TraceModelRule {
  // Which jobs by their own model name: "" (key absent) = jobs without one; "any" = every
  // job (replaces the trace's models); otherwise jobs whose model is this name (ignoring
  // case, '-', '_' and spaces), e.g. to map a trace's `bert` onto a profile.
  std::string trace_model;
  std::int64_t min_gpus = 0;                                        // inclusive
  std::int64_t max_gpus = std::numeric_limits<std::int64_t>::max();  // inclusive
  double min_duration_s = 0.0;                                       // inclusive
  double max_duration_s = std::numeric_limits<double>::infinity();   // exclusive
  // Canonical profile (or matrix job type) names with probabilities summing to 1, sorted
  // by name so that the draw does not depend on the order written.
  std::vector<std::pair<std::string, double>> shares;
  bool single = false;  // written as `model: NAME` (for the resolved config)
  // `plan:` for the LLM models this rule assigns (docs/parallelism.md, "In a run");
  // checked and applied by the scenario.
  std::optional<PlanRequest> plan;
  std::int64_t line = 0;  // of the rule in the config, for messages (0 = unknown)

  bool matches(const JobSpec& job) const;
};

class TraceModelAssignment {
 public:
  // Resolves a profile name written in the config to its canonical name, or fails at
  // `where` (listing the known names). Empty: names are kept as written (no catalogue).
  using NameResolver = std::function<std::string(const std::string& name, const ConfigNode& where)>;

  // `node` is the value of workload.trace.models: a map of shares
  // ({ResNet-50: 0.4, BERT-large: 0.6}) or a list of rules. Strict: unknown keys, shares
  // that are not > 0 or do not sum to 1, a rule with both or neither of `model` and
  // `shares`, min > max, throw InputError naming the file, line and key.
  static TraceModelAssignment parse(const ConfigNode& node, const NameResolver& resolve = {});
  YAML::Node to_yaml() const;

  const std::vector<TraceModelRule>& rules() const { return rules_; }
  bool shares_form() const { return shares_form_; }
  // The first rule `job` matches, or null.
  const TraceModelRule* rule_for(const JobSpec& job) const;
  // The model that rule gives `job` under `seed` (a draw among its shares).
  static const std::string& draw(const TraceModelRule& rule, const JobSpec& job, std::uint64_t seed);

 private:
  std::vector<TraceModelRule> rules_;
  bool shares_form_ = false;  // written as a map of shares (one implicit rule)
};

// What a run does with trace models: assign (when configured) and, with the physics model
// on, check every name. Shared by the trace source's passes; immutable once built.
class TraceModels {
 public:
  // `profiles` is copied; `matrix` (may be null) adds its job types to the known names.
  // `matrix_label` names the matrix in messages (its path as configured).
  // `planned_models`: model names that run under a parallelism plan (known without a profile).
  TraceModels(std::optional<TraceModelAssignment> assignment, WorkloadProfileCatalogue profiles, bool physics,
              std::shared_ptr<const ThroughputMatrix> matrix = nullptr, std::string matrix_label = "",
              std::vector<std::string> planned_models = {});

  enum class Outcome { kOwnProfile, kAssigned, kNoProfile };
  struct Tally {
    std::uint64_t own = 0, assigned = 0, none = 0;
    void add(Outcome o) { ++(o == Outcome::kOwnProfile ? own : o == Outcome::kAssigned ? assigned : none); }
    std::uint64_t total() const { return own + assigned + none; }
  };

  // Gives `job` its assigned model (when a rule matches) and classifies it. With physics
  // on, a model name that is no profile (nor matrix job type) throws InputError at
  // "trace_path:line" listing the known profiles and how to map the name.
  Outcome apply(JobSpec& job, std::uint64_t seed, const std::string& trace_path) const;
  // The run's warning when physics is on and some jobs have no profile; nullopt otherwise.
  std::optional<std::string> warning(const Tally& tally, const std::string& trace_path) const;

  bool physics() const { return physics_; }
  const std::optional<TraceModelAssignment>& assignment() const { return assignment_; }

 private:
  bool known(const std::string& model) const;
  std::optional<TraceModelAssignment> assignment_;
  WorkloadProfileCatalogue profiles_;
  bool physics_;
  std::shared_ptr<const ThroughputMatrix> matrix_;
  std::string matrix_label_;
  std::vector<std::string> planned_models_;
};

}  // namespace schedsim
