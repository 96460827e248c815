#include "rl/batch_env.hpp"

#include "rl/env/vector_env.hpp"

namespace schedsim::rl {
namespace {

class VectorBatchEnv final : public BatchEnv {
 public:
  VectorBatchEnv(std::shared_ptr<const ScenarioConfig> scenario, const EnvConfig& config, int num_envs, int num_threads)
      : env_(std::move(scenario), config, num_envs, num_threads) {}
  int num_envs() const override { return env_.num_envs(); }
  EnvShape shape() const override { return env_.shape(); }
  void reset(std::uint64_t seed) override { env_.reset(seed); }
  bool has_time() const override { return true; }
  void reset_each(const std::vector<std::uint64_t>& seeds) override { env_.reset_each(seeds); }
  const double* now_s() const override { return env_.now_s(); }
  void step(const std::int32_t* actions) override { env_.step(actions); }
  const float* candidates() const override { return env_.candidates(); }
  const float* global() const override { return env_.global(); }
  const std::uint8_t* masks() const override { return env_.masks(); }
  const float* rewards() const override { return env_.rewards(); }
  const std::uint8_t* terminated() const override { return env_.terminated(); }
  const std::uint8_t* truncated() const override { return env_.truncated(); }
  std::vector<EpisodeStats> take_finished_episodes() override {
    std::vector<EpisodeStats> out;
    for (const auto& r : env_.take_finished_episodes()) out.push_back(EpisodeStats{r.env, r.seed, r.episode_return, r.mean_jct_s, r.steps, r.end_s});
    return out;
  }

 private:
  VectorEnv env_;
};

}  // namespace

std::unique_ptr<BatchEnv> make_vector_batch_env(std::shared_ptr<const ScenarioConfig> scenario, const EnvConfig& config, int num_envs,
                                                int num_threads) {
  return std::make_unique<VectorBatchEnv>(std::move(scenario), config, num_envs, num_threads);
}

}  // namespace schedsim::rl
