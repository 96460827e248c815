#include "serving/roofline.hpp"

#include <algorithm>
#include <cmath>

namespace schedsim::serving {

BatchRoofline::BatchRoofline(const DeploymentSpec& d) {
  const ModelSpec& m = d.model;
  const double tp = d.tensor_parallel;
  flops_per_token_ = 2.0 * m.active_params();
  // QK^T and AV: 2 x hidden multiply-adds each per (query, key) pair and layer.
  attention_flops_per_pair_ = 4.0 * m.num_layers * static_cast<double>(m.hidden_size);
  weight_bytes_ = m.total_params() * d.bytes_per_param;
  kv_bytes_per_token_ = 2.0 * m.num_layers * m.kv_dim() * d.bytes_per_param;
  compute_flops_per_s_ = d.device.peak_dense_bf16_flops * tp * d.compute_efficiency;
  memory_bytes_per_s_ = d.device.memory_bandwidth_bytes_per_s * tp * d.memory_efficiency;
  if (d.tensor_parallel > 1) {
    // Megatron tensor parallelism: two all-reduces of the activations (hidden x bytes per
    // token) per layer; a ring all-reduce moves 2 (tp - 1) / tp of the buffer per device.
    const double bytes_per_token = 2.0 * m.num_layers * m.hidden_size * d.bytes_per_param;
    allreduce_s_per_token_ = 2.0 * (tp - 1) / tp * bytes_per_token / d.device.intra_node_link_bytes_per_s;
  }
}

double BatchRoofline::iteration_time_s(const std::vector<std::pair<std::int64_t, std::int64_t>>& prefill_chunks,
                                       std::int64_t decodes, std::int64_t decode_context_tokens) const {
  double tokens = static_cast<double>(decodes);
  double attention_pairs = static_cast<double>(decode_context_tokens);
  double kv_tokens = static_cast<double>(decode_context_tokens);
  for (const auto& [cached, chunk] : prefill_chunks) {
    const double c = static_cast<double>(chunk);
    const double p = static_cast<double>(cached);
    tokens += c;
    // Causal attention: the chunk's i-th token (i = 1..c) sees p + i keys.
    attention_pairs += c * p + c * (c + 1) / 2;
    kv_tokens += p + c;  // reads the cached keys and values, writes the chunk's
  }
  const double compute_s = (flops_per_token_ * tokens + attention_flops_per_pair_ * attention_pairs) / compute_flops_per_s_;
  const double memory_s = (weight_bytes_ + kv_bytes_per_token_ * kv_tokens) / memory_bytes_per_s_;
  return std::max(compute_s, memory_s) + allreduce_s_per_token_ * tokens;
}

DecodeRun::DecodeRun(const BatchRoofline& r, std::int64_t decodes, std::int64_t context_tokens) {
  const double n = static_cast<double>(decodes);
  const double c = static_cast<double>(context_tokens);
  compute_a_ = (r.flops_per_token_ * n + r.attention_flops_per_pair_ * c) / r.compute_flops_per_s_;
  compute_b_ = r.attention_flops_per_pair_ * n / r.compute_flops_per_s_;
  memory_a_ = (r.weight_bytes_ + r.kv_bytes_per_token_ * c) / r.memory_bytes_per_s_;
  memory_b_ = r.kv_bytes_per_token_ * n / r.memory_bytes_per_s_;
  fixed_s_ = r.allreduce_s_per_token_ * n;
}

double DecodeRun::iteration_s(std::int64_t j) const {
  const double i = static_cast<double>(j);
  return std::max(compute_a_ + compute_b_ * i, memory_a_ + memory_b_ * i) + fixed_s_;
}

double DecodeRun::linear_sum(double a, double b, std::int64_t from, std::int64_t to) {
  if (to <= from) return 0;
  const double count = static_cast<double>(to - from);
  // sum of i over [from, to) = count x (from + to - 1) / 2
  return a * count + b * count * (static_cast<double>(from) + static_cast<double>(to - 1)) / 2;
}

double DecodeRun::elapsed_s(std::int64_t j) const {
  if (j <= 0) return 0;
  // max of two linear functions: one of them wins before the crossing, the other after.
  const double da = compute_a_ - memory_a_;
  const double db = compute_b_ - memory_b_;
  std::int64_t split = 0;  // iterations [0, split) vs [split, j) are in one regime each
  if (db != 0) {
    const double cross = -da / db;  // compute == memory here
    if (cross > 0) split = std::min<std::int64_t>(j, static_cast<std::int64_t>(std::ceil(cross)));
  }
  double total = fixed_s_ * static_cast<double>(j);
  for (const auto& [from, to] : {std::pair<std::int64_t, std::int64_t>{0, split}, {split, j}}) {
    if (to <= from) continue;
    const double mid = (static_cast<double>(from) + static_cast<double>(to - 1)) / 2;
    const bool compute_bound = compute_a_ + compute_b_ * mid >= memory_a_ + memory_b_ * mid;
    total += compute_bound ? linear_sum(compute_a_, compute_b_, from, to) : linear_sum(memory_a_, memory_b_, from, to);
  }
  return total;
}

std::int64_t DecodeRun::iterations_within(double start_s, double t_s, std::int64_t limit) const {
  if (start_s + elapsed_s(limit) <= t_s) return limit;
  std::int64_t lo = 0, hi = limit;  // end(lo) <= t_s < end(hi)
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (start_s + elapsed_s(mid) <= t_s) lo = mid; else hi = mid;
  }
  return lo;
}

std::int64_t DecodeRun::iterations_reaching(double start_s, double t_s, std::int64_t limit) const {
  if (limit <= 1 || start_s + elapsed_s(1) >= t_s) return std::min<std::int64_t>(limit, 1);
  if (start_s + elapsed_s(limit) < t_s) return limit;
  std::int64_t lo = 1, hi = limit;  // end(lo) < t_s <= end(hi)
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (start_s + elapsed_s(mid) >= t_s) hi = mid; else lo = mid;
  }
  return hi;
}

}  // namespace schedsim::serving
