// Preemption, migration and resizing against hand-computed schedules: wall time and
// device-time, checkpoint overhead included, exact to the microsecond.
#include <catch2/catch.hpp>

#include <functional>
#include <map>

#include "first_fit_policy.hpp"
#include "base/error.hpp"
#include "sim/invariant_checker.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::VectorSource;

namespace {

// Checkpoints cost 3 s to save and 2 s to restore; rigid jobs run at rate 1, elastic jobs
// at (devices held / devices requested): linear scaling.
class TestPhysics : public PhysicsModel {
 public:
  std::string placement_problem(const JobSpec& job, Span<DeviceId> devices) const override {
    if (job.model == "big" && devices.size() > 0 && devices[0] == 0) return "job 'big' does not fit device 0 (test rule)";
    return "";
  }
  void update_rates(const Simulator& sim, const std::vector<JobSlot>&, std::vector<std::pair<JobSlot, double>>& rates) override {
    for (JobSlot s = sim.first_running(); s != kNoJob; s = sim.job(s).next_in_list) {
      const JobState& j = sim.job(s);
      rates.emplace_back(s, j.spec.is_elastic() ? static_cast<double>(j.devices.size()) / j.spec.num_gpus : 1.0);
    }
  }
  double estimated_rate(const JobSpec&, int, int) const override { return 1.0; }
  double checkpoint_save_s(const JobSpec&, int) const override { return 3.0; }
  double checkpoint_restore_s(const JobSpec&, int) const override { return 2.0; }
};

// Starts pending jobs first-fit, except that at given instants it runs a script.
class ScriptPolicy : public test::FirstFit {
 public:
  using Step = std::function<void(const SchedulerView&, ActionBatch&)>;
  std::map<std::int64_t, Step> script;  // keyed by time in microseconds
  std::string name() const override { return "script"; }
  void decide(const SchedulerView& view, ActionBatch& out) override {
    auto it = script.find(view.now().us());
    if (it != script.end()) {
      it->second(view, out);
      script.erase(it);
      return;
    }
    FirstFit::decide(view, out);
  }
};

JobSlot find(const SchedulerView& v, const std::string& id) {
  for (JobSlot s = v.first_running(); s != kNoJob; s = v.next_running(s)) {
    if (v.job(s).id() == id) return s;
  }
  for (JobSlot s = v.first_pending(); s != kNoJob; s = v.next_pending(s)) {
    if (v.job(s).id() == id) return s;
  }
  throw std::runtime_error("no job " + id);
}

struct Record {
  double start_s, end_s, device_s, overhead_device_s;
  std::uint32_t preemptions, moves;
};

class Records : public Observer {
 public:
  void on_job_end(const JobState& j) override {
    by_id[j.spec.id] = {j.start.seconds(), j.end.seconds(), j.device_us / 1e6, j.overhead_device_us / 1e6, j.preemptions, j.moves};
  }
  std::map<std::string, Record> by_id;
};

Records run(std::vector<JobSpec> jobs, ScriptPolicy& policy, int devices = 8) {
  const ClusterSpec cluster({NodeGroup{1, "test", devices}});
  VectorSource source(std::move(jobs));
  TestPhysics physics;
  SimulatorOptions options;
  options.physics = &physics;
  Simulator sim(cluster, source, policy, options);
  Records records;
  InvariantChecker checker;
  sim.add_observer(records);
  sim.add_observer(checker);
  sim.run();
  return records;
}

}  // namespace

TEST_CASE("a preempted job saves on its devices then restores on new ones", "[sim][preemption]") {
  // a: 4 GPUs, 100 s of work, starts at 0 on devices 0-3. At t=10 (the trigger job's
  // arrival) it is preempted: saves 3 s holding 0-3, requeues at 13, restarts on 4-7
  // (0-3 are taken by the blocker), restores 2 s, then runs its remaining 90 s: ends 105.
  ScriptPolicy p;
  p.script[10'000'000] = [](const SchedulerView& v, ActionBatch& out) { out.preempt(find(v, "a")); };
  p.script[13'000'000] = [](const SchedulerView& v, ActionBatch& out) {
    const std::vector<DeviceId> blocker{0, 1, 2, 3}, fresh{4, 5, 6, 7};
    out.start(find(v, "blocker"), blocker);
    out.start(find(v, "a"), fresh);
  };
  const Records r = run({make_job("a", 0, 4, 100), make_job("blocker", 10, 4, 50)}, p);
  const Record& a = r.by_id.at("a");
  CHECK(a.start_s == 0);
  CHECK(a.end_s == 105);
  CHECK(a.preemptions == 1);
  CHECK(a.device_s == Approx(4 * 13 + 4 * 92).margin(1e-9));  // held 0-3 until 13, 4-7 from 13 to 105
  CHECK(a.overhead_device_s == Approx(4 * 3 + 4 * 2).margin(1e-9));
  CHECK(r.by_id.at("blocker").start_s == 13);  // it had to wait for the save to finish
}

