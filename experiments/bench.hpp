// `schedsim bench`: named, fixed workloads that measure the simulator's speed. Each case
// runs in a forked child so that its peak RSS is its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policies/registry.hpp"

namespace schedsim {

struct BenchResult {
  std::string name;
  std::string policy;
  std::uint64_t jobs = 0;
  int gpus = 0;
  std::uint64_t events = 0;
  std::uint64_t decision_points = 0;
  double wall_s = 0;
  double events_per_s = 0;
  double peak_rss_mib = 0;
  double mean_jct_s = 0;  // a sanity value: the same on every machine for the same case
};

struct BenchOptions {
  std::uint64_t jobs = 1'000'000;
  int gpus = 10'000;
  // Policy names, or name:placement (e.g. fifo:packed); empty = the benchmark's own
  // defaults (kernel: fifo, sjf; physics: fifo:packed, fifo:first_fit).
  std::vector<std::string> policies;
};

std::vector<std::string> bench_names();  // the named workloads: "kernel", "physics"
// Throws InputError for an unknown name.
std::vector<BenchResult> run_bench(const std::string& name, const BenchOptions& options, const PolicyRegistry& registry);
nlohmann::ordered_json bench_json(const BenchResult& r);

}  // namespace schedsim
