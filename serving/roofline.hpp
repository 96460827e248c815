// The time of one batch iteration on one replica (tensor_parallel devices): the larger of
// its compute time and its memory time, plus the tensor-parallel all-reduces. A run of
// decode-only iterations whose batch does not change has times that grow linearly with
// the iteration index (each adds one token to every context), so their sum has a closed
// form: DecodeRun. Formulas: docs/serving.md, "Model".
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "serving/serving_engine.hpp"

namespace schedsim::serving {

class BatchRoofline {
 public:
  explicit BatchRoofline(const DeploymentSpec& deployment);

  // Prefill chunks as (tokens already cached, chunk tokens); `decodes` sequences decoding
  // one token each, their contexts (cached + the new token) summing to decode_context_tokens.
  double iteration_time_s(const std::vector<std::pair<std::int64_t, std::int64_t>>& prefill_chunks,
                          std::int64_t decodes, std::int64_t decode_context_tokens) const;

  double weight_bytes() const { return weight_bytes_; }
  double kv_bytes_per_token() const { return kv_bytes_per_token_; }

 private:
  friend class DecodeRun;
  double flops_per_token_ = 0;          // 2 x active parameters
  double attention_flops_per_pair_ = 0; // 4 x layers x hidden, per (query token, cached token)
  double weight_bytes_ = 0;
  double kv_bytes_per_token_ = 0;       // 2 (K and V) x layers x kv_dim x bytes per value
  double compute_flops_per_s_ = 0;      // peak x tp x compute_efficiency
  double memory_bytes_per_s_ = 0;       // bandwidth x tp x memory_efficiency
  double allreduce_s_per_token_ = 0;    // 0 at tp 1
};

// `decodes` sequences decoding together with total context `context_tokens` in the first
// iteration (j = 0) and `context_tokens + j x decodes` in iteration j.
class DecodeRun {
 public:
  DecodeRun() = default;
  DecodeRun(const BatchRoofline& roofline, std::int64_t decodes, std::int64_t context_tokens);

  // Time of iteration j alone, and of iterations 0..j-1 together (closed form).
  double iteration_s(std::int64_t j) const;
  double elapsed_s(std::int64_t j) const;
  // For a run that started at start_s: the most iterations j <= limit that have ended by
  // t_s (start_s + elapsed_s(j) <= t_s), and the fewest j in 1..limit whose end is at or
  // after t_s (limit when none is). Comparisons are on absolute times, so that an
  // iteration found to end at or after t_s never ends before it after rounding.
  std::int64_t iterations_within(double start_s, double t_s, std::int64_t limit) const;
  std::int64_t iterations_reaching(double start_s, double t_s, std::int64_t limit) const;

 private:
  // Sum over i in [from, to) of (a + b i).
  static double linear_sum(double a, double b, std::int64_t from, std::int64_t to);
  double compute_a_ = 0, compute_b_ = 0;  // compute time of iteration i: a + b i
  double memory_a_ = 0, memory_b_ = 0;    // memory time of iteration i: a + b i
  double fixed_s_ = 0;                    // all-reduce time, the same every iteration
};

}  // namespace schedsim::serving
