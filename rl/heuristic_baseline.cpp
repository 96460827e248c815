#include "rl/heuristic_baseline.hpp"

#include <cmath>
#include <exception>
#include <optional>

#include "run/runner.hpp"

namespace schedsim::rl {

std::vector<std::string> same_information_heuristics(const ScenarioConfig& scenario, const PolicyRegistry& registry) {
  // The same filter as compare's "all" (experiments/compare.cpp).
  const bool thermal = (scenario.energy && scenario.energy->thermal) || (scenario.datacenters && scenario.datacenters->sites.front().thermal);
  const bool signals = scenario.signals || (scenario.datacenters && scenario.datacenters->sites.front().signals);
  std::vector<std::string> out;
  for (const auto& info : registry.all()) {
    if (!info.argument_option.empty()) continue;
    if (info.needs_thermal && !thermal) continue;
    if (info.needs_signals && !signals) continue;
    if (!information_serves(scenario, registry, info.name)) continue;
    out.push_back(info.name);
  }
  return out;
}

std::vector<HeuristicScore> score_heuristics(const ScenarioConfig& scenario, const PolicyRegistry& registry, const std::vector<std::string>& heuristics,
                                             std::uint64_t seed_start, int episodes, const HeuristicRunVisitor& on_run) {
  std::vector<HeuristicScore> out;
  for (std::size_t i = 0; i < heuristics.size(); ++i) {
    const std::string& name = heuristics[i];
    HeuristicScore h;
    h.name = name;
    const YAML::Node policy(name);
    double sum_s = 0.0;
    bool all_finite = episodes > 0;
    for (int e = 0; e < episodes; ++e) {
      ScenarioConfig s = scenario;
      s.seed = seed_start + static_cast<std::uint64_t>(e);
      double jct_s = std::numeric_limits<double>::quiet_NaN();
      std::optional<RunResult> run;
      try {
        run = run_scenario(s, registry, RunOptions{}, &policy);
      } catch (const std::exception& ex) {
        // A heuristic that cannot finish an episode is no yardstick; say why, keep the rest.
        if (h.error.empty()) h.error = ex.what();
      }
      if (run) {
        if (run->summary.mean_jct_s) jct_s = *run->summary.mean_jct_s;
        if (on_run) on_run(i, e, *run);  // outside the try: the visitor's errors are its own
      }
      h.episode_mean_jct_s.push_back(jct_s);
      if (!std::isfinite(jct_s)) all_finite = false;
      sum_s += jct_s;
    }
    if (all_finite) h.mean_jct_s = sum_s / episodes;
    out.push_back(std::move(h));
  }
  return out;
}

const HeuristicScore* best_heuristic(const std::vector<HeuristicScore>& scores) {
  const HeuristicScore* best = nullptr;
  for (const auto& h : scores) {
    if (std::isfinite(h.mean_jct_s) && (best == nullptr || h.mean_jct_s < best->mean_jct_s)) best = &h;
  }
  return best;
}

}  // namespace schedsim::rl
