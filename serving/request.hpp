// Requests of an LLM inference service and what became of each (issue 26, request-level
// inference). Times are simulated seconds from the start of the run.
#pragma once

#include <cstdint>

namespace schedsim::serving {

// One request: when it arrives, its prompt (context) length and how many tokens it
// generates. output_tokens >= 1 (the first output token ends the prefill).
struct Request {
  std::int64_t id = 0;
  double arrival_s = 0.0;
  std::int32_t prompt_tokens = 0;
  std::int32_t output_tokens = 1;
};

// A finished request. first_token_s is when its first output token was produced (end of
// its prefill, plus the KV transfer under disaggregation); finish_s when its last one was.
struct RequestRecord {
  std::int64_t id = 0;
  double arrival_s = 0.0;
  double first_token_s = 0.0;
  double finish_s = 0.0;
  std::int32_t prompt_tokens = 0;
  std::int32_t output_tokens = 1;
  std::int32_t replica = -1;      // replica that produced its output tokens (decode replica)
  std::int32_t preemptions = 0;   // times its KV cache was evicted and recomputed

  double ttft_s() const { return first_token_s - arrival_s; }
  double e2e_s() const { return finish_s - arrival_s; }
  // Mean time per output token after the first (0 for one-token outputs).
  double tpot_s() const {
    return output_tokens > 1 ? (finish_s - first_token_s) / static_cast<double>(output_tokens - 1) : 0.0;
  }
};

}  // namespace schedsim::serving
