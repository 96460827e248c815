#include "rl/policy_net.hpp"

#include <sstream>

namespace schedsim::rl {
namespace {

// A parameter's TorchScript attribute name: "cand.0.weight" -> "cand_0_weight".
std::string script_name(std::string name) {
  for (auto& ch : name)
    if (ch == '.') ch = '_';
  return name;
}

}  // namespace

// The function of PolicyNetSpec, as PolicyNetImpl::forward computes it.
std::string torchscript_source(const PolicyNetSpec& spec) {
  // The source spells the masked logit out; the bytes of policy.ts depend on this text.
  static_assert(kMaskedLogit == -1e9, "torchscript_source writes the masked logit as -1e9");
  std::ostringstream s;
  s << "def forward(self, candidates: Tensor, global_features: Tensor, mask: Tensor) -> Tuple[Tensor, Tensor]:\n"
       "    legal_mask = mask != 0\n"
       "    B = candidates.size(0)\n"
       "    K = candidates.size(1)\n"
       "    c = (candidates - self.cand_mean) / self.cand_std\n"
       "    g = torch.tanh(torch.matmul((global_features - self.glob_mean) / self.glob_std, self.glob_weight.t()) + self.glob_bias)\n"
       "    x = torch.cat([c, g.unsqueeze(1).expand(B, K, g.size(1))], 2)\n";
  for (std::size_t i = 0; i < spec.hidden.size(); ++i) {
    const std::string layer = script_name(PolicyNetSpec::cand_layer(i));
    s << "    x = torch.tanh(torch.matmul(x, self." << layer << "_weight.t()) + self." << layer << "_bias)\n";
  }
  s << "    scores = (torch.matmul(x, self.score_weight.t()) + self.score_bias).squeeze(-1)\n"
       "    legal = legal_mask[:, :K].type_as(x).unsqueeze(-1)\n"
       "    pooled = (x * legal).sum(1) / legal.sum(1).clamp_min(1.0)\n"
       "    z = torch.cat([g, pooled], 1)\n"
       "    w = torch.matmul(z, self.wait_weight.t()) + self.wait_bias\n"
       "    logits = torch.cat([scores, w], 1).masked_fill(legal_mask.logical_not(), -1e9)\n"
       "    v = torch.tanh(torch.matmul(z, self.value1_weight.t()) + self.value1_bias)\n"
       "    value = (torch.matmul(v, self.value2_weight.t()) + self.value2_bias).squeeze(-1)\n"
       "    return logits, value\n";
  return s.str();
}

torch::jit::Module torchscript_module(const PolicyNetImpl& net) {
  torch::jit::Module m("SchedsimPolicy");
  for (const auto& kv : net.named_parameters()) m.register_parameter(script_name(kv.key()), kv.value().detach().cpu().clone(), false);
  for (const auto& kv : net.named_buffers()) m.register_buffer(kv.key(), kv.value().detach().cpu().clone());
  m.define(torchscript_source(net.spec));
  return m;
}

}  // namespace schedsim::rl
