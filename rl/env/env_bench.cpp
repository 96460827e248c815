#include "rl/env/env_bench.hpp"

#include <chrono>
#include <memory>
#include <vector>

#include "rl/env/default_rl_scenario.hpp"
#include "rl/env/vector_env.hpp"
#include "base/rng.hpp"

namespace schedsim::rl {

const char* default_rl_scenario_yaml() { return kDefaultRlScenarioYaml; }

ScenarioConfig load_rl_scenario(const std::string& path, const std::vector<std::string>& overrides, const PolicyRegistry& registry) {
  if (!path.empty()) return load_scenario(path, overrides, std::nullopt, registry);
  ConfigNode root = ConfigNode::load_string(default_rl_scenario_yaml(), "built-in RL scenario (rl_default.yaml)");
  YAML::Node doc = root.yaml();
  for (const auto& o : overrides) apply_override(doc, o);
  return ScenarioConfig::parse(root, registry);
}

EnvBenchResult run_env_bench(const ScenarioConfig& scenario, const EnvBenchOptions& options) {
  auto shared = std::make_shared<const ScenarioConfig>(scenario);
  VectorEnv venv(shared, EnvConfig::from_scenario(scenario), options.num_envs, options.threads);
  const EnvShape& shape = venv.shape();
  const int n = venv.num_envs();
  std::vector<std::int32_t> actions(static_cast<std::size_t>(n));
  std::vector<int> legal;
  Rng rng(options.seed, "bench.env.actions");
  EnvBenchResult r;
  r.num_envs = n;
  r.threads = options.threads;
  double steps_sum = 0, jct_sum = 0;
  const auto start = std::chrono::steady_clock::now();
  venv.reset(options.seed);
  for (std::uint64_t t = 0; t < options.steps; ++t) {
    for (int i = 0; i < n; ++i) {  // a uniformly random legal action per environment
      const std::uint8_t* mask = venv.masks() + static_cast<std::size_t>(i) * static_cast<std::size_t>(shape.num_actions());
      legal.clear();
      for (int a = 0; a < shape.num_actions(); ++a) {
        if (mask[a]) legal.push_back(a);
      }
      actions[static_cast<std::size_t>(i)] = legal[rng.below(legal.size())];
    }
    venv.step(actions.data());
    for (const auto& e : venv.take_finished_episodes()) {
      ++r.episodes;
      steps_sum += static_cast<double>(e.steps);
      jct_sum += e.mean_jct_s;
    }
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.env_steps = options.steps * static_cast<std::uint64_t>(n);
  r.env_steps_per_s = r.wall_s > 0 ? static_cast<double>(r.env_steps) / r.wall_s : 0.0;
  if (r.episodes > 0) {
    r.mean_episode_steps = steps_sum / static_cast<double>(r.episodes);
    r.mean_jct_s = jct_sum / static_cast<double>(r.episodes);
  }
  return r;
}

nlohmann::ordered_json env_bench_json(const EnvBenchResult& r) {
  nlohmann::ordered_json j;
  j["name"] = "env";
  j["num_envs"] = r.num_envs;
  j["threads"] = r.threads;
  j["env_steps"] = r.env_steps;
  j["episodes"] = r.episodes;
  j["mean_episode_steps"] = r.mean_episode_steps;
  j["mean_jct_s"] = r.mean_jct_s;
  j["wall_s"] = r.wall_s;
  j["env_steps_per_s"] = r.env_steps_per_s;
  return j;
}

}  // namespace schedsim::rl
