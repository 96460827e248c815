// `schedsim serve CONFIG.yaml --out DIR` (issue 26, docs/serving.md#schedsim-serve): one
// model deployment's replicas serving a request stream at request level; writes
// DIR/requests.csv (one row per request) and DIR/results.json (summary, engine counters,
// the resolved config) and prints a short table.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serving/serving_config.hpp"
#include "serving/serving_engine.hpp"
#include "serving/serving_metrics.hpp"

namespace schedsim {

// A serve config (docs/config.md, "schedsim serve"): requests, deployment, replicas, slo,
// optional disaggregation, seed, accelerators (catalogue additions) and name.
struct ServeConfig {
  std::string source;  // the file, for messages
  std::string name;
  std::uint64_t seed = 1;
  serving::DeploymentSpec deployment;
  int replicas = 1;
  serving::ServingSlo slo;
  serving::DisaggregationSpec disaggregation;
  std::vector<serving::Request> requests;
  nlohmann::ordered_json resolved;  // every value as used, defaults filled in
};

// Throws InputError naming the file, line and key of the first problem (including a
// deployment whose weights do not fit its devices, located at `deployment`).
ServeConfig load_serve_config(const std::string& path);
ServeConfig parse_serve_config(const ConfigNode& root);

struct ServeResult {
  std::vector<serving::RequestRecord> records;  // by id
  serving::ServingSummary summary;             // duration: the last request's finish_s
  serving::ServingStats stats;
};

ServeResult run_serve(const ServeConfig& config);

// requests.csv: id,arrival_s,first_token_s,finish_s,ttft_s,tpot_s,e2e_s,prompt_tokens,
// output_tokens,replica,preemptions; times with 17 significant digits, rows by id.
std::string requests_csv(const std::vector<serving::RequestRecord>& records);
// results.json: {command, name, seed, config, summary, stats}; no wall-clock values, so
// the bytes repeat run to run.
nlohmann::ordered_json serve_results_json(const ServeConfig& config, const ServeResult& result);
// The printed table.
std::string serve_table(const ServeConfig& config, const ServeResult& result);

struct ServeCliOptions {
  std::string config;
  std::string out = "results/serve";
  bool quiet = false;
};

// Loads, runs and writes: nothing is written until the run has finished, then both files
// atomically (a failed run leaves neither, nor a folder it created).
void run_serve_cli(const ServeCliOptions& options, std::ostream& out);

}  // namespace schedsim
