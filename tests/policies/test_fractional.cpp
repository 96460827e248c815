// Fractional GPU sharing (gpu_milli < 1000): the kernel's milli accounting and checks,
// and the fraction-aware placements (first fit, best fit, FGD after Weng et al., ATC'23).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "policies/fragmentation.hpp"
#include "policies/placement.hpp"
#include "policies/registry.hpp"
#include "base/error.hpp"
#include "sim/invariant_checker.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"
#include "traces/trace_test_util.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::VectorSource;

namespace {

JobSpec frac_job(const std::string& id, double submit_s, int milli, double duration_s) {
  JobSpec j = make_job(id, submit_s, 1, duration_s);
  j.gpu_milli = milli;
  return j;
}

// Starts each job on the devices listed for it, at its arrival.
class ScriptedPolicy : public Policy {
 public:
  explicit ScriptedPolicy(std::vector<std::vector<DeviceId>> devices) : devices_(std::move(devices)) {}
  std::string name() const override { return "scripted"; }
  void on_job_queued(const SchedulerView& /*view*/, JobSlot job) override { queued_.push_back(job); }
  void decide(const SchedulerView& view, ActionBatch& out) override {
    for (JobSlot s : queued_) {
      const std::size_t i = static_cast<std::size_t>(std::stoi(view.job(s).id()));
      out.start(s, devices_[i]);
    }
    queued_.clear();
  }

 private:
  std::vector<std::vector<DeviceId>> devices_;
  std::vector<JobSlot> queued_;
};

// Runs `policy` over `jobs` and returns the cluster state's milli in use after the
// decision at `at_s` (the simulator paused there), with the fragmentation under `mix`.
struct Snapshot {
  std::int64_t used_milli = 0;
  double fragmentation_milli = 0;
  std::size_t pending = 0;
};

Snapshot snapshot_after(const ClusterSpec& cluster, const std::vector<JobSpec>& jobs, const std::string& policy, double at_s, const TaskMix& mix) {
  const PolicyRegistry reg = builtin_policies();
  VectorSource source(jobs);
  PolicyInstance p = reg.create(ConfigNode::load_string(policy, "test"));
  Simulator sim(cluster, source, *p.policy);
  InvariantChecker checker;
  sim.add_observer(checker);
  ActionBatch batch;
  Snapshot s;
  while (sim.advance()) {
    batch.clear();
    p.policy->decide(sim.view(), batch);
    sim.apply(batch);
    if (sim.now().seconds() >= at_s) break;
  }
  const ClusterState& st = sim.cluster_state();
  for (DeviceId d = 0; d < cluster.num_devices(); ++d) s.used_milli += ClusterState::kWholeMilli - st.free_milli(d);
  s.fragmentation_milli = cluster_fragmentation_milli(st, mix);
  s.pending = sim.num_pending();
  return s;
}

}  // namespace

TEST_CASE("cluster state shares a device in milli and frees it with the last share", "[sim][cluster][fractional]") {
  const ClusterSpec spec({NodeGroup{1, "V100", 2}});
  ClusterState state(spec);
  state.allocate_share(0, 600, 1);
  CHECK(state.free_milli(0) == 400);
  CHECK(state.is_shared(0));
  CHECK(state.owner(0) == ClusterState::kShared);
  CHECK(state.free_devices() == 1);  // a shared device is not free for whole-device jobs
  CHECK(state.free_on_node(0) == 1);
  CHECK(state.next_free(0) == 1);
  CHECK_THROWS_WITH(state.allocate_share(0, 401, 2), Catch::Contains("device 0 over-allocated: job slot 2 asks for 401 milli, 400 free"));
  CHECK_THROWS_WITH(state.allocate(std::vector<DeviceId>{0}, 3), Catch::Contains("double-booked"));
  CHECK_THROWS_WITH(state.allocate_share(0, 100, 1), Catch::Contains("already holds a share"));
  state.allocate_share(0, 400, 2);
  CHECK(state.free_milli(0) == 0);
  CHECK(state.shared_milli_total() == 1000);
  CHECK(state.shares(0).size() == 2);
  CHECK_THROWS_AS(state.release(std::vector<DeviceId>{0}, 1), InvariantError);  // whole release of a share
  CHECK_THROWS_WITH(state.release_share(0, 5), Catch::Contains("holds none"));
  state.release_share(0, 1);
  CHECK(state.free_milli(0) == 600);
  CHECK(!state.is_free(0));
  state.release_share(0, 2);
  CHECK(state.is_free(0));
  CHECK(state.free_milli(0) == 1000);
  CHECK(state.free_devices() == 2);
  CHECK(state.shared_devices() == 0);
  state.allocate(std::vector<DeviceId>{1}, 4);
  CHECK(state.free_milli(1) == 0);
  CHECK_THROWS_WITH(state.allocate_share(1, 10, 5), Catch::Contains("10 milli, 0 free"));
}

