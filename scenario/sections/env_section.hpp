// The scenario's `env:` map (RL environment options), parsed strictly. Torch-free and
// simulator-free, and below rl/: the `env` section of scenario loading
// (scenario/section_registry.hpp) checks the map for every command, not only where an
// environment is built (docs/config.md#env), and keeps it typed in ScenarioConfig::env.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "policies/information.hpp"
#include "base/config_node.hpp"

namespace schedsim {
struct ScenarioConfig;
}

namespace schedsim::rl {

// Weights of the reward terms (all per agent step, summed). Units in the names.
struct RewardWeights {
  double jobs_in_system = 1.0;  // x -(jobs in system) x dt, dt in seconds x reward_scale
  double slowdown = 0.0;        // x -(sum of slowdowns of jobs finished in the step)
  double makespan = 0.0;        // x -(dt of the step, seconds x reward_scale) while jobs remain
  double energy_kwh = 0.0;      // x -(facility energy drawn in the step, kWh); needs `energy:`
  // Seconds of JCT charged per preemption the agent chooses: x -(preemptions in the step)
  // x reward_scale, so an agent does not learn to thrash (issue 25). 0 = free (default).
  double preemption_s = 0.0;
};

// The order in which pending jobs are offered as candidates (the first ones fill the K rows).
enum class CandidateOrder : std::uint8_t {
  kArrival,           // queue order: arrival (the environment never preempts)
  kShortestEstimate,  // the information model's size (oracle: estimate_s, else duration_s), then arrival
  kFewestGpus,        // num_gpus, then arrival
  kLeastAttained,     // attained GPU-seconds (Tiresias' 2D-LAS key; fixed while a job waits), then arrival
};

// Placement options of a candidate row; the row's one-hot columns follow this order.
enum class PlacementOption : std::uint8_t {
  kPacked,       // FreeDevices::packed: fewest nodes, inside one rack when possible
  kFastestType,  // packed on the fastest device type with room (physics, >1 type)
  kSlowestType,  // packed on the slowest device type that can run the job (physics, >1 type)
  kFirstFit,     // the lowest-numbered free devices
};
inline constexpr int kNumPlacementOptions = 4;
const char* to_string(PlacementOption o);
const char* to_string(CandidateOrder o);

struct EnvConfig {
  int max_candidates = 16;             // K: candidate rows per observation (action K = wait)
  double reward_scale = 1.0 / 3600.0;  // seconds -> hours for the time-integral terms
  std::int64_t max_steps = 0;          // truncate an episode after this many agent steps (0 = never)
  RewardWeights reward;
  CandidateOrder order = CandidateOrder::kArrival;
  // Which placement options generate rows (duplicates of an earlier option's device set
  // are dropped). Default: all four.
  std::vector<PlacementOption> placements = {PlacementOption::kPacked, PlacementOption::kFastestType, PlacementOption::kSlowestType,
                                             PlacementOption::kFirstFit};
  // At most this many masked rows show jobs that fit nowhere now (so the agent sees what
  // a wait may be for); the other rows go to startable candidates.
  int max_blocked_rows = 2;
  // Pending jobs examined per observation at most (bounds the work on a long queue).
  int max_scan = 256;
  // The preemption action family: up to this many of the K rows offer running jobs for
  // preemption (checkpoint save, then back to the queue); 0 = start rows only.
  int preempt_rows = 0;
  // Only jobs that have held their current devices at least this long are offered for
  // preemption (a minimum run quantum, as cluster schedulers have: it bounds the
  // save/restore churn an untrained agent can cause).
  double preempt_min_run_s = 600.0;
  // The migration action family: up to this many rows (after the preemption rows) offer
  // running jobs a move to the fastest free placement (checkpoint save and restore, as
  // Gavel's migrations), the largest speed-up first; 0 = off. Only with physics: without
  // it every placement runs at the same rate.
  int migrate_rows = 0;
  // A move is offered only when it speeds the job up by at least this fraction (its rate
  // on the new devices / on its current ones, both uncontended, >= 1 + this).
  double migrate_min_gain = 0.25;
  // Waiting while jobs are pending also asks for a decision point this many seconds later
  // (0 = off: only arrivals, ends and signal changes are decision points). A quantum, like
  // the one after which LAS and Tiresias reconsider a running job: without it an agent can
  // preempt a long job only when something arrives or ends.
  double wake_every_s = 0.0;
  // The cooling action family: the last rows offer these set-points (°C) for every
  // datacenter (sim/thermal.hpp); rows and the global vector get cooling columns. Empty
  // (default) = off, and the shapes are those of a scenario without a thermal model.
  std::vector<double> cooling_setpoints_c;
  // Attach an InvariantChecker to every episode's simulator (tests; slow on big clusters).
  bool check_invariants = false;
  // Not an `env:` key: the scenario's `information:` (set by from_scenario, or by the rl
  // policy from its PolicyContext). The duration features and the shortest_estimate order
  // come from it (docs/rl.md lists which); under `none` those features are 0.
  InformationModel information;

  // Parses the scenario's `env:` map (docs/config.md); unknown keys are rejected.
  static EnvConfig parse(const ConfigNode& node);
  // The scenario's env config: scenario.env, or the defaults without one, with the
  // scenario's information model (refused when it cannot serve the order). Defined in
  // rl/env/scheduling_env.cpp.
  static EnvConfig from_scenario(const ScenarioConfig& scenario);
  // Throws InputError at `who` (e.g. "policy 'rl'") when `information` is none and the order needs sizes.
  void check_information(const std::string& who) const;
};

// The cooling set-points one thermal model allows (`name` as messages show it, e.g.
// "energy.thermal" or "datacenter 'DE-LU'").
struct CoolingRange {
  std::string name;
  double min_c = 0.0, max_c = 0.0;
};
// Rejects env.cooling_setpoints without a thermal model (`ranges` empty) or outside one of
// the ranges, as "<where>: env.cooling_setpoints ...". Scenario loading calls it (so that
// `run` rejects what training would) and so does the environment.
void check_cooling_setpoints(const std::vector<double>& setpoints_c, const std::vector<CoolingRange>& ranges, const std::string& where);

}  // namespace schedsim::rl
