// What the trainers need from a batch of environments, without LibTorch and without the
// simulator: contiguous observation arrays in the layout of rl/env/vector_env.hpp, a step
// with one action per environment, and the episodes finished since the last call. The
// scheduling VectorEnv is adapted to it (make_vector_batch_env); tests plug in tiny
// environments with a known optimum.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "rl/env/scheduling_env.hpp"

namespace schedsim::rl {

struct EpisodeStats {
  int env = 0;
  std::uint64_t seed = 0;
  double episode_return = 0.0;
  double mean_jct_s = 0.0;  // 0 for environments without jobs
  std::uint64_t steps = 0;
  double end_s = 0.0;  // simulated time at which the episode ended (0 where unknown)
};

class BatchEnv {
 public:
  virtual ~BatchEnv() = default;
  virtual int num_envs() const = 0;
  virtual EnvShape shape() const = 0;
  // Environment i starts an episode drawn with seed + i.
  virtual void reset(std::uint64_t seed) = 0;
  // One action per environment; a finished environment auto-resets in the same step
  // (the arrays then hold the new episode's first observation).
  virtual void step(const std::int32_t* actions) = 0;
  virtual const float* candidates() const = 0;    // [N, K, F]
  virtual const float* global() const = 0;        // [N, G]
  virtual const std::uint8_t* masks() const = 0;  // [N, K+1], 1 = legal
  virtual const float* rewards() const = 0;       // [N]
  virtual const std::uint8_t* terminated() const = 0;
  virtual const std::uint8_t* truncated() const = 0;
  virtual std::vector<EpisodeStats> take_finished_episodes() = 0;
  // What train.input_baseline needs (rl/learner.cpp); environments without simulated time
  // keep the defaults, and the learner refuses input_baseline for them.
  virtual bool has_time() const { return false; }
  // Environment i starts the episode of seeds[i] (copies of a workload share a seed).
  virtual void reset_each(const std::vector<std::uint64_t>& seeds) { reset(seeds.empty() ? 0 : seeds[0]); }
  // [N]: simulated time (seconds) of each environment's current observation.
  virtual const double* now_s() const { return nullptr; }
};

// Builds a batch of `num_envs` environments.
using BatchEnvFactory = std::function<std::unique_ptr<BatchEnv>(int num_envs)>;

// The scheduling environment of `scenario` as a BatchEnv (rl/env's VectorEnv).
std::unique_ptr<BatchEnv> make_vector_batch_env(std::shared_ptr<const ScenarioConfig> scenario, const EnvConfig& config, int num_envs,
                                                int num_threads);

}  // namespace schedsim::rl
