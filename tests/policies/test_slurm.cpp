// The `slurm` preset: multifactor priority computed by hand at one instant, the start order
// it gives, EASY backfilling under it, and the topology/tree placement.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "policies/placement.hpp"
#include "policies/queue_policy.hpp"
#include "policies/registry.hpp"
#include "policies/slurm_priority.hpp"
#include "sim/cluster_state.hpp"
#include "base/error.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::VectorSource;

namespace {

JobSpec owned(JobSpec j, const std::string& user, double priority = 0) {
  j.user = user;
  j.priority = priority;
  return j;
}

struct Times {
  double start_s, end_s;
};

class TimesRecorder : public Observer {
 public:
  void on_job_end(const JobState& job) override { times[job.spec.id] = {job.start.seconds(), job.end.seconds()}; }
  std::map<std::string, Times> times;
};

std::map<std::string, Times> run(const ClusterSpec& cluster, const std::string& policy_yaml, std::vector<JobSpec> jobs) {
  const PolicyRegistry registry = builtin_policies();
  PolicyInstance policy = registry.create(ConfigNode::load_string(policy_yaml, "policy.yaml"));
  VectorSource source(std::move(jobs));
  Simulator sim(cluster, source, *policy.policy);
  TimesRecorder rec;
  sim.add_observer(rec);
  sim.run();
  return rec.times;
}

// A queue policy on the multifactor order that records every pending job's factors at
// the decision at `at_s`, before deciding.
class FactorProbe : public Policy {
 public:
  FactorProbe(const std::string& order_yaml, double at_s) : at_s_(at_s) {
    auto order = slurm_priority_order().make(ConfigNode::load_string(order_yaml, "order.yaml"));
    order_ = dynamic_cast<SlurmPriorityOrder*>(order.get());
    inner_ = std::make_unique<QueuePolicy>("probe", std::move(order), QueuePolicyOptions{});
  }
  std::string name() const override { return "probe"; }
  void on_job_queued(const SchedulerView& view, JobSlot job) override { inner_->on_job_queued(view, job); }
  void on_job_finished(const SchedulerView& view, JobSlot job) override { inner_->on_job_finished(view, job); }
  void decide(const SchedulerView& view, ActionBatch& out) override {
    if (view.now().seconds() == at_s_) {
      for (JobSlot s = view.first_pending(); s != kNoJob; s = view.next_pending(s)) seen[view.job(s).id()] = order_->factors(view, s);
      alice_usage_gpu_s = order_->usage_gpu_s("alice", at_s_);
      bob_usage_gpu_s = order_->usage_gpu_s("bob", at_s_);
    }
    inner_->decide(view, out);
  }
  std::map<std::string, SlurmPriorityFactors> seen;
  double alice_usage_gpu_s = 0, bob_usage_gpu_s = 0;

 private:
  double at_s_;
  SlurmPriorityOrder* order_ = nullptr;
  std::unique_ptr<QueuePolicy> inner_;
};

// 8 devices (2 nodes of 4). bob's B0 holds all 8 over [0, 100], alice's A0 over
// [100, 200]; X (alice, 6 GPUs), Y (bob, 4) and Z (carol, 8) arrive at 110, 150 and 190
// and wait until t=200.
std::vector<JobSpec> three_accounts() {
  return {owned(make_job("B0", 0, 8, 100), "bob"),     owned(make_job("A0", 0, 8, 100), "alice"),
          owned(make_job("X", 110, 6, 30), "alice", 1), owned(make_job("Y", 150, 4, 20), "bob", 3),
          owned(make_job("Z", 190, 8, 10), "carol", 0)};
}

const char* kWeights = "weight_age: 1000, weight_fairshare: 10000, weight_jobsize: 1001, weight_qos: 2000, max_age_s: 60, decay_half_life_s: 100";

}  // namespace

