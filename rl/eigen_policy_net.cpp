#include "rl/eigen_policy_net.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Core>

#include "rl/policy_net_spec.hpp"

namespace schedsim::rl {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<RowMatrix>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;
using VectorMap = Eigen::Map<Eigen::VectorXf>;
using ConstRowVectorMap = Eigen::Map<const Eigen::RowVectorXf>;

constexpr float kMasked = static_cast<float>(kMaskedLogit);

std::size_t sz(std::int64_t n) { return static_cast<std::size_t>(n); }

}  // namespace

EigenPolicyNet::EigenPolicyNet(int num_candidates, int candidate_features, int global_features, std::vector<int> hidden, int max_batch)
    : K_(num_candidates), F_(candidate_features), G_(global_features), H_(hidden.empty() ? 0 : hidden.back()), max_batch_(max_batch),
      hidden_(std::move(hidden)) {
  if (hidden_.empty() || K_ < 1 || F_ < 1 || G_ < 1 || max_batch_ < 1) throw std::invalid_argument("EigenPolicyNet: empty shape");
  auto make = [](int in, int out) { return Layer{in, out, std::vector<float>(sz(in) * sz(out)), std::vector<float>(sz(out))}; };
  const PolicyNetSpec spec{F_, G_, hidden_};
  cand_.resize(hidden_.size());
  for (const PolicyNetSpec::Layer& l : spec.layers()) *layer(l.name) = make(l.in, l.out);
  for (const PolicyNetSpec::Buffer& b : spec.buffers()) buffer(b.name)->assign(sz(b.size), b.initial);
  cand0_c_ = make(F_, hidden_[0]);
  cand0_g_ = make(H_, hidden_[0]);
  int widest = F_;
  for (int width : hidden_) widest = std::max(widest, width);
  const auto B = sz(max_batch_), R = B * sz(K_);
  gnorm_.resize(B * sz(G_));
  gemb_.resize(B * sz(H_));
  pre_g_.resize(B * sz(hidden_[0]));
  rows_in_.resize(R * sz(F_));
  act_a_.resize(R * sz(widest));
  act_b_.resize(R * sz(widest));
  scores_.resize(R);
  z_.resize(B * 2 * sz(H_));
  v_hidden_.resize(B * sz(H_));
  wait_out_.resize(B);
  row_env_.resize(R);
  row_slot_.resize(R);
}

EigenPolicyNet::Layer* EigenPolicyNet::layer(const std::string& name) {
  if (name == "glob") return &glob_;
  if (name == "score") return &score_;
  if (name == "wait") return &wait_;
  if (name == "value1") return &value1_;
  if (name == "value2") return &value2_;
  for (std::size_t i = 0; i < cand_.size(); ++i)
    if (name == PolicyNetSpec::cand_layer(i)) return &cand_[i];
  return nullptr;
}

std::vector<float>* EigenPolicyNet::buffer(const std::string& name) {
  if (name == "cand_mean") return &cand_mean_;
  if (name == "cand_std") return &cand_std_;
  if (name == "glob_mean") return &glob_mean_;
  if (name == "glob_std") return &glob_std_;
  return nullptr;
}

std::vector<std::string> EigenPolicyNet::parameter_names() const { return PolicyNetSpec{F_, G_, hidden_}.tensor_names(); }

void EigenPolicyNet::set_parameter(const std::string& name, const float* data, std::int64_t numel) {
  std::vector<float>* target = buffer(name);
  if (const auto dot = name.rfind('.'); target == nullptr && dot != std::string::npos) {
    if (Layer* l = layer(name.substr(0, dot))) {
      const std::string field = name.substr(dot + 1);
      if (field == "weight") target = &l->weight;
      else if (field == "bias") target = &l->bias;
    }
  }
  if (target == nullptr) throw std::invalid_argument("EigenPolicyNet: no parameter named '" + name + "'");
  if (numel < 0 || sz(numel) != target->size())
    throw std::invalid_argument("EigenPolicyNet: parameter '" + name + "' has " + std::to_string(target->size()) + " elements, got " +
                                std::to_string(numel));
  std::copy(data, data + numel, target->begin());
  if (target == &cand_[0].weight) {
    // Split the first candidate layer's [out, F + H] weight into its two column blocks.
    const ConstMatrixMap w(cand_[0].weight.data(), cand_[0].out, cand_[0].in);
    MatrixMap(cand0_c_.weight.data(), cand0_c_.out, F_) = w.leftCols(F_);
    MatrixMap(cand0_g_.weight.data(), cand0_g_.out, H_) = w.rightCols(H_);
  }
}

