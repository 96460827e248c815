// Request streams, the serving config sections and the serving metrics (issue 26):
// the Azure LLM trace reader (a hand-written fixture, every bad-input message, the real
// files when ../shared/data is there), rescale_time and its diurnal warp, the synthetic
// streams' statistics, the YAML sections and summarize() on hand-computed records.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>

#include "serving/request_stream.hpp"
#include "serving/serving_config.hpp"
#include "serving/serving_metrics.hpp"
#include "base/error.hpp"
#include "test_support.hpp"

using namespace schedsim;
using namespace schedsim::serving;

namespace {

const char* kHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n";

// The message of the InputError `f` throws ("" when it throws none).
template <typename F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string azure_error(const test::TempDir& dir, const std::string& body) {
  const std::string path = dir.write("t.csv", body);
  return input_error([&] { read_azure_llm_trace(path); });
}

std::vector<Request> evenly_spaced(int n, double span_s) {
  std::vector<Request> out;
  for (int i = 0; i < n; ++i) {
    Request r;
    r.id = i;
    r.arrival_s = span_s * i / (n - 1);
    r.prompt_tokens = 100 + i % 7;
    r.output_tokens = 1 + i % 5;
    out.push_back(r);
  }
  return out;
}

ConfigNode yaml(const std::string& text) { return ConfigNode::load_string(text, "s.yaml"); }

}  // namespace

TEST_CASE("read_azure_llm_trace reads a hand-written fixture (CRLF, 7 fractional digits, equal times)", "[serving][streams]") {
  test::TempDir dir;
  const std::string path = dir.write("t.csv", std::string(kHeader) +
                                                  "2023-11-16 18:15:46.6805900,374,44\r\n"
                                                  "2023-11-16 18:15:50.9951690,396,109\r\n"
                                                  "2023-11-16 18:15:50.9951690,2,1\r\n"
                                                  "\r\n"
                                                  "2023-11-17 00:00:00.0000001,14050,1000");
  const auto r = read_azure_llm_trace(path);
  REQUIRE(r.size() == 4);
  CHECK(r[0].id == 0);
  CHECK(r[3].id == 3);
  CHECK(r[0].arrival_s == 0.0);
  CHECK(r[1].arrival_s == 4.314579);  // 4,314,579,000 ns exactly
  CHECK(r[2].arrival_s == r[1].arrival_s);
  CHECK(r[3].arrival_s == 20653.3194101);  // to midnight plus 100 ns
  CHECK(r[0].prompt_tokens == 374);
  CHECK(r[0].output_tokens == 44);
  CHECK(r[2].prompt_tokens == 2);
  CHECK(r[2].output_tokens == 1);
  CHECK(r[3].prompt_tokens == 14050);
  CHECK(r[3].output_tokens == 1000);
}