TEST_CASE("slurm multifactor priority: age cap, fair share after one half-life, job size and QoS by hand", "[policies][slurm]") {
  const ClusterSpec cluster({NodeGroup{2, "test", 4}});
  FactorProbe probe(std::string("{") + kWeights + "}", 200.0);
  VectorSource source(three_accounts());
  Simulator sim(cluster, source, probe);
  sim.run();
  REQUIRE(probe.seen.size() == 3);
  // Usage (GPU-s) with half-life H = 100 s, rate ln2/H: holding g devices for one
  // half-life adds g (1 - 1/2) H / ln2. bob: 8 over [0, 100], then halved by [100, 200]:
  // 2 H / ln2; alice: 8 over [100, 200]: 4 H / ln2. U_bob = 1/3, U_alice = 2/3.
  CHECK(probe.bob_usage_gpu_s == Approx(200.0 / std::log(2.0)).epsilon(1e-12));
  CHECK(probe.alice_usage_gpu_s == Approx(400.0 / std::log(2.0)).epsilon(1e-12));
  // Three accounts with equal shares: S = 1/3. F = 2^(-U/S): alice 2^-2, bob 2^-1, carol 1.
  const auto& x = probe.seen.at("X");
  const auto& y = probe.seen.at("Y");
  const auto& z = probe.seen.at("Z");
  CHECK(x.fairshare == Approx(0.25).epsilon(1e-12));
  CHECK(y.fairshare == Approx(0.5).epsilon(1e-12));
  CHECK(z.fairshare == 1.0);
  // Age: waits 90, 50 and 10 s against max_age_s 60 (X capped at 1).
  CHECK(x.age == 1.0);
  CHECK(y.age == Approx(50.0 / 60.0).epsilon(1e-12));
  CHECK(z.age == Approx(10.0 / 60.0).epsilon(1e-12));
  // Job size (favouring large): 6/8, 4/8, 8/8.
  CHECK(x.jobsize == 0.75);
  CHECK(y.jobsize == 0.5);
  CHECK(z.jobsize == 1.0);
  // QoS: priority over the largest seen (3).
  CHECK(x.qos == Approx(1.0 / 3.0).epsilon(1e-12));
  CHECK(y.qos == 1.0);
  CHECK(z.qos == 0.0);
  // floor(1000 age + 10000 F + 1001 size + 2000 qos):
  // X: 1000 + 2500 + 750.75 + 666.67 = 4917.42; Y: 833.33 + 5000 + 500.5 + 2000 = 8333.83;
  // Z: 166.67 + 10000 + 1001 + 0 = 11167.67.
  CHECK(x.priority == 4917.0);
  CHECK(y.priority == 8333.0);
  CHECK(z.priority == 11167.0);
}

TEST_CASE("slurm multifactor priority: favor_small, no decay, and group accounts", "[policies][slurm]") {
  const ClusterSpec cluster({NodeGroup{2, "test", 4}});
  FactorProbe probe("{favor_small: true, decay_half_life_s: 0, weight_qos: 0}", 200.0);
  VectorSource source(three_accounts());
  Simulator sim(cluster, source, probe);
  sim.run();
  // (G - n + 1) / G with G = 8: a one-device job would get 1.
  CHECK(probe.seen.at("X").jobsize == 3.0 / 8.0);
  CHECK(probe.seen.at("Y").jobsize == 5.0 / 8.0);
  CHECK(probe.seen.at("Z").jobsize == 1.0 / 8.0);
  // Without decay usage is plain GPU-seconds: 800 each, so U = 1/2 and F = 2^(-3/2).
  CHECK(probe.bob_usage_gpu_s == 800.0);
  CHECK(probe.alice_usage_gpu_s == 800.0);
  CHECK(probe.seen.at("X").fairshare == Approx(std::exp2(-1.5)).epsilon(1e-12));
  CHECK(probe.seen.at("Y").fairshare == Approx(std::exp2(-1.5)).epsilon(1e-12));
  CHECK(probe.seen.at("X").qos == 0.0);  // weight_qos 0: not computed
}

TEST_CASE("slurm multifactor priority: shares normalize over listed and seen accounts; group accounts", "[policies][slurm]") {
  const ClusterSpec cluster({NodeGroup{2, "test", 4}});
  {
    // bob 2 shares, dave (never seen) 1: S = 2/5 for bob, 1/5 for alice and carol.
    // U as above (bob 1/3, alice 2/3): F_bob = 2^(-5/6), F_alice = 2^(-10/3).
    FactorProbe probe("{decay_half_life_s: 100, shares: {bob: 2, dave: 1}}", 200.0);
    VectorSource source(three_accounts());
    Simulator sim(cluster, source, probe);
    sim.run();
    CHECK(probe.seen.at("Y").fairshare == Approx(std::exp2(-5.0 / 6.0)).epsilon(1e-12));
    CHECK(probe.seen.at("X").fairshare == Approx(std::exp2(-10.0 / 3.0)).epsilon(1e-12));
    CHECK(probe.seen.at("Z").fairshare == 1.0);
  }
  {
    // account: group, every job in group "lab": one account with all the usage, S = 1,
    // F = 2^-1 for everyone.
    std::vector<JobSpec> jobs = three_accounts();
    for (JobSpec& j : jobs) j.group = "lab";
    FactorProbe probe("{account: group}", 200.0);
    VectorSource source(std::move(jobs));
    Simulator sim(cluster, source, probe);
    sim.run();
    for (const char* id : {"X", "Y", "Z"}) CHECK(probe.seen.at(id).fairshare == Approx(0.5).epsilon(1e-12));
  }
}

