// `schedsim rl-bench CONFIG --out DIR` (issue 25): trains a learned scheduler with several
// seeds on a scenario's training windows, evaluates each agent's best.pt on held-out test
// windows under each evaluation setting (e.g. physics on and off) against every heuristic
// of the scenario's information level, and writes per-window tables, a summary with the
// spread over seeds, a figure and a verdict by a stated rule. docs/rl_agents.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "policies/registry.hpp"
#include "base/config_node.hpp"

namespace schedsim::rl {

struct RlBenchSetting {
  std::string name;                    // e.g. physics_on
  std::vector<std::string> overrides;  // --set overrides on top of the scenario's, for evaluation only
  // Key physics: on | off | as_configured (default). off evaluates with the scenario's
  // physics map removed after loading (device types, placement and models then do not
  // change speeds; jobs keep their model names as labels); on requires the map.
  std::string physics = "as_configured";
  double target_below = 0.0;           // the verdict: mean agent/best-heuristic ratio <= 1 - this
};

struct RlBenchConfig {
  std::string source;                     // the benchmark file
  std::string scenario_path;              // resolved; a scenario with train: (and usually trace windows)
  std::vector<std::string> overrides;     // for training and evaluation
  std::vector<std::uint64_t> seeds;       // train.seed of each agent
  std::uint64_t test_seed_start = 1;      // test episodes: seeds test_seed_start ..
  int test_episodes = 4;                  // .. + test_episodes - 1, with windows.use = test
  std::vector<RlBenchSetting> settings;   // default: one, "as_configured", target 0

  static RlBenchConfig load_file(const std::string& path);
  static RlBenchConfig parse(const ConfigNode& node);
};

struct RlBenchWindow {
  std::uint64_t seed = 0;
  std::string window;                    // the job source's description, e.g. "t.csv (test window 4 of 6)"
  std::vector<double> heuristic_jct_s;   // by heuristic (RlBenchSettingResult::heuristics)
  std::string best_heuristic;
  double best_heuristic_jct_s = 0.0;
  std::vector<double> agent_jct_s;       // by training seed
  std::vector<double> ratio;             // agent / best heuristic, by training seed
};

struct RlBenchSettingResult {
  RlBenchSetting setting;
  std::vector<std::string> heuristics;
  std::vector<RlBenchWindow> windows;
  std::vector<double> seed_mean_ratio;   // by training seed: mean over windows
  double mean_ratio = 0.0;               // mean over seeds of seed_mean_ratio
  double min_ratio = 0.0, max_ratio = 0.0, std_ratio = 0.0;  // spread of seed_mean_ratio (population std)
  bool reached = false;                  // mean_ratio <= 1 - target_below
  std::string verdict;                   // one line
};

struct RlBenchResult {
  std::vector<std::uint64_t> seeds;
  std::vector<std::string> checkpoints;  // OUT/seed_S/best.pt
  std::vector<RlBenchSettingResult> settings;
};

// Runs the benchmark; writes OUT/seed_S/ (training), OUT/windows.csv, OUT/windows.md,
// OUT/summary.csv, OUT/summary.md, OUT/ratios.svg. Progress and the verdicts on `log`
// when not null.
RlBenchResult run_rl_bench(const RlBenchConfig& config, const std::string& out_dir, std::FILE* log);

}  // namespace schedsim::rl
