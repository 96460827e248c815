// The learners on a contextual bandit with a known optimum (tests/rl/toy_env.hpp):
// they learn it, never sample a masked action, are deterministic for a seed, and a
// resumed run makes exactly the update an uninterrupted one makes.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>

#include "rl/learner.hpp"
#include "base/error.hpp"
#include "tests/rl/toy_env.hpp"

using namespace schedsim;
using namespace schedsim::rl;
using schedsim::rl::test::ToyBandit;

namespace {

TrainConfig bandit_config(Algorithm algorithm) {
  TrainConfig c;
  c.algorithm = algorithm;
  c.num_envs = 64;
  c.total_steps = 64 * 60;
  c.epochs = 4;
  c.minibatch = 32;
  c.lr = 3e-3;
  c.lr_schedule = "constant";
  c.gamma = 0.99;
  c.entropy_coef = 0.001;
  c.hidden = {16};
  c.seed = 7;
  c.train_seed_start = 100;
  return c;
}

// Probability of the optimal action on fixed observations after training.
struct Probe {
  float cand[ToyBandit::K * ToyBandit::F] = {0.2f, 0.85f, 0.9f, 0.15f, 0.5f, 0.55f};
  float glob[1] = {0.5f};
  std::uint8_t mask[ToyBandit::K + 1] = {1, 1, 1, 1};
};

}  // namespace

TEST_CASE("PPO learns the contextual bandit's optimal action", "[rl][learner]") {
  ToyBandit* env = nullptr;
  Learner learner(bandit_config(Algorithm::kPpo), [&](int n) {
    auto e = std::make_unique<ToyBandit>(n);
    env = e.get();
    return e;
  });
  Probe probe;
  const auto before = learner.action_probabilities(probe.cand, probe.glob, probe.mask);
  CHECK(before[1] == Approx(0.25).margin(0.05));  // near-uniform at the start
  while (!learner.finished()) learner.update();
  const auto after = learner.action_probabilities(probe.cand, probe.glob, probe.mask);
  CHECK(after[1] > 0.9f);  // row 1 has the largest x0
  // With row 1 masked, the best legal row is row 2.
  probe.mask[1] = 0;
  const auto masked = learner.action_probabilities(probe.cand, probe.glob, probe.mask);
  CHECK(masked[1] == 0.0f);
  CHECK(masked[2] > 0.8f);
  CHECK(env->violations == 0);
  // Greedy evaluation on held-out seeds earns close to the optimum's mean of max x0
  // (about 0.69 over the legal rows).
  const EvalStats eval = learner.evaluate([](int n) { return std::make_unique<ToyBandit>(n); }, 1, 32);
  CHECK(eval.episodes == 32);
  CHECK(eval.mean_return > 0.6);
}

TEST_CASE("A2C and REINFORCE improve on the contextual bandit", "[rl][learner]") {
  for (Algorithm a : {Algorithm::kA2c, Algorithm::kReinforce}) {
    TrainConfig c = bandit_config(a);
    c.total_steps = 64 * 150;
    Learner learner(c, [](int n) { return std::make_unique<ToyBandit>(n); });
    while (!learner.finished()) learner.update();
    Probe probe;
    INFO(to_string(a));
    CHECK(learner.action_probabilities(probe.cand, probe.glob, probe.mask)[1] > 0.6f);
  }
}

TEST_CASE("Masked actions are never sampled", "[rl][learner][mask]") {
  TrainConfig c = bandit_config(Algorithm::kPpo);
  c.total_steps = 64 * 10;
  ToyBandit* env = nullptr;
  Learner learner(c, [&](int n) {
    auto e = std::make_unique<ToyBandit>(n, /*always_mask_row1=*/true);
    env = e.get();
    return e;
  });
  while (!learner.finished()) learner.update();
  REQUIRE(env != nullptr);
  CHECK(env->violations == 0);
  CHECK(env->action_counts[1] == 0);
  CHECK(env->action_counts[0] > 0);
  CHECK(env->action_counts[3] > 0);
}

