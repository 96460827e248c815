// PolicyNet::forward_packed (the gradient steps' forward: legal rows only, the first
// layer's global half once per observation) computes forward()'s outputs and gradients;
// the network's three implementations built from rl/policy_net_spec.hpp (LibTorch,
// Eigen, TorchScript) compute the same function.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

#include "rl/eigen_policy_net.hpp"
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

// One description, three implementations: from the same (random) weights the LibTorch
// module (forward and forward_packed), the Eigen evaluator and the exported TorchScript
// module, saved and loaded back with torch::jit::load, give the same masked logits,
// probabilities and values on random inputs and masks. Tolerance: 1e-5 absolute (float32
// sums in different orders); masked logits are exactly kMaskedLogit in all three.
// REQUIRE, not CHECK: LibTorch's headers redefine CHECK (c10's, which aborts).
TEST_CASE("The LibTorch, Eigen and TorchScript networks compute the same function from the same weights", "[rl][policy_net]") {
  const int K = 12, F = 20, G = 16, B = 8;
  const PolicyNetSpec spec{F, G, {32, 24, 24}};  // first layer wider than the embedding: the split weight is not square
  torch::manual_seed(21);
  PolicyNet net(spec);
  // Every tensor of the description, with the described shape, and no other.
  std::set<std::string> torch_names;
  for (const auto& kv : net->named_parameters()) torch_names.insert(kv.key());
  for (const auto& kv : net->named_buffers()) torch_names.insert(kv.key());
  const std::vector<std::string> names = spec.tensor_names();
  REQUIRE(torch_names == std::set<std::string>(names.begin(), names.end()));
  for (const PolicyNetSpec::Layer& l : spec.layers()) {
    INFO("layer " << l.name);
    REQUIRE(net->named_parameters()[l.name + ".weight"].sizes() == torch::IntArrayRef({l.out, l.in}));
    REQUIRE(net->named_parameters()[l.name + ".bias"].sizes() == torch::IntArrayRef({l.out}));
  }
  EigenPolicyNet eigen(K, F, G, spec.hidden, B);
  REQUIRE(eigen.parameter_names() == names);
  {
    torch::NoGradGuard guard;
    for (auto& p : net->parameters()) p.copy_(torch::randn(p.sizes()) * 0.4);
    net->cand_mean.copy_(torch::randn({F}));
    net->cand_std.copy_(torch::rand({F}) * 1.5 + 0.5);
    net->glob_mean.copy_(torch::randn({G}));
    net->glob_std.copy_(torch::rand({G}) * 1.5 + 0.5);
  }
  for (const auto& kv : net->named_parameters()) eigen.set_parameter(kv.key(), kv.value().data_ptr<float>(), kv.value().numel());
  for (const auto& kv : net->named_buffers()) eigen.set_parameter(kv.key(), kv.value().data_ptr<float>(), kv.value().numel());

  const auto dir = std::filesystem::temp_directory_path() / "schedsim_test_policy_net_three";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "policy.ts").string();
  torchscript_module(*net).save(path);
  torch::jit::Module script = torch::jit::load(path);
  std::filesystem::remove_all(dir);

  auto cand = torch::randn({B, K, F}) * 2.0;
  auto glob = torch::randn({B, G}) * 2.0;
  auto mask = (torch::rand({B, K + 1}) < 0.4).to(torch::kUInt8);
  mask[0].fill_(0);
  mask[0][K] = 1;    // only wait
  mask[1].fill_(1);
  mask[1][K] = 0;    // every candidate, no wait
  mask[2].fill_(0);
  mask[2][5] = 1;    // one candidate, no wait
  mask[3].fill_(1);  // everything
  const auto legal = mask.to(torch::kBool);

  torch::NoGradGuard guard;
  struct Outputs {
    torch::Tensor logits, logp, value;
  };
  auto from_logits = [](torch::Tensor logits, torch::Tensor value) {
    logits = logits.contiguous();
    return Outputs{logits, torch::log_softmax(logits, 1), value.contiguous()};
  };
  const auto [t_logits, t_value] = net->forward(cand, glob, legal);
  const auto [p_logits, p_value] = net->forward_packed(cand, glob, legal);
  const auto s_out = script.forward({cand, glob, mask}).toTuple();
  std::vector<float> e_logits(B * (K + 1)), e_logp(B * (K + 1)), e_value(B);
  eigen.forward(B, cand.data_ptr<float>(), glob.data_ptr<float>(), mask.data_ptr<std::uint8_t>(), e_logits.data(), e_logp.data(),
                e_value.data());
  const Outputs reference = from_logits(t_logits, t_value);
  const std::vector<std::pair<std::string, Outputs>> others = {
      {"forward_packed", from_logits(p_logits, p_value)},
      {"TorchScript", from_logits(s_out->elements()[0].toTensor(), s_out->elements()[1].toTensor())},
      {"Eigen", Outputs{torch::from_blob(e_logits.data(), {B, K + 1}), torch::from_blob(e_logp.data(), {B, K + 1}),
                        torch::from_blob(e_value.data(), {B})}}};
  const float tol = 1e-5f;
  int compared = 0;
  for (const auto& [name, o] : others) {
    INFO(name << " against LibTorch forward");
    REQUIRE(torch::equal(o.logits == kMaskedLogit, mask == 0));
    REQUIRE(torch::equal(reference.logits == kMaskedLogit, mask == 0));
    const auto m = legal;
    REQUIRE((o.logits - reference.logits).masked_select(m).abs().max().item<float>() < tol);
    REQUIRE((o.logp.exp() - reference.logp.exp()).abs().max().item<float>() < tol);  // probabilities, masked ones 0 in both
    REQUIRE((o.logp - reference.logp).masked_select(m).abs().max().item<float>() < tol);
    REQUIRE((o.value - reference.value).abs().max().item<float>() < tol);
    compared += static_cast<int>(m.sum().item<std::int64_t>());
  }
  REQUIRE(compared > 3 * B * 4);  // many legal entries compared
  // The inputs reach every output: the outputs are not all equal by accident.
  REQUIRE(reference.value.std().item<float>() > 0.01f);
}
