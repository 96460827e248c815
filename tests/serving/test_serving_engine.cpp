// Issue 26 (inference half): the request-level serving engine against closed forms,
// invariants and a published number. Model: docs/serving.md.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "serving/roofline.hpp"
#include "serving/serving_engine.hpp"
#include "base/error.hpp"

namespace schedsim::serving {
namespace {

const AcceleratorSpec& device(const char* name) {
  static const AcceleratorCatalogue catalogue = AcceleratorCatalogue::builtin();
  return catalogue.get(name);
}

DeploymentSpec deployment(const char* model, const char* gpu, int tp = 1) {
  DeploymentSpec d;
  d.model = find_model(model);
  d.device = device(gpu);
  d.tensor_parallel = tp;
  return d;
}

DeploymentSpec llama2_7b_h100() { return deployment("LLaMA-2-7B", "H100-SXM"); }

// A one-layer toy model whose KV cache holds exactly `blocks` blocks of 4 tokens.
DeploymentSpec tiny(std::int64_t blocks) {
  DeploymentSpec d;
  d.model.name = "tiny";
  d.model.num_layers = 1;
  d.model.hidden_size = 64;
  d.model.num_heads = 1;
  d.model.num_kv_heads = 1;
  d.model.ffn_hidden_size = 128;
  d.model.vocab_size = 128;
  d.model.seq_length = 64;
  d.device = device("H100-SXM");
  d.kv_block_tokens = 4;
  d.gpu_memory_utilization = 1.0;
  const double kv_block_bytes = 2.0 * 1 * 64 * 2 * 4;  // K and V x layers x kv_dim x bytes x tokens
  d.device.memory_bytes = d.model.total_params() * 2 + (static_cast<double>(blocks) + 0.5) * kv_block_bytes;
  return d;
}

double rel(double a, double b) { return std::abs(a - b) / std::abs(b); }

// Decode iteration of one sequence whose context (cached + new token) is `context`.
double decode_s(const ServingEngine& e, std::int64_t context) { return e.iteration_time_s({}, 1, context); }

std::uint64_t splitmix(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
double uniform(std::uint64_t& x) { return static_cast<double>(splitmix(x) >> 11) * 0x1.0p-53; }

// Poisson arrivals at `rate_per_s`; prompts and outputs exponential around the means
// (at least 1 token, capped), or constant when `constant` is set.
std::vector<Request> stream(std::size_t n, double rate_per_s, double prompt_mean, double output_mean, bool constant,
                            std::uint64_t seed, int cap = 4000) {
  std::vector<Request> out;
  out.reserve(n);
  double t = 0;
  for (std::size_t i = 0; i < n; ++i) {
    t += -std::log(1 - uniform(seed)) / rate_per_s;
    Request r;
    r.id = static_cast<std::int64_t>(i);
    r.arrival_s = t;
    if (constant) {
      r.prompt_tokens = static_cast<std::int32_t>(prompt_mean);
      r.output_tokens = static_cast<std::int32_t>(output_mean);
    } else {
      r.prompt_tokens = std::min(cap, 1 + static_cast<int>(-std::log(1 - uniform(seed)) * prompt_mean));
      r.output_tokens = std::min(cap, 1 + static_cast<int>(-std::log(1 - uniform(seed)) * output_mean));
    }
    out.push_back(r);
  }
  return out;
}

void check_invariants(const std::vector<Request>& requests, const std::vector<RequestRecord>& records) {
  REQUIRE(records.size() == requests.size());
  std::map<std::int64_t, const RequestRecord*> by_id;
  for (const RequestRecord& r : records) {
    CHECK(by_id.emplace(r.id, &r).second);  // finishes once
    CHECK(r.arrival_s <= r.first_token_s);
    CHECK(r.first_token_s <= r.finish_s);
  }
  for (const Request& q : requests) {
    REQUIRE(by_id.count(q.id) == 1);
    CHECK(by_id[q.id]->prompt_tokens == q.prompt_tokens);
    CHECK(by_id[q.id]->output_tokens == q.output_tokens);
  }
  for (std::size_t i = 1; i < records.size(); ++i) {
    const bool ordered = records[i - 1].finish_s < records[i].finish_s ||
                         (records[i - 1].finish_s == records[i].finish_s && records[i - 1].id < records[i].id);
    CHECK(ordered);
  }
}

bool same(const RequestRecord& a, const RequestRecord& b) {
  return a.id == b.id && a.arrival_s == b.arrival_s && a.first_token_s == b.first_token_s && a.finish_s == b.finish_s &&
         a.prompt_tokens == b.prompt_tokens && a.output_tokens == b.output_tokens && a.replica == b.replica &&
         a.preemptions == b.preemptions;
}

// ---- set-up and errors ------------------------------------------------------------------

TEST_CASE("KV capacity: (utilisation x memory x tp - weights) / KV bytes per token, in whole blocks", "[serving]") {
  const ServingEngine engine(llama2_7b_h100(), 1);
  const DeploymentSpec d = llama2_7b_h100();
  const double weights = d.model.total_params() * 2;
  const double per_token = 2.0 * 32 * 4096 * 2;
  const auto blocks = static_cast<std::int64_t>((0.9 * 80e9 - weights) / (per_token * 16));
  CHECK(engine.kv_capacity_blocks() == blocks);
  CHECK(engine.kv_capacity_tokens() == blocks * 16);
  CHECK(blocks == 6976);  // 58.5 GB of KV cache at 0.5 MiB per token: 111,616 tokens
  CHECK(ServingEngine(tiny(4), 1).kv_capacity_blocks() == 4);
}

TEST_CASE("the weights must fit tensor_parallel devices: the error names model, device, tp and the GB", "[serving]") {
  CHECK_THROWS_WITH(ServingEngine(deployment("LLaMA-2-70B", "H100-SXM", 1), 1),
                    "serving deployment 'LLaMA-2-70B' on 1 x H100-SXM: the weights (138.0 GB at 2 bytes per parameter) "
                    "do not fit: 0.9 x 80.0 GB x 1 = 72.0 GB for weights and KV cache; raise tensor_parallel or "
                    "gpu_memory_utilization");
  CHECK_NOTHROW(ServingEngine(deployment("LLaMA-2-70B", "H100-SXM", 2), 1));
  DeploymentSpec d = llama2_7b_h100();
  d.max_batched_tokens = 128;
  CHECK_THROWS_WITH(ServingEngine(d, 1), "serving deployment 'LLaMA-2-7B' on 1 x H100-SXM: max_batched_tokens (128) must be "
                                         ">= max_batch_requests (256): every running sequence decodes a token per iteration");
  d = llama2_7b_h100();
  d.compute_efficiency = 1.5;
  CHECK_THROWS_WITH(ServingEngine(d, 1),
                    "serving deployment 'LLaMA-2-7B' on 1 x H100-SXM: compute_efficiency: must be in (0, 1], got 1.5");
  DisaggregationSpec g;
  g.enabled = true;
  g.prefill_replicas = 2;
  CHECK_THROWS_WITH(ServingEngine(llama2_7b_h100(), 2, g),
                    "serving deployment 'LLaMA-2-7B' on 1 x H100-SXM: disaggregation: prefill_replicas must be in 1..1 "
                    "(at least one prefill and one decode replica of 2), got 2");
}

TEST_CASE("a request that could never fit one replica's KV cache is refused at submit, by id and tokens", "[serving]") {
  ServingEngine engine(tiny(4), 1);
  CHECK_NOTHROW(engine.submit({1, 0.0, 10, 7}));  // 16 tokens: 4 blocks
  CHECK_THROWS_WITH(engine.submit({2, 0.0, 10, 8}),
                    "request 2: prompt_tokens 10 + output_tokens 8 need KV cache for 17 tokens (5 blocks of 4) but one "
                    "replica of 'tiny' on 1 x H100-SXM holds 16 tokens (4 blocks): it could never run");
  CHECK_THROWS_WITH(engine.submit({3, -1.0, 1, 1}),
                    "request 3: arrival_s -1 must be finite and at or after the engine's time (0) and the previous "
                    "request's arrival (0): submit in arrival order");
  CHECK_THROWS_WITH(engine.submit({4, 1.0, 0, 1}), "request 4: prompt_tokens: must be >= 1, got 0");
}

// ---- closed forms -----------------------------------------------------------------------

TEST_CASE("one request alone: TTFT is its prompt's prefill, TPOT the decode iterations at its context", "[serving]") {
  const ServingEngine probe(llama2_7b_h100(), 1);
  const std::int64_t prompt = 1000;
  const std::int64_t output = 200;
  const std::vector<RequestRecord> records = serve_all(llama2_7b_h100(), 1, {{7, 2.5, 1000, 200}});
  REQUIRE(records.size() == 1);
  const RequestRecord& r = records[0];
  const double prefill = probe.iteration_time_s({{0, prompt}}, 0, 0);
  CHECK(rel(r.ttft_s(), prefill) < 1e-12);
  double decode = 0;
  for (std::int64_t g = 1; g < output; ++g) decode += decode_s(probe, prompt + g);
  CHECK(rel(r.finish_s - r.first_token_s, decode) < 1e-12);
  CHECK(rel(r.tpot_s(), decode / (output - 1)) < 1e-12);
  // The roofline itself, by hand: prefill is compute-bound, a decode memory-bound.
  const ModelSpec m = find_model("LLaMA-2-7B");
  const double flops = 2 * m.active_params() * prompt + 4.0 * 32 * 4096 * (prompt * (prompt + 1) / 2.0);
  CHECK(rel(prefill, flops / (989e12 * 0.6)) < 1e-12);
  const double bytes = m.total_params() * 2 + 2.0 * 32 * 4096 * 2 * (prompt + 1);
  CHECK(rel(decode_s(probe, prompt + 1), bytes / (3350e9 * 0.8)) < 1e-12);
  CHECK(r.replica == 0);
  CHECK(r.preemptions == 0);
}

TEST_CASE("chunked prefill: a prompt longer than the token budget prefills over iterations, decodes first", "[serving]") {
  const ServingEngine probe(llama2_7b_h100(), 1);
  // Alone: 10,000 tokens in chunks of 8,192 and 1,808, the second attending to the first.
  const std::vector<RequestRecord> alone = serve_all(llama2_7b_h100(), 1, {{0, 0.0, 10000, 2}});
  const double chunked = probe.iteration_time_s({{0, 8192}}, 0, 0) + probe.iteration_time_s({{8192, 1808}}, 0, 0);
  CHECK(rel(alone[0].ttft_s(), chunked) < 1e-12);
  // Behind a decoding request, the budget left is 8,191 tokens per iteration.
  ServingEngine engine(llama2_7b_h100(), 1);
  engine.submit({0, 0.0, 100, 50});
  std::vector<RequestRecord> out;
  engine.advance_to(0.02, out);  // request 0 decodes
  engine.submit({1, 0.02, 10000, 2});
  engine.advance_to(std::numeric_limits<double>::infinity(), out);
  REQUIRE(out.size() == 2);
  const RequestRecord& big = out[0].id == 1 ? out[0] : out[1];
  const RequestRecord& small = out[0].id == 0 ? out[0] : out[1];
  // Find the iteration boundary at or after 0.02 s by stepping request 0's decodes.
  double t = probe.iteration_time_s({{0, 100}}, 0, 0);
  std::int64_t g = 1;
  while (t < 0.02) t += decode_s(probe, 100 + g++);
  t += probe.iteration_time_s({{0, 8191}}, 1, 100 + g++);
  t += probe.iteration_time_s({{8191, 1809}}, 1, 100 + g++);
  CHECK(rel(big.first_token_s, t) < 1e-12);
  CHECK(small.finish_s > big.first_token_s);
}

TEST_CASE("tensor parallelism divides compute and bytes by tp and adds two ring all-reduces per layer", "[serving]") {
  const ServingEngine tp1(llama2_7b_h100(), 1);
  const ServingEngine tp2(deployment("LLaMA-2-7B", "H100-SXM", 2), 1);
  const double allreduce_per_token = 2.0 * (2 - 1) / 2 * (2.0 * 32 * 4096 * 2) / 450e9;
  CHECK(rel(tp2.iteration_time_s({}, 8, 8000), tp1.iteration_time_s({}, 8, 8000) / 2 + 8 * allreduce_per_token) < 1e-12);
  CHECK(rel(tp2.iteration_time_s({{0, 512}}, 0, 0), tp1.iteration_time_s({{0, 512}}, 0, 0) / 2 + 512 * allreduce_per_token) <
        1e-12);
}

TEST_CASE("a decode run's closed form equals the sum of its iterations, across the compute/memory crossing", "[serving]") {
  // 256 sequences of context 2: compute-bound at first (2 x 6.7 GFLOP x 256 tokens take
  // longer than reading 13.5 GB of weights), memory-bound after ~13 iterations, when 256
  // growing KV caches add up.
  const BatchRoofline roofline(llama2_7b_h100());
  const DecodeRun run(roofline, 256, 256 * 2);
  const ModelSpec m = find_model("LLaMA-2-7B");
  const auto compute_s = [&](std::int64_t j) {
    return (2 * m.active_params() * 256 + 4.0 * 32 * 4096 * 256 * (2 + j)) / (989e12 * 0.6);
  };
  const auto memory_s = [&](std::int64_t j) {
    return (m.total_params() * 2 + roofline.kv_bytes_per_token() * 256 * (2 + j)) / (3350e9 * 0.8);
  };
  CHECK(compute_s(0) > memory_s(0));
  CHECK(compute_s(2999) < memory_s(2999));
  double sum = 0;
  for (std::int64_t j = 0; j < 3000; ++j) {
    const double t = roofline.iteration_time_s({}, 256, 256 * (2 + j));
    CHECK(rel(t, std::max(compute_s(j), memory_s(j))) < 1e-12);
    CHECK(rel(run.iteration_s(j), t) < 1e-12);
    sum += t;
    if (j < 40 || j % 97 == 0 || j == 2999) CHECK(rel(run.elapsed_s(j + 1), sum) < 1e-12);
  }
  // Bisection on the closed form, on absolute times.
  const double start = 1234.5;
  const double t = start + run.elapsed_s(700) + 1e-6;
  CHECK(run.iterations_within(start, t, 3000) == 700);
  CHECK(run.iterations_reaching(start, t, 3000) == 701);
  CHECK(run.iterations_reaching(start, start + run.elapsed_s(700), 3000) == 700);
  CHECK(run.iterations_within(start, start + run.elapsed_s(3000) + 1, 3000) == 3000);
}

TEST_CASE("decode runs cut by arrivals give what stepping every iteration gives", "[serving]") {
  // A reference that plans every iteration one by one: every request that has arrived by
  // an iteration's start prefills whole in it (prompts are short: no chunking, no KV
  // limit), the others decode a token each.
  const ServingEngine probe(llama2_7b_h100(), 1);
  std::vector<Request> requests = stream(40, 2.0, 150, 120, false, 99, 180);
  struct Ref {
    std::int64_t generated = 0;
    double first = -1, finish = -1;
  };
  std::vector<Ref> ref(requests.size());
  double t = 0;
  std::size_t arrived = 0;
  for (;;) {
    while (arrived < requests.size() && requests[arrived].arrival_s <= t) ++arrived;
    std::vector<std::pair<std::int64_t, std::int64_t>> chunks;
    std::int64_t decodes = 0, context = 0;
    for (std::size_t i = 0; i < arrived; ++i) {
      if (ref[i].generated == 0) chunks.push_back({0, requests[i].prompt_tokens});
      else if (ref[i].finish < 0) {
        ++decodes;
        context += requests[i].prompt_tokens + ref[i].generated;
      }
    }
    if (chunks.empty() && decodes == 0) {
      if (arrived == requests.size()) break;
      t = requests[arrived].arrival_s;
      continue;
    }
    t += probe.iteration_time_s(chunks, decodes, context);
    for (std::size_t i = 0; i < arrived; ++i) {
      if (ref[i].finish >= 0) continue;
      if (++ref[i].generated == 1) ref[i].first = t;
      if (ref[i].generated == requests[i].output_tokens) ref[i].finish = t;
    }
  }
  int cuts = 0;  // arrivals while another request decodes
  for (std::size_t i = 0; i < requests.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) cuts += ref[j].first < requests[i].arrival_s && requests[i].arrival_s < ref[j].finish;
  }
  CHECK(cuts > 10);
  const std::vector<RequestRecord> records = serve_all(llama2_7b_h100(), 1, requests);
  REQUIRE(records.size() == requests.size());
  for (const RequestRecord& r : records) {
    INFO("request " << r.id);
    CHECK(rel(r.first_token_s, ref[r.id].first) < 1e-9);
    CHECK(rel(r.finish_s, ref[r.id].finish) < 1e-9);
  }
}

TEST_CASE("full batch: requests decoding in lockstep produce tokens at the roofline's rate", "[serving]") {
  DeploymentSpec d = llama2_7b_h100();
  d.max_batch_requests = 64;
  const ServingEngine probe(d, 1);
  std::vector<Request> requests;
  for (int i = 0; i < 64; ++i) requests.push_back({i, 0.0, 128, 300});
  const std::vector<RequestRecord> records = serve_all(d, 1, requests);
  REQUIRE(records.size() == 64);
  // One iteration prefills all 64 prompts (8,192 tokens, the budget), then 299 decode
  // iterations of 64 sequences at contexts 128 + g.
  const std::vector<std::pair<std::int64_t, std::int64_t>> prefill(64, {0, 128});
  double expected = probe.iteration_time_s(prefill, 0, 0);
  for (std::int64_t g = 1; g < 300; ++g) expected += probe.iteration_time_s({}, 64, 64 * (128 + g));
  for (const RequestRecord& r : records) CHECK(rel(r.finish_s, expected) < 1e-12);
  // Decode throughput at full batch is bounded by the memory roofline: 64 tokens per read
  // of the weights plus the batch's KV cache.
  const double tokens_per_s = 64.0 * 299 / (records[0].finish_s - records[0].first_token_s);
  const ModelSpec m = find_model("LLaMA-2-7B");
  const double mean_context = 128 + 150.0;
  const double bound = 64.0 * 3350e9 * 0.8 / (m.total_params() * 2 + 2.0 * 32 * 4096 * 2 * 64 * mean_context);
  CHECK(rel(tokens_per_s, bound) < 1e-9);
}

TEST_CASE("batch 1 with Poisson arrivals and constant tokens is an M/D/1 queue: Pollaczek-Khinchine wait", "[serving]") {
  DeploymentSpec d = llama2_7b_h100();
  d.max_batch_requests = 1;
  const ServingEngine probe(d, 1);
  const std::int64_t prompt = 500;
  const std::int64_t output = 20;
  const double prefill = probe.iteration_time_s({{0, prompt}}, 0, 0);
  double service = prefill;
  for (std::int64_t g = 1; g < output; ++g) service += decode_s(probe, prompt + g);
  const double rho = 0.7;
  const double rate = rho / service;
  const std::vector<Request> requests = stream(20000, rate, prompt, output, true, 42);
  const std::vector<RequestRecord> records = serve_all(d, 1, requests);
  check_invariants(requests, records);
  double wait = 0;
  for (const RequestRecord& r : records) wait += r.ttft_s() - prefill;
  wait /= static_cast<double>(records.size());
  const double pk = rate * service * service / (2 * (1 - rho));  // M/D/1 mean wait in queue
  INFO("mean wait " << wait << " s, Pollaczek-Khinchine " << pk << " s");
  CHECK(rel(wait, pk) < 0.05);
  for (const RequestRecord& r : records) CHECK(rel(r.e2e_s() - (r.ttft_s() - prefill), service) < 1e-9);
}

TEST_CASE("KV cache full: the most recently admitted sequence is evicted and recomputes (counted by hand)", "[serving]") {
  // 4 blocks of 4 tokens; two requests of prompt 4, output 9 (12 tokens = 3 blocks each).
  // Both prefill in iteration 0 (1 block each), decode contexts 5..8 in iterations 1..4
  // (2 blocks each: the cache is full); iteration 5 needs a third block for both: B, the
  // later admitted, is evicted after 5 tokens; A decodes alone to the end (iteration 8),
  // then B re-prefills 4 + 5 = 9 tokens and decodes its last 3 tokens.
  DeploymentSpec d = tiny(4);
  ServingEngine engine(d, 1);
  engine.submit({0, 0.0, 4, 9});
  engine.submit({1, 0.0, 4, 9});
  std::vector<RequestRecord> records;
  engine.advance_to(std::numeric_limits<double>::infinity(), records);
  REQUIRE(records.size() == 2);
  CHECK(records[0].id == 0);
  CHECK(records[0].preemptions == 0);
  CHECK(records[1].id == 1);
  CHECK(records[1].preemptions == 1);
  CHECK(engine.stats().preemptions == 1);
  CHECK(engine.peak_kv_blocks_used() == 4);
  // 1 prefill + 8 decodes (A) + 1 prefill + 3 decodes (B), iterations 0..12.
  CHECK(engine.stats().iterations == 13);
  // A's timeline: prefill of both prompts, 4 decodes of two, 4 decodes alone.
  double t = engine.iteration_time_s({{0, 4}, {0, 4}}, 0, 0);
  CHECK(rel(records[0].first_token_s, t) < 1e-12);
  for (int g = 1; g <= 4; ++g) t += engine.iteration_time_s({}, 2, 2 * (4 + g));
  for (int g = 5; g <= 8; ++g) t += decode_s(engine, 4 + g);
  CHECK(rel(records[0].finish_s, t) < 1e-12);
  t += engine.iteration_time_s({{0, 9}}, 0, 0);
  for (int g = 6; g <= 8; ++g) t += decode_s(engine, 4 + g);
  CHECK(rel(records[1].finish_s, t) < 1e-12);
}

TEST_CASE("disaggregation adds exactly the KV transfer time to TTFT and end-to-end latency", "[serving]") {
  DisaggregationSpec g;
  g.enabled = true;
  g.prefill_replicas = 1;
  g.kv_link_bytes_per_s = 25e9;
  const ServingEngine probe(llama2_7b_h100(), 2, g);
  const std::vector<RequestRecord> together = serve_all(llama2_7b_h100(), 1, {{3, 1.0, 2000, 50}});
  const std::vector<RequestRecord> apart = serve_all(llama2_7b_h100(), 2, {{3, 1.0, 2000, 50}}, g);
  REQUIRE(apart.size() == 1);
  const double transfer = 2.0 * 32 * 4096 * 2 * 2000 / 25e9;  // 1.05 GB over 25 GB/s
  CHECK(rel(probe.kv_transfer_time_s(2000), transfer) < 1e-12);
  CHECK(rel(apart[0].ttft_s() - together[0].ttft_s(), transfer) < 1e-9);
  CHECK(rel(apart[0].e2e_s() - together[0].e2e_s(), transfer) < 1e-9);
  CHECK(apart[0].replica == 1);  // the decode replica
  // A one-token request never leaves its prefill replica.
  const std::vector<RequestRecord> one = serve_all(llama2_7b_h100(), 2, {{4, 0.0, 100, 1}}, g);
  CHECK(one[0].replica == 0);
  CHECK(one[0].first_token_s == one[0].finish_s);
}

// ---- invariants and determinism ---------------------------------------------------------

std::vector<RequestRecord> stepped(const DeploymentSpec& d, int replicas, const std::vector<Request>& requests, double step_s,
                                   DisaggregationSpec g = {}, bool scale = false, ServingStats* stats = nullptr) {
  ServingEngine engine(d, replicas, g);
  std::vector<RequestRecord> out;
  std::size_t next = 0;
  double t = 0;
  bool scaled_down = false, scaled_up = false;
  while (next < requests.size()) {
    t += step_s;
    if (scale && !scaled_down && t >= 20) {
      engine.set_replicas(20, replicas - 2, 0);
      scaled_down = true;
    }
    if (scale && !scaled_up && t >= 40) {
      engine.set_replicas(40, replicas + 1, 5);
      scaled_up = true;
    }
    while (next < requests.size() && requests[next].arrival_s <= t) engine.submit(requests[next++]);
    engine.advance_to(t, out);
  }
  // Every run ends at 1,000 s (every stream here is done by then), so that the replica-seconds
  // compare too.
  engine.advance_to(std::max(t, 1000.0), out);
  if (stats != nullptr) *stats = engine.stats();
  return out;
}

TEST_CASE("every request finishes once, in order, within KV capacity, and records do not depend on advance_to steps",
          "[serving]") {
  DeploymentSpec d = llama2_7b_h100();
  d.gpu_memory_utilization = 0.3;  // about 8 GB of KV cache: preemptions happen
  const ServingEngine probe(d, 4);
  const std::vector<Request> requests = stream(3000, 40, 800, 200, false, 7);
  const std::vector<RequestRecord> big = stepped(d, 4, requests, 1000);
  check_invariants(requests, big);
  std::int64_t preemptions = 0;
  for (const RequestRecord& r : big) preemptions += r.preemptions;
  CHECK(preemptions > 0);
  for (const double step : {0.37, 0.0213}) {
    const std::vector<RequestRecord> small = stepped(d, 4, requests, step);
    REQUIRE(small.size() == big.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < big.size(); ++i) differ += same(small[i], big[i]) ? 0 : 1;
    CHECK(differ == 0);
  }
  ServingEngine engine(d, 4);
  for (const Request& r : requests) engine.submit(r);
  std::vector<RequestRecord> out;
  engine.advance_to(std::numeric_limits<double>::infinity(), out);
  CHECK(engine.peak_kv_blocks_used() <= engine.kv_capacity_blocks());
  CHECK(engine.stats().preemptions == preemptions);
  CHECK(engine.waiting() == 0);
  CHECK(engine.running() == 0);
  CHECK(engine.stats().busy_replica_s <= engine.stats().active_replica_s);
}

TEST_CASE("scaling replicas down and up mid-run: evicted requests finish elsewhere, steps still do not matter",
          "[serving]") {
  const DeploymentSpec d = llama2_7b_h100();
  const std::vector<Request> requests = stream(2000, 30, 600, 150, false, 11);
  ServingStats big_stats, small_stats;
  const std::vector<RequestRecord> big = stepped(d, 4, requests, 1000, {}, true, &big_stats);
  check_invariants(requests, big);
  const std::vector<RequestRecord> small = stepped(d, 4, requests, 0.5, {}, true, &small_stats);
  CHECK(small_stats.iterations == big_stats.iterations);
  CHECK(small_stats.preemptions == big_stats.preemptions);
  CHECK(small_stats.busy_replica_s == big_stats.busy_replica_s);
  CHECK(small_stats.active_replica_s == big_stats.active_replica_s);
  CHECK(small_stats.energy_j == big_stats.energy_j);
  CHECK(big_stats.preemptions > 0);  // the replicas removed at 20 s had running requests
  REQUIRE(small.size() == big.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < big.size(); ++i) differ += same(small[i], big[i]) ? 0 : 1;
  CHECK(differ == 0);
  bool on_new = false;
  for (const RequestRecord& r : big) on_new = on_new || r.replica == 4;
  CHECK(on_new);  // the replica added at 40 s (ready at 45 s) took requests
}

TEST_CASE("disaggregated runs keep the invariants and the step independence", "[serving]") {
  DisaggregationSpec g;
  g.enabled = true;
  g.prefill_replicas = 2;
  DeploymentSpec d = llama2_7b_h100();
  d.gpu_memory_utilization = 0.3;
  const std::vector<Request> requests = stream(2000, 30, 800, 200, false, 5);
  const std::vector<RequestRecord> big = stepped(d, 5, requests, 1000, g);
  check_invariants(requests, big);
  for (const RequestRecord& r : big) {
    if (r.output_tokens > 1) CHECK(r.replica >= 2);
  }
  const std::vector<RequestRecord> small = stepped(d, 5, requests, 0.29, g);
  REQUIRE(small.size() == big.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < big.size(); ++i) differ += same(small[i], big[i]) ? 0 : 1;
  CHECK(differ == 0);
}

TEST_CASE("stats: energy from busy and idle replica-seconds at TDP and idle power", "[serving]") {
  ServingEngine engine(llama2_7b_h100(), 2);
  engine.submit({0, 0.0, 1000, 100});
  std::vector<RequestRecord> out;
  engine.advance_to(100.0, out);
  REQUIRE(out.size() == 1);
  const ServingStats& s = engine.stats();
  CHECK(rel(s.busy_replica_s, out[0].finish_s) < 1e-12);
  CHECK(s.active_replica_s == 200.0);
  CHECK(rel(s.energy_j, 700 * s.busy_replica_s + 70 * (200 - s.busy_replica_s)) < 1e-12);
  CHECK(s.iterations == 100);
}

TEST_CASE("no replica: requests wait unrouted until one is ready after its warmup", "[serving]") {
  ServingEngine engine(llama2_7b_h100(), 1);
  engine.set_replicas(0.0, 0, 0);
  CHECK(engine.replicas() == 0);
  engine.submit({1, 1.0, 500, 10});
  engine.submit({2, 2.0, 500, 10});
  std::vector<RequestRecord> out;
  engine.advance_to(5.0, out);
  CHECK(out.empty());
  CHECK(engine.waiting() == 2);
  CHECK(engine.running() == 0);
  engine.set_replicas(10.0, 1, 30.0);  // ready at 40 s
  engine.advance_to(39.0, out);
  CHECK(out.empty());
  CHECK(engine.waiting() == 2);
  CHECK(engine.replicas() == 1);
  CHECK(engine.ready_replicas() == 0);
  CHECK(engine.outstanding_tokens() == 0);  // unrouted requests are nobody's load yet
  engine.advance_to(40.0, out);
  CHECK(engine.ready_replicas() == 1);
  CHECK(engine.outstanding_tokens() == 2 * (500 + 10));
  engine.advance_to(41.0, out);
  REQUIRE(out.size() == 2);
  // Both prefill together in the first iteration at 40 s.
  const double prefill = engine.iteration_time_s({{0, 500}, {0, 500}}, 0, 0);
  CHECK(rel(out[0].first_token_s, 40.0 + prefill) < 1e-12);
  CHECK(out[1].first_token_s == out[0].first_token_s);
  // Replica 0 was up from 0 to 0 s, the new one from 10 s (loading until 40 s).
  CHECK(rel(engine.stats().active_replica_s, 31.0) < 1e-12);
}

TEST_CASE("misuse of the engine's clock and replica count is refused with the values", "[serving]") {
  ServingEngine engine(llama2_7b_h100(), 2);
  std::vector<RequestRecord> out;
  engine.advance_to(10.0, out);
  CHECK_THROWS_WITH(engine.advance_to(9.5, out),
                    "serving engine: advance_to(9.5): the time must be at or after now (10)");
  CHECK_THROWS_WITH(engine.submit({5, 9.0, 10, 10}),
                    "request 5: arrival_s 9 must be finite and at or after the engine's time (10) and the previous "
                    "request's arrival (0): submit in arrival order");
  CHECK_THROWS_WITH(engine.set_replicas(9.0, 3, 0),
                    "set_replicas(9, 3, 0): the time must be finite and at or after now (10) and the previous "
                    "set_replicas time");
  CHECK_THROWS_WITH(engine.set_replicas(11.0, -1, 0), "set_replicas(11, -1, 0): replicas must be >= 0, got -1");
  CHECK_THROWS_WITH(engine.set_replicas(11.0, 1, -2), "set_replicas(11, 1, -2): warmup_s must be >= 0, got -2");
  DisaggregationSpec g;
  g.enabled = true;
  g.prefill_replicas = 1;
  ServingEngine split(llama2_7b_h100(), 3, g);
  CHECK_THROWS_WITH(split.set_replicas(0.0, 1, 0),
                    "set_replicas(0, 1, 0): with disaggregation the first 1 replicas prefill: replicas must be > 1 to "
                    "leave a decode replica");
}

TEST_CASE("a copy of a running engine continues exactly as the original", "[serving]") {
  const std::vector<Request> requests = stream(400, 20, 600, 100, false, 3);
  ServingEngine a(llama2_7b_h100(), 2);
  for (const Request& r : requests) a.submit(r);
  std::vector<RequestRecord> first;
  a.advance_to(8.0, first);
  CHECK(a.running() + a.waiting() > 0);
  ServingEngine b = a;
  std::vector<RequestRecord> rest_a, rest_b;
  a.advance_to(std::numeric_limits<double>::infinity(), rest_a);
  b.advance_to(std::numeric_limits<double>::infinity(), rest_b);
  REQUIRE(rest_a.size() == rest_b.size());
  CHECK(first.size() + rest_a.size() == requests.size());
  for (std::size_t i = 0; i < rest_a.size(); ++i) CHECK(same(rest_a[i], rest_b[i]));
  CHECK(a.stats().energy_j == b.stats().energy_j);
}

TEST_CASE("routing: least outstanding tokens, lowest index on ties", "[serving]") {
  ServingEngine engine(llama2_7b_h100(), 3);
  engine.submit({0, 0.0, 2000, 100});  // all idle: replica 0
  engine.submit({1, 0.0, 1000, 100});  // replica 1
  engine.submit({2, 0.0, 3000, 100});  // replica 2
  engine.submit({3, 0.0, 10, 10});     // least outstanding: replica 1 (1,100 tokens)
  std::vector<RequestRecord> out;
  engine.advance_to(std::numeric_limits<double>::infinity(), out);
  std::map<std::int64_t, int> replica;
  for (const RequestRecord& r : out) replica[r.id] = r.replica;
  CHECK(replica == std::map<std::int64_t, int>{{0, 0}, {1, 1}, {2, 2}, {3, 1}});
}

// ---- speed ------------------------------------------------------------------------------

// schedsim_serving_tests "[.bench]": an hour of Azure-conversation-sized traffic (19,366
// requests, prompts ~1,000 and outputs ~250 tokens, Poisson) on 32 replicas of
// LLaMA-2-7B and -13B on H100, tp 1; and the 7B stream on 1 replica, as is and 8 times
// denser (saturated: full
// batches, long queues, preemptions). Wall time of the engine alone.
TEST_CASE("bench: 19,366 requests in an hour", "[.bench]") {
  const std::vector<Request> requests = stream(19366, 19366.0 / 3600, 1000, 250, false, 2023, 4000);
  struct Case {
    const char* model;
    int replicas;
    double time_scale;  // arrival times multiplied by this
  };
  for (const Case& c : {Case{"LLaMA-2-7B", 32, 1}, Case{"LLaMA-2-13B", 32, 1}, Case{"LLaMA-2-7B", 1, 1},
                        Case{"LLaMA-2-7B", 1, 0.125}}) {
    const char* model = c.model;
    const int replicas = c.replicas;
    const auto start = std::chrono::steady_clock::now();
    ServingEngine engine(deployment(model, "H100-SXM"), replicas);
    for (Request r : requests) {
      r.arrival_s *= c.time_scale;
      engine.submit(r);
    }
    std::vector<RequestRecord> out;
    engine.advance_to(std::numeric_limits<double>::infinity(), out);
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double ttft = 0;
    for (const RequestRecord& r : out) ttft += r.ttft_s();
    std::printf("bench: %s x %d, arrivals x %.3f: %zu requests, %lld iterations, %lld preemptions, simulated %.0f s, mean TTFT %.3f s, "
                "wall %.3f s\n",
                model, replicas, c.time_scale, out.size(), static_cast<long long>(engine.stats().iterations),
                static_cast<long long>(engine.stats().preemptions), engine.now_s(), ttft / out.size(), wall_s);
    CHECK(out.size() == requests.size());
  }
}

}  // namespace
}  // namespace schedsim::serving