TEST_CASE("Environments that finished early never get an illegal wait", "[rl][learner][mask]") {
  // Episodes of 1-3 steps with "wait" always illegal: during an update and during the
  // held-out evaluation, environments whose episode ended keep stepping in an auto-reset
  // episode; giving them "wait" there would be an illegal action.
  TrainConfig c = bandit_config(Algorithm::kPpo);
  c.num_envs = 8;
  c.total_steps = 8 * 3 * 5;
  ToyBandit* env = nullptr;
  Learner learner(c, [&](int n) {
    auto e = std::make_unique<ToyBandit>(n, false, /*uneven_no_wait=*/true);
    env = e.get();
    return e;
  });
  while (!learner.finished()) learner.update();
  REQUIRE(env != nullptr);
  CHECK(env->violations == 0);
  CHECK(env->action_counts[ToyBandit::K] == 0);
  int eval_violations = 0, eval_envs = 0;
  const EvalStats eval = learner.evaluate(
      [&](int n) {
        auto e = std::make_unique<ToyBandit>(n, false, true);
        e->violations_out = &eval_violations;
        ++eval_envs;
        return e;
      },
      1, 6);
  CHECK(eval.episodes == 6);
  CHECK(eval_envs == 1);
  CHECK(eval_violations == 0);
}

TEST_CASE("Training is deterministic for a seed and differs for another", "[rl][learner][determinism]") {
  auto run = [](std::uint64_t seed) {
    TrainConfig c = bandit_config(Algorithm::kPpo);
    c.total_steps = 64 * 5;
    c.seed = seed;
    Learner learner(c, [](int n) { return std::make_unique<ToyBandit>(n); });
    std::vector<double> losses;
    while (!learner.finished()) {
      const UpdateStats s = learner.update();
      losses.push_back(s.policy_loss);
      losses.push_back(s.value_loss);
    }
    return std::make_pair(learner.flat_parameters(), losses);
  };
  const auto a = run(3), b = run(3), c = run(4);
  CHECK(a.first == b.first);  // bitwise
  CHECK(a.second == b.second);
  CHECK(a.first != c.first);
}

TEST_CASE("A resumed run makes the same next update as an uninterrupted one", "[rl][learner][checkpoint]") {
  const auto dir = std::filesystem::temp_directory_path() / "schedsim_test_resume";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "checkpoint.pt").string();
  TrainConfig c = bandit_config(Algorithm::kPpo);
  c.total_steps = 64 * 10;
  c.lr_schedule = "linear";
  auto make = [](int n) { return std::make_unique<ToyBandit>(n); };

  Learner continuous(c, make);
  continuous.update();
  continuous.update();
  continuous.save_checkpoint(path);
  const UpdateStats next = continuous.update();

  Learner resumed(c, make);
  resumed.load_checkpoint(path);
  CHECK(resumed.steps() == 2 * 64);
  CHECK(resumed.updates() == 2);
  const UpdateStats next_resumed = resumed.update();
  CHECK(resumed.flat_parameters() == continuous.flat_parameters());  // bitwise
  CHECK(next_resumed.policy_loss == next.policy_loss);
  CHECK(next_resumed.lr == next.lr);

  // A checkpoint of another network shape is refused with a clear message.
  TrainConfig other = c;
  other.hidden = {8, 8};
  Learner wrong(other, make);
  CHECK_THROWS_AS(wrong.load_checkpoint(path), InputError);
  CHECK_THROWS_WITH(Learner(c, make).load_checkpoint((dir / "missing.pt").string()), Catch::Contains("no such checkpoint file"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("The greedy agent loaded from a checkpoint picks the best legal row", "[rl][learner][checkpoint]") {
  const auto dir = std::filesystem::temp_directory_path() / "schedsim_test_greedy";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "agent.pt").string();
  TrainConfig c = bandit_config(Algorithm::kPpo);
  c.total_steps = 64 * 30;
  Learner learner(c, [](int n) { return std::make_unique<ToyBandit>(n); });
  while (!learner.finished()) learner.update();
  learner.save_checkpoint(path);
  const GreedyAgent agent(path);
  CHECK(agent.candidate_features() == ToyBandit::F);
  CHECK(agent.global_features() == ToyBandit::G);
  Probe probe;
  CHECK(agent.act(probe.cand, probe.glob, probe.mask, ToyBandit::K) == 1);
  probe.mask[1] = 0;
  CHECK(agent.act(probe.cand, probe.glob, probe.mask, ToyBandit::K) == 2);
  // Any number of candidate rows: with only the first row, the choice is row 0 or wait.
  std::uint8_t mask1[2] = {1, 1};
  const int a = agent.act(probe.cand, probe.glob, mask1, 1);
  CHECK((a == 0 || a == 1));

  std::filesystem::remove_all(dir);
}
