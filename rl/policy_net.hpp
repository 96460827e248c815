// The policy/value network the learners train (LibTorch), built from its description in
// rl/policy_net_spec.hpp. Only rl/learner.cpp and the tests include this header: it
// pulls in <torch/torch.h>.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <torch/script.h>
#include <torch/torch.h>

#include "rl/policy_net_spec.hpp"

namespace schedsim::rl {

// The network of PolicyNetSpec (the function is written out there).
struct PolicyNetImpl : torch::nn::Module {
  PolicyNetImpl(int candidate_features, int global_features, const std::vector<int>& hidden)
      : PolicyNetImpl(PolicyNetSpec{candidate_features, global_features, hidden}) {}
  explicit PolicyNetImpl(const PolicyNetSpec& net_spec) : spec(net_spec) {
    // The layers in the spec's order: LibTorch draws their initial weights in it.
    for (const PolicyNetSpec::Layer& l : spec.layers()) {
      torch::nn::Linear linear(l.in, l.out);
      if (l.name.rfind("cand.", 0) == 0) {
        if (cand->size() == 0) register_module("cand", cand);
        cand->push_back(linear);
      } else {
        register_module(l.name, linear);
        (l.name == "glob" ? glob : l.name == "score" ? score : l.name == "wait" ? wait : l.name == "value1" ? value1 : value2) = linear;
      }
    }
    for (const PolicyNetSpec::Buffer& b : spec.buffers()) {
      torch::Tensor t = register_buffer(b.name, torch::full({b.size}, b.initial));
      (b.name == "cand_mean" ? cand_mean : b.name == "cand_std" ? cand_std : b.name == "glob_mean" ? glob_mean : glob_std) = t;
    }
    torch::NoGradGuard guard;
    score->weight.mul_(kInitialOutputScale);
    wait->weight.mul_(kInitialOutputScale);
  }

  // candidates [B,K,F], global [B,G], mask [B,K+1] (bool) -> logits [B,K+1], value [B].
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& candidates, const torch::Tensor& global, const torch::Tensor& mask) {
    ++forward_calls;
    const auto B = candidates.size(0), K = candidates.size(1);
    auto c = (candidates - cand_mean) / cand_std;
    auto g = torch::tanh(glob->forward((global - glob_mean) / glob_std));
    auto x = torch::cat({c, g.unsqueeze(1).expand({B, K, g.size(1)})}, 2);
    for (const auto& layer : *cand) x = torch::tanh(layer->as<torch::nn::Linear>()->forward(x));
    auto scores = score->forward(x).squeeze(-1);                   // [B,K]
    auto legal = mask.slice(1, 0, K).to(x.scalar_type()).unsqueeze(-1);  // [B,K,1]
    auto pooled = (x * legal).sum(1) / legal.sum(1).clamp_min(1.0);     // [B,H]
    auto z = torch::cat({g, pooled}, 1);
    auto logits = torch::cat({scores, wait->forward(z)}, 1).masked_fill(mask.logical_not(), kMaskedLogit);
    auto value = value2->forward(torch::tanh(value1->forward(z))).squeeze(-1);
    return {logits, value};
  }

  // forward() for the gradient steps, in fewer operations: the first candidate layer's
  // product with the global embedding once per observation instead of once per row
  // (W [c; g] + b = W_c c + (W_g g + b)), and only the legal candidate rows (a masked
  // row's score is overwritten by the mask and it is left out of the pooled mean, so it
  // changes neither output nor any gradient). The same function and gradients; float
  // sums are ordered differently, so results agree with forward() to about 1e-6, not
  // bitwise (tests/rl/test_policy_net.cpp).
  std::pair<torch::Tensor, torch::Tensor> forward_packed(const torch::Tensor& candidates, const torch::Tensor& global, const torch::Tensor& mask) {
    ++forward_calls;
    const auto B = candidates.size(0), K = candidates.size(1), F = candidates.size(2);
    auto g = torch::tanh(glob->forward((global - glob_mean) / glob_std));
    auto legal = mask.slice(1, 0, K);                              // [B,K] bool
    auto rows = legal.reshape({-1}).nonzero().squeeze(1);          // legal rows, as b * K + k
    auto owner = torch::div(rows, K, "trunc");                     // their observation b
    auto c = (candidates.reshape({B * K, F}).index_select(0, rows) - cand_mean) / cand_std;
    auto first = (*cand)[0]->as<torch::nn::Linear>();
    auto per_obs = torch::addmm(first->bias, g, first->weight.slice(1, F).t());  // [B,h0]
    auto x = torch::tanh(torch::matmul(c, first->weight.slice(1, 0, F).t()) + per_obs.index_select(0, owner));
    for (std::size_t i = 1; i < cand->size(); ++i) x = torch::tanh((*cand)[i]->as<torch::nn::Linear>()->forward(x));
    auto row_scores = score->forward(x).squeeze(-1);               // [R]
    auto scores = torch::zeros({B * K}, x.options()).scatter(0, rows, row_scores).reshape({B, K});
    auto count = legal.sum(1, true).to(x.scalar_type()).clamp_min(1.0);  // [B,1]
    auto pooled = torch::zeros({B, x.size(1)}, x.options()).index_add(0, owner, x) / count;
    auto z = torch::cat({g, pooled}, 1);
    auto logits = torch::cat({scores, wait->forward(z)}, 1).masked_fill(mask.logical_not(), kMaskedLogit);
    auto value = value2->forward(torch::tanh(value1->forward(z))).squeeze(-1);
    return {logits, value};
  }

  PolicyNetSpec spec;
  torch::nn::Linear glob{nullptr}, score{nullptr}, wait{nullptr}, value1{nullptr}, value2{nullptr};
  torch::nn::ModuleList cand;
  torch::Tensor cand_mean, cand_std, glob_mean, glob_std;
  std::int64_t forward_calls = 0;  // Learner::network_forward_calls()
};
TORCH_MODULE(PolicyNet);

// forward() as TorchScript source (LibTorch C++ has no tracer; Module::define compiles
// source without Python), for the layers of `spec`.
std::string torchscript_source(const PolicyNetSpec& spec);
// A TorchScript module of `net`: a copy of its parameters (named with '_' for '.') and
// buffers, and torchscript_source(net.spec) as its forward(candidates, global_features,
// mask) -> (logits, value). What `schedsim train` saves as policy.ts.
torch::jit::Module torchscript_module(const PolicyNetImpl& net);

}  // namespace schedsim::rl
