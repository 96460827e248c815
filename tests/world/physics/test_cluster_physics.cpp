// The physics model inside the kernel, against closed forms: communication cost of a
// placement, max-min sharing of a congested uplink (and the speed-up when a job leaves),
// memory limits and heterogeneity-aware placement.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "policies/registry.hpp"
#include "world/physics/cluster_physics.hpp"
#include "world/physics/comm_model.hpp"
#include "world/energy/energy.hpp"
#include "base/error.hpp"
#include "sim/invariant_checker.hpp"
#include "sim/simulator.hpp"
#include "world/physics/speed_model.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::VectorSource;

namespace {

struct Rig {  // a cluster with its topology and physics
  Rig(std::vector<NodeGroup> groups, const std::string& topology_yaml, PhysicsConfig config = {})
      : cluster(groups),
        topology(cluster, TopologyConfig::from_yaml(ConfigNode::load_string(topology_yaml, "topology")),
                 [this](const std::string& type) { return accelerators.get(type).intra_node_link_bytes_per_s; }),
        physics(cluster, topology, accelerators, profiles, config) {}
  AcceleratorCatalogue accelerators = AcceleratorCatalogue::builtin();
  WorkloadProfileCatalogue profiles = WorkloadProfileCatalogue::builtin();
  ClusterSpec cluster;
  TopologySpec topology;
  ClusterPhysics physics;
};

std::vector<DeviceId> range(DeviceId from, DeviceId to) {
  std::vector<DeviceId> v;
  for (DeviceId d = from; d < to; ++d) v.push_back(d);
  return v;
}

// Starts each job on the devices the test names for it.
class PinnedPolicy : public Policy {
 public:
  std::map<std::string, std::vector<DeviceId>> where;
  std::string name() const override { return "pinned"; }
  void on_job_queued(const SchedulerView&, JobSlot) override {}
  void decide(const SchedulerView& view, ActionBatch& out) override {
    for (JobSlot s = view.first_pending(); s != kNoJob; s = view.next_pending(s)) out.start(s, where.at(view.job(s).id()));
  }
};

class EndTimes : public Observer {
 public:
  void on_job_end(const JobState& j) override {
    end_s[j.spec.id] = j.end.seconds();
    devices[j.spec.id] = j.devices;
  }
  std::map<std::string, double> end_s;
  std::map<std::string, std::vector<DeviceId>> devices;
};

// Runs `jobs` under `policy` with `physics`, invariants checked after every event.
EndTimes simulate(const ClusterSpec& cluster, PhysicsModel& physics, Policy& policy, std::vector<JobSpec> jobs) {
  VectorSource source(std::move(jobs));
  SimulatorOptions options;
  options.physics = &physics;
  Simulator sim(cluster, source, policy, options);
  EndTimes ends;
  InvariantChecker checker;
  sim.add_observer(ends);
  sim.add_observer(checker);
  sim.run();
  return ends;
}

JobSpec gpt2(const std::string& id, double submit_s, int gpus, double work_s) {
  JobSpec j = make_job(id, submit_s, gpus, work_s);
  j.model = "GPT-2-1.5B";
  return j;
}

}  // namespace

TEST_CASE("an 8-GPU job in one NVLink node vs split over two nodes costs exactly the ring formula", "[sim][physics]") {
  Rig rig({NodeGroup{2, "H100-SXM", 8}}, "{nic_bandwidth_gbps: 400, nvlink_latency_us: 1, network_latency_us: 5}");
  const JobSpec job = gpt2("j", 0, 8, 100);
  const WorkloadProfile& p = rig.profiles.get("GPT-2-1.5B");
  const double compute_s = iteration_compute_time(p, rig.accelerators.get("H100-SXM"), 8).time_s;
  const double g = p.gradient_bytes;
  // One node: NVLink, 450 GB/s per direction per H100, 1 us per step.
  const double inside = compute_s + 2.0 * 7 / 8 * g / 450e9 + 2 * 7 * 1e-6;
  // 4 + 4 over two nodes: the node NIC bundle (8 x 400 Gb/s = 400 GB/s) is the bottleneck,
  // 5 us per step.
  const double split = compute_s + 2.0 * 7 / 8 * g / 400e9 + 2 * 7 * 5e-6;
  std::vector<DeviceId> split_devices = range(0, 4);
  for (DeviceId d = 8; d < 12; ++d) split_devices.push_back(d);
  CHECK(rig.physics.iteration_time_s(job, range(0, 8), MaxMinFairShare::kUnlimited) == Approx(inside).epsilon(1e-12));
  CHECK(rig.physics.iteration_time_s(job, split_devices, MaxMinFairShare::kUnlimited) == Approx(split).epsilon(1e-12));
  CHECK(rig.physics.reference_iteration_time_s(job, 8) == Approx(inside).epsilon(1e-12));  // consolidated on H100
  CHECK(rig.physics.estimated_rate(job, 0, 8) == Approx(1.0).epsilon(1e-12));
}

