// elastic-goodput and gandiva against hand-computed schedules.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <sstream>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "policies/registry.hpp"
#include "base/error.hpp"
#include "sim/invariant_checker.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::VectorSource;

namespace {

// Checkpoints cost 3 s to save and 2 s to restore (a resize stalls 5 s); rigid jobs run
// at rate 1, elastic jobs at devices held / num_gpus (linear scaling), and the estimate
// the policy sees says the same.
class LinearPhysics : public PhysicsModel {
 public:
  std::string placement_problem(const JobSpec&, Span<DeviceId>) const override { return ""; }
  void update_rates(const Simulator& sim, const std::vector<JobSlot>&, std::vector<std::pair<JobSlot, double>>& rates) override {
    for (JobSlot s = sim.first_running(); s != kNoJob; s = sim.job(s).next_in_list) {
      const JobState& j = sim.job(s);
      rates.emplace_back(s, j.spec.is_elastic() ? static_cast<double>(j.devices.size()) / j.spec.num_gpus : 1.0);
    }
  }
  double estimated_rate(const JobSpec& job, int, int n) const override { return job.is_elastic() ? static_cast<double>(n) / job.num_gpus : 1.0; }
  double checkpoint_save_s(const JobSpec&, int) const override { return 3.0; }
  double checkpoint_restore_s(const JobSpec&, int) const override { return 2.0; }
};

// The same rates with free checkpoints.
class FreeCheckpointPhysics : public LinearPhysics {
 public:
  double checkpoint_save_s(const JobSpec&, int) const override { return 0.0; }
  double checkpoint_restore_s(const JobSpec&, int) const override { return 0.0; }
};

struct Record {
  double start_s, end_s, work_s;
  std::uint32_t preemptions, moves;
};

class Records : public Observer {
 public:
  void on_job_end(const JobState& j) override { by_id[j.spec.id] = {j.start.seconds(), j.end.seconds(), j.work_done_s, j.preemptions, j.moves}; }
  std::map<std::string, Record> by_id;
};

std::map<std::string, Record> run(const std::string& policy, std::vector<JobSpec> jobs, int devices, bool physics, bool free_checkpoints = false) {
  const ClusterSpec cluster({NodeGroup{1, "test", devices}});
  VectorSource source(std::move(jobs));
  LinearPhysics model;
  FreeCheckpointPhysics free_model;
  SimulatorOptions options;
  if (physics) options.physics = free_checkpoints ? static_cast<PhysicsModel*>(&free_model) : &model;
  const PolicyRegistry registry = builtin_policies();
  PolicyInstance p = registry.create(ConfigNode::load_string(policy, "policy.yaml"));
  Simulator sim(cluster, source, *p.policy, options);
  Records records;
  InvariantChecker checker;
  sim.add_observer(records);
  sim.add_observer(checker);
  sim.run();
  return records.by_id;
}

JobSpec elastic_job(const std::string& id, double submit_s, double duration_s, int min_gpus, int max_gpus) {
  JobSpec j = make_job(id, submit_s, 1, duration_s);
  j.min_gpus = min_gpus;
  j.max_gpus = max_gpus;
  return j;
}

}  // namespace

TEST_CASE("elastic-goodput grows a job into a spare device and the restart cost delays it by 5 s", "[policies][elastic]") {
  // a: 1 GPU asked (min 1 max 2) and 100 s of work on 2 devices. t (1 GPU) arrives at 10
  // and takes device 1 until 11. At 11 a has 89 s left: growing to 2 devices saves
  // 89 - 44.5 = 44.5 s > 5 s of checkpoint: it stalls 11..16 then runs 89 s of work at
  // rate 2: ends at 16 + 44.5 = 60.5 instead of 100 (JCT shorter by 44.5 - 5 = 39.5 s).
  const auto r = run("elastic-goodput", {elastic_job("a", 0, 100, 1, 2), make_job("t", 10, 1, 1)}, 2, true);
  CHECK(r.at("a").start_s == 0);
  CHECK(r.at("a").end_s == Approx(60.5).margin(1e-6));
  CHECK(r.at("a").moves == 1);
  CHECK(r.at("a").work_s == Approx(100).margin(1e-6));
  CHECK(r.at("t").end_s == 11);
  const auto fifo = run("fifo", {elastic_job("a", 0, 100, 1, 2), make_job("t", 10, 1, 1)}, 2, true);
  CHECK(fifo.at("a").end_s == Approx(100).margin(1e-6));
  CHECK(fifo.at("a").end_s - r.at("a").end_s == Approx(39.5).margin(1e-6));
}

