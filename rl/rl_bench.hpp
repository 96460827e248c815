// `schedsim rl-bench CONFIG --out DIR` (issue 25): trains learned schedulers with several
// seeds on a scenario's training windows, one set of agents per evaluation setting (e.g.
// physics on and off) unless a setting borrows another's, evaluates each agent's best.pt
// on held-out test episodes (the scenario's test windows, or another scenario's) against
// every heuristic of the information level, and writes per-window tables, a summary with
// the spread over seeds, figures, a verdict by a stated rule and, for settings with
// several objectives, a Pareto report. Trainings can run as parallel child processes and
// are reused when a finished one of the same configuration is found. docs/rl_agents.md.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <limits>
#include <string>
#include <vector>

#include "policies/registry.hpp"
#include "base/config_node.hpp"

namespace schedsim {
struct RunResult;  // run/runner.hpp
struct ScenarioConfig;  // scenario/scenario.hpp
}  // namespace schedsim

namespace schedsim::rl {

struct RlBenchSetting {
  std::string name;                    // e.g. physics_on
  std::vector<std::string> overrides;  // --set overrides on top of the benchmark's, for this setting's training and evaluation
  // Key physics: on | off | as_configured (default). off trains and evaluates with the
  // scenario's physics map removed after loading (device types, placement and models then
  // do not change speeds; jobs keep their model names as labels); on requires the map.
  std::string physics = "as_configured";
  double target_below = 0.0;           // the verdict: mean agent/best-heuristic ratio <= 1 - this
  // Key agents: the earlier setting whose agents this one evaluates (it trains none);
  // empty: this setting trains its own, one per seed.
  std::string agents;
  // Key scenario: the test episodes run on this scenario instead of the benchmark's
  // (needs `agents`); resolved path, and as written for the tables.
  std::string scenario_path;
  std::string scenario_label;
  // Key objectives: jct first, then one or two of rl_bench_objectives(); empty: JCT only,
  // no Pareto report for this setting.
  std::vector<std::string> objectives;

  bool trains() const { return agents.empty(); }
  // The setting whose agents this one evaluates: itself when it trains.
  const std::string& agents_setting() const { return trains() ? name : agents; }
};

struct RlBenchConfig {
  std::string source;                     // the benchmark file
  std::string scenario_path;              // resolved; a scenario with train: (and usually trace windows)
  std::string scenario_label;             // as written
  std::vector<std::string> overrides;     // for training and evaluation
  std::vector<std::uint64_t> seeds;       // train.seed of each agent
  std::uint64_t test_seed_start = 1;      // test episodes: seeds test_seed_start ..
  int test_episodes = 4;                  // .. + test_episodes - 1, with windows.use = test
  int jobs = 1;                           // trainings at a time (child processes when > 1)
  std::vector<RlBenchSetting> settings;   // default: one, "as_configured", target 0