TEST_CASE("slurm preset starts jobs in multifactor order, not arrival order", "[policies][slurm]") {
  const ClusterSpec cluster({NodeGroup{2, "test", 4}});
  // Priorities at t=200 (above): Z 11167 > Y 8333 > X 4917. Z takes all 8 devices over
  // [200, 210]; then Y (4) starts and X (6) waits for it (nothing else to backfill).
  const auto slurm = run(cluster, std::string("{name: slurm, ") + kWeights + "}", three_accounts());
  CHECK(slurm.at("B0").start_s == 0.0);
  CHECK(slurm.at("A0").start_s == 100.0);
  CHECK(slurm.at("Z").start_s == 200.0);
  CHECK(slurm.at("Y").start_s == 210.0);
  CHECK(slurm.at("X").start_s == 230.0);
  // FIFO with the same backfilling: X first (arrived first), Y waits for it, Z last.
  const auto easy = run(cluster, "{name: slurm-easy}", three_accounts());
  CHECK(easy.at("X").start_s == 200.0);
  CHECK(easy.at("Y").start_s == 230.0);
  CHECK(easy.at("Z").start_s == 250.0);
}

TEST_CASE("slurm preset: EASY backfilling honours the reservation of the highest-priority job", "[policies][slurm][backfill]") {
  // 4 devices. alice's R holds 2 until t=100. At t=3 alice's L (2 GPUs, 200 s) and S
  // (2 GPUs, 50 s) arrive with bob's H (4 GPUs): bob has no usage, so H ranks first
  // (fair share 1 against alice's 2^-2, job size 1) although it arrived last. H is
  // blocked with a reservation at t=100; S ends at 53 and backfills; L would end at 203
  // and would delay H, so it waits until H ends.
  const ClusterSpec cluster({NodeGroup{1, "test", 4}});
  const std::vector<JobSpec> jobs = {owned(make_job("R", 0, 2, 100), "alice"), owned(make_job("L", 3, 2, 200), "alice"),
                                     owned(make_job("S", 3, 2, 50), "alice"), owned(make_job("H", 3, 4, 50), "bob")};
  const auto slurm = run(cluster, "{name: slurm}", jobs);
  CHECK(slurm.at("S").start_s == 3.0);
  CHECK(slurm.at("H").start_s == 100.0);
  CHECK(slurm.at("H").end_s == 150.0);
  CHECK(slurm.at("L").start_s == 150.0);
  // In arrival order L is the head and fits at once; H waits behind it.
  const auto easy = run(cluster, "{name: slurm-easy}", jobs);
  CHECK(easy.at("L").start_s == 3.0);
  CHECK(easy.at("S").start_s == 100.0);
  CHECK(easy.at("H").start_s == 203.0);
}

TEST_CASE("slurm order: a negative priority under weight_qos is refused naming the job", "[policies][slurm]") {
  const ClusterSpec cluster({NodeGroup{1, "test", 4}});
  CHECK_THROWS_WITH(run(cluster, "{name: slurm, weight_qos: 1000}", {owned(make_job("neg", 0, 1, 10), "alice", -2)}),
                    "job 'neg': priority -2 is negative; the slurm order's QoS factor (weight_qos > 0) needs priorities >= 0 (or set weight_qos: 0)");
  CHECK_THROWS_WITH(run(cluster, "{name: slurm, weight_qos: 1000, qos_max_priority: 5}", {owned(make_job("big", 0, 1, 10), "alice", 7)}),
                    "job 'big': priority 7 exceeds qos_max_priority 5 of the slurm order; raise qos_max_priority, or set it to 0 (the largest priority seen)");
  // weight_qos 0 (the default) ignores priorities altogether.
  CHECK(run(cluster, "{name: slurm}", {owned(make_job("neg", 0, 1, 10), "alice", -2)}).at("neg").end_s == 10.0);
}

