// `schedsim serve` (issue 26, docs/serving.md#schedsim-serve): a tiny config end to end
// (numbers against the engine's closed forms and pinned), the same bytes on a second run,
// bad configs with their exact messages, and no result files after a failure.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/serve_command.hpp"
#include "base/error.hpp"
#include "test_support.hpp"

using namespace schedsim;
using namespace schedsim::serving;

namespace {

// Three requests, each alone on the replica (tens of seconds apart).
const char* kTinyTrace =
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2023-11-16 18:00:00.0000000,512,8\n"
    "2023-11-16 18:00:10.0000000,1024,1\n"
    "2023-11-16 18:01:00.0000000,256,4\n";

const char* kTinyConfig =
    "name: tiny\n"
    "requests: {trace: t.csv, format: azure_llm}\n"
    "deployment: {model: LLaMA-2-7B, device: H100}\n"
    "replicas: 1\n"
    "slo: {ttft_s: 0.02, tpot_s: 0.02}\n";  // request 1 (1,024-token prompt) misses the TTFT limit

template <typename F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string serve_error(const test::TempDir& dir, const std::string& config, const std::string& out = "out") {
  const std::string path = dir.write("s.yaml", config);
  std::ostringstream printed;
  return input_error([&] { run_serve_cli({path, dir.path(out), true}, printed); });
}

}  // namespace

TEST_CASE("serve: a tiny config end to end, against the engine's closed forms", "[serve]") {
  test::TempDir dir;
  dir.write("t.csv", kTinyTrace);
  const std::string cfg = dir.write("s.yaml", kTinyConfig);
  std::ostringstream printed;
  run_serve_cli({cfg, dir.path("out"), false}, printed);
  CHECK(dir.files() == std::vector<std::string>{"out/requests.csv", "out/results.json", "s.yaml", "t.csv"});
  const auto j = nlohmann::json::parse(test::read_file(dir.path("out/results.json")));
  CHECK(j["command"] == "serve");
  CHECK(j["summary"]["requests"] == 3);
  CHECK(j["config"]["requests"]["count"] == 3);
  CHECK(j["config"]["requests"]["last_arrival_s"] == 60.0);
  CHECK(j["config"]["deployment"]["device"] == "H100-SXM");

  // Each request is alone: its TTFT is one prefill iteration of its prompt.
  const ServeConfig c = load_serve_config(cfg);
  const ServingEngine engine(c.deployment, 1);
  const ServeResult r = run_serve(c);
  REQUIRE(r.records.size() == 3);
  for (const auto& rec : r.records) {
    INFO("request " << rec.id);
    CHECK(rec.ttft_s() == Approx(engine.iteration_time_s({{0, rec.prompt_tokens}}, 0, 0)).epsilon(1e-12));
    CHECK(rec.replica == 0);
    CHECK(rec.preemptions == 0);
  }
  CHECK(j["summary"]["duration_s"] == r.records[2].finish_s);
  CHECK(j["summary"]["output_tokens_per_s"] == 13.0 / r.records[2].finish_s);
  CHECK(j["summary"]["ttft"]["max_s"] == r.records[1].ttft_s());  // the longest prompt
  CHECK(test::read_file(dir.path("out/requests.csv")) == requests_csv(r.records));
  CHECK(j["summary"]["slo_attainment"] == 2.0 / 3.0);
  CHECK(j["summary"]["goodput_rps"] == 2.0 / r.records[2].finish_s);
  CHECK(j["summary"]["tpot"]["max_s"] == r.records[0].tpot_s());  // request 1 has one token: no TPOT
  // Pinned (the engine's numbers at the time of writing; a change of its model moves them).
  CHECK(printed.str() ==
        "serve: 3 requests, LLaMA-2-7B, 1 replica(s) of 1 x H100-SXM; last request done at 60.0 s\n"
        "                   mean        p50        p90        p99        max\n"
        "  TTFT (s)       0.0138     0.0117     0.0213     0.0235     0.0237\n"
        "  TPOT (s)       0.0051     0.0051     0.0051     0.0051     0.0051\n"
        "  E2E (s)        0.0308     0.0237     0.0429     0.0472     0.0477\n"
        "  SLO (TTFT <= 0.02 s, TPOT <= 0.02 s): 66.67 % met; goodput 0.033 req/s; 0.2 output tokens/s; 0 preemptions\n"
        "  results in " + dir.path("out") + "/results.json and requests.csv\n");
}

