#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "base/error.hpp"
#include "test_support.hpp"
#include "traces/synthetic.hpp"

using namespace schedsim;
using schedsim::test::TempDir;

namespace {

SyntheticConfig parse(const std::string& yaml) { return SyntheticConfig::parse(ConfigNode::load_string(yaml, "w.yaml")); }

std::vector<JobSpec> generate(const SyntheticConfig& c, std::uint64_t seed) {
  SyntheticJobSource s(c, seed);
  std::vector<JobSpec> out;
  JobSpec j;
  while (s.next(j)) out.push_back(j);
  return out;
}

}  // namespace

TEST_CASE("synthetic workloads are reproducible per seed and differ across seeds", "[traces][synthetic]") {
  const SyntheticConfig c = parse("{num_jobs: 500, gpus: {1: 0.5, 4: 0.5}, duration_s: {dist: lognormal, median: 60, sigma: 1}}");
  const auto a = generate(c, 7), b = generate(c, 7), d = generate(c, 8);
  REQUIRE(a.size() == 500);
  bool any_difference = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].submit == b[i].submit);
    CHECK(a[i].duration_s == b[i].duration_s);
    CHECK(a[i].num_gpus == b[i].num_gpus);
    any_difference = any_difference || a[i].submit != d[i].submit;
    if (i > 0) CHECK(a[i].submit >= a[i - 1].submit);
  }
  CHECK(any_difference);
}

TEST_CASE("changing the GPU mix does not move arrivals or durations (separate streams)", "[traces][synthetic]") {
  const auto a = generate(parse("{num_jobs: 100, gpus: 1}"), 3);
  const auto b = generate(parse("{num_jobs: 100, gpus: {1: 0.2, 8: 0.8}}"), 3);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].submit == b[i].submit);
    CHECK(a[i].duration_s == b[i].duration_s);
  }
}

TEST_CASE("synthetic draws follow the configured distributions", "[traces][synthetic]") {
  const auto jobs = generate(parse("{num_jobs: 100000, arrival: {process: poisson, mean_interarrival_s: 2}, gpus: {1: 0.7, 2: 0.1, 4: 0.1, 8: 0.1}, "
                                   "duration_s: {dist: exponential, mean: 100}}"),
                             11);
  std::map<int, int> counts;
  double dur = 0;
  for (const auto& j : jobs) {
    ++counts[j.num_gpus];
    dur += j.duration_s;
  }
  CHECK(counts[1] / 1e5 == Approx(0.7).margin(0.005));
  CHECK(counts[8] / 1e5 == Approx(0.1).margin(0.004));
  CHECK(dur / 1e5 == Approx(100).epsilon(0.015));
  CHECK(jobs.back().submit.seconds() / 1e5 == Approx(2.0).epsilon(0.015));
  const auto fixed = generate(parse("{num_jobs: 3, arrival: {process: fixed, interarrival_s: 5}, start_s: 100}"), 1);
  CHECK(fixed[0].submit == Tick::from_seconds(105));
  CHECK(fixed[2].submit == Tick::from_seconds(115));
}

TEST_CASE("estimates carry a lognormal error when asked for", "[traces][synthetic]") {
  const auto exact = generate(parse("{num_jobs: 10}"), 1);
  CHECK_FALSE(exact[0].has_estimate());
  const auto noisy = generate(parse("{num_jobs: 2000, estimate_error_sigma: 0.5}"), 1);
  double log_ratio = 0;
  for (const auto& j : noisy) log_ratio += std::log(j.estimate_s / j.duration_s);
  CHECK(log_ratio / 2000 == Approx(0.0).margin(0.05));
  const auto zero = generate(parse("{num_jobs: 5, estimate_error_sigma: 0}"), 1);
  CHECK(zero[0].estimate_s == zero[0].duration_s);
}

