// Request streams for request-level serving (issue 26): the Azure LLM inference trace
// 2023, time rescaling with an optional diurnal shape, and seeded synthetic streams.
// Formats and formulas: docs/serving.md, "Request streams".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "serving/request.hpp"

namespace schedsim::serving {

// The Azure LLM inference trace 2023 (header TIMESTAMP,ContextTokens,GeneratedTokens;
// naive timestamps "2023-11-16 18:15:46.6805900", up to 9 fractional digits; CRLF or LF;
// plain or gzip). arrival_s is relative to the first row (read to the nanosecond, so no
// precision is lost to the epoch), ids 0..n-1 in file order. Blank lines are skipped.
// Throws InputError naming the file and line for a wrong header, a row without 3 fields,
// an unparsable time, a time before the previous row's (equal times are fine),
// ContextTokens not a positive integer, GeneratedTokens not a non-negative integer or 0
// (an error, not rounded up to 1: see docs/serving.md), counts over 2^31-1, or a file
// with no rows.
std::vector<Request> read_azure_llm_trace(const std::string& path);

// Rate shape over the day: rate(t) = mean x (1 + amplitude x cos(2 pi (t/86400 -
// peak_hour/24))), simulated t = 0 being midnight. amplitude in [0, 1), peak_hour in [0, 24).
struct DiurnalShape {
  double amplitude = 0.0;
  double peak_hour = 14.0;
};

// Stretches or compresses a stream to `duration_s`, keeping order, ids and tokens: the
// first arrival moves to 0 and the last to exactly duration_s. Without `diurnal` the map
// is linear; with it, a request at share u of the original span arrives at the t where the
// cumulative rate curve reaches share u of its total over [0, duration_s]. Needs at least
// two requests with different arrival times and duration_s > 0 (InputError otherwise).
std::vector<Request> rescale_time(std::vector<Request> requests, double duration_s, const DiurnalShape* diurnal);

// Where a synthetic stream's token counts come from.
struct TokenDistribution {
  enum class Kind {
    kFixed,      // always `tokens`
    kUniform,    // integer uniform on [min_tokens, max_tokens]
    kLognormal,  // lognormal with mean mean_tokens and standard deviation sd_tokens, rounded, at least 1
    kTrace,      // a row of `trace` drawn uniformly (its prompt or output count, by the field it is used for)
  };
  Kind kind = Kind::kFixed;
  std::int32_t tokens = 1;
  std::int32_t min_tokens = 1, max_tokens = 1;
  double mean_tokens = 1.0, sd_tokens = 0.0;
  // kTrace: the rows to draw from. When prompt and output both resample the same trace
  // (the same pointer), one row is drawn per request for both, keeping their correlation.
  std::shared_ptr<const std::vector<Request>> trace;
  std::string trace_path;  // for messages and the config echo

  static TokenDistribution fixed(std::int32_t tokens);
  static TokenDistribution uniform(std::int32_t min_tokens, std::int32_t max_tokens);
  static TokenDistribution lognormal(double mean_tokens, double sd_tokens);
  static TokenDistribution resample(std::shared_ptr<const std::vector<Request>> trace, std::string trace_path);
};

// A seeded synthetic stream: arrivals over [0, duration_s) with gamma inter-arrival times
// of mean 1 / rate_rps and coefficient of variation cv (cv = 1: exponential, a Poisson
// process; cv > 1 bursty; cv < 1 more regular), token counts from prompt and output.
struct SyntheticStreamSpec {
  double rate_rps = 1;
  double duration_s = 3600;
  double cv = 1.0;
  TokenDistribution prompt, output;
  std::uint64_t seed = 1;
};

// The largest stream synthetic_requests makes (rate_rps x duration_s), a guard against a
// typo that would fill memory.
inline constexpr double kMaxSyntheticRequests = 1e8;

// Ids 0..n-1 in arrival order. Independent random streams (sim/rng.hpp) for arrivals,
// prompt and output tokens, so changing one distribution does not move the others.
// Throws InputError for a non-positive or non-finite rate, duration or cv, an expected
// count over kMaxSyntheticRequests, or a bad distribution (tokens < 1, min > max, mean
// < 1, sd < 0, an empty trace).
std::vector<Request> synthetic_requests(const SyntheticStreamSpec& spec);

}  // namespace schedsim::serving
