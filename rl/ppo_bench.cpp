#include "rl/ppo_bench.hpp"

#include <chrono>
#include <ctime>
#include <memory>

#include "rl/batch_env.hpp"
#include "rl/learner.hpp"
#include "scenario/sections/train_section.hpp"

namespace schedsim::rl {

std::string ppo_bench_train_yaml(const PpoBenchOptions& o) {
  return "{algorithm: ppo, total_steps: " + std::to_string(o.steps) + ", num_envs: " + std::to_string(o.num_envs) +
         ", epochs: " + std::to_string(o.epochs) + ", minibatch: " + std::to_string(o.minibatch) + ", lr: 0.001, lr_schedule: linear, gamma: 0.995, gae_lambda: 0.95, clip: 0.2,"
         " entropy_coef: 0.01, value_coef: 0.5, max_grad_norm: 0.5, hidden: [64, 64], seed: 1, eval_every: 0,"
         " train_seed_start: 1000, threads: " +
         std::to_string(o.threads) + ", env_threads: " + std::to_string(o.env_threads) + "}";
}

PpoBenchResult run_ppo_bench(const ScenarioConfig& scenario, const PpoBenchOptions& options) {
  const TrainConfig config = TrainConfig::parse(ConfigNode::load_string(ppo_bench_train_yaml(options), "bench ppo"));
  auto shared = std::make_shared<const ScenarioConfig>(scenario);
  const EnvConfig env_config = EnvConfig::from_scenario(scenario);
  // The Learner sizes LibTorch's and OpenBLAS's thread pools to train.threads.
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  Learner learner(config, [&](int n) { return make_vector_batch_env(shared, env_config, n, config.env_threads); });
  while (!learner.finished()) learner.update();
  PpoBenchResult r;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.cpu_s = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  r.num_envs = config.num_envs;
  r.threads = options.threads;
  r.env_threads = options.env_threads;
  r.env_steps = learner.steps();
  r.updates = learner.updates();
  r.env_steps_per_s = r.wall_s > 0 ? static_cast<double>(r.env_steps) / r.wall_s : 0.0;
  const LearnerTimes t = learner.times();
  r.env_s = t.env_s;
  r.policy_s = t.policy_s;
  r.learn_s = t.learn_s;
  return r;
}

nlohmann::ordered_json ppo_bench_json(const PpoBenchResult& r) {
  nlohmann::ordered_json j;
  j["name"] = "ppo";
  j["num_envs"] = r.num_envs;
  j["threads"] = r.threads;
  j["env_threads"] = r.env_threads;
  j["env_steps"] = r.env_steps;
  j["updates"] = r.updates;
  j["wall_s"] = r.wall_s;
  j["env_steps_per_s"] = r.env_steps_per_s;
  j["cpu_s"] = r.cpu_s;
  j["env_s"] = r.env_s;
  j["policy_s"] = r.policy_s;
  j["learn_s"] = r.learn_s;
  return j;
}

}  // namespace schedsim::rl