TEST_CASE("two jobs crossing one uplink share it and the survivor speeds up when the other ends", "[sim][physics]") {
  // 4 nodes of 8 H100s, 2 nodes per rack, uplinks oversubscribed k:1:
  // rack uplink U = 2 nodes x 8 NICs x 50 GB/s / k. Jobs a and b each span both racks
  // (a on nodes 0 and 2, b on nodes 1 and 3): both cross both uplinks. Alone, a job
  // iterates in t_alone (its ring at U) and its all-reduce traffic averages
  // wire / t_alone. k is the smallest whole ratio that makes two jobs ask more than U
  // (U < wire / (compute + latency)); max-min then gives each U / 2 and an iteration
  // takes wire / (U / 2). When b ends, a runs alone again.
  const WorkloadProfileCatalogue profiles = WorkloadProfileCatalogue::builtin();
  const AcceleratorCatalogue accelerators = AcceleratorCatalogue::builtin();
  const WorkloadProfile& p = profiles.get("GPT-2-1.5B");
  const double compute_s = iteration_compute_time(p, accelerators.get("H100-SXM"), 16).time_s;
  const double wire = 2.0 * 15 / 16 * p.gradient_bytes;
  const double latency_s = 2 * 15 * 5e-6;
  const int k = static_cast<int>(std::ceil(2 * 8 * 50e9 * (compute_s + latency_s) / wire)) + 1;
  Rig rig({NodeGroup{4, "H100-SXM", 8}}, "{nodes_per_rack: 2, oversubscription: " + std::to_string(k) + ", nic_bandwidth_gbps: 400}");
  auto t_iter = [&](double bw) { return compute_s + wire / bw + latency_s; };
  const double uplink = 2 * 8 * 50e9 / k;
  const double t_ref = t_iter(400e9);  // consolidated reference: 2 nodes, uncontended NICs
  const double t_alone = t_iter(uplink);
  const double demand = wire / t_alone;
  REQUIRE(2 * demand > uplink);  // contended together
  REQUIRE(demand < uplink);      // alone, it fits
  const double rate_shared = t_ref / (wire / (uplink / 2)), rate_alone = t_ref / t_alone;
  REQUIRE(rate_shared < rate_alone);
  REQUIRE(rate_alone < 1.0);

  const double work_a = 3000, work_b = 1000;
  PinnedPolicy policy;
  policy.where["a"] = range(0, 8);
  for (DeviceId d = 16; d < 24; ++d) policy.where["a"].push_back(d);
  policy.where["b"] = range(8, 16);
  for (DeviceId d = 24; d < 32; ++d) policy.where["b"].push_back(d);
  const EndTimes ends = simulate(rig.cluster, rig.physics, policy, {gpt2("a", 0, 16, work_a), gpt2("b", 0, 16, work_b)});
  const double end_b = work_b / rate_shared;
  const double end_a = end_b + (work_a - work_b) / rate_alone;
  CHECK(ends.end_s.at("b") == Approx(end_b).margin(2e-6));
  CHECK(ends.end_s.at("a") == Approx(end_a).margin(4e-6));
  // The same through the public formula: the share below the demand sets the pace.
  std::vector<DeviceId> a_devices = policy.where["a"];
  CHECK(rig.physics.iteration_time_s(gpt2("a", 0, 16, 1), a_devices, uplink / 2) == Approx(wire / (uplink / 2)).epsilon(1e-12));
  CHECK(rig.physics.iteration_time_s(gpt2("a", 0, 16, 1), a_devices, demand * 1.5) == Approx(t_alone).epsilon(1e-12));
}

