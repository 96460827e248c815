// Hierarchical queues and the volcano / yunikorn presets: share computations by hand,
// and hand-built schedules with the exact times they must produce.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "policies/placement.hpp"
#include "policies/queue_tree.hpp"
#include "policies/queue_tree_policy.hpp"
#include "policies/registry.hpp"
#include "base/error.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::VectorSource;

namespace {

struct Run {
  double start_s, end_s;
  std::uint32_t preemptions;
};

class Recorder : public Observer {
 public:
  void on_job_start(const JobState& job) override {
    held[job.spec.group] += static_cast<int>(job.devices.size());
    gpus_at_start[job.spec.id] = static_cast<int>(job.devices.size());
    max_held[job.spec.group] = std::max(max_held[job.spec.group], held[job.spec.group]);
  }
  void on_job_end(const JobState& job) override {
    runs[job.spec.id] = {job.start.seconds(), job.end.seconds(), job.preemptions};
    bound_idle_gpu_s[job.spec.id] = job.bound_idle_device_us / 1e6;
    held[job.spec.group] -= static_cast<int>(job.devices.size());
  }
  std::map<std::string, Run> runs;
  std::map<std::string, int> held, max_held, gpus_at_start;
  std::map<std::string, double> bound_idle_gpu_s;
};

JobSpec job_of(const std::string& id, double submit_s, int gpus, double duration_s, const std::string& group, const std::string& user = "") {
  JobSpec j = make_job(id, submit_s, gpus, duration_s);
  j.group = group;
  j.user = user;
  return j;
}

Recorder run(const std::string& policy_yaml, int devices, std::vector<JobSpec> jobs) {
  const ClusterSpec cluster({NodeGroup{1, "test", devices}});
  const PolicyRegistry registry = builtin_policies();
  PolicyInstance policy = registry.create(ConfigNode::load_string(policy_yaml, "policy.yaml"));
  VectorSource source(std::move(jobs));
  Simulator sim(cluster, source, *policy.policy);
  Recorder rec;
  sim.add_observer(rec);
  sim.run();
  return rec;
}

std::string create_error(const std::string& policy_yaml) {
  try {
    builtin_policies().create(ConfigNode::load_string(policy_yaml, "policy.yaml"));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("water_fill splits by weight and gives a capped entry's surplus to the others", "[policies][queue-tree]") {
  // 12 by weights 1:1:2 is 3, 3, 6; the first is capped at 2, so 10 is split 1:2 again.
  const std::vector<double> out = water_fill(12, {1, 1, 2}, {2, INFINITY, INFINITY});
  REQUIRE(out.size() == 3);
  CHECK(out[0] == 2.0);
  CHECK(out[1] == Approx(10.0 / 3).epsilon(1e-12));
  CHECK(out[2] == Approx(20.0 / 3).epsilon(1e-12));
  // Everyone capped: the capacity is not all handed out.
  const std::vector<double> capped = water_fill(10, {1, 1}, {3, 4});
  CHECK(capped == std::vector<double>{3.0, 4.0});
}

TEST_CASE("proportion deserved shares: weights, capability and demand caps, then the hierarchy", "[policies][queue-tree]") {
  const ConfigNode flat = ConfigNode::load_string("[{name: a, max_gpus: 4}, {name: b}, {name: c, weight: 2}]", "q.yaml");
  const QueueTree t = QueueTree::parse(flat);
  REQUIRE(t.size() == 5);  // root, a, b, c, default
  std::vector<double> demand(5, 0.0);
  demand[static_cast<std::size_t>(t.find("a"))] = 10;
  demand[static_cast<std::size_t>(t.find("b"))] = 3;
  demand[static_cast<std::size_t>(t.find("c"))] = 20;
  // 16 GPUs by weights 1:1:2 (default asks for none): 4, 4, 8; a is capped by max 4, b by
  // its demand 3, so c takes the remaining 9.
  const std::vector<double> d = proportion_deserved(t, 16, demand);
  CHECK(d[0] == 16.0);
  CHECK(d[static_cast<std::size_t>(t.find("a"))] == 4.0);
  CHECK(d[static_cast<std::size_t>(t.find("b"))] == 3.0);
  CHECK(d[static_cast<std::size_t>(t.find("c"))] == 9.0);
  CHECK(d[static_cast<std::size_t>(t.find("default"))] == 0.0);

  // Two levels: research (weight 1) holds x (1) and y (3); ops (1) beside it; 8 GPUs, all ask for 8.
  const QueueTree h = QueueTree::parse(ConfigNode::load_string("[{name: research}, {name: x, parent: research}, {name: y, parent: research, weight: 3}, {name: ops}]", "q.yaml"));
  std::vector<double> hd(static_cast<std::size_t>(h.size()), 0.0);
  for (const char* q : {"x", "y", "ops"}) hd[static_cast<std::size_t>(h.find(q))] = 8;
  const std::vector<double> e = proportion_deserved(h, 8, hd);
  CHECK(e[static_cast<std::size_t>(h.find("research"))] == 4.0);
  CHECK(e[static_cast<std::size_t>(h.find("ops"))] == 4.0);
  CHECK(e[static_cast<std::size_t>(h.find("x"))] == 1.0);
  CHECK(e[static_cast<std::size_t>(h.find("y"))] == 3.0);
}

TEST_CASE("DRF: the dominant share over device types, and YuniKorn's fair queue key", "[policies][queue-tree]") {
  // 4 of 8 H100s and 2 of 16 A100s: dominant 0.5 (the H100s).
  CHECK(dominant_share({4, 2}, {8, 16}) == 0.5);
  CHECK(dominant_share({1, 12}, {8, 16}) == 0.75);
  CHECK(dominant_share({3, 0}, {0, 16}) == 0.0);  // a type the cluster lacks is skipped
  CHECK(guaranteed_fair_key(2, 8, 16) == 0.25);   // under its guarantee
  CHECK(guaranteed_fair_key(12, 8, 16) == 1.5);
  CHECK(guaranteed_fair_key(4, 0, 16) == 1.25);   // no guarantee: after every queue under one
}

TEST_CASE("share: drf serves the queue with the smaller dominant share over device types first", "[policies][queue-tree][drf]") {
  // 4 H100s on one node, 8 A100s on another. a0 takes the H100 node (binpack: the fullest
  // node that holds it), b0 half the A100s. Both queues hold 4 GPUs, deserve 6 of 12: equal
  // under proportion (a, the first declared, goes first), but a holds all the H100s
  // (dominant share 1) and b half the A100s (0.5), so drf lets b1 in first.
  const ClusterSpec cluster({NodeGroup{1, "H100", 4}, NodeGroup{1, "A100", 8}});
  const std::vector<JobSpec> jobs = {job_of("a0", 0, 4, 1000, "a"), job_of("b0", 0, 4, 1000, "b"), job_of("a1", 0, 4, 100, "a"), job_of("b1", 0, 4, 100, "b")};
  std::map<std::string, std::map<std::string, Run>> by_share;
  for (const char* share : {"proportion", "drf"}) {
    PolicyInstance policy = builtin_policies().create(ConfigNode::load_string(std::string("{name: volcano, share: ") + share + ", queues: [{name: a}, {name: b}]}", "policy.yaml"));
    VectorSource source(jobs);
    Simulator sim(cluster, source, *policy.policy);
    Recorder rec;
    sim.add_observer(rec);
    sim.run();
    by_share[share] = rec.runs;
  }
  CHECK(by_share["proportion"].at("a1").start_s == 0);
  CHECK(by_share["proportion"].at("b1").start_s == 100);
  CHECK(by_share["drf"].at("b1").start_s == 0);
  CHECK(by_share["drf"].at("a1").start_s == 100);
}

TEST_CASE("the resolved config of a queue tree parses to the same policy", "[policies][queue-tree]") {
  const PolicyRegistry registry = builtin_policies();
  const PolicyInstance a = registry.create(ConfigNode::load_string("{name: yunikorn, queues: [{name: r, max_gpus: 8}, {name: x, parent: r, guaranteed_gpus: 2}]}", "policy.yaml"));
  const PolicyInstance b = registry.create(ConfigNode(a.resolved, "resolved"));
  CHECK(YAML::Dump(b.resolved) == YAML::Dump(a.resolved));
  CHECK(YAML::Dump(a.resolved["queues"]) ==
        "- name: r\n  parent: root\n  weight: 1\n  guaranteed_gpus: 0\n  max_gpus: 8\n  reclaimable: true\n"
        "- name: x\n  parent: r\n  weight: 1\n  guaranteed_gpus: 2\n  reclaimable: true\n"
        "- name: default\n  parent: root\n  weight: 1\n  guaranteed_gpus: 0\n  reclaimable: true");
}

TEST_CASE("queue trees reject unknown parents and other bad declarations, naming the key", "[policies][queue-tree][errors]") {
  CHECK(create_error("{name: yunikorn, queues: [{name: a, parent: nope}]}") ==
        "policy.yaml:1: queues[0].parent: unknown queue 'nope'; a parent must be declared before its children (declared so far: root)");
  CHECK(create_error("{name: yunikorn, queues: [{name: a}, {name: a}]}") == "policy.yaml:1: queues[1].name: queue 'a' is declared twice");
  CHECK(create_error("{name: yunikorn, queues: [{name: a, guaranteed_gpus: 8, max_gpus: 4}]}") ==
        "policy.yaml:1: queues[0].guaranteed_gpus: guaranteed_gpus 8 is above max_gpus 4; a queue can never hold more than its max");
  CHECK(create_error("{name: volcano, queues: [{name: a, wieght: 2}]}").find("queues[0]: unknown key 'wieght'") != std::string::npos);
  CHECK(create_error("{name: volcano, share: fair}").find("share") != std::string::npos);
  // rounds re-allocates by starts alone: a base that binds (placeholders) is refused.
  CHECK(create_error("{name: rounds, base: {name: queue-tree, gang: placeholders}}") ==
        "policy.yaml:1: base.name: rounds cannot wrap 'queue-tree': it binds devices to waiting jobs (gang: placeholders); rounds wraps policies that only start jobs, e.g. fifo, sjf, las, tiresias, fair-share, compose");
}

TEST_CASE("yunikorn never lets a queue exceed max_gpus, and refuses a job larger than its queue's max", "[policies][queue-tree][yunikorn]") {
  // 8 GPUs, queue a capped at 4: four 2-GPU jobs of a run two at a time.
  std::vector<JobSpec> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back(job_of("a" + std::to_string(i), 0, 2, 100, "a"));
  const Recorder r = run("{name: yunikorn, queues: [{name: a, max_gpus: 4}]}", 8, jobs);
  CHECK(r.runs.at("a0").start_s == 0);
  CHECK(r.runs.at("a1").start_s == 0);
  CHECK(r.runs.at("a2").start_s == 100);
  CHECK(r.runs.at("a3").start_s == 100);
  CHECK(r.runs.at("a3").end_s == 200);
  CHECK(r.max_held.at("a") == 4);

  // A parent's max binds its children together: research (max 6) holds x and y, which
  // take turns (equal fair keys, x first): x0, y0, x1 at 0, y1 when one ends.
  const Recorder h = run("{name: yunikorn, queues: [{name: research, max_gpus: 6}, {name: x, parent: research}, {name: y, parent: research}]}", 8,
                         {job_of("x0", 0, 2, 100, "x"), job_of("x1", 0, 2, 100, "x"), job_of("y0", 0, 2, 100, "y"), job_of("y1", 0, 2, 100, "y")});
  CHECK(h.runs.at("x0").start_s == 0);
  CHECK(h.runs.at("y0").start_s == 0);
  CHECK(h.runs.at("x1").start_s == 0);
  CHECK(h.runs.at("y1").start_s == 100);

  const ClusterSpec cluster({NodeGroup{1, "test", 8}});
  PolicyInstance policy = builtin_policies().create(ConfigNode::load_string("{name: yunikorn, queues: [{name: a, max_gpus: 4}]}", "policy.yaml"));
  VectorSource source({job_of("big", 0, 6, 100, "a")});
  Simulator sim(cluster, source, *policy.policy);
  CHECK_THROWS_WITH(sim.run(), "policy 'yunikorn': queues: job 'big' needs 6 GPUs, more than max_gpus 4 of its queue 'a'; raise that max_gpus or send the job to another queue (by its group or user)");
}

TEST_CASE("volcano reclaims exactly the youngest jobs of the queue over its deserved share", "[policies][queue-tree][volcano][reclaim]") {
  // 8 GPUs; b holds them all with four 2-GPU jobs. a (weight 3 vs 1) asks for 6 at t=10:
  // deserved a = 6, b = 2, so b's three youngest (b3, b2, b1: the latest arrivals among
  // equal starts) are preempted, b0 keeps running, and a starts at once (free checkpoints).
  std::vector<JobSpec> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back(job_of("b" + std::to_string(i), 0, 2, 1000, "b"));
  jobs.push_back(job_of("a0", 10, 6, 100, "a"));
  const Recorder r = run("{name: volcano, queues: [{name: a, weight: 3}, {name: b}]}", 8, jobs);
  CHECK(r.runs.at("a0").start_s == 10);
  CHECK(r.runs.at("a0").end_s == 110);
  CHECK(r.runs.at("b0").preemptions == 0);
  CHECK(r.runs.at("b0").end_s == 1000);
  for (const char* v : {"b1", "b2", "b3"}) {
    INFO(v);
    CHECK(r.runs.at(v).preemptions == 1);
    // Back at 110 with 990 s of work left.
    CHECK(r.runs.at(v).end_s == 1100);
  }
  // b not reclaimable: a waits for b's jobs to end at 1000.
  const Recorder kept = run("{name: volcano, queues: [{name: a, weight: 3}, {name: b, reclaimable: false}]}", 8, jobs);
  CHECK(kept.runs.at("a0").start_s == 1000);
  CHECK(kept.runs.at("b3").preemptions == 0);
  // reclaim: false, the same.
  CHECK(run("{name: volcano, reclaim: false, queues: [{name: a, weight: 3}, {name: b}]}", 8, jobs).runs.at("a0").start_s == 1000);
}

TEST_CASE("under physics the reclaimer starts when the victims' checkpoint saves end", "[policies][queue-tree][volcano][reclaim]") {
  // The same cluster and jobs through the CLI's runner with the cluster physics: profile-less
  // jobs (rate 1) save and restore the default 10 GB checkpoint at 2 GB/s, 5 s each. a0
  // starts at 10 + 5; b1..b3 come back at 115 and end at 115 + 5 + 990.
  schedsim::test::TempDir dir;
  dir.write("jobs.csv", "job_id,submit_time_s,num_gpus,duration_s,group\nb0,0,2,1000,b\nb1,0,2,1000,b\nb2,0,2,1000,b\nb3,0,2,1000,b\na0,10,6,100,a\n");
  const std::string config = dir.write("s.yaml",
                                       "name: reclaim\nseed: 1\ncluster:\n  nodes:\n    - {count: 1, type: V100, devices_per_node: 8}\n"
                                       "workload:\n  trace: {path: jobs.csv, format: schedsim}\nphysics: {}\n"
                                       "policy: {name: volcano, queues: [{name: a, weight: 3}, {name: b}]}\n");
  const PolicyRegistry registry = builtin_policies();
  const ScenarioConfig scenario = load_scenario(config, {}, std::nullopt, registry);
  run_scenario(scenario, registry, RunOptions{dir.path("out")});
  const std::string jobs = schedsim::test::read_file(dir.path("out/jobs.csv"));
  CHECK(jobs.find("\na0,10,15,115,6,105,5,completed,600,0,0,") != std::string::npos);
  CHECK(jobs.find("\nb0,0,0,1000,2,1000,0,completed,2000,0,0,") != std::string::npos);
  for (const char* v : {"b1", "b2", "b3"}) CHECK(jobs.find(std::string("\n") + v + ",0,0,1110,2,1110,100,completed,2020,20,1,") != std::string::npos);
}

TEST_CASE("volcano's reclaim stops at the victim queue's deserved share", "[policies][queue-tree][volcano][reclaim]") {
  // b holds 2 + 6 GPUs (b1 the younger); a asks for 4 at t=10, deserved 4 and 4. Taking b1
  // would leave b at 2 < 4 and b0 alone frees too little: nothing is preempted, a waits
  // for b1 to end at 500.
  const std::vector<JobSpec> jobs = {job_of("b0", 0, 2, 1000, "b"), job_of("b1", 1, 6, 499, "b"), job_of("a0", 10, 4, 100, "a")};
  const Recorder r = run("{name: volcano, queues: [{name: a}, {name: b}]}", 8, jobs);
  CHECK(r.runs.at("b0").preemptions == 0);
  CHECK(r.runs.at("b1").preemptions == 0);
  CHECK(r.runs.at("a0").start_s == 500);
}

TEST_CASE("yunikorn preempts across queues for a queue under its guarantee after the preemption delay", "[policies][queue-tree][yunikorn][reclaim]") {
  // 8 GPUs, a and b guaranteed 4 each; b holds all 8 (4 x 2 GPUs) from t=0. a asks for 4
  // at t=10; after the 30 s delay (t=40) b's two youngest jobs are preempted (b stays at its
  // guarantee of 4), a runs 40..140, b2 and b3 come back at 140 with 960 s left.
  std::vector<JobSpec> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back(job_of("b" + std::to_string(i), 0, 2, 1000, "b"));
  jobs.push_back(job_of("a0", 10, 4, 100, "a"));
  const Recorder r = run("{name: yunikorn, queues: [{name: a, guaranteed_gpus: 4}, {name: b, guaranteed_gpus: 4}]}", 8, jobs);
  CHECK(r.runs.at("a0").start_s == 40);
  CHECK(r.runs.at("a0").end_s == 140);
  CHECK(r.runs.at("b0").preemptions == 0);
  CHECK(r.runs.at("b1").preemptions == 0);
  CHECK(r.runs.at("b2").preemptions == 1);
  CHECK(r.runs.at("b3").preemptions == 1);
  CHECK(r.runs.at("b3").end_s == 1100);
  // Without a guarantee a has nothing to claim: it waits for b's jobs to end.
  CHECK(run("{name: yunikorn, queues: [{name: a}, {name: b}]}", 8, jobs).runs.at("a0").start_s == 1000);
}

TEST_CASE("a gang that bound part of its set in the allocation reclaims only the rest in the same decision", "[policies][queue-tree][yunikorn][reclaim][gang]") {
  // 8 GPUs; b (guaranteed 2) runs b0 (2 GPUs) and b1 (4); a (guaranteed 6) asks for 4 at
  // t=10 with no preemption delay. The allocation binds the 2 free GPUs to a0, then the
  // reclaim pass preempts b1 (b stays at 2) and binds 2 of its GPUs: a0 starts at 10. b1
  // (990 s left) is back in the queue after that decision and starts when a0 ends at 110.
  // (Binding 4 more after the first 2 was a PolicyError: the job asks for 4 and has 2 bound.)
  const std::vector<JobSpec> jobs = {job_of("b0", 0, 2, 1000, "b"), job_of("b1", 0, 4, 1000, "b"), job_of("a0", 10, 4, 100, "a")};
  const Recorder r = run("{name: yunikorn, reclaim_delay_s: 0, queues: [{name: a, guaranteed_gpus: 6}, {name: b, guaranteed_gpus: 2}]}", 8, jobs);
  CHECK(r.runs.at("a0").start_s == 10);
  CHECK(r.runs.at("a0").end_s == 110);
  CHECK(r.runs.at("b0").preemptions == 0);
  CHECK(r.runs.at("b1").preemptions == 1);
  CHECK(r.runs.at("b1").end_s == 1100);
  CHECK(r.bound_idle_gpu_s.at("a0") == 0.0);  // its set completed at the instant of its first bind
}

TEST_CASE("fair application sort serves the user holding fewer GPUs first; fifo serves arrival order", "[policies][queue-tree][yunikorn]") {
  // 2 GPUs. alice runs a0 (1000 s) and a1 (100 s); a2 (alice) and b0 (bob) wait. When a1
  // ends at 100, alice still holds a0's GPU and bob none.
  const std::vector<JobSpec> jobs = {job_of("a0", 0, 1, 1000, "", "alice"), job_of("a1", 0, 1, 100, "", "alice"), job_of("a2", 1, 1, 100, "", "alice"),
                                     job_of("b0", 2, 1, 100, "", "bob")};
  const Recorder fair = run("{name: yunikorn, sort: fair}", 2, jobs);
  CHECK(fair.runs.at("b0").start_s == 100);
  CHECK(fair.runs.at("a2").start_s == 200);
  const Recorder fifo = run("{name: yunikorn, sort: fifo}", 2, jobs);
  CHECK(fifo.runs.at("a2").start_s == 100);
  CHECK(fifo.runs.at("b0").start_s == 200);
}

TEST_CASE("yunikorn placeholders: a gang starts when all are reserved, and unfilled ones are released at the timeout", "[policies][queue-tree][yunikorn][gang]") {
  // 4 GPUs: x0 (2 GPUs until 100) and x1 (2 GPUs until 300); big asks for 4 at t=10; s
  // (2 GPUs, 100 s) arrives at 120.
  const std::vector<JobSpec> jobs = {job_of("x0", 0, 2, 100, ""), job_of("x1", 0, 2, 300, ""), job_of("big", 10, 4, 50, ""), job_of("s", 120, 2, 100, "")};
  SECTION("default timeout (900 s): big reserves x0's GPUs at 100 and x1's at 300, then starts; s waits behind its placeholders") {
    const Recorder r = run("{name: yunikorn, sort: fifo}", 4, jobs);
    CHECK(r.runs.at("big").start_s == 300);
    CHECK(r.runs.at("big").end_s == 350);
    CHECK(r.runs.at("s").start_s == 350);
    // The kernel held x0's two GPUs bound to big from 100 to 300: 400 idle GPU-seconds.
    CHECK(r.bound_idle_gpu_s.at("big") == 400.0);
  }
  SECTION("timeout 150 s: the two placeholders reserved at 100 are released at 250, s takes them, big starts all-or-nothing at 350") {
    const Recorder r = run("{name: yunikorn, sort: fifo, placeholder_timeout_s: 150}", 4, jobs);
    CHECK(r.runs.at("s").start_s == 250);
    CHECK(r.runs.at("s").end_s == 350);
    CHECK(r.runs.at("big").start_s == 350);
    CHECK(r.runs.at("big").end_s == 400);
    CHECK(r.bound_idle_gpu_s.at("big") == 300.0);  // two GPUs bound 100..250
  }
  SECTION("all_or_nothing: s passes the blocked gang at 120") {
    const Recorder r = run("{name: yunikorn, sort: fifo, gang: all_or_nothing}", 4, jobs);
    CHECK(r.runs.at("s").start_s == 120);
    CHECK(r.runs.at("big").start_s == 300);
  }
}

TEST_CASE("gang minAvailable: an elastic job starts on what fits down to min_gpus, a rigid one waits for all its GPUs", "[policies][queue-tree][gang]") {
  // 8 GPUs, x holds 4 until 100. At t=1 an elastic job (2..8, asking 8) and a rigid 8.
  JobSpec e = job_of("e", 1, 8, 50, "");
  e.min_gpus = 2;
  e.max_gpus = 8;
  const Recorder r = run("volcano", 8, {job_of("x", 0, 4, 100, ""), e, job_of("rigid", 1, 8, 10, "")});
  CHECK(r.runs.at("e").start_s == 1);
  CHECK(r.gpus_at_start.at("e") == 4);
  CHECK(r.runs.at("rigid").start_s == 100);
  CHECK(r.gpus_at_start.at("rigid") == 8);
}

TEST_CASE("volcano places a 16-GPU job inside one NVLink domain of the scenario's topology; binpack spans two", "[policies][queue-tree][volcano][placement]") {
  // 4 nodes of 8 H100s, NVLink domains of 2 nodes. a (8 GPUs) takes node 0; b (16) then
  // fits domain 1 (nodes 2 and 3) whole, where binpack takes the fullest nodes 1 and 2.
  schedsim::test::TempDir dir;
  dir.write("jobs.csv", "job_id,submit_time_s,num_gpus,duration_s\na,0,8,1000\nb,1,16,100\n");
  const std::string config = dir.write("s.yaml",
                                       "name: nvlink\nseed: 1\ncluster:\n  nodes:\n    - {count: 4, type: H100-SXM, devices_per_node: 8}\n"
                                       "  topology: {nodes_per_nvlink_domain: 2, nodes_per_rack: 4}\n"
                                       "workload:\n  trace: {path: jobs.csv, format: schedsim}\nphysics: {}\npolicy: volcano\n");
  const PolicyRegistry registry = builtin_policies();
  std::map<std::string, std::string> allocations;
  for (const char* policy : {"volcano", "{name: volcano, placement: binpack}"}) {
    const ScenarioConfig scenario = load_scenario(config, {std::string("policy=") + policy}, std::nullopt, registry);
    RunOptions options{dir.path(policy)};
    options.timeline = true;
    run_scenario(scenario, registry, options);
    allocations[policy] = schedsim::test::read_file(dir.path(std::string(policy) + "/allocations.csv"));
  }
  CHECK(allocations["volcano"] == "job_id,start_s,end_s,devices\nb,1,101,16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31\na,0,1000,0 1 2 3 4 5 6 7\n");
  CHECK(allocations["{name: volcano, placement: binpack}"] == "job_id,start_s,end_s,devices\nb,1,101,8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\na,0,1000,0 1 2 3 4 5 6 7\n");
}

TEST_CASE("nvlink placement keeps a job inside one NVLink domain when one holds it", "[policies][queue-tree][placement]") {
  // 4 nodes of 2 devices, NVLink domains {0,1} and {2,3}; device 0 is busy. A 4-device job:
  // domain 0 has 3 free, domain 1 has 4.
  const ClusterSpec spec({NodeGroup{4, "test", 2}});
  std::vector<char> free(8, 1);
  free[0] = 0;
  const std::vector<char> ok(4, 1);
  TopologyLayout layout;
  layout.domain_of_node = {0, 0, 1, 1};
  layout.rack_of_node = {0, 0, 0, 0};
  std::vector<DeviceId> out;
  REQUIRE(pick_devices(spec, free, ok, 4, TopologyPick::kNvlink, layout, out));
  CHECK(out == std::vector<DeviceId>{4, 5, 6, 7});
  out.clear();
  // binpack: the fullest nodes first, across domains.
  REQUIRE(pick_devices(spec, free, ok, 4, TopologyPick::kBinpack, layout, out));
  CHECK(out == std::vector<DeviceId>{1, 2, 3, 4});
  out.clear();
  // 6 devices, more than any domain holds: rack 1 (8 free) alone rather than racks 0 (3 free) and 1.
  const ClusterSpec wide({NodeGroup{8, "test", 2}});
  std::vector<char> wfree(16, 1);
  for (int d : {0, 1, 2, 3, 4}) wfree[static_cast<std::size_t>(d)] = 0;  // rack 0 keeps 3 free
  TopologyLayout racks;
  racks.domain_of_node = {0, 0, 1, 1, 2, 2, 3, 3};
  racks.rack_of_node = {0, 0, 0, 0, 1, 1, 1, 1};
  REQUIRE(pick_devices(wide, wfree, std::vector<char>(8, 1), 6, TopologyPick::kNvlink, racks, out));
  CHECK(out == std::vector<DeviceId>{8, 9, 10, 11, 12, 13});  // domain 2 whole, then 2 of domain 3
  CHECK_FALSE(pick_devices(spec, free, ok, 8, TopologyPick::kNvlink, layout, out));
}