TEST_CASE("read_azure_llm_trace names the file, line and field of each bad row", "[serving][streams]") {
  test::TempDir dir;
  const std::string p = dir.path("t.csv");
  const std::string ok = "2023-11-16 18:15:46.6805900,374,44\n";
  CHECK(azure_error(dir, "") == p + ": is empty; expected the header 'TIMESTAMP,ContextTokens,GeneratedTokens' (Azure LLM inference trace 2023)");
  CHECK(azure_error(dir, "time,prompt,output\n" + ok) ==
        p + ":1: expected the header 'TIMESTAMP,ContextTokens,GeneratedTokens' (Azure LLM inference trace 2023), got 'time,prompt,output'");
  CHECK(azure_error(dir, kHeader) == p + ": has the header but no requests");
  CHECK(azure_error(dir, kHeader + ok + "2023-11-16 18:15:47,1\n") == p + ":3: expected 3 fields (TIMESTAMP,ContextTokens,GeneratedTokens), got 2");
  CHECK(azure_error(dir, kHeader + ok + "2023-11-16 18:15:47,1,2,3\n") ==
        p + ":3: expected 3 fields (TIMESTAMP,ContextTokens,GeneratedTokens), got 4");
  CHECK(azure_error(dir, kHeader + std::string("yesterday,374,44\n")) ==
        p + ":2: TIMESTAMP: expected a date-time like '2023-11-16 18:15:46.6805900', got 'yesterday'");
  CHECK(azure_error(dir, kHeader + std::string("2023-02-29 00:00:00,374,44\n")) ==
        p + ":2: TIMESTAMP: expected a date-time like '2023-11-16 18:15:46.6805900', got '2023-02-29 00:00:00'");
  CHECK(azure_error(dir, kHeader + std::string("2023-11-16 18:15:46.,374,44\n")) ==
        p + ":2: TIMESTAMP: expected a date-time like '2023-11-16 18:15:46.6805900', got '2023-11-16 18:15:46.'");
  CHECK(azure_error(dir, kHeader + ok + "2023-11-16 18:15:46.6805899,1,1\n") ==
        p + ":3: TIMESTAMP: '2023-11-16 18:15:46.6805899' is before the previous row's ('2023-11-16 18:15:46.6805900'); the rows must be in time order");
  CHECK(azure_error(dir, kHeader + std::string("2023-11-16 18:15:46,-3,44\n")) == p + ":2: ContextTokens: expected a positive integer, got '-3'");
  CHECK(azure_error(dir, kHeader + std::string("2023-11-16 18:15:46,0,44\n")) == p + ":2: ContextTokens: expected a positive integer, got '0'");
  CHECK(azure_error(dir, kHeader + std::string("2023-11-16 18:15:46,37.5,44\n")) == p + ":2: ContextTokens: expected a positive integer, got '37.5'");
  CHECK(azure_error(dir, kHeader + std::string("2023-11-16 18:15:46,374,\n")) == p + ":2: GeneratedTokens: is empty; expected a non-negative integer");
  CHECK(azure_error(dir, kHeader + std::string("2023-11-16 18:15:46,374,4e1\n")) == p + ":2: GeneratedTokens: expected a non-negative integer, got '4e1'");
  CHECK(azure_error(dir, kHeader + std::string("2023-11-16 18:15:46,374,2147483648\n")) ==
        p + ":2: GeneratedTokens: is '2147483648'; at most 2147483647 tokens");
  CHECK(azure_error(dir, kHeader + std::string("2023-11-16 18:15:46,374,0\n")) ==
        p + ":2: GeneratedTokens: is 0; a request generates at least 1 token (its first token ends the prefill): drop the row or write 1");
  CHECK(input_error([&] { read_azure_llm_trace(dir.path("missing.csv")); }) == dir.path("missing.csv") + ": cannot open the trace file (does it exist?)");
}

TEST_CASE("read_azure_llm_trace on the shipped Azure LLM inference traces 2023", "[serving][streams][data]") {
  const std::string data = test::shared_data_dir();
  if (data.empty()) {
    WARN("skipped: ../shared/data (or $SCHEDSIM_DATA) is absent, so the Azure traces cannot be read");
    return;
  }
  const auto conv = read_azure_llm_trace(data + "/azure_llm/AzureLLMInferenceTrace_conv.csv");
  REQUIRE(conv.size() == 19366);
  CHECK(conv.front().arrival_s == 0.0);
  CHECK(conv.back().arrival_s == Approx(3501.721937).margin(1e-9));  // 18:15:46.6805900 to 19:14:08.4025270
  CHECK(conv.back().id == 19365);
  auto sum = [](const std::vector<Request>& v, bool output) {
    std::int64_t s = 0;
    for (const auto& r : v) s += output ? r.output_tokens : r.prompt_tokens;
    return s;
  };
  CHECK(sum(conv, false) == 22361870);
  CHECK(sum(conv, true) == 4088665);
  const auto code = read_azure_llm_trace(data + "/azure_llm/AzureLLMInferenceTrace_code.csv");
  CHECK(code.size() == 8819);
  CHECK(sum(code, false) == 18059974);
  CHECK(sum(code, true) == 245896);
}