TEST_CASE("elastic-goodput does not grow a job when the restart cost exceeds the time saved", "[policies][elastic]") {
  // a has 20 s of work. At 11, 9 s are left: rate 2 would save 9 - 4.5 = 4.5 s, less than
  // the 5 s checkpoint, so a stays on one device and ends at 20.
  const auto r = run("elastic-goodput", {elastic_job("a", 0, 20, 1, 2), make_job("t", 10, 1, 1)}, 2, true);
  CHECK(r.at("a").end_s == Approx(20).margin(1e-6));
  CHECK(r.at("a").moves == 0);
  // With 22 s of work, 11 s are left at 11: saving 5.5 s > 5 s pays: stall to 16, end 21.5.
  const auto g = run("elastic-goodput", {elastic_job("a", 0, 22, 1, 2), make_job("t", 10, 1, 1)}, 2, true);
  CHECK(g.at("a").end_s == Approx(21.5).margin(1e-6));
  CHECK(g.at("a").moves == 1);
}

TEST_CASE("elastic-goodput shrinks an elastic job to admit a blocked rigid job and grows it back", "[policies][elastic]") {
  // a grows to 2 devices at 11 (stall to 16, rate 2: 81 s left at 20). Rigid r (1 GPU,
  // 10 s) arrives at 20: a shrinks to 1 device (stall 20..25) and r starts at once on the
  // freed device. At 30 r ends; a has 81 - 5 = 76 s left, grows again (stall 30..35) and
  // ends at 35 + 38 = 73.
  const auto r = run("elastic-goodput", {elastic_job("a", 0, 100, 1, 2), make_job("t", 10, 1, 1), make_job("r", 20, 1, 10)}, 2, true);
  CHECK(r.at("r").start_s == 20);
  CHECK(r.at("r").end_s == 30);
  CHECK(r.at("a").moves == 3);
  CHECK(r.at("a").end_s == Approx(73).margin(1e-6));
  CHECK(r.at("a").work_s == Approx(100).margin(1e-6));
}

TEST_CASE("elastic-goodput without physics starts elastic jobs at min_gpus and never resizes", "[policies][elastic]") {
  const auto r = run("elastic-goodput", {elastic_job("a", 0, 100, 1, 2), make_job("t", 10, 1, 1)}, 2, false);
  CHECK(r.at("a").end_s == 100);
  CHECK(r.at("a").moves == 0);
  CHECK(r.at("t").start_s == 10);
}

TEST_CASE("gandiva time-slices two long jobs on one GPU and conserves work", "[policies][gandiva]") {
  // A (1000 s) runs from 0. B (1000 s) arrives at 1 and waits. The probe P (10 s) arrives
  // at 650: A has used its 600 s quantum, so it is preempted (free checkpoint) with 350 s
  // left and goes to the back of the queue; B starts at 650 and ends at 1650, then P
  // runs 1650..1660 and A its last 350 s: 1660..2010. The GPU never idles: 2010 s of work.
  const auto r = run("{name: gandiva, quantum_s: 600}", {make_job("A", 0, 1, 1000), make_job("B", 1, 1, 1000), make_job("P", 650, 1, 10)}, 1, false);
  CHECK(r.at("B").start_s == 650);
  CHECK(r.at("B").start_s < r.at("A").end_s);
  CHECK(r.at("A").preemptions == 1);
  CHECK(r.at("B").end_s == 1650);
  CHECK(r.at("P").start_s == 1650);
  CHECK(r.at("P").end_s == 1660);
  CHECK(r.at("A").end_s == 2010);
  CHECK(r.at("A").work_s + r.at("B").work_s + r.at("P").work_s == Approx(2010).margin(1e-6));
  // FIFO runs A to the end first.
  const auto fifo = run("fifo", {make_job("A", 0, 1, 1000), make_job("B", 1, 1, 1000), make_job("P", 650, 1, 10)}, 1, false);
  CHECK(fifo.at("B").start_s == 1000);
}

TEST_CASE("gandiva pays checkpoint costs under physics and waits for the save", "[policies][gandiva]") {
  // At 650 A is preempted and saves for 3 s; B starts at 653, restores nothing (fresh),
  // and ends at 1653. P runs 1653..1663; A restores 2 s and runs its last 350 s: 2015.
  const auto r = run("{name: gandiva, quantum_s: 600}", {make_job("A", 0, 1, 1000), make_job("B", 1, 1, 1000), make_job("P", 650, 1, 10)}, 1, true);
  CHECK(r.at("B").start_s == 653);
  CHECK(r.at("B").end_s == 1653);
  CHECK(r.at("P").end_s == 1663);
  CHECK(r.at("A").end_s == 2015);
  CHECK(r.at("A").work_s == Approx(1000).margin(1e-6));
}

TEST_CASE("gandiva under physics with free checkpoints starts the waiting job in the same batch", "[policies][gandiva]") {
  // A zero save time frees A's device at once: the same schedule as without physics.
  const auto r = run("gandiva", {make_job("A", 0, 1, 1000), make_job("B", 1, 1, 1000), make_job("P", 650, 1, 10)}, 1, true, true);
  CHECK(r.at("B").start_s == 650);
  CHECK(r.at("P").end_s == 1660);
  CHECK(r.at("A").end_s == 2010);
  CHECK(r.at("A").preemptions == 1);
}

