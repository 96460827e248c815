// pai-reservation and singularity against hand-computed schedules (docs/policies.md).
#include <catch2/catch.hpp>

#include <map>

#include "policies/registry.hpp"
#include "policies/reservation.hpp"
#include "base/error.hpp"
#include "sim/invariant_checker.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::VectorSource;

namespace {

struct Life {
  double start_s = -1, end_s = -1;
  std::vector<DeviceId> first_devices;  // where it first started
  std::uint32_t preemptions = 0, moves = 0;
};

class Lives : public Observer {
 public:
  void on_job_start(const JobState& j) override {
    Life& l = by_id[j.spec.id];
    if (l.first_devices.empty()) l.first_devices = j.devices;
  }
  void on_job_end(const JobState& j) override {
    Life& l = by_id[j.spec.id];
    l.start_s = j.start.seconds();
    l.end_s = j.end.seconds();
    l.preemptions = j.preemptions;
    l.moves = j.moves;
  }
  std::map<std::string, Life> by_id;
};

// Rate 1 on one node, 0.5 across nodes; the consolidated estimate is 1. Checkpoints cost
// 3 s to save and 2 s to restore (a move stalls 5 s).
class NodeLocalPhysics : public PhysicsModel {
 public:
  explicit NodeLocalPhysics(const ClusterSpec& c) : cluster_(c) {}
  std::string placement_problem(const JobSpec&, Span<DeviceId>) const override { return ""; }
  void update_rates(const Simulator& sim, const std::vector<JobSlot>&, std::vector<std::pair<JobSlot, double>>& rates) override {
    for (JobSlot s = sim.first_running(); s != kNoJob; s = sim.job(s).next_in_list) {
      const JobState& j = sim.job(s);
      bool one_node = true;
      for (DeviceId d : j.devices) one_node = one_node && cluster_.node_of(d) == cluster_.node_of(j.devices.front());
      rates.emplace_back(s, one_node ? 1.0 : 0.5);
    }
  }
  double estimated_rate(const JobSpec&, int, int) const override { return 1.0; }
  double checkpoint_save_s(const JobSpec&, int) const override { return 3.0; }
  double checkpoint_restore_s(const JobSpec&, int) const override { return 2.0; }

 private:
  const ClusterSpec& cluster_;
};

// The same with a save of 1 s per GPU, so that victims of one preemption stop at different times.
class PerGpuSavePhysics : public NodeLocalPhysics {
 public:
  using NodeLocalPhysics::NodeLocalPhysics;
  double checkpoint_save_s(const JobSpec& job, int) const override { return job.num_gpus; }
};

std::map<std::string, Life> run(const std::string& policy, const ClusterSpec& cluster, std::vector<JobSpec> jobs, const std::vector<int>* racks = nullptr,
                                PhysicsModel* physics = nullptr) {
  VectorSource source(std::move(jobs));
  SimulatorOptions options;
  options.node_group = racks;
  options.physics = physics;
  const PolicyRegistry registry = builtin_policies();
  PolicyInstance p = registry.create(ConfigNode::load_string(policy, "policy.yaml"));
  Simulator sim(cluster, source, *p.policy, options);
  Lives lives;
  InvariantChecker checker;
  sim.add_observer(lives);
  sim.add_observer(checker);
  sim.run();
  return lives.by_id;
}

std::vector<DeviceId> range(DeviceId from, DeviceId to) {  // [from, to)
  std::vector<DeviceId> out;
  for (DeviceId d = from; d < to; ++d) out.push_back(d);
  return out;
}

JobSpec with_priority(JobSpec j, double priority) {
  j.priority = priority;
  return j;
}

JobSpec elastic(JobSpec j, int min_gpus, int max_gpus) {
  j.min_gpus = min_gpus;
  j.max_gpus = max_gpus;
  return j;
}

}  // namespace