TEST_CASE("rescale_time keeps order, count, ids and tokens and ends exactly at the duration", "[serving][streams]") {
  std::vector<Request> in = evenly_spaced(1001, 3501.721937);
  for (auto& r : in) r.arrival_s += 17.25;  // the first arrival moves to 0
  for (const double duration_s : {86400.0, 600.0, 3600.0, 1.0 / 3.0}) {
    for (const bool warped : {false, true}) {
      const DiurnalShape shape{0.6, 14.0};
      const auto out = rescale_time(in, duration_s, warped ? &shape : nullptr);
      REQUIRE(out.size() == in.size());
      CHECK(out.front().arrival_s == 0.0);
      CHECK(out.back().arrival_s == duration_s);
      for (std::size_t i = 0; i < out.size(); ++i) {
        CHECK(out[i].id == in[i].id);
        CHECK(out[i].prompt_tokens == in[i].prompt_tokens);
        CHECK(out[i].output_tokens == in[i].output_tokens);
        if (i > 0) CHECK(out[i].arrival_s >= out[i - 1].arrival_s);
      }
    }
  }
  CHECK(input_error([&] { rescale_time(in, 0.0, nullptr); }) == "rescale_time: duration_s must be a finite number > 0, got 0.000000");
  CHECK(input_error([&] { rescale_time({in[0]}, 10.0, nullptr); }) ==
        "rescale_time: needs at least two requests with different arrival times, got 1 request(s) spanning 0 s");
}

TEST_CASE("the diurnal warp's arrivals per hour follow the rate curve", "[serving][streams]") {
  // 100,001 evenly spaced requests over a day, warped with amplitude 0.5 peaking at 14:00:
  // the count in hour h is N x (R(h+1) - R(h)) / R(24 h) with R the cumulative rate. The
  // arrivals are exact solutions of R(t) = u R(day), so each hour's count is within one
  // request (the boundary) of the curve.
  const int n = 100001;
  const DiurnalShape shape{0.5, 14.0};
  const auto out = rescale_time(evenly_spaced(n, 1000.0), 86400.0, &shape);
  const double w = 2 * M_PI / 86400.0, phi = 2 * M_PI * 14.0 / 24.0;
  auto cumulative = [&](double t) { return t + 0.5 / w * (std::sin(w * t - phi) + std::sin(phi)); };
  std::vector<int> per_hour(24, 0);
  for (const auto& r : out) per_hour[std::min(23, static_cast<int>(r.arrival_s / 3600.0))]++;
  for (int h = 0; h < 24; ++h) {
    const double expected = (n - 1) * (cumulative(3600.0 * (h + 1)) - cumulative(3600.0 * h)) / cumulative(86400.0);
    INFO("hour " << h);
    CHECK(std::abs(per_hour[h] - expected) <= 1.5);
  }
  // The peak hour (13:30-14:30 midpoint) holds about 1.5 / 0.5 = 3 x the trough hour's.
  CHECK(static_cast<double>(per_hour[13] + per_hour[14]) / (per_hour[1] + per_hour[2]) == Approx(3.0).epsilon(0.05));
}

TEST_CASE("synthetic streams: gamma inter-arrivals have the rate and cv asked for", "[serving][streams]") {
  // About 400,000 gaps per case: the sample mean's relative error is about cv / sqrt(n)
  // (0.3 % at cv 2) and the sample cv's a little more; 2 % is several standard errors.
  for (const double cv : {0.5, 1.0, 2.0, 4.0}) {
    SyntheticStreamSpec s;
    s.rate_rps = 40;
    s.duration_s = 10000;
    s.cv = cv;
    s.seed = 11;
    const auto r = synthetic_requests(s);
    std::vector<double> gaps;
    for (std::size_t i = 1; i < r.size(); ++i) gaps.push_back(r[i].arrival_s - r[i - 1].arrival_s);
    const double mean = std::accumulate(gaps.begin(), gaps.end(), 0.0) / gaps.size();
    double var = 0;
    for (double g : gaps) var += (g - mean) * (g - mean);
    var /= gaps.size() - 1;
    INFO("cv " << cv << ", " << r.size() << " requests");
    CHECK(1.0 / mean == Approx(40.0).epsilon(cv > 2 ? 0.04 : 0.02));
    CHECK(std::sqrt(var) / mean == Approx(cv).epsilon(cv > 2 ? 0.06 : 0.02));
    CHECK(r.back().arrival_s < 10000);
    bool ids_in_order = true;
    for (std::size_t i = 0; i < r.size(); ++i) ids_in_order = ids_in_order && r[i].id == static_cast<std::int64_t>(i);
    CHECK(ids_in_order);
  }
}