TEST_CASE("gandiva and elastic-goodput reject bad options with located errors", "[policies][bad-input]") {
  const PolicyRegistry registry = builtin_policies();
  CHECK_THROWS_WITH(registry.create(ConfigNode::load_string("{name: gandiva, quantum_s: 0}", "p.yaml")), Catch::Contains("quantum_s"));
  CHECK_THROWS_WITH(registry.create(ConfigNode::load_string("{name: elastic-goodput, max_resizes: 0}", "p.yaml")), Catch::Contains("max_resizes"));
  CHECK(registry.create("gandiva").resolved["quantum_s"].as<double>() == 600);
  CHECK(registry.create("elastic-goodput").resolved["max_resizes"].as<int>() == 4);
}

TEST_CASE("elastic-goodput and gandiva complete a synthetic elastic workload under cluster physics", "[policies][elastic][gandiva][physics]") {
  // The golden scenario with half the jobs elastic and the cluster physics on (Amdahl
  // scaling for profile-less elastic jobs, default checkpoint sizes).
  const PolicyRegistry registry = builtin_policies();
  const std::string config = std::string(SCHEDSIM_SOURCE_DIR) + "/tests/golden/scenario.yaml";
  for (const std::string policy : {"elastic-goodput", "{name: elastic-goodput, max_resizes: 1}", "gandiva", "{name: gandiva, quantum_s: 60}", "fifo"}) {
    INFO("policy " << policy);
    const ScenarioConfig scenario = load_scenario(
        config, {"policy=" + policy, "workload.synthetic.elastic={fraction: 0.5, min_scale: 0.5, max_scale: 2}", "physics={}"}, std::nullopt, registry);
    const RunResult r = run_scenario(scenario, registry, RunOptions{});
    CHECK(r.summary.jobs_completed == 80);
    CHECK(r.summary.jobs_arrived == 80);
    if (policy.find("elastic-goodput") != std::string::npos) CHECK(r.summary.moves > 0);
    if (policy.find("gandiva") != std::string::npos) CHECK(r.summary.preemptions > 0);
  }
}

TEST_CASE("gandiva and elastic-goodput place each job on one device type when mixed types are forbidden", "[policies][elastic][gandiva][physics][placement]") {
  // Two types of 8 devices (2 nodes of 4 H100s, 2 of 4 of a custom type); gangs of 1, 3
  // and 6, half of them elastic. Before, both policies took the lowest free devices (and
  // those their preemptions or shrinks released) whatever their type: a set spanning both
  // types, which the kernel refuses under forbid, and the run stopped. Now each job's
  // devices come from one type where it can run (preemption and shrinking count devices
  // per type), every job completes and no allocation spans types.
  schedsim::test::TempDir dir;
  const std::string config = dir.write("forbid.yaml", R"(seed: 5
information: oracle
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
    gpus: {1: 0.3, 3: 0.4, 6: 0.3}
    models: {ResNet-50: 1}
    elastic: {fraction: 0.5, min_scale: 0.5, max_scale: 1.5}
physics: {mixed_types: forbid}
policy: gandiva
)");
  const PolicyRegistry registry = builtin_policies();
  for (const std::string policy : {"gandiva", "{name: gandiva, quantum_s: 60}", "elastic-goodput", "{name: elastic-goodput, max_resizes: 2}"}) {
    INFO("policy " << policy);
    const ScenarioConfig scenario = load_scenario(config, {"policy=" + policy}, std::nullopt, registry);
    RunOptions options{dir.path("out")};
    options.timeline = true;
    options.check_invariants = true;
    const RunResult r = run_scenario(scenario, registry, options);
    CHECK(r.summary.jobs_completed == 120);
    if (policy.find("gandiva") != std::string::npos) CHECK(r.summary.preemptions > 0);
    if (policy.find("elastic") != std::string::npos) CHECK(r.summary.moves > 0);
    std::istringstream rows(schedsim::test::read_file(dir.path("out/allocations.csv")));
    std::string line;
    std::getline(rows, line);
    REQUIRE(line == "job_id,start_s,end_s,devices");
    int segments = 0, mixed = 0, on_second_type = 0;
    while (std::getline(rows, line)) {
      std::istringstream devices(line.substr(line.rfind(',') + 1));
      std::set<bool> types;
      for (int d; devices >> d;) types.insert(d >= 8);
      ++segments;
      mixed += types.size() != 1 ? 1 : 0;
      on_second_type += types.count(true) ? 1 : 0;
    }
    CHECK(segments >= 120);
    CHECK(mixed == 0);
    CHECK(on_second_type > 0);
  }
}
