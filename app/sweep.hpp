// `schedsim sweep GRID.yaml`: the cartesian product of parameter values x policies x
// seeds, each run in its own `schedsim run` process, with resume and aggregation.
//   DIR/runs/<run id>/results.json, jobs.csv   one folder per run (written atomically)
//   DIR/logs/<run id>.stderr                     what the run printed on stderr
//   DIR/sweep.csv                                one row per run
//   DIR/summary.csv                              per (parameters, policy): mean and 95% CI over seeds
// A run whose results.json exists is not redone, so a killed sweep resumes where it stopped.
// Backends: "local" spawns the runs here; "ray" hands the same run commands to
// experiments/ray_sweep.py, which runs each as a Ray task and writes its folder here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "policies/registry.hpp"

namespace schedsim {

struct SweepParameter {
  std::string path;                 // a --set key path, e.g. workload.arrival.rate_per_s
  std::vector<std::string> values;  // each a YAML value as text, e.g. "0.5"
  std::string where;                // "grid.yaml:3: parameters...", for messages
};

struct SweepRun {
  std::string id;                        // stable: policy, seed and a hash of the parameter values
  std::vector<std::string> values;       // one per parameter, in grid order
  std::string policy;                    // label, e.g. "fifo(placement=packed)"
  std::string policy_yaml;               // as given to --set policy=...
  std::uint64_t seed = 0;
};

// The most runs one grid may have (docs/config.md#limits): each run is a process and a
// folder, and the grid's run list is built in memory.
inline constexpr std::uint64_t kMaxSweepRuns = 100'000;

struct SweepGrid {
  std::string source;          // the grid file, for messages
  std::string scenario_path;   // base scenario file ("" until an inline scenario is written out)
  std::string inline_scenario; // the inline `scenario:` map as YAML text, when given inline
  std::vector<SweepParameter> parameters;
  std::vector<std::string> policies;  // YAML text: a name or a map; empty = the scenario's own policy
  std::vector<std::string> policy_where;  // where each policy is written, for messages
  std::vector<std::uint64_t> seeds;

  // Parses strictly: unknown keys, wrong types and empty lists are InputErrors naming
  // the grid file and line.
  static SweepGrid load_file(const std::string& path);
  // Every run in a fixed order: parameters (first key outermost, values in list order),
  // then policy, then seed. Independent of how many workers run them.
  std::vector<SweepRun> runs() const;
};

struct SweepOptions {
  std::string out_dir = "results/sweep";
  int workers = 0;          // 0 = number of cores
  std::string executable;   // the schedsim binary each run executes
  bool progress = true;     // one line per finished run on stderr
  std::string backend = "local";  // "local" or "ray"
  std::string ray_address;  // ray: an existing cluster ("" = start a local Ray instance with `workers` CPUs)
  std::string ray_script;   // ray: the driver ("" = experiments/ray_sweep.py, found like report.py)
  std::string shard;        // "I/N": only the runs at positions p (grid order) with p % N == I; "" = all
};

struct SweepOutcome {
  std::size_t runs_total = 0;
  std::size_t runs_executed = 0;  // run in this invocation
  std::size_t runs_skipped = 0;   // already complete (resume)
  std::size_t runs_other_shards = 0;  // with a shard: runs of other shards
  bool tables_written = false;        // false when a shard ends before other shards' runs are done
};

// Checks every parameter value and policy once against the base scenario (so a bad key
// path or value fails before any run starts), runs what is missing (of its shard), then
// writes the tables when every run of the grid is complete.
// Throws InputError when a run fails (naming its stderr log); completed runs stay.
SweepOutcome run_sweep(const SweepGrid& grid, const PolicyRegistry& registry, const SweepOptions& options);

// The tables, from the runs' results.json files (also used after a partial resume).
std::string sweep_csv(const SweepGrid& grid, const std::string& out_dir);
std::string sweep_summary_csv(const SweepGrid& grid, const std::string& out_dir);

// Two-sided Student t quantile: P(T <= t) = p for `df` degrees of freedom (p in (0.5, 1)).
double student_t_quantile(double p, int df);
// Half-width of the 95% confidence interval of the mean of `x` (needs two values or more).
double ci95_half_width(const std::vector<double>& x);

// A paired comparison over seeds: x[i] and baseline[i] come from the same seed (the same
// workload), so the interval is that of the per-seed differences (paired t), which is
// narrower than comparing two unpaired means. Seeds where either value is missing are
// left out; NaN where no value (mean) or fewer than two (ci95) remain.
struct PairedStats {
  std::size_t pairs = 0;
  double diff_mean = 0, diff_ci95 = 0;    // x - baseline
  double ratio_mean = 0, ratio_ci95 = 0;  // x / baseline
};
PairedStats paired_stats(const std::vector<std::optional<double>>& x, const std::vector<std::optional<double>>& baseline);

}  // namespace schedsim