TEST_CASE("compact_pick prefers one node, then one rack, then the fullest nodes", "[policies][reservation]") {
  const ClusterSpec cluster({NodeGroup{4, "test", 4}});
  const std::vector<int> racks = {0, 0, 1, 1};
  std::vector<DeviceId> out;
  // Node 1 holds 2 (best fit for 2), node 3 holds 4.
  REQUIRE(compact_pick(cluster, &racks, {4, 5, 12, 13, 14, 15, 0}, 2, out));
  CHECK(out == std::vector<DeviceId>{4, 5});
  out.clear();
  // 5 devices: no node holds 5; rack 1 holds 6 (nodes 2 and 3), rack 0 holds 3.
  REQUIRE(compact_pick(cluster, &racks, {0, 1, 4, 8, 9, 12, 13, 14, 15}, 5, out));
  CHECK(out == std::vector<DeviceId>{8, 12, 13, 14, 15});
  out.clear();
  CHECK_FALSE(compact_pick(cluster, &racks, {0, 1}, 3, out));
  CHECK(out.empty());
}

TEST_CASE("pai-reservation reserves the rack that frees first for a 16-GPU gang and backfills it only with a job that ends in time",
          "[policies][reservation]") {
  // 4 nodes of 8 GPUs, racks {0, 1} and {2, 3}. At t=0 A (8 GPUs, 100 s) takes node 0,
  // B (8, 1000 s) node 1, C (8, 300 s) node 2, D (4, 200 s) half of node 3.
  // W (16 GPUs) arrives at t=1: rack 0 frees its 16th device at t=1000, rack 1 at t=300
  // (4 free now, D's at 200, C's at 300): W reserves devices 16..31 from t=300.
  // S (4 GPUs, 50 s, t=2) ends at 52 <= 300: it backfills the reserved free devices 28..31.
  // L (4 GPUs, 500 s, t=3) would end after 300: refused there; it waits for A's node
  // (t=100), which is outside the reservation. W starts at t=300 on its rack.
  const ClusterSpec cluster({NodeGroup{4, "test", 8}});
  const std::vector<int> racks = {0, 0, 1, 1};
  const std::vector<JobSpec> jobs = {make_job("A", 0, 8, 100), make_job("B", 0, 8, 1000), make_job("C", 0, 8, 300), make_job("D", 0, 4, 200),
                                     make_job("W", 1, 16, 100), make_job("S", 2, 4, 50),  make_job("L", 3, 4, 500)};
  const auto r = run("{name: pai-reservation}", cluster, jobs, &racks);
  CHECK(r.at("A").first_devices == range(0, 8));
  CHECK(r.at("D").first_devices == range(24, 28));
  CHECK(r.at("S").start_s == Approx(2.0));
  CHECK(r.at("S").first_devices == range(28, 32));
  CHECK(r.at("L").start_s == Approx(100.0));
  CHECK(r.at("L").first_devices == range(0, 4));
  CHECK(r.at("W").start_s == Approx(300.0));
  CHECK(r.at("W").end_s == Approx(400.0));
  CHECK(r.at("W").first_devices == range(16, 32));
  // Without the reservation (work-conserving first fit), L backfills at t=52 and W
  // starts at t=300 spread over both racks.
  const auto skip = run("{name: compose, discipline: skip}", cluster, jobs, &racks);
  CHECK(skip.at("L").start_s == Approx(52.0));
  CHECK(skip.at("W").start_s == Approx(300.0));
  std::vector<DeviceId> spread = range(0, 8);
  for (DeviceId d : range(16, 24)) spread.push_back(d);
  CHECK(skip.at("W").first_devices == spread);
  // Above reserve_min_gpus W gets no reservation (it waited less than reserve_after_s): L
  // takes the free devices at t=52.
  const auto none = run("{name: pai-reservation, reserve_min_gpus: 17}", cluster, jobs, &racks);
  CHECK(none.at("L").start_s == Approx(52.0));
  // reserve_after_s: 0 reserves for every job that waits, W included.
  const auto waited = run("{name: pai-reservation, reserve_min_gpus: 17, reserve_after_s: 0}", cluster, jobs, &racks);
  CHECK(waited.at("L").start_s == Approx(100.0));
  CHECK(waited.at("W").start_s == Approx(300.0));
}