TEST_CASE("synthetic streams: token distributions, determinism and independent streams", "[serving][streams]") {
  SyntheticStreamSpec s;
  s.rate_rps = 50;
  s.duration_s = 2000;
  s.prompt = TokenDistribution::lognormal(1000, 600);
  s.output = TokenDistribution::uniform(10, 20);
  const auto a = synthetic_requests(s);
  const auto b = synthetic_requests(s);
  REQUIRE(a.size() == b.size());
  double prompt_sum = 0, prompt_sq = 0;
  bool all_in_range = true, same = true;
  for (std::size_t i = 0; i < a.size(); ++i) {
    same = same && a[i].arrival_s == b[i].arrival_s && a[i].prompt_tokens == b[i].prompt_tokens && a[i].output_tokens == b[i].output_tokens;
    all_in_range = all_in_range && a[i].output_tokens >= 10 && a[i].output_tokens <= 20 && a[i].prompt_tokens >= 1;
    prompt_sum += a[i].prompt_tokens;
    prompt_sq += static_cast<double>(a[i].prompt_tokens) * a[i].prompt_tokens;
  }
  CHECK(same);
  CHECK(all_in_range);
  const double m = prompt_sum / a.size();
  CHECK(m == Approx(1000).epsilon(0.02));
  CHECK(std::sqrt(prompt_sq / a.size() - m * m) == Approx(600).epsilon(0.04));
  // Another output distribution leaves the arrivals and prompts alone.
  SyntheticStreamSpec t = s;
  t.output = TokenDistribution::fixed(7);
  const auto c = synthetic_requests(t);
  REQUIRE(c.size() == a.size());
  bool arrivals_and_prompts_kept = true;
  for (std::size_t i = 0; i < a.size(); ++i)
    arrivals_and_prompts_kept = arrivals_and_prompts_kept && c[i].arrival_s == a[i].arrival_s && c[i].prompt_tokens == a[i].prompt_tokens && c[i].output_tokens == 7;
  CHECK(arrivals_and_prompts_kept);
  // Resampling one trace for both draws whole rows (prompt and output of one request).
  auto rows = std::make_shared<const std::vector<Request>>(std::vector<Request>{{0, 0.0, 5, 50}, {1, 1.0, 7, 70}, {2, 2.0, 9, 90}});
  t.prompt = TokenDistribution::resample(rows, "rows.csv");
  t.output = TokenDistribution::resample(rows, "rows.csv");
  bool whole_rows = true;
  for (const auto& r : synthetic_requests(t)) whole_rows = whole_rows && r.output_tokens == 10 * r.prompt_tokens;
  CHECK(whole_rows);
}

TEST_CASE("synthetic streams refuse bad specs with the reason", "[serving][streams]") {
  SyntheticStreamSpec s;
  s.rate_rps = 0;
  CHECK(input_error([&] { synthetic_requests(s); }) == "synthetic stream: rate_rps must be a finite number > 0, got 0.000000");
  s.rate_rps = 1e5;
  s.duration_s = 1e4;
  CHECK(input_error([&] { synthetic_requests(s); }) == "synthetic stream: rate_rps x duration_s is 1000000000.000000 requests, over the limit of 100000000");
  s = SyntheticStreamSpec{};
  s.prompt = TokenDistribution::uniform(5, 4);
  CHECK(input_error([&] { synthetic_requests(s); }) == "synthetic stream: prompt_tokens: uniform max (4) is below min (5)");
  s.prompt = TokenDistribution::fixed(1);
  s.output = TokenDistribution::fixed(0);
  CHECK(input_error([&] { synthetic_requests(s); }) == "synthetic stream: output_tokens: fixed tokens must be >= 1, got 0");
}

