// The TorchScript export computes the same policy as the C++ network (the only test
// file that includes LibTorch: torch::jit::load is what Python's torch.jit.load reads).
#include <catch2/catch.hpp>

#include <filesystem>

#include <torch/script.h>

#include "rl/learner.hpp"
#include "tests/rl/toy_env.hpp"

using namespace schedsim::rl;
using schedsim::rl::test::ToyBandit;

TEST_CASE("TorchScript export matches the trained network", "[rl][export]") {
  TrainConfig c;
  c.num_envs = 16;
  c.total_steps = 16 * 3;
  c.hidden = {16, 8};
  c.train_seed_start = 100;
  Learner learner(c, [](int n) { return std::make_unique<ToyBandit>(n); });
  while (!learner.finished()) learner.update();
  const auto dir = std::filesystem::temp_directory_path() / "schedsim_test_export";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "policy.ts").string();
  learner.export_torchscript(path);

  float cand[6] = {0.2f, 0.85f, 0.9f, 0.15f, 0.5f, 0.55f};
  float glob[1] = {0.3f};
  std::uint8_t mask[4] = {1, 1, 0, 1};
  const auto expected = learner.action_probabilities(cand, glob, mask);

  torch::jit::Module m = torch::jit::load(path);
  auto out = m.forward({torch::from_blob(cand, {1, 3, 2}), torch::from_blob(glob, {1, 1}), torch::from_blob(mask, {1, 4}, torch::kUInt8)}).toTuple();
  auto probs = torch::softmax(out->elements()[0].toTensor(), 1);
  REQUIRE(probs.size(1) == 4);
  for (int a = 0; a < 4; ++a) CHECK(probs[0][a].item<float>() == Approx(expected[static_cast<std::size_t>(a)]).margin(1e-5));
  CHECK(probs[0][2].item<float>() == 0.0f);
  CHECK(out->elements()[1].toTensor().sizes() == torch::IntArrayRef({1}));
  std::filesystem::remove_all(dir);
}