TEST_CASE("pai-reservation judges 'ends before the reservation' by the estimate", "[policies][reservation]") {
  // As above, but S says it runs 400 s (it runs 50): it would end after t=300 and is
  // refused the reserved devices; it starts with L on A's node at t=100.
  const ClusterSpec cluster({NodeGroup{4, "test", 8}});
  const std::vector<int> racks = {0, 0, 1, 1};
  const std::vector<JobSpec> jobs = {make_job("A", 0, 8, 100), make_job("B", 0, 8, 1000), make_job("C", 0, 8, 300), make_job("D", 0, 4, 200),
                                     make_job("W", 1, 16, 100), make_job("S", 2, 4, 50, 400), make_job("L", 3, 4, 500)};
  const auto r = run("{name: pai-reservation}", cluster, jobs, &racks);
  CHECK(r.at("S").start_s == Approx(100.0));
  CHECK(r.at("S").first_devices == range(0, 4));
  CHECK(r.at("L").start_s == Approx(100.0));
  CHECK(r.at("L").first_devices == range(4, 8));
  CHECK(r.at("W").start_s == Approx(300.0));
}

TEST_CASE("singularity shrinks a running elastic job to admit a blocked one", "[policies][singularity]") {
  // 4 devices. E (elastic 2..4, asks 4, 100 s) starts on all 4; R (2 GPUs, 50 s) arrives
  // at t=10: E shrinks to 2 (a move) and R starts at once on the 2 released devices.
  const ClusterSpec cluster({NodeGroup{1, "test", 4}});
  const auto r = run("{name: singularity}", cluster, {elastic(make_job("E", 0, 4, 100), 2, 4), make_job("R", 10, 2, 50)});
  CHECK(r.at("E").start_s == Approx(0.0));
  CHECK(r.at("E").moves == 1);
  CHECK(r.at("E").end_s == Approx(100.0));  // no physics: rate 1 on any count
  CHECK(r.at("R").start_s == Approx(10.0));
  CHECK(r.at("R").end_s == Approx(60.0));
  CHECK(r.at("R").first_devices == std::vector<DeviceId>{2, 3});
  // elastic: false: R waits for E.
  const auto rigid = run("{name: singularity, elastic: false}", cluster, {elastic(make_job("E", 0, 4, 100), 2, 4), make_job("R", 10, 2, 50)});
  CHECK(rigid.at("E").moves == 0);
  CHECK(rigid.at("R").start_s == Approx(100.0));
}

TEST_CASE("singularity preempts only strictly lower priority jobs", "[policies][singularity]") {
  const ClusterSpec cluster({NodeGroup{1, "test", 4}});
  // H (priority 1) preempts L (priority 0) at t=10; L resumes at t=60 with 90 s left.
  const auto r = run("{name: singularity}", cluster, {make_job("L", 0, 4, 100), with_priority(make_job("H", 10, 4, 50), 1)});
  CHECK(r.at("H").start_s == Approx(10.0));
  CHECK(r.at("H").end_s == Approx(60.0));
  CHECK(r.at("L").preemptions == 1);
  CHECK(r.at("L").end_s == Approx(150.0));
  // Equal priority: no preemption.
  const auto equal = run("{name: singularity}", cluster, {make_job("L", 0, 4, 100), make_job("H", 10, 4, 50)});
  CHECK(equal.at("L").preemptions == 0);
  CHECK(equal.at("H").start_s == Approx(100.0));
  const auto off = run("{name: singularity, preemption: false}", cluster, {make_job("L", 0, 4, 100), with_priority(make_job("H", 10, 4, 50), 1)});
  CHECK(off.at("H").start_s == Approx(100.0));
}

