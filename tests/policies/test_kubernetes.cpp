// The Kubernetes default scheduler preset (policies/kubernetes.cpp): pods bound one by one,
// spreading, backoff, the deadlock two large jobs fall into and the pending timeout that
// breaks it, against hand-computed schedules; the gang presets on the same jobs.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "policies/registry.hpp"
#include "base/error.hpp"
#include "sim/invariant_checker.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::VectorSource;

namespace {

struct Ran {
  std::map<std::string, double> start_s, end_s;
  std::map<std::string, std::vector<DeviceId>> devices;
  std::map<std::string, double> bound_idle_s;
  Summary summary;
  std::string error;  // the PolicyError, if the run stopped with one
};

class Ends : public Observer {
 public:
  explicit Ends(Ran& r) : r_(r) {}
  void on_job_end(const JobState& j) override {
    r_.start_s[j.spec.id] = j.start.seconds();
    r_.end_s[j.spec.id] = j.end.seconds();
    r_.devices[j.spec.id] = j.devices;
    r_.bound_idle_s[j.spec.id] = Tick::from_us(j.bound_idle_device_us).seconds();
  }

 private:
  Ran& r_;
};

// Runs `jobs` under `policy` (a name or a YAML map) on `nodes` nodes of 4 GPUs.
Ran run(const std::string& policy, std::vector<JobSpec> jobs, int nodes = 2) {
  const ClusterSpec cluster({NodeGroup{nodes, "V100", 4}});
  VectorSource source(std::move(jobs));
  const PolicyRegistry registry = builtin_policies();
  PolicyInstance p = registry.create(ConfigNode::load_string(policy, "policy.yaml"));
  Simulator sim(cluster, source, *p.policy);
  InvariantChecker checker;
  MetricsCollector metrics(cluster.num_devices());
  metrics.meter_bound_idle();
  Ran r;
  Ends ends(r);
  sim.add_observer(checker);
  sim.add_observer(metrics);
  sim.add_observer(ends);
  try {
    sim.run();
  } catch (const PolicyError& e) {
    r.error = e.what();
  }
  r.summary = metrics.summarize();
  return r;
}

// Two jobs of 8 GPUs (2 pods of 4 on nodes of 4), T = 100 s, arriving together.
std::vector<JobSpec> two_large_jobs() { return {make_job("a", 0, 8, 100), make_job("b", 0, 8, 100)}; }

}  // namespace

TEST_CASE("kubernetes: two 8-GPU jobs each bind one pod, spread over both nodes, and deadlock", "[policies][kubernetes]") {
  // The queue holds a0, b0, a1, b1 (pods created at the same instant interleave). a0 takes
  // node 0 (a tie, lowest id), b0 node 1 (LeastAllocated: 4 free of 4 beats 0 of 4); a1 and
  // b1 fit nowhere. Without the pending timeout nothing ever changes: the kernel names it.
  const Ran r = run("{name: kubernetes, pending_timeout_s: 0}", two_large_jobs());
  CHECK(r.error ==
        "policy 'kubernetes' left 2 jobs waiting with nothing left to happen (first: job 'a' asking for 8 GPUs, 0 free); 8 GPUs are bound to "
        "waiting jobs that cannot start (deadlock: job 'a' holds devices 0-3 of 8, job 'b' holds devices 4-7 of 8); the policy never started them");
  CHECK(r.end_s.empty());
}