// y [rows, out] = x [rows, in] W^T + b, optionally through tanh.
void EigenPolicyNet::dense(const Layer& l, const float* x, int rows, float* y, bool tanh_out) {
  if (rows == 0) return;
  const ConstMatrixMap X(x, rows, l.in);
  const ConstMatrixMap W(l.weight.data(), l.out, l.in);
  MatrixMap Y(y, rows, l.out);
  Y.noalias() = X * W.transpose();
  Y.rowwise() += ConstRowVectorMap(l.bias.data(), l.out);
  if (tanh_out) Y = Y.array().tanh().matrix();
}

void EigenPolicyNet::forward(int B, const float* candidates, const float* global, const std::uint8_t* mask, float* logits, float* log_probs,
                             float* value) {
  if (B < 0 || B > max_batch_) throw std::invalid_argument("EigenPolicyNet: batch of " + std::to_string(B) + " > max_batch");
  const int h0 = hidden_[0];
  // Global embedding g = tanh(glob((global - mean) / std)).
  for (int b = 0; b < B; ++b)
    for (int j = 0; j < G_; ++j) {
      const auto i = sz(b) * sz(G_) + sz(j);
      gnorm_[i] = (global[i] - glob_mean_[sz(j)]) / glob_std_[sz(j)];
    }
  dense(glob_, gnorm_.data(), B, gemb_.data(), true);
  // The first layer's global half, with its bias, once per observation.
  {
    const ConstMatrixMap Gm(gemb_.data(), B, H_);
    const ConstMatrixMap Wg(cand0_g_.weight.data(), h0, H_);
    MatrixMap P(pre_g_.data(), B, h0);
    P.noalias() = Gm * Wg.transpose();
    P.rowwise() += ConstRowVectorMap(cand_[0].bias.data(), h0);
  }
  // Legal candidate rows, normalised.
  int R = 0;
  for (int b = 0; b < B; ++b)
    for (int k = 0; k < K_; ++k) {
      if (!mask[sz(b) * sz(K_ + 1) + sz(k)]) continue;
      const float* src = candidates + (sz(b) * sz(K_) + sz(k)) * sz(F_);
      float* dst = rows_in_.data() + sz(R) * sz(F_);
      for (int f = 0; f < F_; ++f) dst[f] = (src[f] - cand_mean_[sz(f)]) / cand_std_[sz(f)];
      row_env_[sz(R)] = b;
      row_slot_[sz(R)] = k;
      ++R;
    }
  float* x = act_a_.data();
  float* spare = act_b_.data();
  if (R > 0) {
    const ConstMatrixMap C(rows_in_.data(), R, F_);
    const ConstMatrixMap Wc(cand0_c_.weight.data(), h0, F_);
    MatrixMap X(x, R, h0);
    X.noalias() = C * Wc.transpose();
    for (int r = 0; r < R; ++r) X.row(r) += ConstRowVectorMap(pre_g_.data() + sz(row_env_[sz(r)]) * sz(h0), h0);
    X = X.array().tanh().matrix();
    for (std::size_t l = 1; l < cand_.size(); ++l) {
      dense(cand_[l], x, R, spare, true);
      std::swap(x, spare);
    }
    dense(score_, x, R, scores_.data(), false);
  }
  // z = [g, mean of the legal rows' embeddings] per observation.
  MatrixMap Z(z_.data(), B, 2 * H_);
  Z.leftCols(H_) = ConstMatrixMap(gemb_.data(), B, H_);
  Z.rightCols(H_).setZero();
  {
    const ConstMatrixMap X(x, R, H_);
    std::vector<int>::size_type r = 0;
    for (int b = 0; b < B; ++b) {
      int count = 0;
      for (; r < sz(R) && row_env_[r] == b; ++r, ++count) Z.row(b).tail(H_) += X.row(static_cast<Eigen::Index>(r));
      if (count > 1) Z.row(b).tail(H_) /= static_cast<float>(count);
    }
  }
  dense(wait_, z_.data(), B, wait_out_.data(), false);
  dense(value1_, z_.data(), B, v_hidden_.data(), true);
  dense(value2_, v_hidden_.data(), B, value, false);
  // Masked logits and their log-softmax (max-shifted, as torch::log_softmax).
  const int A = K_ + 1;
  std::fill(logits, logits + sz(B) * sz(A), kMasked);
  for (int r = 0; r < R; ++r) logits[sz(row_env_[sz(r)]) * sz(A) + sz(row_slot_[sz(r)])] = scores_[sz(r)];
  for (int b = 0; b < B; ++b) {
    float* l = logits + sz(b) * sz(A);
    if (mask[sz(b) * sz(A) + sz(K_)]) l[K_] = wait_out_[sz(b)];
    const float m = *std::max_element(l, l + A);
    float sum = 0.0f;
    for (int a = 0; a < A; ++a) sum += std::exp(l[a] - m);
    const float log_sum = std::log(sum);
    float* lp = log_probs + sz(b) * sz(A);
    for (int a = 0; a < A; ++a) lp[a] = l[a] - m - log_sum;
  }
}

}  // namespace schedsim::rl