TEST_CASE("requests_from_yaml: a synthetic stream and a rescaled trace", "[serving][config]") {
  const auto r = requests_from_yaml(
      yaml("requests: {synthetic: {rate_rps: 2, duration_s: 100, cv: 1.5, prompt_tokens: {fixed: 64}, output_tokens: {uniform: {min: 1, max: 3}}, seed: 5}}")
          .child("requests"));
  SyntheticStreamSpec s;
  s.rate_rps = 2;
  s.duration_s = 100;
  s.cv = 1.5;
  s.prompt = TokenDistribution::fixed(64);
  s.output = TokenDistribution::uniform(1, 3);
  s.seed = 5;
  const auto direct = synthetic_requests(s);
  REQUIRE(r.size() == direct.size());
  for (std::size_t i = 0; i < r.size(); ++i) CHECK((r[i].arrival_s == direct[i].arrival_s && r[i].output_tokens == direct[i].output_tokens));

  test::TempDir dir;
  dir.write("t.csv", std::string(kHeader) + "2023-11-16 18:00:00,10,2\n2023-11-16 18:00:30,20,3\n2023-11-16 18:01:00,30,4\n");
  const std::string cfg = dir.write("s.yaml", "requests: {trace: t.csv, format: azure_llm, duration_s: 600}\n");
  const auto t = requests_from_yaml(ConfigNode::load_file(cfg).child("requests"));
  REQUIRE(t.size() == 3);
  CHECK(t[1].arrival_s == 300.0);
  CHECK(t[2].arrival_s == 600.0);
  CHECK(t[2].prompt_tokens == 30);
}

TEST_CASE("the serving config sections name the file, line and key of a bad value", "[serving][config]") {
  auto err = [](const std::string& text, const std::string& key) {
    return input_error([&] {
      const ConfigNode root = yaml(text);
      const ConfigNode n = root.child(key);
      if (key == "requests") requests_from_yaml(n);
      if (key == "deployment") deployment_from_yaml(n, AcceleratorCatalogue::builtin());
      if (key == "slo") slo_from_yaml(n);
      if (key == "disaggregation") disaggregation_from_yaml(n);
    });
  };
  CHECK(err("requests: {}", "requests") ==
        "s.yaml:1: requests: gives neither trace: nor synthetic:; expected {trace: PATH, format: azure_llm, duration_s, diurnal: {amplitude, peak_hour}} or {synthetic: {rate_rps, ...}}");
  CHECK(err("requests: {trace: t.csv}", "requests") == "s.yaml:1: requests: missing format: the trace's format; allowed: azure_llm");
  CHECK(err("requests: {trace: t.csv, format: sharegpt}", "requests") == "s.yaml:1: requests.format: 'sharegpt' is not allowed; choose one of: azure_llm");
  CHECK(err("requests:\n  synthetic: {rate_rps: 1, prompt_tokens: {fixed: 1}, output_tokens: {fixed: 1}}\n  duration_s: 5\n", "requests") ==
        "s.yaml:3: requests.duration_s: only goes with trace: (a synthetic stream takes its duration_s inside synthetic:)");
  CHECK(err("requests: {synthetic: {rate_rps: 1, prompt_tokens: {fixed: 1, uniform: {min: 1, max: 2}}, output_tokens: {fixed: 1}}}", "requests") ==
        "s.yaml:1: requests.synthetic.prompt_tokens: gives more than one distribution; expected one of {fixed: N}, {uniform: {min, max}}, {lognormal: {mean, sd}} or {trace: PATH, format: azure_llm}");
  CHECK(err("requests: {synthetic: {rate_rps: 1, prompt_tokens: {fixed: 1}, output_tokens: {lognormal: {mean: 0.5, sd: 1}}}}", "requests") ==
        "s.yaml:1: requests.synthetic.output_tokens.lognormal.mean: must be in [1, 1e9] tokens, got 0.500000");
  CHECK(err("requests:\n  trace: t.csv\n  format: azure_llm\n  diurnal: {amplitude: 1}\n", "requests") ==
        "s.yaml:4: requests.diurnal.amplitude: must be in [0, 1) (the rate stays positive), got 1.000000");
  CHECK(err("deployment: {model: LLaMA-2-13b, device: H100, tensor_parallel: 0}", "deployment") ==
        "s.yaml:1: deployment.tensor_parallel: must be a positive integer, got '0'");
  CHECK(err("deployment: {model: LLaMA-2-13B, device: H100, gpu_memory_utilization: 1.5}", "deployment") ==
        "s.yaml:1: deployment.gpu_memory_utilization: must be a share in (0, 1], got 1.500000");
  CHECK(err("deployment: {device: H100}", "deployment") == "s.yaml:1: deployment: missing required key 'model'");
  // The catalogues' lists follow (their own tests pin them).
  CHECK_THAT(err("deployment: {model: LLaMA-2-13, device: H100}", "deployment"),
             Catch::StartsWith("s.yaml:1: deployment.model: unknown model 'LLaMA-2-13' (did you mean 'LLaMA-2-13B'?); known models: LLaMA-2-7B, "));
  CHECK_THAT(err("deployment: {model: LLaMA-2-13B, device: H200x}", "deployment"),
             Catch::StartsWith("s.yaml:1: deployment.device: unknown accelerator type 'H200x' (did you mean 'H200'?); known accelerator types: "));
  CHECK(err("slo: {ttft_s: 1}", "slo") == "s.yaml:1: slo: missing required key 'tpot_s'");
  CHECK(err("slo: {ttft_s: 1, tpot_s: -0.1}", "slo") == "s.yaml:1: slo.tpot_s: must be > 0, got '-0.1'");
  CHECK(err("disaggregation: {prefill_replicas: 2, kv_link: 100}", "disaggregation") ==
        "s.yaml:1: disaggregation: unknown key 'kv_link'; valid keys here: prefill_replicas, kv_link_gbps");
}

