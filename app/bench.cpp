#include "app/bench.hpp"

#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "serving/request_stream.hpp"
#include "serving/serving_engine.hpp"
#include "world/physics/cluster_physics.hpp"
#include "base/error.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "traces/synthetic.hpp"
#include "traces/trace_source.hpp"

namespace schedsim {
namespace {

constexpr std::uint64_t kDefaultJobs = 1'000'000;
// policies: 100k jobs (the size); kernel and full: 1M.
constexpr std::uint64_t kPoliciesJobs = 100'000;
// gavel: 20k jobs (a round every 360 s solves an LP over the job classes).
constexpr std::uint64_t kGavelJobs = 20'000;
// las: 20k jobs (every decision of the repack discipline ranks all running jobs).
constexpr std::uint64_t kLasJobs = 20'000;
// bench llm: 20,000 LLM training jobs (a few planner calls per distinct device count).
constexpr std::uint64_t kLlmJobs = 20'000;

// The job types of Gavel's matrix measured on K80, P100 and V100 at 1, 2, 4 and 8 GPUs
// with a throughput above 0 (17 of its 26 types), equally likely.
const char* const kGavelModels[] = {"LM (batch size 5)",          "LM (batch size 10)",         "LM (batch size 20)",
                                    "LM (batch size 40)",         "LM (batch size 80)",         "ResNet-18 (batch size 16)",
                                    "ResNet-18 (batch size 32)",  "ResNet-18 (batch size 64)",  "ResNet-18 (batch size 128)",
                                    "ResNet-18 (batch size 256)", "ResNet-50 (batch size 16)",  "ResNet-50 (batch size 32)",
                                    "ResNet-50 (batch size 64)",  "Transformer (batch size 16)", "Transformer (batch size 32)",
                                    "Transformer (batch size 64)", "Transformer (batch size 128)"};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The kernel workload: Poisson arrivals at 80% offered load, exponential durations (mean
// 1 h), GPU counts {1: 70%, 2, 4, 8: 10% each} on 8-GPU nodes.
SyntheticConfig kernel_workload(std::uint64_t jobs, int gpus) {
  SyntheticConfig workload;
  workload.num_jobs = jobs;
  workload.duration_s = Distribution::exponential(3600.0);
  workload.gpus = {{1, 0.7}, {2, 0.1}, {4, 0.1}, {8, 0.1}};
  workload.mean_interarrival_s = workload.mean_gpus() * 3600.0 / (0.8 * gpus);
  return workload;
}

// "fifo:packed" = fifo with placement packed.
ConfigNode policy_spec(const std::string& policy_name) {
  const auto colon = policy_name.find(':');
  const std::string yaml = colon == std::string::npos ? policy_name
                                                      : "{name: " + policy_name.substr(0, colon) + ", placement: " + policy_name.substr(colon + 1) + "}";
  return ConfigNode::load_string(yaml, "--policies");
}

// Diurnal price (USD/MWh) and carbon (gCO2/kWh) signals of the scenario-based cases.
const char* const kDiurnalSignalsYaml =
    "signals:\n"
    "  price: {diurnal: {mean: 80, amplitude: 30, peak_hour_utc: 18}}\n"
    "  carbon: {diurnal: {mean: 300, amplitude: 100, peak_hour_utc: 19}}\n";

// kernel: the kernel workload, physics off.
// physics: the same jobs training ResNet-50, BERT-large or GPT-2 1.5B (a third each) on
// H100 nodes, 32 nodes per rack, 2:1 oversubscribed uplinks: contention tracking on.
BenchResult run_kernel_case(const std::string& name, std::uint64_t jobs, int gpus, const std::string& policy_name,
                            const PolicyRegistry& registry) {
  const bool physics_on = name == "physics";
  SyntheticConfig workload = kernel_workload(jobs, gpus);
  if (physics_on) workload.models = {{"ResNet-50", 1.0 / 3}, {"BERT-large", 1.0 / 3}, {"GPT-2-1.5B", 1.0 - 2.0 / 3}};
  const ClusterSpec cluster({NodeGroup{gpus / 8, physics_on ? "H100-SXM" : "V100", 8}});
  SyntheticJobSource source(workload, 1);
  PolicyInstance policy = registry.create(policy_spec(policy_name));
  SimulatorOptions sim_options;
  const AcceleratorCatalogue accelerators = AcceleratorCatalogue::builtin();
  const WorkloadProfileCatalogue profiles = WorkloadProfileCatalogue::builtin();
  TopologyConfig topology_config;
  topology_config.oversubscription = 2.0;
  const TopologySpec topology(cluster, topology_config, [&](const std::string& type) { return accelerators.get(type).intra_node_link_bytes_per_s; });
  ClusterPhysics physics(cluster, topology, accelerators, profiles, PhysicsConfig{});
  if (physics_on) sim_options.physics = &physics;
  Simulator sim(cluster, source, *policy.policy, sim_options);
  MetricsCollector metrics(cluster.num_devices());
  sim.add_observer(metrics);

  const auto start = std::chrono::steady_clock::now();
  sim.run();
  const double wall = seconds_since(start);
  const Summary summary = metrics.summarize();

  BenchResult r;
  r.name = name;
  r.policy = policy_name;
  r.jobs = jobs;
  r.gpus = cluster.num_devices();
  r.events = r.count = sim.stats().events;
  r.decision_points = sim.stats().decision_points;
  r.wall_s = wall;
  r.mean_jct_s = summary.mean_jct_s.value_or(0.0);
  return r;
}

// full and policies run through the scenario path (run_scenario without output files),
// so every subsystem a scenario switches on is in the loop.
BenchResult run_scenario_case(const std::string& name, std::uint64_t jobs, int gpus, const std::string& policy_name,
                              const PolicyRegistry& registry, const std::string& throughputs) {
  const ScenarioConfig scenario =
      ScenarioConfig::parse(ConfigNode::load_string(bench_scenario_yaml(name, jobs, gpus, throughputs), "bench " + name), registry);
  ConfigNode policy = policy_spec(policy_name);
  if (scenario.inference) {  // full: the services run in front of the benchmarked policy
    YAML::Node wrapped(YAML::NodeType::Map);
    wrapped["name"] = "inference";
    wrapped["autoscaler"] = "predictive";
    wrapped["base"] = policy.yaml();
    policy = ConfigNode(wrapped, "bench " + name, "policy");
  }
  const auto start = std::chrono::steady_clock::now();
  const RunResult run = run_scenario(scenario, registry, RunOptions{}, &policy.yaml());
  const double wall = seconds_since(start);
  BenchResult r;
  r.name = name;
  r.policy = policy_name;
  r.jobs = jobs;
  r.gpus = gpus;
  r.events = r.count = run.stats.events;
  r.decision_points = run.stats.decision_points;
  r.wall_s = wall;
  r.mean_jct_s = run.summary.mean_jct_s.value_or(0.0);
  for (const auto& m : run.inference) r.replica_hours += m.replica_s / 3600.0;
  return r;
}

// trace: the longest path a trace takes into a run. A schedsim-format file with every
// attribute column, its rows pairwise out of order, so TraceJobSource validates it,
// sorts it in runs of 100,000 jobs spilled to temporary files and merges them while the
// jobs are pulled. The file is written to a temporary folder first (not timed).
BenchResult run_trace_case(std::uint64_t jobs) {
  namespace fs = std::filesystem;
  // mkdtemp replaces the template's trailing six 'X' characters.
  std::string dir_template = (fs::temp_directory_path() / ("schedsim-bench-trace-" + std::string(6, 'X'))).string();
  if (mkdtemp(dir_template.data()) == nullptr) throw Error("bench trace: cannot create a temporary folder in " + fs::temp_directory_path().string());
  const fs::path dir(dir_template);
  const std::string path = (dir / "trace.csv").string();
  BenchResult r;
  try {
    {
      SyntheticConfig workload = kernel_workload(jobs, 10'000);
      workload.models = {{"ResNet-50", 0.4}, {"BERT-large", 0.3}, {"GPT-2-1.5B", 0.3}};
      workload.estimate_error_sigma = 0.5;
      SyntheticJobSource source(workload, 1);
      std::ofstream out(path);
      SchedsimColumns columns;
      write_schedsim_trace_header(out, columns);
      JobSpec a, b;
      std::uint64_t i = 0;
      auto fill = [&i](JobSpec& j) {
        j.user = "user" + std::to_string(i % 97);
        j.group = "vc" + std::to_string(i % 7);
        j.priority = static_cast<double>(i % 3);
        ++i;
      };
      while (source.next(a)) {
        fill(a);
        if (!source.next(b)) {
          write_schedsim_trace_row(out, a, columns);
          break;
        }
        fill(b);
        write_schedsim_trace_row(out, b, columns);  // b before a: out of order
        write_schedsim_trace_row(out, a, columns);
      }
      if (!out) throw Error("bench trace: cannot write " + path);
    }
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::string> warnings;
    TraceJobSource source(path, "schedsim", TraceOptions{}, warnings);
    JobSpec job;
    std::uint64_t rows = 0;
    while (source.next(job)) ++rows;
    r.wall_s = seconds_since(start);
    r.name = "trace";
    r.policy = "schedsim (unsorted, " + std::to_string(source.sort_runs()) + " sorted runs)";
    r.unit = "rows";
    r.count = r.jobs = rows;
  } catch (...) {
    std::error_code ec;  // the cleanup must not replace the error being reported
    fs::remove_all(dir, ec);
    throw;
  }
  fs::remove_all(dir);
  return r;
}

BenchResult from_json(const nlohmann::ordered_json& j) {
  BenchResult r;
  r.name = j["name"];
  r.policy = j["policy"];
  r.unit = j["unit"];
  r.count = j["count"];
  r.jobs = j["jobs"];
  r.gpus = j["gpus"];
  r.events = j["events"];
  r.decision_points = j["decision_points"];
  r.wall_s = j["wall_s"];
  r.per_s = j["per_s"];
  r.peak_rss_mib = j["peak_rss_mib"];
  r.mean_jct_s = j["mean_jct_s"];
  r.replica_hours = j.value("replica_hours", 0.0);
  return r;
}

// gavel-trace: Gavel's own 6,143-job continuous trace with its throughput matrix
// (experiments/configs/gavel_continuous_6143.yaml: 36 V100 + 36 P100 + 36 K80, one node per
// type), from the shared data folder ($SCHEDSIM_DATA or --data-dir, default
// ../shared/data). With `gavel` it is that scenario's run; `gavel-las` (Gavel's LP
// normalization, jobs started at round boundaries, the LP at most every 1,920 s) runs on
// the same scenario. Kept apart from the synthetic cases: the jobs are the trace's.
constexpr const char* kGavelTraceYaml =
    "name: bench-gavel-trace\nseed: 0\ninformation: oracle\n"
    "cluster:\n  nodes:\n    - {count: 1, type: V100, devices_per_node: 36}\n    - {count: 1, type: P100, devices_per_node: 36}\n"
    "    - {count: 1, type: K80, devices_per_node: 36}\n"
    "workload:\n  trace:\n    path: $SCHEDSIM_DATA/peers/gavel/continuous_lam1800_seed0_nozero_6143.trace\n    format: gavel\n"
    "    throughputs: $SCHEDSIM_DATA/gavel/simulation_throughputs.json\n    reference_device: v100\n"
    "physics:\n  reference_device: V100\n  throughputs: $SCHEDSIM_DATA/gavel/simulation_throughputs.json\n";

// Parsed before the case forks, so that a missing trace or matrix is the CLI's InputError
// (naming the path and the data folder), not a failed child.
ScenarioConfig gavel_trace_scenario(const PolicyRegistry& registry) {
  return ScenarioConfig::parse(ConfigNode::load_string(kGavelTraceYaml, "bench gavel-trace"), registry);
}

BenchResult run_gavel_trace_case(const ScenarioConfig& scenario, const std::string& policy_name, const PolicyRegistry& registry) {
  const ConfigNode policy = policy_spec(policy_name);
  const auto start = std::chrono::steady_clock::now();
  const RunResult run = run_scenario(scenario, registry, RunOptions{}, &policy.yaml());
  const double wall = seconds_since(start);
  BenchResult r;
  r.name = "gavel-trace";
  r.policy = policy_name;
  r.jobs = run.summary.jobs_arrived;
  for (const NodeGroup& g : scenario.cluster) r.gpus += g.count * g.devices_per_node;
  r.events = r.count = run.stats.events;
  r.decision_points = run.stats.decision_points;
  r.wall_s = wall;
  r.mean_jct_s = run.summary.mean_jct_s.value_or(0.0);
  return r;
}

// serving: the request-level serving engine (issue 26, docs/serving.md) on an hour of the
// Azure LLM inference trace 2023 (conversation: 19,366 requests) served by 32 replicas of
// LLaMA-2-13B on one H100 each (the target of issue 28: under 1 s). Without the shared
// data folder a synthetic stream of the same size and token means stands in, and the
// case's label says so. `count` is the engine's batch iterations over all replicas; the
// wall time covers the engine only (reading the trace is not part of it).
constexpr int kServingReplicas = 32;

BenchResult run_serving_case() {
  const std::string trace = DataFolder::from_environment().path + "/azure_llm/AzureLLMInferenceTrace_conv.csv";
  std::vector<serving::Request> requests;
  BenchResult r;
  r.name = "serving";
  if (std::filesystem::is_regular_file(trace)) {
    requests = serving::read_azure_llm_trace(trace);
    r.policy = "azure-conv";
  } else {
    // The conversation trace's size and token moments: 19,366 requests in 3,502 s, prompt
    // mean 1,155 (sd 1,109), output mean 211 (sd 163).
    serving::SyntheticStreamSpec spec;
    spec.rate_rps = 19366.0 / 3501.72;
    spec.duration_s = 3501.72;
    spec.prompt = serving::TokenDistribution::lognormal(1155, 1109);
    spec.output = serving::TokenDistribution::lognormal(211, 163);
    requests = serving::synthetic_requests(spec);
    r.policy = "synthetic(no-data)";
  }
  serving::DeploymentSpec d;
  d.model = find_model("LLaMA-2-13B");
  d.device = AcceleratorCatalogue::builtin().get("H100-SXM");
  const auto start = std::chrono::steady_clock::now();
  serving::ServingEngine engine(d, kServingReplicas);
  for (const auto& q : requests) engine.submit(q);
  std::vector<serving::RequestRecord> done;
  engine.advance_to(std::numeric_limits<double>::infinity(), done);
  r.wall_s = seconds_since(start);
  r.unit = "iterations";
  r.jobs = requests.size();
  r.gpus = kServingReplicas * d.tensor_parallel;
  r.events = r.count = static_cast<std::uint64_t>(engine.stats().iterations);
  double e2e_s = 0;
  for (const auto& x : done) e2e_s += x.e2e_s();
  r.mean_jct_s = done.empty() ? 0.0 : e2e_s / static_cast<double>(done.size());  // mean end-to-end latency
  return r;
}

}  // namespace

std::vector<std::string> bench_names() { return {"kernel", "full", "policies", "trace", "physics", "gavel", "gavel-trace", "las", "serving", "llm"}; }
std::vector<std::string> bench_suite() { return {"kernel", "full", "policies", "trace", "env", "ppo", "startup"}; }

// las: the path of Tiresias' LAS orders (policies/las.cpp, the queue policy's repack
// discipline): the kernel workload's arrivals, sizes and exponential durations on V100
// nodes (offered load 0.8). Under the presets' thresholds (3,250 and 7,200 s) most jobs
// cross a queue while running (exact demotion timers) and many are preempted.
std::string las_bench_yaml(std::uint64_t jobs, int gpus) {
  const SyntheticConfig w = kernel_workload(jobs, gpus);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "name: bench-las\nseed: 1\ninformation: oracle\n"
                "cluster:\n  nodes:\n    - {count: %d, type: V100, devices_per_node: 8}\n"
                "workload:\n  synthetic:\n    num_jobs: %llu\n    arrival: {process: poisson, mean_interarrival_s: %.17g}\n"
                "    duration_s: {dist: exponential, mean: 3600}\n    gpus: {1: 0.7, 2: 0.1, 4: 0.1, 8: 0.1}\n",
                gpus / 8, static_cast<unsigned long long>(jobs), w.mean_interarrival_s);
  return buf;
}

// LLM training jobs under parallelism plans (docs/parallelism.md, "In a run"): the
// LLaMA mix of experiments/configs/llm_training.yaml on H100 nodes with a 2:1
// oversubscribed rack topology, 80% offered load; 70B jobs' plans come from the planner
// for every device count a policy offers, DP traffic shares the links max-min.
std::string llm_bench_yaml(std::uint64_t jobs, int gpus) {
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "name: bench-llm\nseed: 1\ninformation: oracle\n"
                "cluster:\n  nodes:\n    - {count: %d, type: H100-SXM, devices_per_node: 8}\n"
                "  topology: {nodes_per_rack: 8, nic_bandwidth_gbps: 400, oversubscription: 2.0}\n"
                "workload:\n  synthetic:\n    num_jobs: %llu\n    arrival: {process: poisson}\n    load: 0.8\n"
                "    duration_s: {dist: lognormal, median: 21600, sigma: 1.0}\n    gpus: {16: 0.35, 32: 0.3, 64: 0.25, 128: 0.1}\n"
                "    models:\n      LLaMA-2-7B: 0.25\n      LLaMA-3-8B: 0.25\n      LLaMA-2-13B: 0.2\n"
                "      LLaMA-2-70B: {share: 0.15, plan: auto}\n      LLaMA-3-70B: {share: 0.15, plan: auto}\n"
                "physics:\n  reference_device: H100-SXM\n  checkpoint: {storage_bandwidth_gbps: 100}\n",
                gpus / 8, static_cast<unsigned long long>(jobs));
  return buf;
}

std::string bench_scenario_yaml(const std::string& name, std::uint64_t jobs, int gpus, const std::string& throughputs) {
  if (name == "las") return las_bench_yaml(jobs, gpus);
  if (name == "llm") return llm_bench_yaml(jobs, gpus);
  const SyntheticConfig w = kernel_workload(jobs, gpus);
  // Clairvoyant, as the benchmarks were measured: its jobs carry no estimates, and every
  // registered policy must run (docs/config.md#information).
  std::string yaml = "name: bench-" + name + "\nseed: 1\ninformation: oracle\n";
  char buf[512];
  if (name == "full") {
    // The kernel workload on H100 nodes training three models (contention tracking on,
    // 32 nodes per rack, 2:1 uplinks), with node failures (MTBF 5,000 h per GPU, 4 h
    // repair), loss spikes, periodic checkpoints every 30 min of compute (60 s each) and
    // energy metering with diurnal price and carbon signals.
    std::snprintf(buf, sizeof buf,
                  "cluster:\n  nodes:\n    - {count: %d, type: H100-SXM, devices_per_node: 8}\n"
                  "  topology: {nodes_per_rack: 32, oversubscription: 2.0}\n"
                  "workload:\n  synthetic:\n    num_jobs: %llu\n    arrival: {process: poisson, mean_interarrival_s: %.17g}\n"
                  "    duration_s: {dist: exponential, mean: 3600}\n    gpus: {1: 0.7, 2: 0.1, 4: 0.1, 8: 0.1}\n"
                  "    models: {ResNet-50: 0.3333333333333333, BERT-large: 0.3333333333333333, GPT-2-1.5B: 0.3333333333333334}\n",
                  gpus / 8, static_cast<unsigned long long>(jobs), w.mean_interarrival_s);
    yaml += buf;
    yaml +=
        "physics: {}\n"
        "failures:\n"
        "  devices: {mtbf_h: 5000, unit: node, repair_h: 4, on_failure: requeue, restart_s: 60}\n"
        "  loss_spikes: {rate_per_gpu_hour: 1.0e-4, restart_s: 60}\n"
        "  checkpoint: {interval_s: 1800, cost_s: 60}\n"
        "energy: {pue: 1.2}\n";
    yaml += kDiurnalSignalsYaml;
    // An inference service beside the training jobs (run_scenario_case puts the
    // `inference` policy in front of the benchmarked one): a diurnal request rate with a
    // burst, one H100 per replica, a pool of about 1% of the GPUs.
    std::snprintf(buf, sizeof buf,
                  "inference:\n  services:\n"
                  "    - {name: chat, rate: {diurnal: {mean_rps: %d, amplitude_rps: %d, peak_hour_local: 14}},\n"
                  "       bursts: [{start_s: 43200, duration_s: 1800, factor: 1.8}], capacity_rps: {H100-SXM: 20}, slo_p99_s: 1,\n"
                  "       min_replicas: 1, max_replicas: %d}\n",
                  std::max(1, gpus / 50) * 20 / 2, std::max(1, gpus / 50) * 20 / 4, std::max(2, gpus / 50));
    yaml += buf;
  } else if (name == "policies") {
    // The kernel workload with diurnal signals, so the price- and carbon-aware policies
    // run too (they defer jobs; the others ignore the signals).
    std::snprintf(buf, sizeof buf,
                  "cluster:\n  nodes:\n    - {count: %d, type: V100, devices_per_node: 8}\n"
                  "workload:\n  synthetic:\n    num_jobs: %llu\n    arrival: {process: poisson, mean_interarrival_s: %.17g}\n"
                  "    duration_s: {dist: exponential, mean: 3600}\n    gpus: {1: 0.7, 2: 0.1, 4: 0.1, 8: 0.1}\n",
                  gpus / 8, static_cast<unsigned long long>(jobs), w.mean_interarrival_s);
    yaml += buf;
    yaml += kDiurnalSignalsYaml;
  } else if (name == "gavel") {
    // The kernel workload's arrivals, durations (on V100) and sizes, jobs of 17 Gavel job
    // types, on a third each of V100, P100 and K80 nodes (8 GPUs each; K80 takes the
    // remainder) with Gavel's measured throughputs: Gavel's LP runs every 360 s round.
    const int nodes = gpus / 8;
    std::snprintf(buf, sizeof buf,
                  "cluster:\n  nodes:\n    - {count: %d, type: V100, devices_per_node: 8}\n    - {count: %d, type: P100, devices_per_node: 8}\n"
                  "    - {count: %d, type: K80, devices_per_node: 8}\n"
                  "workload:\n  synthetic:\n    num_jobs: %llu\n    arrival: {process: poisson, mean_interarrival_s: %.17g}\n"
                  "    duration_s: {dist: exponential, mean: 3600}\n    gpus: {1: 0.7, 2: 0.1, 4: 0.1, 8: 0.1}\n",
                  nodes / 3, nodes / 3, nodes - 2 * (nodes / 3), static_cast<unsigned long long>(jobs), w.mean_interarrival_s);
    yaml += buf;
    constexpr std::size_t kTypes = sizeof kGavelModels / sizeof kGavelModels[0];
    yaml += "    models:\n";
    for (std::size_t i = 0; i < kTypes; ++i) {
      // The last share takes the rounding remainder, so that the shares sum to 1 exactly.
      std::snprintf(buf, sizeof buf, "      \"%s\": %.17g\n", kGavelModels[i], i + 1 < kTypes ? 1.0 / kTypes : 1.0 - (kTypes - 1) * (1.0 / kTypes));
      yaml += buf;
    }
    // A JSON string: any path (quotes, backslashes) stays one YAML scalar.
    yaml += "physics: {reference_device: V100, throughputs: " + nlohmann::json(throughputs).dump() + "}\n";
  } else {
    throw InputError("bench " + name, "not a scenario-based benchmark (full, policies, gavel)");
  }
  return yaml;
}

std::vector<BenchResult> run_bench(const std::string& name, const BenchOptions& options, const PolicyRegistry& registry) {
  const auto names = bench_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw InputError("bench " + name, "unknown benchmark; known: kernel, full, policies, trace, env, ppo, startup, physics, gavel, gavel-trace, las, serving, llm");
  if (options.gpus < 8 || options.gpus % 8 != 0) throw InputError("--gpus", "must be a positive multiple of 8 (8-GPU nodes)");
  if (name == "gavel" && options.gpus < 24)
    throw InputError("--gpus", "gavel needs at least 24 (one 8-GPU node each of V100, P100 and K80), got " + std::to_string(options.gpus));
  if (name == "gavel" && !std::filesystem::is_regular_file(options.throughputs))
    throw InputError("--throughputs", "cannot open Gavel's throughput matrix '" + options.throughputs +
                                          "' (bench gavel reads ../shared/data/gavel/simulation_throughputs.json from the working directory unless --throughputs gives its path)");
  const std::uint64_t jobs =
      options.jobs.value_or(name == "policies" ? kPoliciesJobs : name == "gavel" ? kGavelJobs : name == "las" ? kLasJobs : name == "llm" ? kLlmJobs : kDefaultJobs);
  if (jobs < 1) throw InputError("--jobs", "must be at least 1");
  std::vector<BenchResult> results;
  if (name == "trace") {
    results.push_back(from_json(run_in_child([&] { return bench_json(run_trace_case(jobs)); })));
    return results;
  }
  if (name == "serving") {
    results.push_back(from_json(run_in_child([&] { return bench_json(run_serving_case()); })));
    return results;
  }
  std::vector<std::string> policies = options.policies;
  if (policies.empty()) {
    if (name == "physics") policies = {"fifo:packed", "fifo:first_fit"};
    else if (name == "gavel") policies = {"gavel"};
    else if (name == "gavel-trace") policies = {"gavel", "gavel-las"};
    else if (name == "las") policies = {"tiresias-dlas", "tiresias-dlas-gpu", "las"};
    else if (name == "policies") {
      for (const auto& info : registry.all())
        if (info.argument_option.empty()) policies.push_back(info.name);
    } else policies = {"fifo", "sjf"};
  }
  for (const auto& policy : policies) {
    if (!registry.find(policy.substr(0, policy.find(':')))) throw InputError("--policies", "unknown policy '" + policy + "'" + registry.suggest_policy(policy) + " (see `schedsim policies`)");
  }
  const std::optional<ScenarioConfig> gavel_trace = name == "gavel-trace" ? std::optional<ScenarioConfig>(gavel_trace_scenario(registry)) : std::nullopt;
  for (const auto& policy : policies) {
    results.push_back(from_json(run_in_child([&] {
      if (gavel_trace) return bench_json(run_gavel_trace_case(*gavel_trace, policy, registry));
      const bool scenario_based = name == "full" || name == "policies" || name == "gavel" || name == "las" || name == "llm";
      return bench_json(scenario_based ? run_scenario_case(name, jobs, options.gpus, policy, registry, options.throughputs)
                                       : run_kernel_case(name, jobs, options.gpus, policy, registry));
    })));
  }
  return results;
}

nlohmann::ordered_json bench_json(const BenchResult& r) {
  nlohmann::ordered_json j;
  j["name"] = r.name;
  j["policy"] = r.policy;
  j["unit"] = r.unit;
  j["count"] = r.count;
  j["jobs"] = r.jobs;
  j["gpus"] = r.gpus;
  j["events"] = r.events;
  j["decision_points"] = r.decision_points;
  j["wall_s"] = r.wall_s;
  j["per_s"] = r.wall_s > 0 ? static_cast<double>(r.count) / r.wall_s : 0.0;
  j["peak_rss_mib"] = r.peak_rss_mib;
  j["mean_jct_s"] = r.mean_jct_s;
  j["replica_hours"] = r.replica_hours;
  return j;
}

std::string bench_line(const BenchResult& r) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-8s %-16s jobs=%llu gpus=%d  %s=%llu  wall=%.3f s  %.3f M %s/s  peak RSS %.0f MiB", r.name.c_str(),
                r.policy.c_str(), static_cast<unsigned long long>(r.jobs), r.gpus, r.unit.c_str(), static_cast<unsigned long long>(r.count),
                r.wall_s, r.per_s / 1e6, r.unit.c_str(), r.peak_rss_mib);
  return buf;
}

nlohmann::ordered_json run_in_child(const std::function<nlohmann::ordered_json()>& f) {
  int fds[2];
  if (pipe(fds) != 0) throw Error("bench: pipe() failed");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) throw Error("bench: fork() failed");
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    int code = 0;
    try {
      nlohmann::ordered_json j = f();
      rusage usage{};
      getrusage(RUSAGE_SELF, &usage);
      j["peak_rss_mib"] = static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB
      out = j.dump();
    } catch (const std::exception& e) {
      out = std::string("error: ") + e.what();
      code = 1;
    }
    const char* p = out.data();
    std::size_t left = out.size();
    while (left > 0) {
      const ssize_t n = write(fds[1], p, left);
      if (n <= 0) break;
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    close(fds[1]);
    _exit(code);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw Error("bench case failed: " + text);
  return nlohmann::ordered_json::parse(text);
}

}  // namespace schedsim
