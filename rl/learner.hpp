// The learners (PPO with GAE, A2C, REINFORCE with a learned baseline) and the greedy agent
// that runs a trained network. LibTorch stays behind this header (pimpl): the CLI, the
// rl policy and the tests include it without paying for <torch/torch.h>.
//
// One update = one batch of episodes: environment i of update u starts the workload
// drawn with seed train_seed_start + u * num_envs + i and runs until its episode ends
// (or for rollout_steps steps, then bootstraps from the value head). Because every update
// starts from a reset, a resumed run continues exactly like an uninterrupted one.
//
// Several processes (ranks) can train one agent together: rank r steps the global
// environments r*n..r*n+n-1 (n = num_envs / world size), actions are drawn from a stream
// per global environment, every statistic is summed over ranks and each minibatch's
// gradient is the all-reduced sum of the ranks' shares, so N ranks follow the learning
// curve of one process with the same num_envs up to floating-point rounding
// (docs/rl_agents.md, "Distributed training").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rl/batch_env.hpp"
#include "rl/dist_launch.hpp"
#include "scenario/sections/train_section.hpp"

namespace schedsim::rl {

struct UpdateStats {
  std::int64_t step = 0;     // agent steps trained on so far (all environments)
  std::int64_t update = 0;   // updates done so far
  std::int64_t episodes = 0; // training episodes finished so far
  int batch_episodes = 0;    // episodes finished in this update's batch
  double mean_return = 0.0;  // over this batch's finished episodes (NaN when none)
  double mean_jct_s = 0.0;   // idem
  double policy_loss = 0.0, value_loss = 0.0, entropy = 0.0, approx_kl = 0.0;
  double lr = 0.0;
};

struct EvalStats {
  double mean_jct_s = 0.0;   // mean over the held-out episodes of each episode's mean JCT
  double mean_return = 0.0;
  int episodes = 0;
};

// Process CPU time (all threads) update() has spent so far, by phase (`schedsim bench
// ppo` prints it; training outputs never contain it, so they stay deterministic).
struct LearnerTimes {
  double env_s = 0.0;     // stepping and resetting the training environments
  double policy_s = 0.0;  // the rollouts' policy evaluation, sampling and recording
  double learn_s = 0.0;   // the rest: observation statistics, advantages, gradient steps
};

class Learner {
 public:
  // Builds the network (initialised from config.seed), the optimizer and this rank's
  // training environments (make_env(config.num_envs / dist.world_size)); with more than
  // one rank, joins the process group first. Throws InputError for device: cuda without
  // CUDA and for num_envs not divisible by the world size.
  Learner(const TrainConfig& config, BatchEnvFactory make_env, const DistConfig& dist = {});
  ~Learner();
  Learner(const Learner&) = delete;
  Learner& operator=(const Learner&) = delete;

  bool finished() const;
  // Collects one batch of episodes and learns from it (a collective: every rank calls it).
  UpdateStats update();
  // Greedy episodes (start-or-wait by total probability, then the most likely
  // candidate; see docs/rl_agents.md) on make_env(n) reset with
  // `seed_start`: one episode per environment. With several ranks each runs its share of
  // the n episodes and all get the totals (a collective).
  EvalStats evaluate(const BatchEnvFactory& make_env, std::uint64_t seed_start, int episodes) const;

  std::int64_t steps() const;
  std::int64_t updates() const;
  int rank() const;
  int world_size() const;
  // Network, optimizer, minibatch-shuffling RNG and progress; written to a temporary file, then
  LearnerTimes times() const;
  // Forward passes of the LibTorch network so far (tests: rollouts evaluate the policy
  // with Eigen, so only gradient steps, evaluation and the probability probes count).
  std::int64_t network_forward_calls() const;
  // Network, optimizer, sampling RNG and progress; written to a temporary file, then
  // renamed. load_checkpoint() checks that the network shape matches the config.
  void save_checkpoint(const std::string& path) const;
  void load_checkpoint(const std::string& path);
  // A TorchScript module for Python's torch.jit.load: forward(candidates [B,K,F],
  // global [B,G], mask [B,K+1] uint8/bool) -> (logits [B,K+1] with illegal actions at
  // -1e9, value [B]).
  void export_torchscript(const std::string& path) const;
  // Every parameter, flattened in a fixed order (tests compare runs bitwise).
  std::vector<float> flat_parameters() const;
  // Probabilities of the current policy for one observation (tests).
  std::vector<float> action_probabilities(const float* candidates, const float* global, const std::uint8_t* mask) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A trained network loaded from a checkpoint, acting greedily on CPU.
class GreedyAgent {
 public:
  explicit GreedyAgent(const std::string& checkpoint_path);
  ~GreedyAgent();
  GreedyAgent(GreedyAgent&&) noexcept;
  // Candidate features F and global features G the network was trained with.
  int candidate_features() const;
  int global_features() const;
  // The greedy action for one observation of `num_candidates` rows: "wait" when its
  // probability is at least that of all legal candidates together, else the most likely
  // candidate.
  int act(const float* candidates, const float* global, const std::uint8_t* mask, int num_candidates) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when this build can use CUDA (LibTorch with CUDA and a device present).
bool cuda_available();

}  // namespace schedsim::rl