TEST_CASE("slurm policy options: resolved values and rejected keys", "[policies][slurm]") {
  const PolicyRegistry registry = builtin_policies();
  const PolicyInstance p = registry.create(ConfigNode::load_string("{name: slurm, shares: {alice: 2}}", "p.yaml"));
  CHECK(p.resolved["weight_age"].as<double>() == 1000.0);
  CHECK(p.resolved["weight_fairshare"].as<double>() == 10000.0);
  CHECK(p.resolved["weight_jobsize"].as<double>() == 1000.0);
  CHECK(p.resolved["weight_qos"].as<double>() == 0.0);
  CHECK(p.resolved["max_age_s"].as<double>() == 1209600.0);
  CHECK(p.resolved["decay_half_life_s"].as<double>() == 1209600.0);
  CHECK(p.resolved["favor_small"].as<bool>() == false);
  CHECK(p.resolved["account"].as<std::string>() == "user");
  CHECK(p.resolved["shares"]["alice"].as<double>() == 2.0);
  CHECK(p.resolved["backfill"].as<std::string>() == "easy");
  CHECK(p.resolved["backfill_depth"].as<int>() == 500);
  CHECK(p.resolved["placement"].as<std::string>() == "topology_tree");
  CHECK_THROWS_WITH(registry.create(ConfigNode::load_string("{name: slurm, max_age_s: 0}", "p.yaml")), Catch::Contains("p.yaml") && Catch::Contains("max_age_s"));
  CHECK_THROWS_WITH(registry.create(ConfigNode::load_string("{name: slurm, weight_agee: 1}", "p.yaml")), Catch::Contains("weight_agee") && Catch::Contains("weight_age"));
  // slurm-easy keeps its FIFO order and its defaults.
  const PolicyInstance easy = registry.create(ConfigNode::load_string("{name: slurm-easy}", "p.yaml"));
  CHECK(easy.resolved["placement"].as<std::string>() == "first_fit");
  CHECK(easy.resolved["backfill_depth"].as<int>() == 100);
  CHECK(!easy.resolved["weight_age"]);
}

namespace {

// 8 nodes of 4 devices; leaves (racks) of 2 nodes, pods of 2 leaves. Free devices per
// node: 4 4 | 3 2 | 1 1 | 4 2, so leaves 8, 5, 2, 6 and pods 13, 8.
struct TreeFixture {
  ClusterSpec cluster{{NodeGroup{8, "test", 4}}};
  ClusterState state{cluster};
  SwitchTree tree{{0, 0, 1, 1, 2, 2, 3, 3}, {0, 0, 1, 1}};
  FreeDevices free;
  TreeFixture() {
    state.allocate(std::vector<DeviceId>{8}, 1);           // node 2: 3 free
    state.allocate(std::vector<DeviceId>{12, 13}, 2);      // node 3: 2 free
    state.allocate(std::vector<DeviceId>{16, 17, 18}, 3);  // node 4: 1 free
    state.allocate(std::vector<DeviceId>{20, 21, 22}, 4);  // node 5: 1 free
    state.allocate(std::vector<DeviceId>{28, 29}, 5);      // node 7: 2 free
  }
  std::vector<DeviceId> place(int n) {
    free.reset(state);
    std::vector<DeviceId> out;
    if (!free.tree(n, tree, out)) return {};
    std::sort(out.begin(), out.end());
    return out;
  }
};

}  // namespace

TEST_CASE("topology_tree placement: best-fit node, best-fit leaf, then the fewest leaves", "[policies][slurm][placement]") {
  TreeFixture f;
  // 3 devices: the node with the fewest free devices that holds them (node 2, not node 0).
  CHECK(f.place(3) == std::vector<DeviceId>{9, 10, 11});
  // 2: node 3 (2 free) beats node 7 (2 free) by index.
  CHECK(f.place(2) == std::vector<DeviceId>{14, 15});
  // 6: no node holds it; leaf 3 (6 free) is the best fit (leaf 0 has 8): all of it.
  CHECK(f.place(6) == std::vector<DeviceId>{24, 25, 26, 27, 30, 31});
  // 10: no leaf holds it; pod 0 (13 free) does. Its leaves by best fit in turn: none holds
  // 10, so the fullest first (leaf 0: nodes 0 and 1 whole), then the 2 left in leaf 1 on
  // its best-fit node (node 3, 2 free, not node 2 with 3).
  CHECK(f.place(10) == std::vector<DeviceId>{0, 1, 2, 3, 4, 5, 6, 7, 14, 15});
  // 14: no pod holds it (13, 8): the top switch. Leaf 0 (8) first, then the 6 left fit
  // leaf 3 exactly (best fit over leaf 1's 5 and leaf 2's 2): two leaves, across pods.
  CHECK(f.place(14) == std::vector<DeviceId>{0, 1, 2, 3, 4, 5, 6, 7, 24, 25, 26, 27, 30, 31});
  // 21: everything free; 22: more than is free.
  CHECK(f.place(21).size() == 21);
  CHECK(f.place(22).empty());
  // Without pods, 10 goes to the top switch: leaf 0 (8), then 2 from the best-fit leaf
  // for 2 (leaf 2, 2 free, beats leaf 1's 5 and leaf 3's 6).
  f.tree.pod_of_leaf.clear();
  CHECK(f.place(10) == std::vector<DeviceId>{0, 1, 2, 3, 4, 5, 6, 7, 19, 23});
}