TEST_CASE("a migration stalls for save plus restore on the new devices", "[sim][preemption]") {
  ScriptPolicy p;
  p.script[10'000'000] = [](const SchedulerView& v, ActionBatch& out) {
    out.move(find(v, "a"), std::vector<DeviceId>{2, 3});
    out.start(find(v, "t"), std::vector<DeviceId>{0});  // the old devices are free at once
  };
  const Records r = run({make_job("a", 0, 2, 100), make_job("t", 10, 1, 1)}, p, 4);
  const Record& a = r.by_id.at("a");
  CHECK(a.end_s == 105);  // 10 s done, 5 s stalled, 90 s more
  CHECK(a.moves == 1);
  CHECK(a.device_s == Approx(2 * 105).margin(1e-9));
  CHECK(a.overhead_device_s == Approx(2 * 5).margin(1e-9));
  CHECK(r.by_id.at("t").start_s == 10);
}

TEST_CASE("resizing an elastic job changes its rate after the restart cost", "[sim][preemption]") {
  // Elastic a: asks 2 (min 1, max 4), rate = devices/2. At t=10 it grows to 4: stalls
  // 5 s on 4 devices, then runs its remaining 90 s of work at rate 2: ends at 15 + 45 = 60.
  JobSpec a = make_job("a", 0, 2, 100);
  a.min_gpus = 1;
  a.max_gpus = 4;
  ScriptPolicy p;
  p.script[10'000'000] = [](const SchedulerView& v, ActionBatch& out) {
    out.move(find(v, "a"), std::vector<DeviceId>{0, 1, 2, 3});
    out.start(find(v, "t"), std::vector<DeviceId>{4});
  };
  const Records r = run({a, make_job("t", 10, 1, 1)}, p, 8);
  CHECK(r.by_id.at("a").end_s == 60);
  CHECK(r.by_id.at("a").device_s == Approx(2 * 10 + 4 * 50).margin(1e-9));
  CHECK(r.by_id.at("a").overhead_device_s == Approx(4 * 5).margin(1e-9));
}

TEST_CASE("illegal preemptions and moves are rejected with reasons", "[sim][preemption]") {
  auto error_of = [](ScriptPolicy::Step step) {
    ScriptPolicy p;
    p.script[10'000'000] = std::move(step);
    try {
      run({make_job("a", 0, 2, 100), make_job("t", 10, 1, 1), make_job("w", 10, 8, 1)}, p, 8);
    } catch (const PolicyError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of([](const SchedulerView& v, ActionBatch& out) { out.preempt(find(v, "t")); }) ==
        "policy 'script' at t=10 s: action #0 (preempt job 't'): the job is pending, not running");
  CHECK(error_of([](const SchedulerView& v, ActionBatch& out) { out.move(find(v, "a"), std::vector<DeviceId>{0, 1, 2}); }) ==
        "policy 'script' at t=10 s: action #0 (move job 'a'): gang scheduling needs exactly 2 devices, got 3");
  CHECK(error_of([](const SchedulerView& v, ActionBatch& out) {
          out.start(find(v, "t"), std::vector<DeviceId>{5});
          out.move(find(v, "a"), std::vector<DeviceId>{4, 5});
        }) == "policy 'script' at t=10 s: action #1 (move job 'a'): device 5 is already allocated to job 't'");
}

TEST_CASE("physics can refuse a placement and the kernel names its reason", "[sim][preemption]") {
  JobSpec big = make_job("big", 0, 1, 10);
  big.model = "big";
  ScriptPolicy p;  // first-fit puts it on device 0, which the test physics refuses
  CHECK_THROWS_WITH(run({big}, p, 2), "policy 'script' at t=0 s: action #0 (start job 'big'): job 'big' does not fit device 0 (test rule)");
}
