// Runs one scenario under several policies and tabulates the results: the main job of
// `schedsim compare` and of the README's first command.
#pragma once

#include <string>
#include <vector>

#include "experiments/runner.hpp"

namespace schedsim {

// Runs `policies` in order: each a name (default options) or a YAML map such as
// "{name: fifo, placement: packed}"; empty = every registered policy. Each run is
// labelled by name and the options it sets ("fifo(placement=packed)"). With an out_dir, each policy's outputs go to
// out_dir/<label>/ and the table to out_dir/comparison.csv and comparison.md.
std::vector<RunResult> compare_policies(const ScenarioConfig& scenario, const PolicyRegistry& registry,
                                        const std::vector<std::string>& policies, const RunOptions& options);

// "fifo(placement=packed)": a policy spec's name and the options it sets (compare's folder names).
std::string policy_label(const ConfigNode& policy);

// A fixed-width text table, one row per run (used for stdout and comparison.md).
std::string comparison_table(const std::vector<RunResult>& runs, bool markdown);
std::string comparison_csv(const std::vector<RunResult>& runs);
// The lines above the table: the realised offered load and the measurement window
// (docs/metrics.md#measurement-window), one line each.
std::string comparison_header(const std::vector<RunResult>& runs, int num_devices);
// The key figures of one run as a two-column table.
std::string summary_table(const RunResult& run);

}  // namespace schedsim
