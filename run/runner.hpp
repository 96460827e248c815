// Runs one scenario under one policy and writes its outputs:
//   DIR/results.json  summary, seed, version, warnings and the fully resolved config
//   DIR/jobs.csv      one row per finished job, in completion order
//   DIR/timeline.csv, DIR/allocations.csv   only with RunOptions::timeline
//   DIR/ledger.csv    the hash-chained settlement ledger, only with a `market:` map
// Both are written under temporary names and renamed at the very end, so a failed run
// never leaves a file that looks complete (and leaves no new file at all).
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "scenario/scenario.hpp"
#include "run/snapshot_run.hpp"
#include "policies/inference_autoscale.hpp"
#include "world/energy/energy.hpp"
#include "world/market/market_meter.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "world/thermal/thermal_meter.hpp"

namespace schedsim {

struct JobColumns;  // experiments/job_columns.hpp

struct RunOptions {
  std::string out_dir;        // "" = write no files
  bool progress = false;      // progress on stderr (experiments/progress.hpp)
  bool check_invariants = false;  // verify the kernel's invariants after every event (slow)
  // Also write DIR/timeline.csv (queue length, running jobs and busy devices as a step
  // function) and DIR/allocations.csv (every placement: job, start, end, devices).
  bool timeline = false;
  // When set (and out_dir is empty), the jobs.csv text is written here instead of a file:
  // how Python's simulate() gets exactly the CLI's per-job records.
  std::ostream* jobs_csv = nullptr;
  // When set, the jobs.csv records are also appended here as typed columns
  // (experiments/job_columns.hpp): how simulate() returns numpy arrays.
  JobColumns* job_columns = nullptr;
  // Periodic snapshots and resuming from one (experiments/snapshot_run.hpp); needs out_dir.
  SnapshotOptions snapshot = {};
  // Keys the settlement ledger's chain (HMAC-SHA256, docs/market.md); nullopt = unkeyed.
  std::optional<std::string> ledger_key = {};
  // The progress line's prefix, e.g. "compare 3/19 sjf"; the caller owns the text. (A
  // std::string member here sets off GCC 12's -Wmaybe-uninitialized at RunOptions{...}.)
  const char* progress_label = "run";
  // Non-zero: the run's observers are added to the kernel in an order shuffled with this
  // seed instead of the listed one. Outputs must not change (no order of registration
  // carries meaning); the tests check that they do not.
  std::uint64_t observer_order_seed = 0;
};

struct RunResult {
  std::string policy_name;
  std::string information;  // the scenario's information level, InformationModel::describe()
  Summary summary;
  SimulatorStats stats;
  std::vector<std::string> warnings;
  std::map<std::string, std::uint64_t> trace_rows_skipped;  // input rows the trace reader skipped, by reason
  YAML::Node resolved_config;
  std::vector<double> sorted_jct_s;  // for CDF figures
  std::optional<EnergyTotals> energy;  // with the scenario's `energy:` map
  std::vector<ServiceMetrics> inference;  // with services (`inference:`), under every policy
  std::optional<MarketTotals> market;     // with the scenario's `market:` map
  std::string config_sha256;              // SHA-256 of the resolved config (YAML), the ledger's seed
  std::vector<ThermalSiteTotals> thermal;  // with a thermal model: by datacenter (one for a cluster)
};

// `policy_override`, when not null, replaces the scenario's policy (used by compare).
RunResult run_scenario(const ScenarioConfig& scenario, const PolicyRegistry& registry, const RunOptions& options,
                       const YAML::Node* policy_override = nullptr);
// Runs with a policy built elsewhere (e.g. one written in Python); `resolved_policy` is
// what results.json records as the policy's configuration. `observers` also watch the
// run (e.g. the Python bindings' per-job records).
RunResult run_scenario(const ScenarioConfig& scenario, Policy& policy, const YAML::Node& resolved_policy, const RunOptions& options,
                       const std::vector<Observer*>& observers = {});

// The results.json document (ordered keys, no wall-clock values).
nlohmann::ordered_json results_json(const RunResult& r, std::uint64_t seed);
nlohmann::ordered_json summary_json(const Summary& s);
nlohmann::ordered_json energy_json(const EnergyTotals& e);
// results.json's `market` section: compute cost and device-hours by kind, provider and
// tenant, the spot counters and the settlement ledger's totals.
nlohmann::ordered_json market_json(const MarketTotals& m, const SimulatorStats& stats);
// results.json -> energy.thermal: cooling energy and PUE, set-points, throttling, by datacenter.
nlohmann::ordered_json thermal_json(const EnergyTotals& e, const std::vector<ThermalSiteTotals>& sites);
// YAML scalars become numbers, booleans or null where they read as such.
nlohmann::ordered_json yaml_to_json(const YAML::Node& node);

// Writes `content` to `path` via a temporary file and rename.
void write_file_atomically(const std::string& path, const std::string& content);

// What an output folder holds after each outcome (docs/reliability.md, "What an output
// folder holds"). Before a run writes into `dir`, if it exists: removes the files
// `result_files` a previous run left (so that a failure cannot leave another run's
// complete-looking results behind) and, unless `keep_resumable_rows`, the rows of runs
// that never finished (`NAME.partial-PID` of processes that are gone, `NAME.interrupted`).
void clear_output_folder(const std::string& dir, const std::vector<std::string>& result_files, bool keep_resumable_rows);
// After a run finished in `dir`: removes the rows of runs that never finished (as above).
void remove_unfinished_rows(const std::string& dir);
// The files a run writes into its folder (results.json, jobs.csv, ...).
const std::vector<std::string>& run_result_files();
// Throws InputError naming `option` when `path` is empty: an output path left empty (an
// unset shell variable in --out "$OUT") would write nothing, or somewhere unintended.
void check_output_path(const std::string& path, const std::string& option);

}  // namespace schedsim
