// The rollouts' Eigen network (rl/eigen_policy_net.hpp) against LibTorch: the same
// logits, masked log-probabilities and values as the learner's network (through its
// TorchScript export, which mirrors PolicyNet::forward), the same sampled actions as
// torch::multinomial from the same generator, and rollouts that run no LibTorch forward.
#include <catch2/catch.hpp>

#include <ATen/CPUGeneratorImpl.h>
#include <filesystem>
#include <torch/script.h>
#include <torch/torch.h>

#include "rl/eigen_policy_net.hpp"
#include "rl/learner.hpp"
#include "tests/rl/toy_env.hpp"

using namespace schedsim::rl;
using schedsim::rl::test::ToyBandit;

namespace {

// Only its shape is read: the learner is built on it and exported, never trained.
class ShapeOnlyEnv final : public BatchEnv {
 public:
  ShapeOnlyEnv(int n, EnvShape shape) : n_(n), shape_(shape) {}
  int num_envs() const override { return n_; }
  EnvShape shape() const override { return shape_; }
  void reset(std::uint64_t) override {}
  void step(const std::int32_t*) override {}
  const float* candidates() const override { return nullptr; }
  const float* global() const override { return nullptr; }
  const std::uint8_t* masks() const override { return nullptr; }
  const float* rewards() const override { return nullptr; }
  const std::uint8_t* terminated() const override { return nullptr; }
  const std::uint8_t* truncated() const override { return nullptr; }
  std::vector<EpisodeStats> take_finished_episodes() override { return {}; }

 private:
  int n_;
  EnvShape shape_;
};

std::string torchscript_name(std::string name) {
  for (auto& ch : name)
    if (ch == '.') ch = '_';
  return name;
}

}  // namespace

TEST_CASE("The Eigen rollout network computes the torch network's logits, probabilities and values", "[rl][eigen]") {
  const int K = 16, F = 20, G = 16, B = 7;
  TrainConfig c;
  c.hidden = {32, 24};  // first layer wider than the global embedding: the split weight is not square
  const auto dir = std::filesystem::temp_directory_path() / "schedsim_test_eigen_policy_net";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "policy.ts").string();
  Learner(c, [&](int n) { return std::make_unique<ShapeOnlyEnv>(n, EnvShape{K, F, G}); }).export_torchscript(path);
  torch::jit::Module m = torch::jit::load(path);
  std::filesystem::remove_all(dir);

  // Random weights and normalisation statistics (the initial ones are near-uniform).
  torch::manual_seed(11);
  torch::NoGradGuard guard;
  EigenPolicyNet eigen(K, F, G, c.hidden, B);
  for (const std::string& name : eigen.parameter_names()) {
    torch::Tensor t = m.attr(torchscript_name(name)).toTensor();
    if (name.find("_std") != std::string::npos)
      t.copy_(torch::rand(t.sizes()) * 1.5 + 0.5);
    else
      t.copy_(torch::randn(t.sizes()) * 0.4);
    eigen.set_parameter(name, t.data_ptr<float>(), t.numel());
  }
  CHECK_THROWS_WITH(eigen.set_parameter("glob.weight", nullptr, 3), Catch::Contains("has 384 elements, got 3"));
  CHECK_THROWS_WITH(eigen.set_parameter("cand.2.weight", nullptr, 0), Catch::Contains("no parameter named 'cand.2.weight'"));

  auto cand = torch::randn({B, K, F}) * 2.0;
  auto glob = torch::randn({B, G}) * 2.0;
  auto mask = (torch::rand({B, K + 1}) < 0.4).to(torch::kUInt8);
  mask[0].fill_(0);
  mask[0][K] = 1;        // only "wait" legal
  mask[1].fill_(1);
  mask[1][K] = 0;        // every candidate, no wait
  mask[2].fill_(0);
  mask[2][5] = 1;        // one candidate, no wait
  mask[3].fill_(1);      // everything
  mask[4].fill_(0);      // nothing legal (the environment never asks; the outputs stay finite)
  auto out = m.forward({cand, glob, mask}).toTuple();
  const auto logits = out->elements()[0].toTensor().contiguous();
  const auto logp = torch::log_softmax(logits, 1).contiguous();
  const auto probs = torch::softmax(logits, 1).contiguous();
  const auto value = out->elements()[1].toTensor().contiguous();

  std::vector<float> e_logits(B * (K + 1)), e_logp(B * (K + 1)), e_value(B);
  eigen.forward(B, cand.data_ptr<float>(), glob.data_ptr<float>(), mask.data_ptr<std::uint8_t>(), e_logits.data(), e_logp.data(),
                e_value.data());
  int compared = 0;
  for (int b = 0; b < B; ++b) {
    INFO("observation " << b);
    CHECK(e_value[b] == Approx(value[b].item<float>()).margin(1e-5));
    for (int a = 0; a <= K; ++a) {
      INFO("action " << a);
      const auto i = static_cast<std::size_t>(b * (K + 1) + a);
      if (mask[b][a].item<std::uint8_t>() == 0) {
        CHECK(e_logits[i] == -1e9f);
        CHECK(logits[b][a].item<float>() == -1e9f);
        if (b != 4) CHECK(std::exp(e_logp[i]) == 0.0f);
        continue;
      }
      CHECK(e_logits[i] == Approx(logits[b][a].item<float>()).margin(1e-5));
      CHECK(e_logp[i] == Approx(logp[b][a].item<float>()).margin(1e-5));
      CHECK(std::exp(e_logp[i]) == Approx(probs[b][a].item<float>()).margin(1e-5));
      ++compared;
    }
  }
  CHECK(compared > B * 4);
}

TEST_CASE("Rollouts run no LibTorch forward: only the gradient steps do", "[rl][eigen]") {
  TrainConfig c;
  c.num_envs = 4;
  c.total_steps = 1000;
  c.epochs = 3;
  c.minibatch = 64;  // more than one update's samples: one gradient step per epoch
  c.hidden = {8};
  c.train_seed_start = 100;
  // Episodes of 1 to 3 steps (seed mod 3): several rollout steps per update.
  Learner learner(c, [](int n) { return std::make_unique<ToyBandit>(n, false, true); });
  learner.update();
  const std::int64_t calls = learner.network_forward_calls(), steps = learner.steps();
  learner.update();
  CHECK(learner.steps() - steps > c.num_envs);  // some environment took more than one step
  CHECK(learner.network_forward_calls() - calls == c.epochs);
}