TEST_CASE("kubernetes: the pending timeout restarts one job, and the other takes its GPUs", "[policies][kubernetes]") {
  // t=0: deadlock as above. t=300 (pending_timeout_s): a is restarted (its pods deleted,
  // devices 0-3 released, pods created again behind the queue after restart_backoff_s,
  // 60 s); b1 binds node 0: b runs [300, 400]. a's new pods try at 360 and fit nowhere
  // until b ends; at 400 both bind: a runs [400, 500]. Bound idle: a 4 GPUs x 300 s + b
  // 4 GPUs x 300 s = 2400 GPU-s.
  const Ran r = run("{name: kubernetes, pending_timeout_s: 300}", two_large_jobs());
  REQUIRE(r.error.empty());
  CHECK(r.start_s.at("b") == 300);
  CHECK(r.end_s.at("b") == 400);  // JCT 400 s
  CHECK(r.start_s.at("a") == 400);
  CHECK(r.end_s.at("a") == 500);  // JCT 500 s
  CHECK(r.devices.at("b") == std::vector<DeviceId>{4, 5, 6, 7, 0, 1, 2, 3});  // b0 on node 1, then b1 on node 0
  CHECK(r.devices.at("a") == std::vector<DeviceId>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(r.bound_idle_s.at("a") == 1200);
  CHECK(r.bound_idle_s.at("b") == 1200);
  REQUIRE(r.summary.bound_idle_gpu_hours.has_value());
  CHECK(*r.summary.bound_idle_gpu_hours == 2400.0 / 3600.0);
  // 8 GPUs x 500 s = 4000 GPU-s: 1600 ran jobs (0.4), 2400 were held idle (0.6).
  CHECK(*r.summary.gpu_utilization == Approx(0.4).epsilon(1e-12));
  CHECK(*r.summary.bound_idle_fraction == Approx(0.6).epsilon(1e-12));
  CHECK(*r.summary.mean_jct_s == 450);
}

TEST_CASE("kubernetes: the gang presets run the same two jobs back to back without idle held GPUs", "[policies][kubernetes]") {
  for (const std::string policy : {"fifo", "volcano-binpack"}) {
    INFO(policy);
    const Ran r = run(policy, two_large_jobs());
    REQUIRE(r.error.empty());
    CHECK(r.end_s.at("a") == 100);  // JCT T
    CHECK(r.end_s.at("b") == 200);  // JCT 2T
    CHECK(*r.summary.bound_idle_gpu_hours == 0);
    CHECK(*r.summary.gpu_utilization == 1.0);
  }
}

TEST_CASE("kubernetes: an unschedulable pod waits out its backoff after the GPUs free up", "[policies][kubernetes]") {
  // One node of 4. s (4 GPUs) runs [0, 10]; j (4 GPUs) arrives at 9.5 and fails: backoff
  // 1 s, until 10.5. s ends at 10 (a cluster event): j moves to the backoff queue and binds
  // when it expires, at 10.5, ending at 15.5. With a 0.25 s initial backoff it binds at 10.
  const std::vector<JobSpec> jobs{make_job("s", 0, 4, 10), make_job("j", 9.5, 4, 5)};
  Ran r = run("kubernetes", jobs, 1);
  CHECK(r.start_s.at("j") == 10.5);
  CHECK(r.end_s.at("j") == 15.5);
  r = run("{name: kubernetes, initial_backoff_s: 0.25}", jobs, 1);
  CHECK(r.start_s.at("j") == 10);
}

TEST_CASE("kubernetes: the backoff doubles with each failed attempt up to its maximum", "[policies][kubernetes]") {
  // A V100 node of 4 and a K80 node of 8. l (4 V100s) runs [0, 4]; j (4 V100s) fails at 0
  // (backoff 1 s: until 1). The K80 jobs x1, x2, x3 end at 1, 2 and 3: cluster events.
  // At 1 j is retried and fails (backoff 2 s: until 3); at 2 it waits in the backoff
  // queue; at 3 it is retried and fails (backoff 4 s: until 7). l ends at 4: j binds when
  // its backoff ends, at 7. With max_backoff_s 2 the third backoff is 2 s: j binds at 5.
  JobSpec l = make_job("l", 0, 4, 4), j = make_job("j", 0, 4, 5);
  l.gpu_type = j.gpu_type = "V100";
  std::vector<JobSpec> jobs{l, j};
  for (int i = 1; i <= 3; ++i) {
    JobSpec x = make_job("x" + std::to_string(i), 0, 1, i);
    x.gpu_type = "K80";
    jobs.push_back(x);
  }
  const ClusterSpec cluster({NodeGroup{1, "V100", 4}, NodeGroup{1, "K80", 8}});
  const PolicyRegistry registry = builtin_policies();
  for (const auto& [policy, start_s] : std::vector<std::pair<std::string, double>>{{"kubernetes", 7}, {"{name: kubernetes, max_backoff_s: 2}", 5}}) {
    INFO(policy);
    VectorSource source(jobs);
    PolicyInstance p = registry.create(ConfigNode::load_string(policy, "policy.yaml"));
    Simulator sim(cluster, source, *p.policy);
    InvariantChecker checker;
    Ran r;
    Ends ends(r);
    sim.add_observer(checker);
    sim.add_observer(ends);
    sim.run();
    CHECK(r.start_s.at("j") == start_s);
    CHECK(r.end_s.at("j") == start_s + 5);
    CHECK(r.devices.at("l") == std::vector<DeviceId>{0, 1, 2, 3});
  }
}

TEST_CASE("kubernetes: LeastAllocated spreads single pods and the queue serves priority first", "[policies][kubernetes]") {
  // Three 1-GPU jobs at t=0 on 2 nodes of 4: node 0, node 1, node 0 (ties: lowest id).
  Ran r = run("kubernetes", {make_job("p", 0, 1, 10), make_job("q", 0, 1, 10), make_job("r", 0, 1, 10)});
  CHECK(r.devices.at("p") == std::vector<DeviceId>{0});
  CHECK(r.devices.at("q") == std::vector<DeviceId>{4});
  CHECK(r.devices.at("r") == std::vector<DeviceId>{1});
  // One node of 4: x (4 GPUs) runs [0, 10]; lo and hi (4 GPUs each) wait; hi (priority 5)
  // arrives later but binds first when x ends.
  JobSpec lo = make_job("lo", 1, 4, 10), hi = make_job("hi", 2, 4, 10);
  hi.priority = 5;
  r = run("{name: kubernetes, initial_backoff_s: 0.5}", {make_job("x", 0, 4, 10), lo, hi}, 1);
  CHECK(r.start_s.at("hi") == 10);
  CHECK(r.start_s.at("lo") == 20);
}

TEST_CASE("kubernetes: gpus_per_pod splits jobs into smaller pods", "[policies][kubernetes]") {
  // 2 nodes of 4, pods of 2 GPUs: a (6 GPUs) is pods of 2, 2, 2: node 0, node 1 (spread),
  // node 0 (2 left on each: tie, lowest id).
  const Ran r = run("{name: kubernetes, gpus_per_pod: 2}", {make_job("a", 0, 6, 10)});
  CHECK(r.devices.at("a") == std::vector<DeviceId>{0, 1, 4, 5, 2, 3});
  CHECK(r.end_s.at("a") == 10);
}

TEST_CASE("kubernetes: bad options are rejected with the key and what is allowed", "[policies][kubernetes][errors]") {
  const PolicyRegistry registry = builtin_policies();
  const auto make = [&](const std::string& yaml) { registry.create(ConfigNode::load_string(yaml, "p.yaml")); };
  CHECK_THROWS_WITH(make("{name: kubernetes, backoff_s: 1}"),
                    "p.yaml:1: unknown key 'backoff_s'; valid keys here: name, gpus_per_pod, initial_backoff_s, max_backoff_s, pending_timeout_s, restart_backoff_s");
  CHECK_THROWS_WITH(make("{name: kubernetes, restart_backoff_s: 5}"),
                    "p.yaml:1: restart_backoff_s: restart_backoff_s (5 s) must be at least max_backoff_s (10 s), so that the pods a restarted job blocked are retried before it comes back");
  CHECK_THROWS_WITH(make("{name: kubernetes, initial_backoff_s: 20}"), "p.yaml:1: initial_backoff_s: max_backoff_s (10 s) must be at least initial_backoff_s (20 s)");
  CHECK_THROWS_WITH(make("{name: kubernetes, pending_timeout_s: -1}"), Catch::Contains("pending_timeout_s"));
  CHECK_THROWS_WITH(make("{name: kubernetes, gpus_per_pod: none}"), Catch::Contains("gpus_per_pod"));
  const PolicyInstance p = registry.create("kubernetes");
  CHECK(p.resolved["gpus_per_pod"].as<std::string>() == "node");
  CHECK(p.resolved["pending_timeout_s"].as<double>() == 300);
  CHECK(p.resolved["restart_backoff_s"].as<double>() == 60);
}

TEST_CASE("kubernetes: results.json and jobs.csv report bound-idle time; other policies' outputs do not change", "[policies][kubernetes]") {
  const PolicyRegistry registry = builtin_policies();
  const std::string config = std::string(SCHEDSIM_SOURCE_DIR) + "/tests/golden/scenario.yaml";
  schedsim::test::TempDir dir;
  for (const std::string policy : {"kubernetes", "fifo"}) {
    const ScenarioConfig scenario = load_scenario(config, {"policy=" + policy}, std::nullopt, registry);
    const RunResult r = run_scenario(scenario, registry, RunOptions{dir.path(policy)});
    std::ifstream jobs(dir.path(policy + "/jobs.csv"));
    std::string header;
    std::getline(jobs, header);
    std::ifstream results(dir.path(policy + "/results.json"));
    const std::string json((std::istreambuf_iterator<char>(results)), std::istreambuf_iterator<char>());
    if (policy == "kubernetes") {
      CHECK(r.summary.bound_idle_gpu_hours.has_value());
      CHECK(header.substr(header.size() - 17) == ",bound_idle_gpu_s");
      CHECK(json.find("\"bound_idle_gpu_hours\"") != std::string::npos);
      CHECK(json.find("\"bound_idle_fraction\"") != std::string::npos);
    } else {
      CHECK_FALSE(r.summary.bound_idle_gpu_hours.has_value());
      CHECK(header.substr(header.size() - 7) == ",co2_kg");
      CHECK(json.find("bound_idle") == std::string::npos);
    }
  }
}
