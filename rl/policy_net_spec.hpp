// The policy/value network, described once. Its three implementations are built from
// this description: the LibTorch module the learners train (rl/policy_net.hpp), the
// Eigen evaluator of the rollouts and of the `rl` policy (rl/eigen_policy_net.hpp), and
// the TorchScript module `schedsim train` exports (policy.ts, rl/learner.cpp). A test
// (tests/rl/test_policy_net.cpp, "three implementations") checks that they compute the
// same function from the same weights. No LibTorch here.
//
// The function, for one observation (candidate rows c_1..c_K, global vector u, mask m
// over the K + 1 actions, the last one wait):
//   g    = tanh(glob((u - glob_mean) / glob_std))                 global embedding [H]
//   x_k  = cand((c_k - cand_mean) / cand_std ++ g)                 a tanh after every
//                                                                  cand.i layer  [H]
//   s_k  = score(x_k)                                              candidate logits
//   z    = g ++ mean of x_k over the legal rows (0 when none)      [2H]
//   w    = wait(z)                                                 wait logit
//   v    = value2(tanh(value1(z)))                                 value
//   logits = [s_1..s_K, w], masked entries set to kMaskedLogit
// with H = hidden.back() and every layer an affine map (weight [out, in], bias [out]).
// The same MLP scores every row, so the policy is permutation invariant and works for
// any K.
#pragma once

#include <string>
#include <vector>

namespace schedsim::rl {

// The logit of a masked action. Not -inf: keeps softmax, entropy and gradients finite.
constexpr double kMaskedLogit = -1e9;
// score and wait start with weights scaled by this: a near-uniform initial policy.
constexpr double kInitialOutputScale = 0.01;

struct PolicyNetSpec {
  int candidate_features = 0;  // F
  int global_features = 0;     // G
  std::vector<int> hidden;     // widths of the cand.i layers; H = hidden.back()

  struct Layer {
    std::string name;  // as LibTorch names the module: "glob", "cand.0", ...
    int in = 0, out = 0;
  };
  struct Buffer {
    std::string name;  // "cand_mean", ...
    int size = 0;
    float initial = 0.0f;
  };

  int embedding() const { return hidden.empty() ? 0 : hidden.back(); }
  static std::string cand_layer(std::size_t i) { return "cand." + std::to_string(i); }

  // Every layer in creation order (the order LibTorch draws their initial weights and
  // lists their parameters in): glob, cand.0 .. cand.n-1, score, wait, value1, value2.
  std::vector<Layer> layers() const {
    const int h = embedding();
    std::vector<Layer> out = {{"glob", global_features, h}};
    int in = candidate_features + h;
    for (std::size_t i = 0; i < hidden.size(); ++i) {
      out.push_back({cand_layer(i), in, hidden[i]});
      in = hidden[i];
    }
    out.push_back({"score", h, 1});
    out.push_back({"wait", 2 * h, 1});
    out.push_back({"value1", 2 * h, h});
    out.push_back({"value2", h, 1});
    return out;
  }
  // The input normalisation, set from observed statistics (identity at first).
  std::vector<Buffer> buffers() const {
    return {{"cand_mean", candidate_features, 0.0f},
            {"cand_std", candidate_features, 1.0f},
            {"glob_mean", global_features, 0.0f},
            {"glob_std", global_features, 1.0f}};
  }
  // The names of every parameter ("glob.weight", "glob.bias", ...) and buffer.
  std::vector<std::string> tensor_names() const {
    std::vector<std::string> out;
    for (const Buffer& b : buffers()) out.push_back(b.name);
    for (const Layer& l : layers()) {
      out.push_back(l.name + ".weight");
      out.push_back(l.name + ".bias");
    }
    return out;
  }
};

}  // namespace schedsim::rl
