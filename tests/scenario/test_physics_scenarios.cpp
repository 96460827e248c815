// Physics through the scenario layer: keys, errors, determinism, resolved config.
#include <catch2/catch.hpp>

#include <set>

#include <nlohmann/json.hpp>

#include "app/compare.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "base/error.hpp"
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

namespace {

// Two device types of 8 devices each (H100-SXM: devices 0..7, MyGPU: 8..15); job sizes
// that fragment the first type, so a type-agnostic placement would span both.
std::string forbid_scenario(const std::string& placement, const std::string& gpus) {
  return R"(
seed: 5
cluster:
  nodes:
    - {count: 2, type: H100-SXM, devices_per_node: 4}
    - {count: 2, type: MyGPU, devices_per_node: 4}
accelerators:
  MyGPU: {peak_dense_bf16_tflops: 100, peak_fp32_tflops: 10, memory_gb: 48, memory_bandwidth_gbps: 900,
          tdp_w: 300, idle_w: 40, intra_node_link_gbps: 50}
workload:
  synthetic:
    num_jobs: 120
    arrival: {process: poisson, mean_interarrival_s: 200}
    duration_s: {dist: lognormal, median: 1800, sigma: 1}
    gpus: )" + gpus + R"(
    models: {ResNet-50: 1}
physics: {mixed_types: forbid}
policy: {name: fifo, placement: )" + placement + "}\n";
}

}  // namespace

TEST_CASE("physics.mixed_types: forbid keeps every placement on one device type", "[experiments][physics][placement]") {
  // Before, the type-agnostic placements (first_fit, random, spread, packed, ...) handed
  // out sets spanning both types and the kernel rejected them, aborting the run.
  TempDir dir;
  const PolicyRegistry reg = builtin_policies();
  for (const std::string placement : {"first_fit", "random", "packed", "spread", "best_fit", "fastest_type", "fgd", "yarn", "topology_tree"}) {
    INFO("placement " << placement);
    const ScenarioConfig s = load_scenario(dir.write(placement + ".yaml", forbid_scenario(placement, "{1: 0.3, 3: 0.4, 6: 0.3}")), {}, std::nullopt, reg);
    RunOptions options{dir.path(placement)};
    options.timeline = true;
    const RunResult r = run_scenario(s, reg, options);
    CHECK(r.summary.jobs_completed == 120);
    std::istringstream rows(read_file(dir.path(placement + "/allocations.csv")));
    std::string line;
    std::getline(rows, line);
    CHECK(line == "job_id,start_s,end_s,devices");
    int segments = 0, mixed = 0, on_second_type = 0;
    while (std::getline(rows, line)) {
      std::istringstream devices(line.substr(line.rfind(',') + 1));
      std::set<bool> types;
      for (int d; devices >> d;) types.insert(d >= 8);
      ++segments;
      if (types.size() != 1) ++mixed;
      if (types.count(true)) ++on_second_type;
    }
    CHECK(segments >= 120);
    CHECK(mixed == 0);
    CHECK(on_second_type > 0);  // both types are used, each job on one
  }
}

TEST_CASE("physics.mixed_types: forbid and a job larger than every device type", "[experiments][physics][placement][bad-input]") {
  // 12 GPUs fit the cluster (16) but neither type (8 each): such a job can never start.
  TempDir dir;
  const PolicyRegistry reg = builtin_policies();
  CHECK_THROWS_WITH(load_scenario(dir.write("big.yaml", forbid_scenario("first_fit", "{2: 0.5, 12: 0.5}")), {}, std::nullopt, reg),
                    dir.path("big.yaml") + ":15: workload.synthetic.gpus: jobs may ask for 12 GPUs but the largest device type (H100-SXM) has 8 and "
                    "physics.mixed_types: forbid keeps a job on one type");
  // A trace job of that size waits; the run ends with the kernel's error naming it.
  std::string yaml = forbid_scenario("first_fit", "{2: 1}");
  yaml = yaml.substr(0, yaml.find("workload:")) + "workload: {trace: {path: t.csv, format: schedsim}}\n" + yaml.substr(yaml.find("physics:"));
  dir.write("t.csv", "job_id,submit_time_s,num_gpus,duration_s\na,0,2,10\nbig,1,12,10\nc,2,8,10\n");
  const ScenarioConfig s = load_scenario(dir.write("trace.yaml", yaml), {}, std::nullopt, reg);
  CHECK_THROWS_WITH(run_scenario(s, reg, RunOptions{dir.path("trace")}),
                    "policy 'fifo' left 2 jobs waiting with nothing left to happen (first: job 'big' asking for 12 GPUs, 16 free); the policy never started them");
}

TEST_CASE("physics.mixed_types: slowest lets the queue policies start a job larger than every device type", "[experiments][physics][placement]") {
  // Before, estimated_rate() was 0 on every type for a 12-GPU job (no type has 12), the
  // queue placements found no type to try, and the run ended with "left 2 jobs waiting"
  // (gavel started it). Types: H100-SXM devices 0..7, MyGPU 8..15, TinyGPU 16..23 (1 GB:
  // ResNet-50 does not fit its memory, so the spanning set must avoid it).
  TempDir dir;
  const PolicyRegistry reg = builtin_policies();
  dir.write("t.csv", "job_id,submit_time_s,num_gpus,duration_s,estimate_s,model\na,0,2,100,100,ResNet-50\nbig,1,12,100,100,ResNet-50\nc,2,8,100,100,ResNet-50\n");
  for (const std::string policy : {"fifo", "sjf", "srtf", "las", "slurm-easy", "{name: fifo, placement: fastest_type}", "{name: fifo, placement: packed}",
                                   "{name: fifo, placement: random}", "{name: fifo, placement: spread}"}) {
    INFO("policy " << policy);
    const std::string yaml = R"(
seed: 5
cluster:
  nodes:
    - {count: 2, type: H100-SXM, devices_per_node: 4}
    - {count: 2, type: MyGPU, devices_per_node: 4}
    - {count: 2, type: TinyGPU, devices_per_node: 4}
accelerators:
  MyGPU: {peak_dense_bf16_tflops: 100, peak_fp32_tflops: 10, memory_gb: 48, memory_bandwidth_gbps: 900,
          tdp_w: 300, idle_w: 40, intra_node_link_gbps: 50}
  TinyGPU: {peak_dense_bf16_tflops: 100, peak_fp32_tflops: 10, memory_gb: 1, memory_bandwidth_gbps: 900,
          tdp_w: 300, idle_w: 40, intra_node_link_gbps: 50}
workload: {trace: {path: t.csv, format: schedsim}}
information: oracle
physics: {mixed_types: slowest}
policy: )" + policy + "\n";
    const ScenarioConfig s = load_scenario(dir.write("span.yaml", yaml), {}, std::nullopt, reg);
    RunOptions options{dir.path("out")};
    options.timeline = true;
    const RunResult r = run_scenario(s, reg, options);
    CHECK(r.summary.jobs_completed == 3);
    bool seen = false;
    for (const auto& [job, devices] : schedsim::test::read_allocations(dir.path("out/allocations.csv"))) {
      if (job != "big") continue;
      seen = true;
      std::set<int> types;
      for (int d : devices) types.insert(d / 8);
      CHECK(devices.size() == 12);
      CHECK(types == std::set<int>{0, 1});  // H100 and MyGPU, never TinyGPU
    }
    CHECK(seen);
  }
}