TEST_CASE("the kernel shares a device between fractional jobs and counts their GPU time in fractions", "[sim][kernel][fractional]") {
  const ClusterSpec cluster({NodeGroup{1, "V100", 2}});
  // Jobs 0 and 1 share device 0 (300 + 700 milli) for 100 s and 200 s; job 2 is a whole
  // GPU on device 1.
  std::vector<JobSpec> jobs = {frac_job("0", 0, 300, 100), frac_job("1", 0, 700, 200), make_job("2", 0, 1, 50)};
  VectorSource source(jobs);
  ScriptedPolicy policy({{0}, {0}, {1}});
  Simulator sim(cluster, source, policy);
  InvariantChecker checker;
  MetricsCollector metrics(cluster.num_devices());
  sim.add_observer(checker);
  sim.add_observer(metrics);
  sim.run();
  const Summary s = metrics.summarize();
  CHECK(s.jobs_completed == 3);
  CHECK(s.makespan_s == 200);  // no slowdown while shared
  // GPU time: 0.3 x 100 + 0.7 x 200 + 1 x 50 = 220 GPU-seconds.
  CHECK(s.allocated_gpu_hours * 3600 == Approx(220).epsilon(1e-9));
  CHECK(*s.gpu_utilization == Approx(220.0 / (2 * 200)).epsilon(1e-9));
  CHECK(sim.cluster_state().free_devices() == 2);
}

TEST_CASE("the measurement window counts a fractional job's share of its device", "[sim][kernel][fractional][metrics]") {
  // As above; a window from the first arrival to the last end: 0.3 x 100 + 0.7 x 200 +
  // 1 x 50 = 220 device-seconds over 2 devices x 200 s, the whole-run utilization.
  const ClusterSpec cluster({NodeGroup{1, "V100", 2}});
  VectorSource source({frac_job("0", 0, 300, 100), frac_job("1", 0, 700, 200), make_job("2", 0, 1, 50)});
  ScriptedPolicy policy({{0}, {0}, {1}});
  Simulator sim(cluster, source, policy);
  MeasurementWindowConfig window;
  window.warmup_jobs = 0;
  window.end = MeasurementWindowConfig::End::kLastCompletion;
  MetricsCollector metrics(cluster.num_devices(), window);
  sim.add_observer(metrics);
  sim.run();
  const Summary s = metrics.summarize();
  CHECK(*s.window.gpu_utilization == Approx(220.0 / (2 * 200)).epsilon(1e-12));
  CHECK(*s.mean_jobs_in_system == Approx((100.0 + 200 + 50) / 200).epsilon(1e-12));
  CHECK(!s.offered_load);  // every job submitted at one instant: no arrival span
}

TEST_CASE("the kernel refuses to over-allocate a shared device or give it to a whole-GPU job", "[sim][kernel][fractional]") {
  const ClusterSpec cluster({NodeGroup{1, "V100", 2}});
  SECTION("shares beyond 1000 milli") {
    std::vector<JobSpec> jobs = {frac_job("0", 0, 600, 100), frac_job("1", 0, 500, 100)};
    VectorSource source(jobs);
    ScriptedPolicy policy({{0}, {0}});
    Simulator sim(cluster, source, policy);
    CHECK_THROWS_WITH(sim.run(), Catch::Contains("device 0 has 400 milli free, the job asks for 500"));
  }
  SECTION("a whole-GPU job on a shared device") {
    std::vector<JobSpec> jobs = {frac_job("0", 0, 100, 100), make_job("1", 0, 1, 100)};
    VectorSource source(jobs);
    ScriptedPolicy policy({{0}, {0}});
    Simulator sim(cluster, source, policy);
    CHECK_THROWS_WITH(sim.run(), Catch::Contains("device 0 is shared by fractional jobs"));
  }
  SECTION("a fractional request for several GPUs") {
    JobSpec j = frac_job("0", 0, 500, 100);
    j.num_gpus = 2;
    VectorSource source({j});
    ScriptedPolicy policy({{0, 1}});
    Simulator sim(cluster, source, policy);
    CHECK_THROWS_WITH(sim.run(), Catch::Contains("must ask for exactly one GPU"));
  }
}

