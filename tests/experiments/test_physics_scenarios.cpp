// Physics through the scenario layer: keys, errors, determinism, resolved config.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "experiments/compare.hpp"
#include "experiments/runner.hpp"
#include "experiments/scenario.hpp"
#include "sim/error.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::read_file;
using schedsim::test::TempDir;

namespace {

const std::string kPhysicsScenario = R"(
seed: 3
cluster:
  nodes:
    - {count: 4, type: H100-SXM, devices_per_node: 8}
    - {count: 2, type: MyGPU, devices_per_node: 4}
  topology: {nodes_per_rack: 2, oversubscription: 2.0}
accelerators:
  MyGPU: {peak_dense_bf16_tflops: 100, peak_fp32_tflops: 10, memory_gb: 48, memory_bandwidth_gbps: 900,
          tdp_w: 300, idle_w: 40, intra_node_link_gbps: 50}
workload:
  synthetic:
    num_jobs: 300
    arrival: {process: poisson, mean_interarrival_s: 300}
    duration_s: {dist: lognormal, median: 1800, sigma: 1}
    gpus: {2: 0.4, 8: 0.4, 16: 0.2}
    models: {GPT-2-1.5B: 0.5, ResNet-50: 0.5}
physics: {interference_factor: 0.9}
policy: {name: fifo, placement: packed}
)";

}  // namespace

TEST_CASE("physics scenarios are deterministic and their resolved config reproduces them", "[experiments][physics]") {
  TempDir dir;
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig s = load_scenario(dir.write("p.yaml", kPhysicsScenario), {}, std::nullopt, reg);
  REQUIRE(s.physics);
  const RunResult a = run_scenario(s, reg, RunOptions{dir.path("a")});
  run_scenario(s, reg, RunOptions{dir.path("b")});
  CHECK(read_file(dir.path("a/results.json")) == read_file(dir.path("b/results.json")));
  CHECK(read_file(dir.path("a/jobs.csv")) == read_file(dir.path("b/jobs.csv")));
  CHECK(a.summary.jobs_completed == 300);
  CHECK(a.stats.rate_updates > 0);
  const auto j = nlohmann::json::parse(read_file(dir.path("a/results.json")));
  CHECK(j["config"]["physics"]["interference_factor"] == 0.9);
  CHECK(j["config"]["cluster"]["topology"]["oversubscription"] == 2.0);
  CHECK(j["config"]["accelerators"]["MyGPU"]["memory_gb"] == 48);
  const ScenarioConfig again = load_scenario(dir.write("resolved.yaml", j["config"].dump()), {}, std::nullopt, reg);
  run_scenario(again, reg, RunOptions{dir.path("c")});
  CHECK(read_file(dir.path("a/results.json")) == read_file(dir.path("c/results.json")));
}

TEST_CASE("physics changes results only through the hardware", "[experiments][physics]") {
  // The same jobs with and without physics: with it, jobs run at their hardware rates,
  // so run times differ from the trace durations; without it they equal them.
  TempDir dir;
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig with = load_scenario(dir.write("p.yaml", kPhysicsScenario), {}, std::nullopt, reg);
  const RunResult r = run_scenario(with, reg, RunOptions{dir.path("with")});
  const std::string csv = read_file(dir.path("with/jobs.csv"));
  std::istringstream rows(csv);
  std::string line;
  std::getline(rows, line);
  int differing = 0;
  while (std::getline(rows, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    const double run = std::stod(f[3]) - std::stod(f[2]);
    if (std::fabs(run - std::stod(f[8]) / std::stod(f[4])) > 1e-3) ++differing;  // gpu_s / gpus = held time
  }
  CHECK(differing == 0);  // held time equals run time (no preemption here)
  CHECK(r.summary.preemptions == 0);
}

TEST_CASE("physics configuration errors name the key", "[experiments][physics][bad-input]") {
  TempDir dir;
  const PolicyRegistry reg = builtin_policies();
  auto error = [&](const std::string& yaml) {
    try {
      load_scenario(dir.write("e.yaml", yaml), {}, std::nullopt, reg);
    } catch (const InputError& e) {
      std::string m = e.what();
      return m.substr(m.find("e.yaml"));
    }
    return std::string("no error");
  };
  const std::string cluster = "cluster: {nodes: [{count: 2, type: H100-SXM, devices_per_node: 8}]}\n";
  CHECK(error(cluster + "workload: {synthetic: {models: {GPT-5: 1.0}}}\nphysics: {}\n") ==
        "e.yaml:2: workload.synthetic.models.GPT-5: unknown workload profile 'GPT-5'; known profiles: ResNet-50, BERT-large, GPT-2-1.5B, LLaMA-2-7B, LLaMA-2-70B, DLRM, StableDiffusion-UNet");
  CHECK(error(cluster + "workload: {synthetic: {models: {ResNet-50: 1.0}}}\n") ==
        "e.yaml:2: workload.synthetic.models: models only matter with the physics model on; add a `physics:` map to the scenario");
  CHECK(error(cluster + "workload: {synthetic: {}}\nphysics: {overlap: 2}\n") == "e.yaml:3: physics.overlap: must be between 0 and 1, got 2.000000");
  CHECK(error(cluster + "workload: {synthetic: {}}\nphysics: {overlp: 0.5}\n") ==
        "e.yaml:3: physics: unknown key 'overlp' (did you mean 'overlap'?); valid keys here: reference_device, overlap, interference_factor, mixed_types, checkpoint, elastic_serial_fraction, throughputs");
  CHECK_THAT(error("cluster: {nodes: [{count: 2, type: H1000, devices_per_node: 8}]}\nworkload: {synthetic: {}}\nphysics: {}\n"),
             Catch::StartsWith("e.yaml:1: cluster.nodes[0].type:") && Catch::Contains("H1000"));
}