TEST_CASE("bursty arrivals: long-run rate of the two-state MMPP and over-dispersed counts", "[traces][synthetic]") {
  // Calm: one job per 100 s; bursts 10x faster; calm 3000 s, bursts 1000 s on average.
  // Long-run rate = (3000 x 0.01 + 1000 x 0.1) / 4000 = 0.0325 /s, mean gap 30.77 s.
  const SyntheticConfig c = parse("{num_jobs: 200000, arrival: {process: bursty, mean_interarrival_s: 100, burst_factor: 10, "
                                  "mean_calm_s: 3000, mean_burst_s: 1000}}");
  CHECK(c.long_run_interarrival_s() == Approx(4000.0 / 130.0));
  const auto jobs = generate(c, 5);
  const double span_s = jobs.back().submit.seconds() - jobs.front().submit.seconds();
  CHECK(span_s / (jobs.size() - 1) == Approx(c.long_run_interarrival_s()).epsilon(0.03));
  // Counts per 600 s window: a Poisson process has variance = mean; the modulated one is
  // far above (its index of dispersion grows with the window; > 3 here with margin).
  std::map<long, int> per_window;
  for (const auto& j : jobs) ++per_window[static_cast<long>(j.submit.seconds() / 600.0)];
  const long windows = static_cast<long>(span_s / 600.0);
  double sum = 0, sum_sq = 0;
  for (long w = 0; w < windows; ++w) {
    const double n = per_window.count(w) ? per_window[w] : 0;
    sum += n;
    sum_sq += n * n;
  }
  const double mean = sum / windows, var = sum_sq / windows - mean * mean;
  CHECK(var / mean > 3.0);
  // Same seed, same process; the stream of durations is untouched by the modulation.
  const auto again = generate(c, 5);
  CHECK(again[1234].submit == jobs[1234].submit);
  const auto poisson = generate(parse("{num_jobs: 200000, arrival: {process: poisson, mean_interarrival_s: 100}}"), 5);
  CHECK(poisson[77].duration_s == jobs[77].duration_s);
  // It round-trips through the resolved config.
  const SyntheticConfig back = parse(YAML::Dump(c.to_yaml()));
  CHECK(back.arrival_process == "bursty");
  CHECK(back.burst_factor == 10);
  CHECK(back.mean_burst_s == 1000);
}

TEST_CASE("synthetic config errors name the key", "[traces][synthetic][bad-input]") {
  CHECK_THROWS_WITH(parse("{arrival: {process: bursty, mean_interarrival_s: 5}}"),
                    "w.yaml:1: arrival: process: bursty needs 'burst_factor' (burst_factor, mean_calm_s, mean_burst_s)");
  CHECK_THROWS_WITH(parse("{arrival: {process: bursty, mean_interarrival_s: 5, burst_factor: 0.5, mean_calm_s: 1, mean_burst_s: 1}}"),
                    "w.yaml:1: arrival.burst_factor: must be >= 1 (the burst state's rate / the calm state's rate)");
  CHECK_THROWS_WITH(parse("{arrival: {process: poisson, burst_factor: 3}}"),
                    "w.yaml:1: arrival.burst_factor: only applies to process: bursty, not poisson");
  CHECK_THROWS_WITH(parse("{gpus: {1: 0.5, 2: 0.4}}"), "w.yaml:1: gpus: probabilities must sum to 1, they sum to 0.900000");
  CHECK_THROWS_WITH(parse("{gpus: {one: 1}}"), "w.yaml:1: gpus.one: GPU counts must be positive integers, got 'one'");
  CHECK_THROWS_WITH(parse("{num_jobs: -4}"), "w.yaml:1: num_jobs: must be a positive integer, got '-4'");
  CHECK_THROWS_WITH(parse("{num_jobs: many}"), "w.yaml:1: num_jobs: expected an integer, got 'many'");
  CHECK_THROWS_WITH(parse("{duration_s: {dist: exponential, mean: 0}}"), "w.yaml:1: duration_s.mean: must be > 0, got '0'");
  CHECK_THROWS_WITH(parse("{duration_s: {dist: gamma, k: 2}}"),
                    Catch::Contains("duration_s.dist: 'gamma' is not allowed; choose one of: constant, exponential, lognormal"));
  CHECK_THROWS_WITH(parse("{arrival: {process: fixed, mean_interarrival_s: 5}}"),
                    "w.yaml:1: arrival.mean_interarrival_s: does not apply to process: fixed; use interarrival_s");
}