TEST_CASE("fraction-aware placements never over-allocate a device", "[policies][fractional]") {
  // 400 jobs mixing shares of 100..900 milli and 1, 2 and 4 whole GPUs on 2 x 4 GPUs.
  std::vector<JobSpec> jobs;
  for (int i = 0; i < 400; ++i) {
    const int kind = (i * 7) % 10;
    JobSpec j = kind < 7 ? frac_job(std::to_string(i), 5.0 * i, 100 * (1 + (i * 13) % 9), 20 + (i * 31) % 200)
                         : make_job(std::to_string(i), 5.0 * i, 1 << (kind - 7), 20 + (i * 31) % 200);
    jobs.push_back(j);
  }
  const ClusterSpec cluster({NodeGroup{2, "V100", 4}});
  double demand_gpu_s = 0;
  for (const JobSpec& j : jobs) demand_gpu_s += j.device_milli() / 1000.0 * j.duration_s;
  const PolicyRegistry reg = builtin_policies();
  for (const std::string policy : {"fifo", "{name: fifo, placement: best_fit}", "{name: fifo, placement: spread}", "{name: fifo, placement: random}",
                                   "fgd", "{name: fgd, backfill: easy}", "{name: sjf, placement: fgd}", "{name: srtf, placement: best_fit}"}) {
    INFO("policy " << policy);
    VectorSource source(jobs);
    PolicyInstance p = reg.create(ConfigNode::load_string(policy, "test"));
    Simulator sim(cluster, source, *p.policy);
    InvariantChecker checker;  // checks milli capacity after every event
    MetricsCollector metrics(cluster.num_devices());
    sim.add_observer(checker);
    sim.add_observer(metrics);
    REQUIRE_NOTHROW(sim.run());
    const Summary s = metrics.summarize();
    CHECK(s.jobs_completed == jobs.size());
    CHECK(checker.checks() == sim.stats().events);
    CHECK(s.allocated_gpu_hours * 3600 == Approx(demand_gpu_s).epsilon(1e-6));
  }
}

TEST_CASE("FGD keeps capacity usable where first fit and best fit fragment it", "[policies][fractional][fgd]") {
  // One node of 2 GPUs. At t=0 a 300-milli job takes GPU 0 (700 left). At t=1 a 300-milli
  // and two 600-milli jobs arrive. First fit and best fit put the 300 on GPU 0 (400 left,
  // too little for a 600), so only one 600 fits. FGD, knowing the mix (half 300s, half
  // 600s), puts it on GPU 1 (700 and 700 left) and both 600s fit.
  const ClusterSpec cluster({NodeGroup{1, "V100", 2}});
  const std::vector<JobSpec> jobs = {frac_job("x", 0, 300, 1000), frac_job("y", 1, 300, 1000), frac_job("z1", 1, 600, 1000), frac_job("z2", 1, 600, 1000)};
  TaskMix mix;
  for (const JobSpec& j : jobs) mix.add(j.num_gpus, j.gpu_milli);
  const Snapshot ff = snapshot_after(cluster, jobs, "fifo", 1, mix);
  const Snapshot bf = snapshot_after(cluster, jobs, "{name: fifo, placement: best_fit}", 1, mix);
  const Snapshot fgd = snapshot_after(cluster, jobs, "fgd", 1, mix);
  CHECK(fgd.used_milli == 1800);
  CHECK(fgd.pending == 0);
  CHECK(ff.used_milli == 1200);
  CHECK(ff.pending == 1);
  CHECK(bf.used_milli == 1200);
  // Fragmentation under the mix: FGD leaves 100 + 100 milli, which no class can use
  // (200); first fit leaves 400 + 400, usable by 300s but not by 600s (0.5 x 800 = 400).
  CHECK(fgd.fragmentation_milli == Approx(200));
  CHECK(ff.fragmentation_milli == Approx(400));
  CHECK(bf.fragmentation_milli == Approx(400));
}

TEST_CASE("node fragmentation follows the FGD paper's definition", "[policies][fractional][fgd]") {
  TaskMix mix;
  mix.add(1, 500);   // class a
  mix.add(2, 1000);  // class b: two whole GPUs
  mix.add(2, 1000);
  mix.add(1, 500);
  const int node[4] = {1000, 300, 600, 1000};
  // Class a (p = 1/2): fits; GPUs with < 500 free are unusable: 300.
  // Class b (p = 1/2): fits on the two free GPUs; partially used ones are unusable: 900.
  CHECK(mix.node_fragmentation_milli(node, 4) == Approx(0.5 * 300 + 0.5 * 900));
  const int full[2] = {1000, 200};
  // Class b does not fit at all: all 1200 free milli count.
  CHECK(mix.node_fragmentation_milli(full, 2) == Approx(0.5 * 200 + 0.5 * 1200));
}