TEST_CASE("jobs whose average traffic fits a shared uplink run as if alone", "[sim][physics]") {
  // The same jobs with 2:1 uplinks (400 GB/s): each job alone runs exactly as its
  // consolidated reference (its ring is bound by its 400 GB/s NIC bundles), rate 1, and its
  // average traffic wire / t_ref stays at or below half the uplink, so both fit and
  // neither slows the other.
  Rig rig({NodeGroup{4, "H100-SXM", 8}}, "{nodes_per_rack: 2, oversubscription: 2, nic_bandwidth_gbps: 400}");
  const WorkloadProfile& p = rig.profiles.get("GPT-2-1.5B");
  const double compute_s = iteration_compute_time(p, rig.accelerators.get("H100-SXM"), 16).time_s;
  const double wire = 2.0 * 15 / 16 * p.gradient_bytes;
  const double t_ref = compute_s + wire / 400e9 + 2 * 15 * 5e-6;
  REQUIRE(2 * wire / t_ref <= 400e9);
  PinnedPolicy policy;
  policy.where["a"] = range(0, 8);
  for (DeviceId d = 16; d < 24; ++d) policy.where["a"].push_back(d);
  policy.where["b"] = range(8, 16);
  for (DeviceId d = 24; d < 32; ++d) policy.where["b"].push_back(d);
  const EndTimes ends = simulate(rig.cluster, rig.physics, policy, {gpt2("a", 0, 16, 3000), gpt2("b", 0, 16, 1000)});
  CHECK(ends.end_s.at("a") == Approx(3000).margin(1e-6));
  CHECK(ends.end_s.at("b") == Approx(1000).margin(1e-6));
}

TEST_CASE("a job too large for a device's memory is refused there and placed where it fits", "[sim][physics]") {
  // LLaMA-2-7B unsharded needs 112 GB per device: more than an H100 (80 GB), less than an
  // H200 (141 GB).
  Rig rig({NodeGroup{1, "H100-SXM", 8}, NodeGroup{1, "H200", 8}}, "{}");
  JobSpec big = make_job("big", 0, 2, 100);
  big.model = "LLaMA-2-7B";
  CHECK_THAT(rig.physics.placement_problem(big, range(0, 2)), Catch::Contains("needs 112.0 GB per device (profile LLaMA-2-7B) but device 0 (H100-SXM) has 80.0 GB"));
  CHECK(rig.physics.placement_problem(big, range(8, 10)).empty());
  CHECK(rig.physics.estimated_rate(big, 0, 2) == 0.0);
  // FIFO with first-fit would take devices 0-1; the memory-aware filter sends it to the H200s.
  const PolicyRegistry registry = builtin_policies();
  for (const std::string placement : {"first_fit", "packed", "random", "spread", "fastest_type"}) {
    PolicyInstance p = registry.create(ConfigNode::load_string("{name: fifo, placement: " + placement + "}", "p"));
    EndTimes ends = simulate(rig.cluster, rig.physics, *p.policy, {big, gpt2("small", 0, 2, 50)});
    INFO(placement);
    REQUIRE(ends.devices.count("big") == 1);
    for (DeviceId d : ends.devices.at("big")) CHECK(d >= 8);
  }
}