TEST_CASE("serve: two runs of one config write the same bytes", "[serve]") {
  test::TempDir dir;
  const std::string cfg = dir.write("s.yaml",
                                    "requests:\n  synthetic: {rate_rps: 20, duration_s: 120, cv: 2, prompt_tokens: {lognormal: {mean: 800, sd: 600}},"
                                    " output_tokens: {uniform: {min: 1, max: 300}}}\n"
                                    "seed: 3\ndeployment: {model: LLaMA-2-13B, device: H100}\nreplicas: 2\nslo: {ttft_s: 0.25, tpot_s: 0.1}\n");
  std::ostringstream printed;
  run_serve_cli({cfg, dir.path("a"), true}, printed);
  run_serve_cli({cfg, dir.path("b"), true}, printed);
  CHECK(printed.str().empty());
  CHECK(test::read_file(dir.path("a/requests.csv")) == test::read_file(dir.path("b/requests.csv")));
  CHECK(test::read_file(dir.path("a/results.json")) == test::read_file(dir.path("b/results.json")));
  CHECK(test::read_file(dir.path("a/requests.csv")).size() > 1000);
}

TEST_CASE("serve: bad configs name the file, line and key; nothing is written", "[serve]") {
  test::TempDir dir;
  dir.write("t.csv", kTinyTrace);
  const std::string s = dir.path("s.yaml");
  const std::string base = "requests: {trace: t.csv, format: azure_llm}\ndeployment: {model: LLaMA-2-7B, device: H100}\n";
  CHECK(serve_error(dir, base + "replicas: 1\nslo: {ttft_s: 1, tpot_s: 1}\nreplica: 2\n") ==
        s + ":5: unknown key 'replica' (did you mean 'replicas'?); valid keys here: name, seed, accelerators, requests, deployment, replicas, slo, disaggregation");
  CHECK(serve_error(dir, base + "slo: {ttft_s: 1, tpot_s: 1}\n") == s + ":1: missing required key 'replicas'");
  CHECK(serve_error(dir, base + "replicas: 2\nslo: {ttft_s: 1, tpot_s: 1}\ndisaggregation: {prefill_replicas: 2}\n") ==
        s + ":5: disaggregation.prefill_replicas: is 2, but must be below replicas (2): the other replicas decode");
  const std::string too_big = serve_error(dir,
                                          "requests: {trace: t.csv, format: azure_llm}\ndeployment: {model: LLaMA-2-70B, device: H100}\n"
                                          "replicas: 1\nslo: {ttft_s: 1, tpot_s: 1}\n");
  CHECK_THAT(too_big, Catch::StartsWith(s + ":2: deployment: "));
  CHECK_THAT(too_big, Catch::Contains("LLaMA-2-70B"));
  dir.write("bad.csv", std::string("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,12,0\n"));
  CHECK(serve_error(dir, "requests: {trace: bad.csv, format: azure_llm}\ndeployment: {model: LLaMA-2-7B, device: H100}\nreplicas: 1\nslo: {ttft_s: 1, tpot_s: 1}\n") ==
        dir.path("bad.csv") + ":2: GeneratedTokens: is 0; a request generates at least 1 token (its first token ends the prefill): drop the row or write 1");
  CHECK(!std::filesystem::exists(dir.path("out")));  // no folder, no half-written files
  std::ostringstream printed;
  CHECK(input_error([&] { run_serve_cli({dir.write("s.yaml", kTinyConfig), "", true}, printed); }) ==
        "--out: is empty; give an output folder or file (an unset shell variable, as in --out \"$OUT\", gives an empty path)");
}

TEST_CASE("serve: a failed run removes the previous run's results instead of leaving them", "[serve]") {
  test::TempDir dir;
  dir.write("t.csv", kTinyTrace);
  std::ostringstream printed;
  run_serve_cli({dir.write("s.yaml", kTinyConfig), dir.path("out"), true}, printed);
  REQUIRE(std::filesystem::exists(dir.path("out/results.json")));
  // Parses, then fails in the run: a request that can never fit the KV cache.
  dir.write("t.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,100000000,2\n");
  CHECK(!serve_error(dir, kTinyConfig).empty());
  CHECK(!std::filesystem::exists(dir.path("out/results.json")));
  CHECK(!std::filesystem::exists(dir.path("out/requests.csv")));
}

TEST_CASE("serve: the shipped Azure conversation example runs", "[serve][data]") {
  const std::string data = test::shared_data_dir();
  if (data.empty()) {
    WARN("skipped: ../shared/data (or $SCHEDSIM_DATA) is absent, so experiments/configs/serve/serve_azure_conv.yaml has no trace");
    return;
  }
  const ServeConfig c = load_serve_config(std::string(SCHEDSIM_SOURCE_DIR) + "/experiments/configs/serve/serve_azure_conv.yaml");
  CHECK(c.requests.size() == 19366);
  CHECK(c.replicas == 2);
  const ServeResult r = run_serve(c);
  CHECK(r.summary.requests == 19366);
  CHECK(r.summary.slo_attainment >= 0.99);  // what the config's comment claims
}