TEST_CASE("deployment, slo and disaggregation sections parse with their defaults", "[serving][config]") {
  const auto d = deployment_from_yaml(yaml("deployment: {model: LLaMA-2-13B, device: H100, tensor_parallel: 2, max_batched_tokens: 4096}").child("deployment"),
                                      AcceleratorCatalogue::builtin());
  CHECK(d.model.name == "LLaMA-2-13B");
  CHECK(d.device.name == "H100-SXM");
  CHECK(d.tensor_parallel == 2);
  CHECK(d.max_batched_tokens == 4096);
  CHECK(d.max_batch_requests == DeploymentSpec{}.max_batch_requests);
  const auto x = disaggregation_from_yaml(yaml("d: {prefill_replicas: 3}").child("d"));
  CHECK(x.enabled);
  CHECK(x.prefill_replicas == 3);
  CHECK(x.kv_link_bytes_per_s == 50e9);
  CHECK(disaggregation_from_yaml(yaml("d: {prefill_replicas: 1, kv_link_gbps: 100}").child("d")).kv_link_bytes_per_s == 12.5e9);
  const auto s = slo_from_yaml(yaml("s: {ttft_s: 0.5, tpot_s: 0.05}").child("s"));
  CHECK(s.ttft_s == 0.5);
  CHECK(s.tpot_s == 0.05);
}

