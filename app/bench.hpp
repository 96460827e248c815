// `schedsim bench`: named, fixed workloads that measure the simulator's speed. Each case
// runs in a forked child so that its peak RSS is its own.
//
// The suite (docs/benchmarks.md): kernel, full, policies, trace here; env and ppo live in
// rl/ (rl/env/env_bench.hpp, rl/ppo_bench.hpp) and reuse run_in_child and rusage here.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policies/registry.hpp"

namespace schedsim {

struct BenchResult {
  std::string name;
  std::string policy;             // the policy, or the case's label (trace: the format)
  std::string unit = "events";    // what `count` counts: events, rows
  std::uint64_t count = 0;
  std::uint64_t jobs = 0;
  int gpus = 0;
  std::uint64_t events = 0;
  std::uint64_t decision_points = 0;
  double wall_s = 0;
  double per_s = 0;               // count / wall_s
  double peak_rss_mib = 0;
  double mean_jct_s = 0;  // a sanity value: the same on every machine for the same case
  double replica_hours = 0;  // full: the inference service's replica-hours (0 elsewhere)
};

struct BenchOptions {
  // Jobs per run; unset = the benchmark's own size (1M; policies: 100k).
  std::optional<std::uint64_t> jobs;
  int gpus = 10'000;
  // Policy names, or name:placement (e.g. fifo:packed); empty = the benchmark's own
  // defaults (kernel, full: fifo, sjf; physics: fifo:packed, fifo:first_fit; policies:
  // every registered policy that needs no argument).
  std::vector<std::string> policies;
  // gavel: Gavel's measured throughput matrix (relative paths from the working directory).
  std::string throughputs = "../shared/data/gavel/simulation_throughputs.json";
};

// The named workloads run by run_bench: kernel, full, policies, trace, physics, gavel, las.
std::vector<std::string> bench_names();
// The suite `schedsim bench` runs without names: kernel, full, policies, trace, env, ppo,
// startup (env and ppo are run by the CLI through rl/, ppo only in builds with LibTorch;
// startup by the CLI, experiments/startup_bench.hpp).
std::vector<std::string> bench_suite();
// Throws InputError for an unknown name.
std::vector<BenchResult> run_bench(const std::string& name, const BenchOptions& options, const PolicyRegistry& registry);
nlohmann::ordered_json bench_json(const BenchResult& r);
// One line of the CLI's output.
std::string bench_line(const BenchResult& r);

// The scenario YAML of a scenario-based case ("full", "policies" or "gavel") for `jobs`
// jobs on `gpus` GPUs, policy left out (tests run it at small sizes). `throughputs` is
// the matrix path of the gavel case.
std::string bench_scenario_yaml(const std::string& name, std::uint64_t jobs, int gpus, const std::string& throughputs = "");

// Runs `f` in a forked child and returns the JSON it produced, with "peak_rss_mib" (the
// child's own peak resident set) added. Throws Error when the child fails.
nlohmann::ordered_json run_in_child(const std::function<nlohmann::ordered_json()>& f);

}  // namespace schedsim