TEST_CASE("empirical durations come from a one-column file", "[traces][synthetic]") {
  TempDir dir;
  dir.write("d.csv", "runtime\n10\n20\n0.0\n30\n");
  const ConfigNode bad = ConfigNode::load_string("{dist: empirical, path: " + dir.path("d.csv") + "}", "w.yaml");
  CHECK_THROWS_WITH(Distribution::parse(bad), Catch::Contains("d.csv:4: value 0.0 is not > 0; durations must be positive (add nonpositive: drop to w.yaml:1 to skip such rows)"));
  const ConfigNode ok = ConfigNode::load_string("{dist: empirical, path: " + dir.path("d.csv") + ", nonpositive: drop}", "w.yaml");
  const Distribution d = Distribution::parse(ok);
  CHECK(d.mean() == Approx(20));
  Rng r(1, "e");
  for (int i = 0; i < 100; ++i) {
    const double v = d.sample(r);
    CHECK((v == 10 || v == 20 || v == 30));
  }
  CHECK(d.to_yaml()["column"].as<std::string>() == "runtime");
}

TEST_CASE("synthetic elastic jobs get scaled limits from their own stream", "[traces][synthetic][elastic]") {
  const SyntheticConfig rigid = parse("{num_jobs: 400, gpus: {1: 0.5, 3: 0.2, 8: 0.3}}");
  const SyntheticConfig c = parse("{num_jobs: 400, gpus: {1: 0.5, 3: 0.2, 8: 0.3}, elastic: {fraction: 0.25, min_scale: 0.5, max_scale: 1.5}}");
  const auto a = generate(rigid, 3), b = generate(c, 3);
  REQUIRE(b.size() == 400);
  int elastic = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    CHECK(a[i].submit == b[i].submit);
    CHECK(a[i].duration_s == b[i].duration_s);
    CHECK(a[i].num_gpus == b[i].num_gpus);
    CHECK_FALSE(a[i].is_elastic());
    if (!b[i].is_elastic()) continue;
    ++elastic;
    const int n = b[i].num_gpus;
    CHECK(b[i].min_gpus == (n == 1 ? 1 : n == 3 ? 1 : 4));
    CHECK(b[i].max_gpus == (n == 1 ? 2 : n == 3 ? 5 : 12));
  }
  CHECK(elastic > 70);
  CHECK(elastic < 130);
  const YAML::Node y = c.to_yaml();
  CHECK(y["elastic"]["fraction"].as<double>() == 0.25);
  CHECK(y["elastic"]["min_scale"].as<double>() == 0.5);
  CHECK(y["elastic"]["max_scale"].as<double>() == 1.5);
  CHECK(generate(parse("{num_jobs: 50, gpus: 4, elastic: {fraction: 1}}"), 1)[7].max_gpus == 8);
}

TEST_CASE("synthetic elastic config errors name the key", "[traces][synthetic][elastic][bad-input]") {
  CHECK_THROWS_WITH(parse("{elastic: {fraction: 1.5}}"), "w.yaml:1: elastic.fraction: must be between 0 and 1");
  CHECK_THROWS_WITH(parse("{elastic: {fraction: 0.5, max_scale: 0.5}}"),
                    "w.yaml:1: elastic.max_scale: must be at least 1 (elastic jobs may always run on num_gpus)");
  CHECK_THROWS_WITH(parse("{elastic: {fraction: 0.5, min_scale: 2}}"), Catch::Contains("w.yaml:1: elastic.min_scale: must be between 0 and 1"));
  CHECK_THROWS_WITH(parse("{elastic: {share: 0.5}}"), Catch::Contains("elastic"));
}
