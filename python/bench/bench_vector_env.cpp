// The C++ side of the VectorEnv benchmark (docs/benchmarks.md, "Python VectorEnv"): the
// same stepping as bench_vector_env.py (N environments, uniformly random legal actions
// chosen as argmax(u x mask) with u uniform in [0,1)), without Python, for the ratio.
//   schedsim_bench_vector_env [num_envs=8] [calls=20000] [scenario.yaml (default: built-in)]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "policies/registry.hpp"
#include "rl/env/vector_env.hpp"

int main(int argc, char** argv) {
  using namespace schedsim;
  const int num_envs = argc > 1 ? std::atoi(argv[1]) : 8;
  const long calls = argc > 2 ? std::atol(argv[2]) : 20000;
  const std::string path = argc > 3 ? argv[3] : "";
  const PolicyRegistry registry = builtin_policies();
  auto scenario = std::make_shared<const ScenarioConfig>(load_scenario(path, {}, std::nullopt, registry));
  rl::VectorEnv venv(scenario, rl::EnvConfig{}, num_envs, 1);
  const int actions_per_env = venv.shape().num_actions();
  std::mt19937_64 rng(0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<std::int32_t> actions(static_cast<std::size_t>(num_envs));
  venv.reset(0);
  const auto start = std::chrono::steady_clock::now();
  for (long c = 0; c < calls; ++c) {
    const std::uint8_t* mask = venv.masks();
    for (int i = 0; i < num_envs; ++i) {
      double best = -1.0;
      for (int a = 0; a < actions_per_env; ++a) {
        const double u = uniform(rng) * mask[i * actions_per_env + a];
        if (u > best) {
          best = u;
          actions[static_cast<std::size_t>(i)] = a;
        }
      }
    }
    venv.step(actions.data());
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("C++ VectorEnv: %d envs, %ld calls, %.3f s, %.0f env-steps/s, %.2f us per call\n", num_envs, calls, s,
              static_cast<double>(calls) * num_envs / s, s / static_cast<double>(calls) * 1e6);
}
