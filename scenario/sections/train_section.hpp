// The `train:` map of a scenario: which learner, how long, its hyper-parameters, and the
// seeds it trains and evaluates on. Parsed strictly (unknown keys rejected); every field
// is documented in docs/config.md and docs/rl.md. Below rl/: the `train` section of
// scenario loading (scenario/section_registry.hpp) checks it for every command and keeps
// it typed in ScenarioConfig::train.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/config_node.hpp"

namespace schedsim::rl {

enum class Algorithm { kPpo, kA2c, kReinforce };
const char* to_string(Algorithm a);

struct TrainConfig {
  Algorithm algorithm = Algorithm::kPpo;
  std::int64_t total_steps = 200'000;  // agent steps (decisions) over all environments
  int num_envs = 8;                    // episodes per update (one per environment)
  int rollout_steps = 0;               // cap on steps per episode per update (0 = whole episodes)
  int epochs = 4;                      // PPO passes over each batch
  int minibatch = 512;                 // PPO samples per gradient step
  double lr = 3e-4;
  std::string lr_schedule = "linear";  // constant | linear (decays to 0 at total_steps)
  double gamma = 0.995;
  double gae_lambda = 0.95;
  double clip = 0.2;
  double entropy_coef = 0.01;
  double value_coef = 0.5;
  double max_grad_norm = 0.5;
  std::vector<int> hidden = {64, 64};  // widths of the candidate MLP's layers
  std::uint64_t seed = 1;              // network initialisation and action sampling
  std::int64_t eval_every = 20'000;    // agent steps between evaluations (0 = only at the end)
  std::uint64_t eval_seed_start = 1;   // held-out workloads: seeds eval_seed_start ...
  int eval_episodes = 4;               // ... eval_seed_start + eval_episodes - 1
  std::uint64_t train_seed_start = 1000;  // training workloads: update u, env i uses train_seed_start + u * num_envs + i
  int threads = 1;                     // intra-op threads of LibTorch (1 = deterministic)
  int env_threads = 1;                 // threads stepping the environments
  std::string device = "cpu";          // cpu | cuda
  std::int64_t checkpoint_every = 20'000;  // agent steps between checkpoints (the last is always written)
  double dist_timeout_s = 300.0;       // multi-process runs: longest wait for another rank before failing

  // Throws InputError naming the key for unknown keys and bad values.
  static TrainConfig parse(const ConfigNode& node);
};

}  // namespace schedsim::rl
