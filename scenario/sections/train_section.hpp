// The `train:` map of a scenario: which learner, how long, its hyper-parameters, and the
// seeds it trains and evaluates on. Parsed strictly (unknown keys rejected); every field
// is documented in docs/config.md and docs/rl.md. Below rl/: the `train` section of
// scenario loading (scenario/section_registry.hpp) checks it for every command and keeps
// it typed in ScenarioConfig::train.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
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
  // Entropy schedule (key entropy_final): the coefficient decays linearly from
  // entropy_coef at step 0 to this at total_steps; NaN (default) = constant entropy_coef.
  double entropy_final = std::numeric_limits<double>::quiet_NaN();
  // Reward normalisation (key reward_norm): running_std (default) divides the rewards by
  // the running std of the discounted returns; none trains on the raw rewards.
  bool reward_norm_running_std = true;
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
  // Per evaluation, also score every heuristic of the scenario's information level on the
  // same evaluation episodes (key baseline: same_information | none).
  bool baseline_heuristics = true;
  // Early stopping (key early_stop: {patience, min_delta}): stop after `patience`
  // evaluations in a row that did not lower the best evaluation mean JCT by more than the
  // fraction `min_delta` of it. patience 0 = off (train to total_steps).
  int early_stop_patience = 0;
  double early_stop_min_delta = 0.0;
  // Input-driven baseline (key input_baseline, default 0 = off): each update replays every
  // training workload in this many environments (copies differ only in their sampled
  // actions), and a step's advantage is its return-to-go minus the mean return-to-go of the
  // other copies at the same simulated time (Mao et al., ICLR 2019). The arrivals, not the
  // agent, cause most of the variance of a trace window's return; comparing copies of the
  // same window removes it. num_envs must be a multiple of it; whole episodes only.
  int input_baseline = 0;

  // The entropy coefficient of the update that starts after `steps` agent steps.
  double entropy_coef_at(std::int64_t steps) const;

  // Throws InputError naming the key for unknown keys and bad values.
  static TrainConfig parse(const ConfigNode& node);
};

}  // namespace schedsim::rl