TEST_CASE("summarize() on hand-computed records", "[serving][metrics]") {
  // id, arrival, first token, finish, prompt, output, replica, preemptions
  const std::vector<RequestRecord> records = {
      {0, 0.0, 0.5, 2.5, 100, 5, 0, 0},   // ttft 0.5, tpot 0.5, e2e 2.5
      {1, 1.0, 1.25, 1.25, 10, 1, 1, 0},  // ttft 0.25, tpot - (one token), e2e 0.25
      {2, 2.0, 4.0, 6.0, 10, 3, 0, 2},    // ttft 2, tpot 1, e2e 4
      {3, 3.0, 3.5, 4.5, 10, 11, 1, 1},   // ttft 0.5, tpot 0.1, e2e 1.5
  };
  const auto s = summarize(records, ServingSlo{1.0, 0.6}, 8.0);
  CHECK(s.requests == 4);
  CHECK(s.duration_s == 8.0);
  // ttft sorted 0.25 0.5 0.5 2: p50 at position 1.5 -> 0.5; p90 at 2.7 -> 0.5 + 0.7 x 1.5 = 1.55
  CHECK(s.ttft.mean_s == 0.8125);
  CHECK(s.ttft.p50_s == 0.5);
  CHECK(s.ttft.p90_s == Approx(1.55).epsilon(1e-12));
  CHECK(s.ttft.p99_s == Approx(1.955).epsilon(1e-12));
  CHECK(s.ttft.max_s == 2.0);
  // tpot over the three multi-token requests: 0.1 0.5 1
  CHECK(s.tpot.mean_s == Approx(1.6 / 3).epsilon(1e-12));
  CHECK(s.tpot.p50_s == 0.5);
  CHECK(s.tpot.max_s == 1.0);
  CHECK(s.e2e.mean_s == 2.0625);
  CHECK(s.e2e.p50_s == 2.0);
  // Met: 0 (0.5 <= 1, 0.5 <= 0.6), 1, 3; missed: 2 (ttft 2).
  CHECK(s.slo_attainment == 0.75);
  CHECK(s.goodput_rps == 3.0 / 8.0);
  CHECK(s.output_tokens_per_s == 20.0 / 8.0);
  CHECK(s.preemptions == 3);
  const auto none = summarize({}, ServingSlo{1, 1}, 0.0);
  CHECK(none.requests == 0);
  CHECK(none.ttft.p99_s == 0.0);
  CHECK(none.goodput_rps == 0.0);
}

TEST_CASE("requests_from_yaml: a diurnal warp of a trace and a synthetic stream resampling one trace for both counts", "[serving][config]") {
  test::TempDir dir;
  std::string rows = kHeader;
  for (int i = 0; i < 100; ++i) {
    char line[80];
    std::snprintf(line, sizeof line, "2023-11-16 18:%02d:%02d.0000000,%d,%d\n", i / 60, i % 60, 10 + i, 2 * (10 + i));
    rows += line;
  }
  dir.write("t.csv", rows);
  // diurnal without duration_s keeps the trace's own span (99 s); with it, the day.
  const auto own = requests_from_yaml(ConfigNode::load_file(dir.write("a.yaml", "requests: {trace: t.csv, format: azure_llm, diurnal: {amplitude: 0.5}}\n")).child("requests"));
  CHECK(own.back().arrival_s == 99.0);
  const auto day = requests_from_yaml(
      ConfigNode::load_file(dir.write("b.yaml", "requests: {trace: t.csv, format: azure_llm, duration_s: 86400, diurnal: {amplitude: 0.5, peak_hour: 12}}\n"))
          .child("requests"));
  const DiurnalShape shape{0.5, 12.0};
  const auto direct = rescale_time(read_azure_llm_trace(dir.path("t.csv")), 86400, &shape);
  REQUIRE(day.size() == 100);
  for (std::size_t i = 0; i < day.size(); ++i) CHECK(day[i].arrival_s == direct[i].arrival_s);
  // Both counts from one file: whole rows (output = 2 x prompt in this file).
  const auto s = requests_from_yaml(ConfigNode::load_file(dir.write("c.yaml",
                                                                     "requests:\n  synthetic:\n    rate_rps: 5\n    duration_s: 100\n"
                                                                     "    prompt_tokens: {trace: t.csv, format: azure_llm}\n    output_tokens: {trace: t.csv}\n"))
                                        .child("requests"),
                                    9);
  REQUIRE(s.size() > 300);
  bool whole_rows = true;
  for (const auto& r : s) whole_rows = whole_rows && r.output_tokens == 2 * r.prompt_tokens && r.prompt_tokens >= 10 && r.prompt_tokens < 110;
  CHECK(whole_rows);
}