TEST_CASE("on a sample of the openb trace FGD places more GPU demand than first fit and no less than best fit", "[policies][fractional][fgd][shared-data]") {
  const std::string data = schedsim::test::shared_data_dir();
  if (data.empty()) {
    WARN("skipped: ../shared/data is absent (set SCHEDSIM_SHARED_DATA to its path to run this test)");
    return;
  }
  // The paper's experiment scaled down, on the placement engine itself: GPU pods of
  // openb_pod_list_default.csv arrive in trace order and never leave until their total
  // request reaches the cluster's capacity; each is placed at once if it fits and skipped
  // otherwise (no queue, so no head-of-line blocking hides the placement's effect). FGD
  // knows the sample's class mix, as in the paper. Measured (placed milli; expected
  // fragmentation milli): 32 nodes x 8 GPUs: first fit 251,100 / 4,828, best fit and FGD
  // 252,100 / 3,852; 64 nodes: first fit 498,530 / 13,231, best fit and FGD
  // 499,530 / 12,255. In this GPU-only model FGD's choices on this sample coincide with
  // best fit (see docs/policies.md); the hand-built case above shows where they differ.
  const auto trace = schedsim::test::read_trace(data + "/alibaba/openb_pod_list_default.csv", "openb-pods");
  REQUIRE(trace.jobs.size() >= 2000);
  const std::vector<JobSpec> pods(trace.jobs.begin(), trace.jobs.begin() + 2000);
  TaskMix mix;
  for (const JobSpec& j : pods) {
    mix.add(j.num_gpus, j.gpu_milli);
  }
  for (int nodes : {32, 64}) {
  const ClusterSpec cluster({NodeGroup{nodes, "V100", 8}});
  const std::int64_t capacity_milli = std::int64_t{nodes} * 8 * 1000;
  struct Result {
    std::int64_t placed_milli = 0;
    double fragmentation_milli = 0;
  };
  auto inflate = [&](const std::string& placement) {
    ClusterState state(cluster);
    FreeDevices free;
    std::vector<DeviceId> devices;
    Result r;
    std::int64_t arrived_milli = 0;
    for (std::size_t i = 0; i < pods.size() && arrived_milli < capacity_milli; ++i) {
      const JobSpec& j = pods[i];
      arrived_milli += j.device_milli();
      free.reset(state);
      devices.clear();
      bool ok = false;
      if (placement == "fgd") ok = free.fgd(j.num_gpus, j.gpu_milli, mix, devices);
      else if (j.is_fractional()) ok = free.share(j.gpu_milli, placement == "best_fit" ? FreeDevices::ShareRule::kBest : FreeDevices::ShareRule::kFirst, devices);
      else ok = placement == "best_fit" ? free.packed(j.num_gpus, nullptr, devices) : free.first_fit(j.num_gpus, devices);
      if (!ok) continue;
      if (j.is_fractional()) state.allocate_share(devices[0], j.gpu_milli, static_cast<std::int64_t>(i));
      else state.allocate(devices, static_cast<std::int64_t>(i));
      r.placed_milli += j.device_milli();
    }
    for (DeviceId d = 0; d < cluster.num_devices(); ++d) REQUIRE(state.free_milli(d) >= 0);  // never over-allocated
    r.fragmentation_milli = cluster_fragmentation_milli(state, mix);
    return r;
  };
  const Result ff = inflate("first_fit"), bf = inflate("best_fit"), fgd = inflate("fgd");
  WARN(nodes << " nodes: placed milli: first_fit " << ff.placed_milli << ", best_fit " << bf.placed_milli << ", fgd " << fgd.placed_milli
                                           << "; expected fragmentation milli " << ff.fragmentation_milli << ", " << bf.fragmentation_milli << ", "
                                           << fgd.fragmentation_milli);
  CHECK(fgd.placed_milli > ff.placed_milli);
  CHECK(fgd.placed_milli >= bf.placed_milli);
  CHECK(fgd.fragmentation_milli < 0.95 * ff.fragmentation_milli);
  CHECK(fgd.fragmentation_milli <= bf.fragmentation_milli + 1e-6);
  }
}
