// Runs one scenario under several policies and tabulates the results: the main job of
// `schedsim compare` and of the README's first command.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "run/runner.hpp"

namespace schedsim {

// Runs `policies` in order: each a name (default options) or a YAML map such as
// "{name: fifo, placement: packed}"; empty = every registered policy. Each run is
// labelled by name and the options it sets ("fifo(placement=packed)"). With an out_dir, each policy's outputs go to
// out_dir/<label>/ and the table to out_dir/comparison.csv and comparison.md
// (with the paired table against `baseline`, a label; "" = the first policy).
std::vector<RunResult> compare_policies(const ScenarioConfig& scenario, const PolicyRegistry& registry,
                                        const std::vector<std::string>& policies, const RunOptions& options, const std::string& baseline = "");

// A metric of a world model (energy meter, price and carbon signals, failures, inference
// services, market) as a column of compare's tables and of sweep.csv / summary.csv. Read
// from a run's results.json document, so that compare and sweep give the same numbers.
// A column appears only when its model is on in at least one run: outputs of scenarios
// without these models keep their bytes (docs/experiments.md#world-metric-columns).
struct WorldMetric {
  const char* name;    // CSV column, unit in the name: "co2_kg"
  const char* title;   // table column, unit in parentheses: "CO2 (kg)"
  const char* format;  // table cell, printf style
  // Whether the run had the model that produces the metric (a run without a price signal
  // has no electricity cost even with the energy meter on).
  bool (*active)(const nlohmann::ordered_json& results);
  // The value; nullopt when inactive or undefined (e.g. energy per job with no job done).
  std::optional<double> (*value)(const nlohmann::ordered_json& results);
};
// In column order: energy_kwh, energy_kwh_per_job, electricity_usd, co2_kg, goodput,
// slo_violation_minutes, compute_usd.
const std::vector<WorldMetric>& world_metrics();
// The world metrics active in at least one of `results` (indices into world_metrics()).
std::vector<std::size_t> active_world_metrics(const std::vector<nlohmann::ordered_json>& results);

// "fifo(placement=packed)": a policy spec's name and the options it sets (compare's folder names).
std::string policy_label(const ConfigNode& policy);

// Where `baseline` (a policy label) is in `labels`: 0 when empty; InputError naming
// --baseline and the labels when it is not there.
std::size_t baseline_index(const std::vector<std::string>& labels, const std::string& baseline);

// For each run, the earlier run whose results are identical (every summary metric,
// energy included, the active world metrics and the sorted JCTs of all completed jobs), if any; a run that is itself
// identical to an earlier one is never named.
std::vector<std::optional<std::size_t>> identical_rows(const std::vector<RunResult>& runs);

// Mean JCT of each run minus and divided by the baseline run's (same seed, so paired),
// then each active world metric divided by the baseline's (e.g. "CO2 / fifo");
// empty with fewer than two runs.
std::string paired_table(const std::vector<RunResult>& runs, std::size_t baseline, bool markdown);

// A fixed-width text table, one row per run (used for stdout and comparison.md); rows
// identical to an earlier one end with "= NAME", explained under the table.
std::string comparison_table(const std::vector<RunResult>& runs, bool markdown);
std::string comparison_csv(const std::vector<RunResult>& runs);
// The lines above the table: the realised offered load and the measurement window
// (docs/metrics.md#measurement-window), one line each.
std::string comparison_header(const std::vector<RunResult>& runs, int num_devices);
// The key figures of one run as a two-column table.
std::string summary_table(const RunResult& run);

}  // namespace schedsim
