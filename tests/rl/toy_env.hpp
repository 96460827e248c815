// A contextual bandit with a known optimum, as a BatchEnv: each episode is one step.
// K = 3 candidate rows with F = 2 features (x0 uniform in [0,1), x1 = 1 - x0 noise) and
// one global feature; candidate 2 is masked in every other episode, and row 1 is
// masked whenever `always_mask_row1` is set. Choosing candidate i pays x0 of row i;
// "wait" pays 0. The optimal policy picks the legal row with the largest x0.
// With `uneven_no_wait`, an episode lasts 1 + (seed mod 3) steps and "wait" is never
// legal: environments finish at different steps, and one that finished has auto-reset
// into an episode where waiting is illegal (how a scheduling episode starts when every
// job arrives at once).
// Any masked action counts as a violation (the tests assert none ever arrives).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "rl/batch_env.hpp"

namespace schedsim::rl::test {

class ToyBandit final : public BatchEnv {
 public:
  static constexpr int K = 3, F = 2, G = 1;
  ToyBandit(int n, bool always_mask_row1 = false, bool uneven_no_wait = false)
      : n_(n), mask_row1_(always_mask_row1), uneven_no_wait_(uneven_no_wait), cand_(static_cast<std::size_t>(n * K * F)), glob_(static_cast<std::size_t>(n * G)),
        mask_(static_cast<std::size_t>(n * (K + 1))), rew_(static_cast<std::size_t>(n)), term_(static_cast<std::size_t>(n)),
        trunc_(static_cast<std::size_t>(n), 0), episode_(static_cast<std::size_t>(n), 0), seed_(static_cast<std::size_t>(n), 0),
        step_in_episode_(static_cast<std::size_t>(n), 0), return_(static_cast<std::size_t>(n), 0.0f) {}
  int num_envs() const override { return n_; }
  EnvShape shape() const override { return EnvShape{K, F, G}; }
  void reset(std::uint64_t seed) override {
    base_ = seed;
    for (int i = 0; i < n_; ++i) {
      episode_[static_cast<std::size_t>(i)] = 0;
      step_in_episode_[static_cast<std::size_t>(i)] = 0;
      return_[static_cast<std::size_t>(i)] = 0.0f;
      draw(i);
    }
  }
  void step(const std::int32_t* actions) override {
    for (int i = 0; i < n_; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const int a = actions[i];
      if (a < 0 || a > K || !mask_[k * (K + 1) + static_cast<std::size_t>(a)]) ++violations;
      ++action_counts[static_cast<std::size_t>(std::max(0, std::min(a, K)))];
      rew_[k] = a < K ? cand_[(k * K + static_cast<std::size_t>(a)) * F] : 0.0f;
      return_[k] += rew_[k];
      const int length = uneven_no_wait_ ? 1 + static_cast<int>(seed_[k] % 3) : 1;
      term_[k] = ++step_in_episode_[k] >= length;
      if (term_[k]) {
        finished_.push_back(EpisodeStats{i, seed_[k], return_[k], 0.0, static_cast<std::uint64_t>(step_in_episode_[k])});
        ++episode_[k];
        step_in_episode_[k] = 0;
        return_[k] = 0.0f;
      }
      draw(i);
    }
  }
  const float* candidates() const override { return cand_.data(); }
  const float* global() const override { return glob_.data(); }
  const std::uint8_t* masks() const override { return mask_.data(); }
  const float* rewards() const override { return rew_.data(); }
  const std::uint8_t* terminated() const override { return term_.data(); }
  const std::uint8_t* truncated() const override { return trunc_.data(); }
  std::vector<EpisodeStats> take_finished_episodes() override {
    std::vector<EpisodeStats> out;
    out.swap(finished_);
    return out;
  }

  ~ToyBandit() override {
    if (violations_out) *violations_out += violations;
  }

  int violations = 0;
  // When set, the violations are added here when the environment is destroyed (for
  // environments the learner creates and destroys itself, as in evaluate()).
  int* violations_out = nullptr;
  std::vector<long> action_counts = std::vector<long>(K + 1, 0);

 private:
  void draw(int i) {
    const auto k = static_cast<std::size_t>(i);
    seed_[k] = base_ + k + static_cast<std::uint64_t>(n_) * episode_[k];
    std::mt19937_64 rng(seed_[k]);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (int r = 0; r < K; ++r) {
      const float x0 = u(rng);
      cand_[(k * K + static_cast<std::size_t>(r)) * F] = x0;
      cand_[(k * K + static_cast<std::size_t>(r)) * F + 1] = 1.0f - x0 + 0.1f * u(rng);
    }
    glob_[k] = u(rng);
    for (int a = 0; a <= K; ++a) mask_[k * (K + 1) + static_cast<std::size_t>(a)] = 1;
    if (seed_[k] % 2 == 1) mask_[k * (K + 1) + 2] = 0;
    if (mask_row1_) mask_[k * (K + 1) + 1] = 0;
    if (uneven_no_wait_) mask_[k * (K + 1) + K] = 0;
  }

  int n_;
  bool mask_row1_, uneven_no_wait_;
  std::vector<float> cand_, glob_;
  std::vector<std::uint8_t> mask_;
  std::vector<float> rew_;
  std::vector<std::uint8_t> term_, trunc_;
  std::vector<std::uint64_t> episode_, seed_;
  std::vector<int> step_in_episode_;
  std::vector<float> return_;
  std::uint64_t base_ = 0;
  std::vector<EpisodeStats> finished_;
};

}  // namespace schedsim::rl::test
