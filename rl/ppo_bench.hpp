// `schedsim bench ppo`: training throughput of the PPO learner (environment steps per
// second, rollouts and gradient updates together) on the built-in RL scenario. No
// LibTorch in this header; the CLI includes it in builds with LibTorch.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "scenario/scenario.hpp"

namespace schedsim::rl {

struct PpoBenchOptions {
  std::int64_t steps = 20'000;  // agent steps to train for (whole updates: a little more)
  int threads = 1;              // LibTorch intra-op threads (2 spin-wait on a busy 2-core machine: docs/benchmarks.md)
  int env_threads = 2;          // threads stepping the environments
  int num_envs = 8;
  int epochs = 4;               // PPO passes over each batch (1 and 4 give the cost of one pass)
  int minibatch = 256;          // samples per gradient step (rl_train.yaml's)
};

struct PpoBenchResult {
  int num_envs = 0;
  int threads = 0;
  int env_threads = 0;
  std::int64_t env_steps = 0;  // agent steps trained on
  std::int64_t updates = 0;
  double wall_s = 0;           // construction, observation statistics, rollouts and updates
  double env_steps_per_s = 0;
  double cpu_s = 0;            // process CPU time over the same span (all threads): on a busy
                               // machine wall_s also counts waiting for a core, this does not
  // Where the CPU time went (Learner::times()): stepping the environments, the rollouts'
  // policy evaluation and sampling, everything else (mostly the gradient steps).
  double env_s = 0, policy_s = 0, learn_s = 0;
};

// The train: map the benchmark uses (rl_train.yaml's hyper-parameters, no evaluation).
std::string ppo_bench_train_yaml(const PpoBenchOptions& options);
PpoBenchResult run_ppo_bench(const ScenarioConfig& scenario, const PpoBenchOptions& options);
nlohmann::ordered_json ppo_bench_json(const PpoBenchResult& r);

}  // namespace schedsim::rl
