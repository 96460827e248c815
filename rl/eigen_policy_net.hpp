// The policy/value network of rl/policy_net_spec.hpp (PolicyNet) evaluated with Eigen, for the
// rollouts: LibTorch's per-operator overhead (dispatch, allocation of every
// intermediate tensor) dominated a forward on a few hundred rows. The learner copies the
// torch module's parameters in (set_parameter) before each batch of rollouts; the
// gradient steps stay on LibTorch. No LibTorch in this header or its source.
//
// The same function as PolicyNet::forward, computed in a cheaper order: the first
// candidate layer's product with the global embedding is done once per environment
// instead of once per row (W [c; g] = W_c c + W_g g), and masked candidate rows are
// skipped (their scores are masked and they are left out of the pooled mean, so they do
// not change the output). Float sums are therefore ordered differently from LibTorch's:
// outputs agree to about 1e-6, not bitwise (tests/rl/test_eigen_policy_net.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace schedsim::rl {

class EigenPolicyNet {
 public:
  // The shape of PolicyNet(candidate_features, global_features, hidden) for observations
  // of `num_candidates` rows and batches of at most `max_batch` observations.
  EigenPolicyNet(int num_candidates, int candidate_features, int global_features, std::vector<int> hidden, int max_batch);

  // Copies one parameter or buffer, named as in PolicyNet's named_parameters() /
  // named_buffers() ("glob.weight", "cand.0.bias", "cand_mean", ...), row-major like
  // torch. Throws std::invalid_argument for an unknown name or a wrong element count.
  void set_parameter(const std::string& name, const float* data, std::int64_t numel);
  // Every name set_parameter accepts.
  std::vector<std::string> parameter_names() const;

  // For `batch` observations (candidates [B,K,F], global [B,G], mask [B,K+1], 1 = legal):
  // logits [B,K+1] (masked entries at -1e9 like PolicyNet), their log-softmax
  // log_probs [B,K+1] and value [B]. Uses only preallocated buffers.
  void forward(int batch, const float* candidates, const float* global, const std::uint8_t* mask, float* logits, float* log_probs,
               float* value);

  int num_candidates() const { return K_; }
  int max_batch() const { return max_batch_; }

 private:
  struct Layer {
    int in = 0, out = 0;
    std::vector<float> weight;  // [out, in], row-major
    std::vector<float> bias;    // [out]
  };
  Layer* layer(const std::string& name);
  std::vector<float>* buffer(const std::string& name);
  static void dense(const Layer& l, const float* x, int rows, float* y, bool tanh_out);

  int K_, F_, G_, H_, max_batch_;
  std::vector<int> hidden_;
  std::vector<float> cand_mean_, cand_std_, glob_mean_, glob_std_;
  Layer glob_, score_, wait_, value1_, value2_;
  std::vector<Layer> cand_;
  // The first candidate layer split by input columns: candidate features, then global embedding.
  Layer cand0_c_, cand0_g_;
  // Workspace, sized for max_batch observations of K rows.
  std::vector<float> gnorm_, gemb_, pre_g_, rows_in_, act_a_, act_b_, scores_, z_, v_hidden_, wait_out_;
  std::vector<int> row_env_, row_slot_;
};

}  // namespace schedsim::rl
