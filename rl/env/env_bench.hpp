// `schedsim bench env`: the speed of the RL environment, stepping a VectorEnv with random
// legal actions (what an agent's rollouts cost before any network runs).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "scenario/scenario.hpp"

namespace schedsim::rl {

// experiments/configs/rl_default.yaml, compiled in.
const char* default_rl_scenario_yaml();
// Loads `path` ("" = the compiled-in rl_default.yaml) with --set overrides.
ScenarioConfig load_rl_scenario(const std::string& path, const std::vector<std::string>& overrides, const PolicyRegistry& registry);

struct EnvBenchOptions {
  int num_envs = 8;
  // Two threads: 1.4x to 1.6x one on the 2-core machine (1.2x to 1.4x in windows where its
  // vCPUs share no cache; docs/benchmarks.md), and the pool falls back to one thread's pace
  // when the cores are busy.
  int threads = 2;
  std::uint64_t steps = 20'000;  // vector steps: num_envs x steps environment steps in all
  std::uint64_t seed = 1;
};

struct EnvBenchResult {
  int num_envs = 0;
  int threads = 0;
  std::uint64_t env_steps = 0;    // environment steps (agent decisions) taken in all
  std::uint64_t episodes = 0;     // episodes finished
  double mean_episode_steps = 0;  // over finished episodes
  double mean_jct_s = 0;          // of the finished episodes, random actions: a sanity value
  double wall_s = 0;
  double env_steps_per_s = 0;
};

EnvBenchResult run_env_bench(const ScenarioConfig& scenario, const EnvBenchOptions& options);
nlohmann::ordered_json env_bench_json(const EnvBenchResult& r);

}  // namespace schedsim::rl