TEST_CASE("heterogeneity-aware placement puts a job on its fastest type", "[sim][physics]") {
  Rig rig({NodeGroup{1, "V100", 8}, NodeGroup{1, "H100-SXM", 8}}, "{}", PhysicsConfig{"V100"});
  const JobSpec resnet = [] {
    JobSpec j = make_job("r", 0, 4, 1000);
    j.model = "ResNet-50";
    return j;
  }();
  const double v100 = rig.physics.estimated_rate(resnet, 0, 4), h100 = rig.physics.estimated_rate(resnet, 1, 4);
  CHECK(v100 == Approx(1.0));  // the reference type
  CHECK(h100 > 2.0);           // 989 vs 125 TFLOP/s bf16 peak, same efficiency
  const PolicyRegistry registry = builtin_policies();
  auto run_with = [&](const std::string& placement) {
    PolicyInstance p = registry.create(ConfigNode::load_string("{name: fifo, placement: " + placement + "}", "p"));
    return simulate(rig.cluster, rig.physics, *p.policy, {resnet});
  };
  const EndTimes agnostic = run_with("first_fit"), aware = run_with("fastest_type");
  CHECK(agnostic.devices.at("r") == range(0, 4));  // V100s come first
  CHECK(agnostic.end_s.at("r") == Approx(1000).margin(1e-5));
  CHECK(aware.devices.at("r") == range(8, 12));
  CHECK(aware.end_s.at("r") == Approx(1000 / h100).margin(1e-5));
}

TEST_CASE("on a measured throughput matrix the V100 vs K80 completion times follow the measured ratio", "[sim][physics]") {
  // A hand-made matrix in Gavel's layout: 10 steps/s on a V100, 2.5 on a K80, and on two
  // GPUs 18 consolidated, 12 spread over two servers.
  const ThroughputMatrix matrix = ThroughputMatrix::parse(R"J({
    "v100": {"('ResNet-50 (batch size 64)', 1)": {"null": 10.0}, "('ResNet-50 (batch size 64)', 2)": {"null": 18.0}},
    "k80": {"('ResNet-50 (batch size 64)', 1)": {"null": 2.5}},
    "v100_unconsolidated": {"('ResNet-50 (batch size 64)', 2)": {"null": 12.0}}
  })J", "matrix.json");
  AcceleratorCatalogue accelerators = AcceleratorCatalogue::builtin();
  WorkloadProfileCatalogue profiles = WorkloadProfileCatalogue::builtin();
  const ClusterSpec cluster({NodeGroup{1, "K80", 4}, NodeGroup{2, "V100", 1}});
  const TopologySpec topology(cluster, TopologyConfig{}, [&](const std::string& t) { return accelerators.get(t).intra_node_link_bytes_per_s; });
  PhysicsConfig config;
  config.reference_device = "V100";
  ClusterPhysics physics(cluster, topology, accelerators, profiles, config, &matrix);
  auto job = [](const std::string& id, int gpus) {
    JobSpec j = make_job(id, 0, gpus, 1000);  // 1000 s on the reference: 10,000 steps on a V100
    j.model = "ResNet-50 (batch size 64)";
    return j;
  };
  CHECK(physics.estimated_rate(job("x", 1), 0, 1) == Approx(0.25));  // K80: 2.5 / 10
  CHECK(physics.estimated_rate(job("x", 1), 1, 1) == Approx(1.0));
  PinnedPolicy policy;
  policy.where["on-k80"] = {0};
  policy.where["on-v100"] = {4};
  policy.where["spread"] = {4, 5};  // two single-GPU V100 servers: unconsolidated
  {
    const EndTimes ends = simulate(cluster, physics, policy, {job("on-k80", 1), job("on-v100", 1)});
    CHECK(ends.end_s.at("on-v100") == Approx(1000).margin(1e-5));
    CHECK(ends.end_s.at("on-k80") == Approx(4000).margin(1e-5));  // the measured 10 / 2.5
  }
  {
    const EndTimes ends = simulate(cluster, physics, policy, {job("spread", 2)});
    CHECK(ends.end_s.at("spread") == Approx(1000 * 18.0 / 12.0).margin(1e-5));  // reference: consolidated
  }
  // A job type the matrix has not measured on a type cannot be placed there.
  JobSpec unknown = job("k80x2", 2);
  CHECK_THAT(physics.placement_problem(unknown, std::vector<DeviceId>{0, 1}), Catch::Contains("has no measurement of 'ResNet-50 (batch size 64)' on 2 K80"));
}

