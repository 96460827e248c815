#include "experiments/bench.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "sim/cluster_physics.hpp"
#include "sim/error.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "traces/synthetic.hpp"

namespace schedsim {
namespace {

// kernel: Poisson arrivals at 80% offered load, exponential durations (mean 1 h),
// GPU counts {1: 70%, 2, 4, 8: 10% each} on 8-GPU nodes; physics off.
// physics: the same jobs training ResNet-50, BERT-large or GPT-2 1.5B (a third each) on
// H100 nodes, 32 nodes per rack, 2:1 oversubscribed uplinks: contention tracking on.
BenchResult run_case(const std::string& name, const BenchOptions& options, const std::string& policy_name, const PolicyRegistry& registry) {
  const bool physics_on = name == "physics";
  SyntheticConfig workload;
  workload.num_jobs = options.jobs;
  workload.duration_s = Distribution::exponential(3600.0);
  workload.gpus = {{1, 0.7}, {2, 0.1}, {4, 0.1}, {8, 0.1}};
  workload.mean_interarrival_s = workload.mean_gpus() * 3600.0 / (0.8 * options.gpus);
  if (physics_on) workload.models = {{"ResNet-50", 1.0 / 3}, {"BERT-large", 1.0 / 3}, {"GPT-2-1.5B", 1.0 - 2.0 / 3}};
  const ClusterSpec cluster({NodeGroup{options.gpus / 8, physics_on ? "H100-SXM" : "V100", 8}});
  SyntheticJobSource source(workload, 1);
  // "fifo:packed" = fifo with placement packed.
  const auto colon = policy_name.find(':');
  const std::string yaml = colon == std::string::npos ? policy_name
                                                      : "{name: " + policy_name.substr(0, colon) + ", placement: " + policy_name.substr(colon + 1) + "}";
  PolicyInstance policy = registry.create(ConfigNode::load_string(yaml, "--policies"));
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
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const Summary summary = metrics.summarize();

  BenchResult r;
  r.name = name;
  r.policy = policy_name;
  r.jobs = options.jobs;
  r.gpus = cluster.num_devices();
  r.events = sim.stats().events;
  r.decision_points = sim.stats().decision_points;
  r.wall_s = wall;
  r.events_per_s = static_cast<double>(r.events) / wall;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  r.peak_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;
  r.mean_jct_s = summary.mean_jct_s.value_or(0.0);
  return r;
}

// Runs `f` in a child process and returns its result, so peak RSS is per case.
template <typename F>
BenchResult in_child(F f) {
  int fds[2];
  if (pipe(fds) != 0) throw Error("bench: pipe() failed");
  const pid_t pid = fork();
  if (pid < 0) throw Error("bench: fork() failed");
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    int code = 0;
    try {
      out = bench_json(f()).dump();
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
  const auto j = nlohmann::json::parse(text);
  BenchResult r;
  r.name = j["name"];
  r.policy = j["policy"];
  r.jobs = j["jobs"];
  r.gpus = j["gpus"];
  r.events = j["events"];
  r.decision_points = j["decision_points"];
  r.wall_s = j["wall_s"];
  r.events_per_s = j["events_per_s"];
  r.peak_rss_mib = j["peak_rss_mib"];
  r.mean_jct_s = j["mean_jct_s"];
  return r;
}

}  // namespace

std::vector<std::string> bench_names() { return {"kernel", "physics"}; }

std::vector<BenchResult> run_bench(const std::string& name, const BenchOptions& options, const PolicyRegistry& registry) {
  const auto names = bench_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) throw InputError("bench " + name, "unknown benchmark; known: kernel, physics");
  if (options.gpus < 8 || options.gpus % 8 != 0) throw InputError("--gpus", "must be a positive multiple of 8 (8-GPU nodes)");
  std::vector<BenchResult> results;
  std::vector<std::string> policies = options.policies;
  if (policies.empty()) policies = name == "physics" ? std::vector<std::string>{"fifo:packed", "fifo:first_fit"} : std::vector<std::string>{"fifo", "sjf"};
  for (const auto& policy : policies) {
    if (!registry.find(policy.substr(0, policy.find(':')))) throw InputError("--policies", "unknown policy '" + policy + "'");
    results.push_back(in_child([&] { return run_case(name, options, policy, registry); }));
  }
  return results;
}

nlohmann::ordered_json bench_json(const BenchResult& r) {
  nlohmann::ordered_json j;
  j["name"] = r.name;
  j["policy"] = r.policy;
  j["jobs"] = r.jobs;
  j["gpus"] = r.gpus;
  j["events"] = r.events;
  j["decision_points"] = r.decision_points;
  j["wall_s"] = r.wall_s;
  j["events_per_s"] = r.events_per_s;
  j["peak_rss_mib"] = r.peak_rss_mib;
  j["mean_jct_s"] = r.mean_jct_s;
  return j;
}

}  // namespace schedsim
