// N scheduling environments stepped together on a thread pool, with every output in
// contiguous arrays (what the PPO trainer and the Python bindings read without copying).
//
// Environment i is reset with seed + i; when it finishes (terminated or truncated), it
// auto-resets at once with the next seed of its own sequence (seed + i + N x episode),
// and the arrays hold the first observation of the new episode while reward/terminated/
// truncated describe the step that ended the old one (the "same-step" autoreset that
// gymnasium calls SAME_STEP; the Python layer adapts it). Results never depend on the
// number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "rl/env/scheduling_env.hpp"

namespace schedsim::rl {

class VectorEnv {
 public:
  VectorEnv(std::shared_ptr<const ScenarioConfig> scenario, EnvConfig config, int num_envs, int num_threads = 1);
  ~VectorEnv();

  int num_envs() const;
  const EnvShape& shape() const;

  void reset(std::uint64_t seed);
  // Environment i starts the episode of seeds[i] (several may share one: copies of a
  // workload); after it ends it continues with seeds[i] + N x episode as after reset().
  void reset_each(const std::vector<std::uint64_t>& seeds);
  // [N]: each environment's simulated time (seconds) at its current observation.
  const double* now_s() const;
  // actions: num_envs values. Steps every environment (in parallel when num_threads > 1).
  void step(const std::int32_t* actions);

  // [N, K, F], [N, G], [N, K+1], [N], [N], [N]; valid until the next reset/step.
  const float* candidates() const;
  const float* global() const;
  const std::uint8_t* masks() const;
  const float* rewards() const;
  const std::uint8_t* terminated() const;
  const std::uint8_t* truncated() const;
  // The last observation of each episode that ended in the last step (before its
  // autoreset), same layout as above; only the rows of envs with terminated or truncated
  // set are meaningful (gymnasium's final_obs; what bootstrapping a truncation needs).
  const float* final_candidates() const;
  const float* final_global() const;
  const std::uint8_t* final_masks() const;
  // Per finished episode of env i since the last call: (return, total JCT s, jobs) etc.
  struct EpisodeRecord {
    int env = 0;
    std::uint64_t seed = 0;
    double episode_return = 0.0;
    double mean_jct_s = 0.0;
    std::uint64_t jobs = 0;
    std::uint64_t steps = 0;
    double end_s = 0.0;  // simulated time at which the episode ended
  };
  std::vector<EpisodeRecord> take_finished_episodes();

  SchedulingEnv& env(int i);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace schedsim::rl