TEST_CASE("topology_tree placement works under every queue policy and follows the scenario's racks", "[policies][slurm][placement]") {
  // No physics: no racks are known, so one leaf: a 2-GPU job goes to the best-fit node.
  // 2 nodes of 4: A takes 3 on node 0 (best fit among equals: node 0), B (1) fits node 0's
  // last device (fewest free that still holds it) rather than node 1.
  const ClusterSpec cluster({NodeGroup{2, "test", 4}});
  for (const char* policy : {"{name: fifo, placement: topology_tree}", "{name: sjf, placement: topology_tree}", "{name: slurm}"}) {
    INFO(policy);
    const PolicyRegistry registry = builtin_policies();
    PolicyInstance p = registry.create(ConfigNode::load_string(policy, "p.yaml"));
    VectorSource source({make_job("A", 0, 3, 100), make_job("B", 1, 1, 100), make_job("C", 2, 4, 100)});
    Simulator sim(cluster, source, *p.policy);
    std::map<std::string, std::vector<DeviceId>> placed;
    struct Rec : Observer {
      std::map<std::string, std::vector<DeviceId>>* placed;
      void on_job_start(const JobState& job) override { (*placed)[job.spec.id] = job.devices; }
    } rec;
    rec.placed = &placed;
    sim.add_observer(rec);
    sim.run();
    CHECK(placed.at("A") == std::vector<DeviceId>{0, 1, 2});
    CHECK(placed.at("B") == std::vector<DeviceId>{3});
    CHECK(placed.at("C") == std::vector<DeviceId>{4, 5, 6, 7});
  }
}

TEST_CASE("topology_tree placement reads racks and pods from the scenario's topology", "[policies][slurm][placement][physics]") {
  // 8 nodes of 4 H100s, racks of 2 nodes. a (4) takes node 0 (best fit among equals); b
  // (6) the best-fit rack that holds it, rack 1 (rack 0 has 4 left): node 2 whole, then 2
  // on node 3. c (10) fits no rack (free 4, 2, 8, 8). With pods of 2 racks (free 6, 16)
  // pod 1 holds it: rack 2 whole, then 2 on node 6 of rack 3. With one pod of all four
  // racks the top switch's best fit takes rack 2, then the 2 left on rack 1 (exactly 2
  // free), node 3.
  schedsim::test::TempDir dir;
  dir.write("jobs.csv", "job_id,submit_time_s,num_gpus,duration_s\na,0,4,1000\nb,1,6,1000\nc,2,10,1000\n");
  const PolicyRegistry reg = builtin_policies();
  for (const int racks_per_pod : {2, 4}) {
    INFO("racks_per_pod " << racks_per_pod);
    const std::string config = dir.write("run.yaml",
        "cluster:\n  nodes: [{count: 8, type: H100-SXM, devices_per_node: 4}]\n"
        "  topology: {nodes_per_rack: 2, racks_per_pod: " + std::to_string(racks_per_pod) + "}\n"
        "workload: {trace: {path: jobs.csv, format: schedsim}}\nphysics: {}\ninformation: oracle\npolicy: {name: slurm}\n");
    const ScenarioConfig scenario = load_scenario(config, {}, std::nullopt, reg);
    RunOptions options{dir.path("out" + std::to_string(racks_per_pod))};
    options.timeline = true;
    run_scenario(scenario, reg, options);
    const auto placed = schedsim::test::read_allocations(dir.path("out" + std::to_string(racks_per_pod) + "/allocations.csv"));
    REQUIRE(placed.size() == 3);
    CHECK(placed[0] == std::pair<std::string, std::vector<int>>{"a", {0, 1, 2, 3}});
    CHECK(placed[1] == std::pair<std::string, std::vector<int>>{"b", {8, 9, 10, 11, 12, 13}});
    const std::vector<int> c = racks_per_pod == 2 ? std::vector<int>{16, 17, 18, 19, 20, 21, 22, 23, 24, 25}
                                                  : std::vector<int>{16, 17, 18, 19, 20, 21, 22, 23, 14, 15};
    CHECK(placed[2] == std::pair<std::string, std::vector<int>>{"c", c});
  }
}