TEST_CASE("singularity keeps the devices a preemption frees for the job it preempted for", "[policies][singularity]") {
  // 4 devices. A (1 GPU, save 1 s) and B (3 GPUs, save 3 s) run from t=0; H (priority 1,
  // 4 GPUs) arrives at t=10 and preempts both. A's device is free at t=11, while B still
  // saves: S (1 GPU, t=10.5) and A itself must not take it, or H would preempt again.
  // H starts at t=13 when B's save ends, and ends at 63.
  const ClusterSpec cluster({NodeGroup{1, "test", 4}});
  PerGpuSavePhysics physics(cluster);
  const std::vector<JobSpec> jobs = {make_job("A", 0, 1, 1000), make_job("B", 0, 3, 1000), with_priority(make_job("H", 10, 4, 50), 1),
                                     make_job("S", 10.5, 1, 1000)};
  const auto r = run("{name: singularity}", cluster, jobs, nullptr, &physics);
  CHECK(r.at("H").start_s == Approx(13.0));
  CHECK(r.at("H").end_s == Approx(63.0));
  CHECK(r.at("A").preemptions == 1);
  CHECK(r.at("B").preemptions == 1);
  CHECK(r.at("S").start_s > 63.0);
}

TEST_CASE("singularity migrates a job spread over two nodes onto one when the move pays", "[policies][singularity]") {
  // 2 nodes of 4. X (3 GPUs, 50 s) takes node 0, Y (3, 1000 s) node 1; Z (2, 1000 s, t=1)
  // gets devices 3 and 7 (two nodes: rate 0.5). At t=50 X ends: Z has done 24.5 s of
  // work; 975.5 s left take 1951 s at 0.5 or 975.5 s at 1, saving 975.5 s > the 5 s move.
  // Z moves to node 0 (devices 0, 1), stalls 5 s and ends at 55 + 975.5 = 1030.5.
  const ClusterSpec cluster({NodeGroup{2, "test", 4}});
  NodeLocalPhysics physics(cluster);
  const std::vector<JobSpec> jobs = {make_job("X", 0, 3, 50), make_job("Y", 0, 3, 1000), make_job("Z", 1, 2, 1000)};
  const auto r = run("{name: singularity}", cluster, jobs, nullptr, &physics);
  CHECK(r.at("Z").first_devices == std::vector<DeviceId>{3, 7});
  CHECK(r.at("Z").moves == 1);
  CHECK(r.at("Z").end_s == Approx(1030.5));
  CHECK(r.at("Y").moves == 0);
  CHECK(r.at("Y").end_s == Approx(1000.0));
  // migrate: false: Z stays spread and ends at 1 + 1000 / 0.5.
  const auto stay = run("{name: singularity, migrate: false}", cluster, jobs, nullptr, &physics);
  CHECK(stay.at("Z").moves == 0);
  CHECK(stay.at("Z").end_s == Approx(2001.0));
}

TEST_CASE("pai-reservation and singularity reject bad options with located errors", "[policies][bad-input]") {
  const PolicyRegistry registry = builtin_policies();
  const auto message = [&](const std::string& yaml) {
    try {
      registry.create(ConfigNode::load_string(yaml, "policy.yaml"));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("{name: pai-reservation, reserve_min: 8}") ==
        "policy.yaml:1: unknown key 'reserve_min'; valid keys here: name, reserve_min_gpus, reserve_after_s, max_reservations, depth");
  CHECK(message("{name: pai-reservation, max_reservations: 0}") == "policy.yaml:1: max_reservations: must be a positive integer, got '0'");
  CHECK(message("{name: singularity, max_moves: 2000000}") == "policy.yaml:1: max_moves: must be at most 1000000, found 2000000");
  const PolicyContext none{0, nullptr, {}, nullptr, InformationModel::none()};
  CHECK_THROWS_WITH(registry.create("pai-reservation", none), Catch::Contains("policy 'pai-reservation'"));
}