namespace schedsim::serving {
namespace {

// ---- published numbers ------------------------------------------------------------------

// NVIDIA TensorRT-LLM, "Performance of TensorRT-LLM", docs/source/performance.md at
// https://github.com/NVIDIA/TensorRT-LLM/blob/77d24b5fa178f11ed7fafdd9833b7245e075f721/docs/source/performance.md
// "A100 GPUs (FP16)" tables: "Low Latency", first-token latency at batch 1 (data from
// v0.5), and "Peak Throughput", output tokens/s per GPU at the stated batch (v0.6.1).
// The engine runs with its defaults (compute_efficiency 0.6, memory_efficiency 0.8);
// only the batch limits follow the published set-up (static batches: the whole batch
// prefills in one iteration), and gpu_memory_utilization is 0.95 so that the published
// batch's KV cache fits as it did there.
struct Published {
  const char* what;
  const char* model;
  int tp;
  int batch;
  int input;
  int output;  // 1: first-token latency row
  double published;  // ms (latency) or output tokens/s per GPU (throughput)
  double bound;      // allowed |ours - published| / published
};

const std::vector<Published>& published_rows() {
  // Bounds: the roofline has no per-iteration overhead (kernel launches, sampling,
  // scheduling), which dominates short prompts at batch 1 (TensorRT-LLM's 16 ms for 128
  // tokens is twice what reading the weights takes); for long prompts and full batches
  // the default efficiencies are within 25% of these engines' kernels.
  static const std::vector<Published> rows = {
      {"first token", "LLaMA-2-7B", 1, 1, 2048, 1, 133, 0.25},
      {"first token", "LLaMA-2-70B", 4, 1, 2048, 1, 377, 0.25},
      {"first token", "LLaMA-2-7B", 1, 1, 128, 1, 16, 0.50},
      {"first token", "LLaMA-2-70B", 4, 1, 128, 1, 47, 0.50},
      {"throughput", "LLaMA-2-7B", 1, 384, 128, 128, 5586, 0.25},
      {"throughput", "LLaMA-2-7B", 1, 52, 2048, 128, 591, 0.25},
      {"throughput", "LLaMA-2-70B", 4, 1280, 128, 128, 670, 0.25},
      {"throughput", "LLaMA-2-70B", 4, 120, 2048, 128, 79, 0.25},
  };
  return rows;
}

double ours(const Published& p) {
  DeploymentSpec d = deployment(p.model, "A100-80GB", p.tp);
  d.max_batch_requests = p.batch;
  d.max_batched_tokens = std::max(8192, p.batch * p.input);
  d.gpu_memory_utilization = 0.95;
  std::vector<Request> requests;
  for (int i = 0; i < p.batch; ++i) requests.push_back({i, 0.0, p.input, p.output});
  const std::vector<RequestRecord> records = serve_all(d, 1, requests);
  double makespan = 0;
  std::int32_t preemptions = 0;
  for (const RequestRecord& r : records) {
    makespan = std::max(makespan, r.finish_s);
    preemptions += r.preemptions;
  }
  REQUIRE(preemptions == 0);
  if (p.output == 1) return records[0].ttft_s() * 1e3;
  return static_cast<double>(p.batch) * p.output / makespan / p.tp;
}

TEST_CASE("published: TensorRT-LLM's A100 FP16 first-token latency and throughput tables", "[serving]") {
  for (const Published& p : published_rows()) {
    const double value = ours(p);
    const double error = (value - p.published) / p.published;
    INFO(p.what << " " << p.model << " tp " << p.tp << " batch " << p.batch << " in " << p.input << " out " << p.output
                << ": published " << p.published << ", schedsim " << value << " (" << error * 100 << "%)");
    CHECK(std::abs(error) <= p.bound);
  }
}

// schedsim_serving_tests "[.table]" prints the table of docs/serving.md, "Validation".
TEST_CASE("published: the table", "[.table]") {
  std::printf("| metric | model | TP | batch | input | output | published | schedsim | error | bound |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Published& p : published_rows()) {
    const double value = ours(p);
    const bool latency = p.output == 1;
    std::printf("| %s | %s | %d | %d | %d | %d | %.0f %s | %.1f %s | %+.1f%% | %.0f%% |\n",
                latency ? "first-token latency" : "output throughput per GPU", p.model, p.tp, p.batch, p.input, p.output,
                p.published, latency ? "ms" : "tok/s", value, latency ? "ms" : "tok/s",
                (value - p.published) / p.published * 100, p.bound * 100);
  }
}

}  // namespace
}  // namespace schedsim::serving
