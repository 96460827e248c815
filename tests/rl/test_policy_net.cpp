// PolicyNet::forward_packed (the gradient steps' forward: legal rows only, the first
// layer's global half once per observation) computes forward()'s outputs and gradients.
#include <catch2/catch.hpp>

#include "rl/policy_net.hpp"

using namespace schedsim::rl;

TEST_CASE("The packed forward gives the full forward's logits, values and gradients", "[rl][policy_net]") {
  const int K = 16, F = 20, G = 16, B = 9;
  torch::manual_seed(5);
  PolicyNet net(F, G, std::vector<int>{32, 24, 24});
  {
    torch::NoGradGuard guard;
    for (auto& p : net->parameters()) p.copy_(torch::randn(p.sizes()) * 0.4);
    net->cand_mean.copy_(torch::randn({F}));
    net->cand_std.copy_(torch::rand({F}) + 0.5);
    net->glob_mean.copy_(torch::randn({G}));
    net->glob_std.copy_(torch::rand({G}) + 0.5);
  }
  auto cand = torch::randn({B, K, F}) * 2.0;
  auto glob = torch::randn({B, G});
  auto mask = torch::rand({B, K + 1}) < 0.35;
  mask[0].fill_(false);
  mask[0][K] = true;   // only "wait"
  mask[1].fill_(true); // everything
  mask[2].fill_(false);
  mask[2][3] = true;   // one candidate, no wait
  auto weights = torch::randn({B, K + 1});
  auto targets = torch::randn({B});

  // A loss that reaches every output: log-probabilities, entropy and value.
  auto run = [&](bool packed) {
    net->zero_grad();
    auto [logits, value] = packed ? net->forward_packed(cand, glob, mask) : net->forward(cand, glob, mask);
    auto logp = torch::log_softmax(logits, 1);
    auto loss = (logp * weights).sum() - (logp.exp() * logp).sum() + (value - targets).pow(2).sum();
    loss.backward();
    std::vector<torch::Tensor> grads;
    for (const auto& p : net->parameters()) grads.push_back(p.grad().clone());
    return std::make_tuple(logits.detach(), value.detach(), grads);
  };
  const auto [full_logits, full_value, full_grads] = run(false);
  const auto [packed_logits, packed_value, packed_grads] = run(true);
  CHECK(torch::equal(full_logits == kMaskedLogit, packed_logits == kMaskedLogit));
  CHECK((full_logits - packed_logits).abs().max().item<float>() < 1e-5f);
  CHECK((full_value - packed_value).abs().max().item<float>() < 1e-5f);
  REQUIRE(full_grads.size() == packed_grads.size());
  for (std::size_t i = 0; i < full_grads.size(); ++i) {
    INFO("parameter " << i);
    const float scale = std::max(1.0f, full_grads[i].abs().max().item<float>());
    CHECK((full_grads[i] - packed_grads[i]).abs().max().item<float>() < 1e-5f * scale);
    CHECK(full_grads[i].abs().max().item<float>() > 0.0f);  // every parameter gets a gradient
  }
}