TEST_CASE("a matrix entry of 0 steps/s refuses the placement as 'cannot run', not as a missing measurement", "[sim][physics]") {
  // Gavel records 0 where a job type does not run (ResNet-50 batch 128 on 2-8 K80s).
  const ThroughputMatrix matrix = ThroughputMatrix::parse(R"J({
    "v100": {"('ResNet-50 (batch size 128)', 2)": {"null": 18.0}},
    "k80": {"('ResNet-50 (batch size 128)', 2)": {"null": 0.0}}
  })J", "matrix.json");
  AcceleratorCatalogue accelerators = AcceleratorCatalogue::builtin();
  WorkloadProfileCatalogue profiles = WorkloadProfileCatalogue::builtin();
  const ClusterSpec cluster({NodeGroup{1, "K80", 4}, NodeGroup{1, "V100", 4}});
  const TopologySpec topology(cluster, TopologyConfig{}, [&](const std::string& t) { return accelerators.get(t).intra_node_link_bytes_per_s; });
  PhysicsConfig config;
  config.reference_device = "V100";
  ClusterPhysics physics(cluster, topology, accelerators, profiles, config, &matrix);
  JobSpec j = make_job("r", 0, 2, 1000);
  j.model = "ResNet-50 (batch size 128)";
  CHECK(physics.estimated_rate(j, 0, 2) == 0.0);
  CHECK(physics.placement_problem(j, std::vector<DeviceId>{0, 1}) ==
        "the throughput matrix records 0 steps/s for 'ResNet-50 (batch size 128)' on 2 K80 devices (it cannot run there)");
  CHECK(physics.placement_problem(j, std::vector<DeviceId>{4, 5}).empty());
}

TEST_CASE("Gavel's published matrix gives its measured V100 over K80 speed-up", "[sim][physics][shared-data]") {
  const std::string data = schedsim::test::shared_data_dir();
  if (data.empty()) {
    WARN("skipped: ../shared/data is absent (set SCHEDSIM_SHARED_DATA to its path to run this test)");
    return;
  }
  const ThroughputMatrix matrix = ThroughputMatrix::load_file(data + "/gavel/simulation_throughputs.json");
  AcceleratorCatalogue accelerators = AcceleratorCatalogue::builtin();
  WorkloadProfileCatalogue profiles = WorkloadProfileCatalogue::builtin();
  const ClusterSpec cluster({NodeGroup{1, "K80", 4}, NodeGroup{1, "V100", 4}});
  const TopologySpec topology(cluster, TopologyConfig{}, [&](const std::string& t) { return accelerators.get(t).intra_node_link_bytes_per_s; });
  PhysicsConfig config;
  config.reference_device = "V100";
  ClusterPhysics physics(cluster, topology, accelerators, profiles, config, &matrix);
  for (const std::string model : {"ResNet-50 (batch size 64)", "A3C", "Transformer (batch size 64)"}) {
    JobSpec j = make_job("j", 0, 1, 3600);
    j.model = model;
    const double ratio = *matrix.isolated_steps_per_s(model, "k80", 1) / *matrix.isolated_steps_per_s(model, "v100", 1);
    INFO(model);
    CHECK(physics.estimated_rate(j, 0, 1) == Approx(ratio).epsilon(1e-12));
    CHECK(physics.estimated_rate(j, 1, 1) == Approx(1.0).epsilon(1e-12));
  }
}

TEST_CASE("co-located jobs slow down by the interference factor until they stop sharing a node", "[sim][physics]") {
  // Two 1-GPU ResNet-50 jobs on the same 8-GPU node with interference_factor 0.5: both run
  // at half speed while they share it. b (work 100 s) ends at 200 s; a (work 300 s) has
  // done 100 s by then and finishes its last 200 s alone at full speed: at 400 s.
  PhysicsConfig config;
  config.interference_factor = 0.5;
  Rig rig({NodeGroup{1, "H100-SXM", 8}}, "{}", config);
  auto job = [](const std::string& id, double work) {
    JobSpec j = make_job(id, 0, 1, work);
    j.model = "ResNet-50";
    return j;
  };
  PinnedPolicy policy;
  policy.where["a"] = {0};
  policy.where["b"] = {1};
  const EndTimes ends = simulate(rig.cluster, rig.physics, policy, {job("a", 300), job("b", 100)});
  CHECK(ends.end_s.at("b") == Approx(200).margin(1e-5));
  CHECK(ends.end_s.at("a") == Approx(400).margin(1e-5));
}

