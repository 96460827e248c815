// The fair yardstick for a learned scheduler: every heuristic that the scenario's
// information level can serve (policies/information.hpp: under `none` no duration-based
// policy, under `estimates` no clairvoyant one), run on exactly the episodes the agent is
// evaluated on. `schedsim train` logs the agent against the best of them per evaluation
// and `schedsim rl-bench` tabulates them; no LibTorch here.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "policies/registry.hpp"

namespace schedsim {
struct RunResult;  // run/runner.hpp
}  // namespace schedsim

namespace schedsim::rl {

// Registered policies without arguments that `scenario` can run, in registry order:
// what `compare --policies all` would run (the rl policy, which needs a checkpoint, never).
std::vector<std::string> same_information_heuristics(const ScenarioConfig& scenario, const PolicyRegistry& registry);

struct HeuristicScore {
  std::string name;
  // Mean over the episodes of each episode's mean JCT; NaN when an episode completed no job.
  double mean_jct_s = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> episode_mean_jct_s;  // by episode, in seed order
  // Set when a run of it failed (e.g. a job it can never start): its message; the score is NaN.
  std::string error;
};

// Called with each finished run: the heuristic's index, the episode (0-based) and the run,
// for callers that need more of it than the mean JCT (rl-bench's objectives).
using HeuristicRunVisitor = std::function<void(std::size_t heuristic, int episode, const RunResult& run)>;

// Runs each of `heuristics` on the episodes seeded seed_start .. seed_start + episodes - 1
// of `scenario` (the seed replaces scenario.seed, as an RL environment's reset(seed) does).
std::vector<HeuristicScore> score_heuristics(const ScenarioConfig& scenario, const PolicyRegistry& registry, const std::vector<std::string>& heuristics,
                                             std::uint64_t seed_start, int episodes, const HeuristicRunVisitor& on_run = nullptr);

// The heuristic with the lowest finite mean JCT (the first on a tie); nullptr when none.
const HeuristicScore* best_heuristic(const std::vector<HeuristicScore>& scores);

}  // namespace schedsim::rl