  static RlBenchConfig load_file(const std::string& path);
  static RlBenchConfig parse(const ConfigNode& node);
  // The setting called `name`; nullptr when none is.
  const RlBenchSetting* find_setting(const std::string& name) const;
};

// What a setting's `objectives:` may list after jct: per-run totals that results.json
// already reports (the energy meter's energy_kwh, cost_usd and co2_kg, the market's
// compute_usd, the inference services' slo_violation_minutes summed), in this order.
const std::vector<std::string>& rl_bench_objectives();
// The unit an objective is reported in ("s" for jct, "kWh", "USD", "kg", "min").
std::string rl_bench_objective_unit(const std::string& objective);
// A run's value of `objective` (jct: the mean JCT in seconds), read through its writer's
// field table (the numbers results.json holds); nullopt when the run has none (energy
// without an energy: map, a cost without a price signal, no job completed).
std::optional<double> rl_bench_objective_value(const RunResult& run, const std::string& objective);

// The scenario a setting's agents train on, for one seed: the benchmark's scenario with
// the benchmark's and the setting's overrides and train.seed=SEED, its physics applied.
ScenarioConfig rl_bench_training_scenario(const RlBenchConfig& config, const RlBenchSetting& setting, std::uint64_t seed, const PolicyRegistry& registry);
// The SHA-256 of the training scenario's resolved YAML text (the scenario as every run
// records it, and its train: map): what trained.json records, so that a finished training
// is reused only for the same configuration.
std::string rl_bench_training_hash(const ScenarioConfig& training_scenario);

// One training of the benchmark: a training setting and a seed, in OUT/<setting>/seed_S/.
struct RlBenchTraining {
  std::string setting;
  std::uint64_t seed = 0;
  std::string dir;
  bool reused = false;  // a finished training of the same configuration was found there
  // From the training (or the reused one's trained.json).
  std::int64_t steps = 0;
  double wall_s = 0.0;
  std::optional<double> best_eval_mean_jct_s;
  std::int64_t best_eval_step = -1;
};

// Trains one agent into `dir` in this process (train_agent, as `schedsim train`), then
// writes dir/trained.json, the marker of a finished training. What the hidden
// `schedsim rl-bench CONFIG --out OUT --train-one SETTING/SEED` runs (a child of --jobs N).
RlBenchTraining train_rl_bench_agent(const RlBenchConfig& config, const std::string& setting, std::uint64_t seed, const std::string& dir, bool progress);

struct RlBenchWindow {
  std::uint64_t seed = 0;
  std::string window;                    // the job source's description, e.g. "t.csv (test window 4 of 6)"
  std::vector<double> heuristic_jct_s;   // by heuristic (RlBenchSettingResult::heuristics)
  std::string best_heuristic;
  double best_heuristic_jct_s = 0.0;
  std::vector<double> agent_jct_s;       // by training seed
  std::vector<double> ratio;             // agent / best heuristic, by training seed
  // Without a physics model (every job runs at rate 1): the mean duration of the jobs that
  // completed, what mean JCT would be if no job ever waited; no policy's mean JCT is lower.
  // NaN with a physics model (faster devices shorten jobs).
  double no_wait_bound_s = std::numeric_limits<double>::quiet_NaN();
  // Without a physics model: a tighter bound on any scheduler's mean JCT, clairvoyant or
  // not (sim/jct_lower_bound.hpp: by completion rank, no waiting and the cluster as one
  // pooled machine; or the rate-capped mean-busy-time LP bound, whichever is larger);
  // >= no_wait_bound_s. NaN with a physics model.
  double lower_bound_s = std::numeric_limits<double>::quiet_NaN();
  // With objectives: each one's value (NaN when a run failed), by heuristic / by seed, then by objective.
  std::vector<std::vector<double>> heuristic_objectives, agent_objectives;
};

// A setting's Pareto report row (settings with objectives): one heuristic or one agent.
struct RlBenchParetoRow {
  std::string policy;                // the heuristic's name, or agent_seedS
  bool agent = false;
  std::uint64_t seed = 0;            // agents only
  std::vector<double> mean;          // by objective: mean over the test windows
  std::vector<double> ratio;         // by objective: mean / the best heuristic's mean of that objective
  double jct_window_ratio = 0.0;     // mean over windows of JCT / the window's best heuristic's JCT
  bool pareto_optimal = false;       // no other row is at least as good in every mean and better in one
};

struct RlBenchSettingResult {
  RlBenchSetting setting;
  std::vector<std::string> heuristics;
  std::vector<std::string> checkpoints;  // the agents evaluated: OUT/<agents setting>/seed_S/best.pt, by seed
  std::vector<RlBenchWindow> windows;
  std::vector<double> seed_mean_ratio;   // by training seed: mean over windows
  double mean_ratio = 0.0;               // mean over seeds of seed_mean_ratio
  double min_ratio = 0.0, max_ratio = 0.0, std_ratio = 0.0;  // spread of seed_mean_ratio (population std)
  bool reached = false;                  // mean_ratio <= 1 - target_below
  // Mean over windows of no_wait_bound_s / best_heuristic_jct_s: the lowest mean ratio any
  // scheduler could reach (NaN with a physics model).
  double no_wait_bound_ratio = std::numeric_limits<double>::quiet_NaN();
  // The same for lower_bound_s: no scheduler's mean ratio is lower (NaN with a physics model).
  double lower_bound_ratio = std::numeric_limits<double>::quiet_NaN();
  std::string verdict;                   // one line
  // With objectives: the best heuristic of each objective (by mean), and one row per
  // heuristic, then per agent seed.
  std::vector<std::string> best_heuristic_by_objective;
  std::vector<RlBenchParetoRow> pareto;
};

struct RlBenchResult {
  std::vector<std::uint64_t> seeds;
  std::vector<RlBenchTraining> trainings;  // by training setting, then seed
  std::vector<RlBenchSettingResult> settings;
};

struct RlBenchOptions {
  std::FILE* log = nullptr;   // progress and the verdicts; nullptr: quiet
  int jobs = 0;               // trainings at a time; 0: the benchmark file's `jobs`
  // The schedsim executable the parallel trainings run (jobs > 1); "": this process's own
  // (/proc/self/exe), which is right for the CLI.
  std::string executable;
};

// Runs the benchmark; writes OUT/<setting>/seed_S/ (training, for settings that train),
// OUT/windows.csv, OUT/windows.md, OUT/summary.csv, OUT/summary.md, OUT/ratios.svg and,
// when a setting lists objectives, OUT/pareto.csv, OUT/pareto.md, OUT/pareto.svg.
RlBenchResult run_rl_bench(const RlBenchConfig& config, const std::string& out_dir, const RlBenchOptions& options = {});

}  // namespace schedsim::rl