TEST_CASE("profile-less elastic jobs are estimated by Amdahl's law and rigid ones at rate 1", "[sim][physics][elastic]") {
  Rig rig({NodeGroup{1, "V100", 8}}, "{}");
  JobSpec elastic = make_job("e", 0, 2, 100);
  elastic.min_gpus = 1;
  elastic.max_gpus = 4;
  // serial fraction 0.05: speedup(n) = 1 / (0.05 + 0.95 / n)
  const double s1 = 1.0, s2 = 1.0 / (0.05 + 0.95 / 2), s4 = 1.0 / (0.05 + 0.95 / 4);
  CHECK(rig.physics.estimated_rate(elastic, 0, 1) == Approx(s1 / s2).epsilon(1e-12));
  CHECK(rig.physics.estimated_rate(elastic, 0, 2) == Approx(1.0).epsilon(1e-12));
  CHECK(rig.physics.estimated_rate(elastic, 0, 4) == Approx(s4 / s2).epsilon(1e-12));
  CHECK(rig.physics.estimated_rate(make_job("r", 0, 2, 100), 0, 2) == 1.0);
}

TEST_CASE("a communication-bound job draws power by its compute share of the iteration", "[sim][physics][energy]") {
  // Job a alone on nodes 0 and 2 (two racks): its ring crosses the 4:1 oversubscribed
  // uplinks (200 GB/s), so u = compute / (compute + comm) < 1 and each of its 16 devices
  // draws idle + u (TDP - idle); the 16 free devices draw idle.
  Rig rig({NodeGroup{4, "H100-SXM", 8}}, "{nodes_per_rack: 2, oversubscription: 4, nic_bandwidth_gbps: 400}");
  const WorkloadProfile& p = rig.profiles.get("GPT-2-1.5B");
  const AcceleratorSpec& h100 = rig.accelerators.get("H100-SXM");
  const double compute_s = iteration_compute_time(p, h100, 16).time_s;
  auto t_iter = [&](double bw) { return compute_s + 2.0 * 15 / 16 * p.gradient_bytes / bw + 2 * 15 * 5e-6; };
  const double u = compute_s / t_iter(200e9);
  REQUIRE(u < 0.99);
  const double run_s = 1000.0 / (t_iter(400e9) / t_iter(200e9));  // work / rate
  PinnedPolicy policy;
  policy.where["a"] = range(0, 8);
  for (DeviceId d = 16; d < 24; ++d) policy.where["a"].push_back(d);
  VectorSource source({gpt2("a", 0, 16, 1000)});
  SimulatorOptions options;
  options.physics = &rig.physics;
  Simulator sim(rig.cluster, source, policy, options);
  EnergyMeter meter(sim, {DevicePower{h100.idle_w, h100.tdp_w}}, 1.0, nullptr);
  double job_kwh = 0, u_seen = 0;
  struct Grab : Observer {
    const EnergyMeter* m;
    const ClusterPhysics* physics;
    double *kwh, *u;
    void on_job_end(const JobState&) override {
      *kwh = m->last_job().energy_kwh;
      *u = physics->compute_utilization(0);  // still placed until the end of the instant
    }
  } grab;
  grab.m = &meter;
  grab.physics = &rig.physics;
  grab.kwh = &job_kwh;
  grab.u = &u_seen;
  sim.add_observer(meter);
  sim.add_observer(grab);
  sim.run();
  CHECK(u_seen == Approx(u).epsilon(1e-12));
  CHECK(job_kwh == Approx(16 * (h100.idle_w + u * (h100.tdp_w - h100.idle_w)) * run_s / 3.6e6).epsilon(1e-6));
  CHECK(meter.totals().it_energy_kwh == Approx(job_kwh + 16 * h100.idle_w * run_s / 3.6e6).epsilon(1e-6));
}
