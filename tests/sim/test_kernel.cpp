#include <catch2/catch.hpp>

#include <functional>

#include "policies/registry.hpp"
#include "world/failures/failure_process.hpp"
#include "base/error.hpp"
#include "world/failures/failure_model.hpp"
#include "sim/invariant_checker.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"
#include "traces/synthetic.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::VectorSource;

namespace {

struct Finished {
  std::string id;
  double start_s, end_s;
  std::vector<DeviceId> devices;
};

class Recorder : public Observer {
 public:
  void on_job_end(const JobState& j) override { done.push_back({j.spec.id, j.start.seconds(), j.end.seconds(), j.devices}); }
  const Finished& get(const std::string& id) const {
    for (const auto& f : done) {
      if (f.id == id) return f;
    }
    throw std::runtime_error("job " + id + " did not finish");
  }
  std::vector<Finished> done;
};

std::vector<Finished> run_jobs(const std::string& policy_name, int gpus, std::vector<JobSpec> jobs) {
  const ClusterSpec cluster({NodeGroup{1, "V100", gpus}});
  VectorSource source(std::move(jobs));
  const PolicyRegistry registry = builtin_policies();
  PolicyInstance policy = registry.create(policy_name);
  Simulator sim(cluster, source, *policy.policy);
  Recorder rec;
  InvariantChecker checker;
  sim.add_observer(rec);
  sim.add_observer(checker);
  sim.run();
  return rec.done;
}

// Issues whatever actions it was built with at its first decision point.
class ScriptedPolicy : public Policy {
 public:
  explicit ScriptedPolicy(std::vector<std::pair<JobSlot, std::vector<DeviceId>>> script) : script_(std::move(script)) {}
  std::string name() const override { return "scripted"; }
  void on_job_queued(const SchedulerView&, JobSlot) override {}
  void decide(const SchedulerView& view, ActionBatch& out) override {
    if (view.num_pending() < 2 || done_) return;  // wait until both test jobs are queued
    done_ = true;
    for (const auto& [slot, devices] : script_) out.start(slot, devices);
  }

 private:
  std::vector<std::pair<JobSlot, std::vector<DeviceId>>> script_;
  bool done_ = false;
};

std::string run_scripted(std::vector<std::pair<JobSlot, std::vector<DeviceId>>> script, int node_gpus = 4, int job_gpus = 2) {
  const ClusterSpec cluster({NodeGroup{1, "V100", node_gpus}});
  VectorSource source({make_job("a", 0, job_gpus, 10), make_job("b", 0, job_gpus, 10)});
  ScriptedPolicy policy(std::move(script));
  Simulator sim(cluster, source, policy);
  try {
    sim.run();
  } catch (const PolicyError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("FIFO and SJF produce the hand-computed schedule on one GPU", "[sim][kernel]") {
  // a(0 s, 10 s), b(1 s, 5 s), c(2 s, 1 s) on one GPU.
  const std::vector<JobSpec> jobs{make_job("a", 0, 1, 10), make_job("b", 1, 1, 5), make_job("c", 2, 1, 1)};
  Recorder fifo;
  fifo.done = run_jobs("fifo", 1, jobs);
  CHECK(fifo.get("a").start_s == 0);
  CHECK(fifo.get("b").start_s == 10);
  CHECK(fifo.get("c").start_s == 15);
  CHECK(fifo.get("c").end_s == 16);
  Recorder sjf;
  sjf.done = run_jobs("sjf", 1, jobs);
  CHECK(sjf.get("c").start_s == 10);  // shortest waiting job goes first
  CHECK(sjf.get("b").start_s == 11);
  CHECK(sjf.get("b").end_s == 16);
}

TEST_CASE("gang jobs start all at once, and the blocked head is not overtaken", "[sim][kernel]") {
  // Two GPUs: a takes one; b needs both and blocks c (no backfilling in plain FIFO).
  Recorder r;
  r.done = run_jobs("fifo", 2, {make_job("a", 0, 1, 10), make_job("b", 1, 2, 5), make_job("c", 2, 1, 1)});
  CHECK(r.get("b").start_s == 10);
  CHECK(r.get("b").devices == std::vector<DeviceId>{0, 1});
  CHECK(r.get("c").start_s == 15);
}

TEST_CASE("jobs submitted at the same instant as a completion see the freed devices", "[sim][kernel]") {
  Recorder r;
  r.done = run_jobs("fifo", 1, {make_job("a", 0, 1, 5), make_job("b", 5, 1, 5)});
  CHECK(r.get("b").start_s == 5);
  CHECK(r.get("b").end_s == 10);
}

TEST_CASE("illegal actions are rejected with the policy, time, action and reason", "[sim][kernel]") {
  // Slots 0 and 1 hold jobs a and b (2 GPUs each) on a 4-GPU node.
  CHECK(run_scripted({{0, {0, 1}}, {1, {1, 2}}}) ==
        "policy 'scripted' at t=0 s: action #1 (start job 'b'): device 1 is already allocated to job 'a'");
  CHECK(run_scripted({{0, {0, 1, 2}}}) ==
        "policy 'scripted' at t=0 s: action #0 (start job 'a'): gang scheduling needs exactly 2 devices, got 3");
  CHECK(run_scripted({{0, {0, 9}}}) ==
        "policy 'scripted' at t=0 s: action #0 (start job 'a'): device 9 does not exist (the cluster has devices 0..3)");
  CHECK(run_scripted({{0, {0, 1}}, {0, {2, 3}}}) == "policy 'scripted' at t=0 s: action #1 (start job 'a'): the job is running, not pending");
  CHECK(run_scripted({{0, {2, 2}}}) == "policy 'scripted' at t=0 s: action #0 (start job 'a'): device 2 is listed twice");
  // Several duplicates: the smallest is named, for short lists (compared pairwise) and long
  // ones (sorted) alike.
  CHECK(run_scripted({{0, {3, 1, 3, 1}}}, 8, 4) == "policy 'scripted' at t=0 s: action #0 (start job 'a'): device 1 is listed twice");
  std::vector<DeviceId> long_list;
  for (DeviceId d = 20; d > 0; --d) long_list.push_back(d);
  long_list[0] = 7;   // 7 twice
  long_list[19] = 5;  // 5 twice (1 left out)
  CHECK(run_scripted({{0, long_list}}, 32, 20) == "policy 'scripted' at t=0 s: action #0 (start job 'a'): device 5 is listed twice");
  CHECK(run_scripted({{7, {0, 1}}}) == "policy 'scripted' at t=0 s: action #0 (start job slot 7): no such job in the system");
  CHECK_THAT(run_scripted({}), Catch::Contains("left 2 jobs waiting with nothing left to happen"));
}

TEST_CASE("invariants hold on a multi-GPU workload under every policy", "[sim][kernel][invariants]") {
  SyntheticConfig w;
  w.num_jobs = 3000;
  w.mean_interarrival_s = 40;
  w.duration_s = Distribution::lognormal(300, 1.2);
  w.gpus = {{1, 0.5}, {2, 0.2}, {4, 0.2}, {8, 0.1}};
  const ClusterSpec cluster({NodeGroup{3, "V100", 8}, NodeGroup{2, "K80", 4}});
  const PolicyRegistry registry = builtin_policies();
  for (const auto& name : registry.names()) {
    SyntheticJobSource source(w, 5);
    PolicyInstance policy = registry.create(name);
    // Diurnal signals for the policies that shift jobs in time.
    std::vector<double> day(24);
    for (int h = 0; h < 24; ++h) day[static_cast<std::size_t>(h)] = 100.0 + (h * 5) % 24;
    const GridSignals signals(0, StepSeries::periodic("price", day, 3'600'000'000LL, 0), StepSeries::periodic("carbon", day, 3'600'000'000LL, 0));
    SimulatorOptions options;
    options.signals = &signals;
    Simulator sim(cluster, source, *policy.policy, options);
    InvariantChecker checker;
    MetricsCollector metrics(cluster.num_devices());
    sim.add_observer(checker);
    sim.add_observer(metrics);
    REQUIRE_NOTHROW(sim.run());
    const Summary s = metrics.summarize();
    INFO("policy " << name);
    CHECK(s.jobs_completed == 3000);
    CHECK(checker.checks() == sim.stats().events);
    CHECK(sim.num_running() == 0);
    CHECK(sim.cluster_state().free_devices() == cluster.num_devices());
    // Work conserved overall: allocated GPU-hours equal the workload's GPU-hours.
    SyntheticJobSource again(w, 5);
    JobSpec j;
    double demand_h = 0;
    while (again.next(j)) demand_h += j.num_gpus * j.duration_s / 3600;
    CHECK(s.allocated_gpu_hours == Approx(demand_h).epsilon(1e-9));
  }
}

TEST_CASE("jobs larger than the cluster stop the run or are dropped and counted", "[sim][kernel]") {
  const ClusterSpec cluster({NodeGroup{1, "V100", 4}});
  const PolicyRegistry registry = builtin_policies();
  {
    VectorSource source({make_job("ok", 0, 1, 1), make_job("huge", 1, 8, 1)});
    PolicyInstance p = registry.create("fifo");
    Simulator sim(cluster, source, *p.policy);
    CHECK_THROWS_WITH(sim.run(), Catch::Contains("test jobs: job 'huge': asks for 8 GPUs but the cluster has 4 in total") &&
                                     Catch::Contains("workload.oversized: drop"));
  }
  {
    VectorSource source({make_job("ok", 0, 1, 1), make_job("huge", 1, 8, 1), make_job("ok2", 2, 4, 1)});
    PolicyInstance p = registry.create("fifo");
    SimulatorOptions o;
    o.oversized = OversizedMode::kDrop;
    Simulator sim(cluster, source, *p.policy, o);
    MetricsCollector m(4);
    sim.add_observer(m);
    sim.run();
    const Summary s = m.summarize();
    CHECK(s.jobs_completed == 2);
    CHECK(s.jobs_dropped_oversized == 1);
  }
}

TEST_CASE("stepping with advance and apply equals run and integrates jobs in system to total JCT", "[sim][kernel]") {
  const ClusterSpec cluster({NodeGroup{2, "V100", 4}});
  const auto workload = [] {
    std::vector<JobSpec> jobs;
    for (int i = 0; i < 60; ++i) jobs.push_back(make_job("j" + std::to_string(i), i * 7.0, 1 + i % 4, 20.0 + (i * 13) % 50));
    return jobs;
  };
  const PolicyRegistry registry = builtin_policies();

  PolicyInstance a = registry.create("sjf");
  VectorSource source_a(workload());
  Simulator ran(cluster, source_a, *a.policy);
  Recorder rec_a;
  ran.add_observer(rec_a);
  ran.run();

  PolicyInstance b = registry.create("sjf");
  VectorSource source_b(workload());
  Simulator stepped(cluster, source_b, *b.policy);
  Recorder rec_b;
  stepped.add_observer(rec_b);
  ActionBatch batch;
  std::uint64_t pauses = 0;
  while (stepped.advance()) {
    REQUIRE(stepped.paused());
    ++pauses;
    batch.clear();
    b.policy->decide(stepped.view(), batch);
    stepped.apply(batch);
  }
  REQUIRE(stepped.finished());
  REQUIRE(pauses == stepped.stats().decision_points);
  REQUIRE(rec_b.done.size() == rec_a.done.size());
  double total_jct_s = 0.0;
  for (std::size_t i = 0; i < rec_a.done.size(); ++i) {
    REQUIRE(rec_b.done[i].id == rec_a.done[i].id);
    REQUIRE(rec_b.done[i].end_s == rec_a.done[i].end_s);
  }
  for (const auto& f : rec_a.done) {
    const int i = std::stoi(f.id.substr(1));
    total_jct_s += f.end_s - i * 7.0;
  }
  REQUIRE(ran.job_seconds_in_system() == Approx(total_jct_s).epsilon(1e-12));
  REQUIRE(stepped.job_seconds_in_system() == Approx(total_jct_s).epsilon(1e-12));
  REQUIRE_THROWS_AS(stepped.apply(batch), InvariantError);  // not paused any more
}

namespace {

// Starts every queued job on the lowest free devices and asks for wake-ups: at each
// decision the listed requests (the earliest one counts), and records when it was called.
class WakePolicy : public Policy {
 public:
  std::string name() const override { return "wake"; }
  void on_job_queued(const SchedulerView& /*view*/, JobSlot job) override { queued_.push_back(job); }
  void decide(const SchedulerView& view, ActionBatch& out) override {
    decisions_s.push_back(view.now().seconds());
    for (JobSlot s : queued_) {
      std::vector<DeviceId> d{view.cluster_state().next_free(0)};
      out.start(s, d);
    }
    queued_.clear();
    if (decisions_s.size() == 1) {
      out.wake_at(Tick::from_seconds(150));
      out.wake_at(Tick::from_seconds(100));  // the earliest request counts
    } else if (decisions_s.size() == 2) {
      out.wake_at(view.now());  // not after now: ignored
    }
  }
  std::vector<double> decisions_s;

 private:
  std::vector<JobSlot> queued_;
};

}  // namespace

TEST_CASE("a policy's wake-up request makes a decision point when nothing else happens", "[sim][kernel]") {
  const ClusterSpec cluster({NodeGroup{1, "V100", 1}});
  VectorSource source({make_job("a", 0, 1, 500)});
  WakePolicy policy;
  Simulator sim(cluster, source, policy);
  InvariantChecker checker;
  sim.add_observer(checker);
  sim.run();
  CHECK(policy.decisions_s == std::vector<double>{0, 100, 500});
  CHECK(sim.stats().events == 3);  // arrival, wake-up, completion
}

// Non-gang placement (ActionBatch::bind / unbind): the test drives the simulator by hand.
namespace {

// Decides nothing by itself: the tests apply batches at the decision points they reach.
class BindTestPolicy : public Policy {
 public:
  std::string name() const override { return "binder"; }
  void on_job_queued(const SchedulerView&, JobSlot) override {}
  void decide(const SchedulerView&, ActionBatch&) override {}
  bool may_bind() const override { return true; }
  void snapshot(SnapshotArchive&) override {}
};

struct BindRun {
  explicit BindRun(std::vector<JobSpec> jobs, int nodes = 2, int node_gpus = 4)
      : cluster({NodeGroup{nodes, "V100", node_gpus}}), source(std::move(jobs)), sim(cluster, source, policy), metrics(cluster.num_devices()) {
    metrics.meter_bound_idle();
    sim.add_observer(checker);
    sim.add_observer(metrics);
    sim.add_observer(rec);
  }
  // Advances to the next decision point; false when the run is over.
  bool step() { return sim.advance(); }
  void apply(const std::function<void(ActionBatch&)>& fill) {
    ActionBatch b;
    fill(b);
    sim.apply(b);
  }
  ClusterSpec cluster;
  VectorSource source;
  BindTestPolicy policy;
  Simulator sim;
  InvariantChecker checker;
  MetricsCollector metrics;
  Recorder rec;
};

std::vector<DeviceId> ids(std::initializer_list<DeviceId> l) { return l; }

// Runs a batch built by `fill` at the first decision point at which both jobs (each
// `job_gpus` GPUs, 10 s) are queued, on one node of 4; returns the PolicyError text.
std::string bind_error(const std::function<void(ActionBatch&)>& fill, int job_gpus = 2, bool elastic = false) {
  JobSpec a = make_job("a", 0, job_gpus, 10), b = make_job("b", 0, job_gpus, 10);
  if (elastic) {
    a.min_gpus = 1;
    a.max_gpus = 4;
  }
  BindRun r({a, b}, 1, 4);
  try {
    while (r.step()) {
      if (r.sim.num_pending() == 2) {
        r.apply(fill);
        return "no error";
      }
    }
  } catch (const PolicyError& e) {
    return e.what();
  }
  return "no decision point";
}

}  // namespace

TEST_CASE("a partly bound job holds its devices without progress and starts when the last one binds", "[sim][kernel][bind]") {
  // 2 nodes x 4 GPUs; job a asks for 8 GPUs for 50 s. Four bind at t=0, four at t=100:
  // it runs [100, 150], JCT 150 s, and 4 devices x 100 s = 400 device-s were held idle.
  BindRun r({make_job("a", 0, 8, 50)});
  REQUIRE(r.step());
  REQUIRE(r.sim.now() == Tick());
  r.apply([](ActionBatch& b) {
    b.bind(0, ids({0, 1, 2, 3}));
    b.wake_at(Tick::from_seconds(100));
  });
  CHECK(r.sim.view().bound_devices(0).size() == 4);
  CHECK(r.sim.cluster_state().free_devices() == 4);  // bound devices are not free
  CHECK(r.sim.bound_devices_total() == 4);
  CHECK(r.sim.job(0).status == JobStatus::kPending);
  REQUIRE(r.step());
  CHECK(r.sim.now() == Tick::from_seconds(100));
  CHECK(r.sim.job(0).remaining_work_s == 50.0);  // no progress while partly bound
  r.apply([](ActionBatch& b) { b.bind(0, ids({4, 5, 6, 7})); });
  CHECK(r.sim.job(0).status == JobStatus::kRunning);
  CHECK(r.sim.job(0).devices == std::vector<DeviceId>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(r.sim.view().bound_devices(0).empty());
  CHECK(r.sim.bound_devices_total() == 0);
  while (r.step()) {
  }
  CHECK(r.rec.get("a").start_s == 100);
  CHECK(r.rec.get("a").end_s == 150);
  const Summary s = r.metrics.summarize();
  REQUIRE(s.bound_idle_gpu_hours.has_value());
  CHECK(*s.bound_idle_gpu_hours == 400.0 / 3600.0);
  // Utilisation counts running device-time only: 8 x 50 over 8 x 150.
  CHECK(*s.gpu_utilization == Approx(400.0 / 1200.0).epsilon(1e-12));
  CHECK(*s.bound_idle_fraction == Approx(400.0 / 1200.0).epsilon(1e-12));
  CHECK(s.allocated_gpu_hours == 400.0 / 3600.0);
}

TEST_CASE("an unbind frees the devices, which another job may then use", "[sim][kernel][bind]") {
  // a (8 GPUs) binds 0-1 at t=0 and lets them go at t=10; b (2 GPUs, 5 s) then runs on them.
  BindRun r({make_job("a", 0, 8, 50), make_job("b", 0, 2, 5)});
  REQUIRE(r.step());
  r.apply([](ActionBatch& b) {
    b.bind(0, ids({0, 1}));
    b.wake_at(Tick::from_seconds(10));
  });
  CHECK(r.sim.cluster_state().free_devices() == 6);
  REQUIRE(r.step());
  CHECK(r.sim.now() == Tick::from_seconds(10));
  r.apply([](ActionBatch& b) {
    b.unbind(0);
    b.start(1, ids({0, 1}));
  });
  CHECK(r.sim.view().bound_devices(0).empty());
  CHECK(r.sim.job(1).status == JobStatus::kRunning);
  REQUIRE(r.step());
  CHECK(r.sim.now() == Tick::from_seconds(15));  // b ends
  r.apply([](ActionBatch& b) { b.start(0, ids({0, 1, 2, 3, 4, 5, 6, 7})); });
  while (r.step()) {
  }
  CHECK(r.rec.get("b").end_s == 15);
  CHECK(r.rec.get("a").start_s == 15);
  CHECK(r.rec.get("a").end_s == 65);
  CHECK(*r.metrics.summarize().bound_idle_gpu_hours == 20.0 / 3600.0);  // 2 devices x 10 s
}

TEST_CASE("illegal binds and unbinds are rejected with the policy, time, action and reason", "[sim][kernel][bind]") {
  // Slots 0 and 1 hold jobs a and b (2 GPUs each) on a 4-GPU node.
  const std::string at = "policy 'binder' at t=0 s: ";
  CHECK(bind_error([](ActionBatch& b) {
          b.start(0, ids({0, 1}));
          b.bind(0, ids({2}));
        }) == at + "action #1 (bind job 'a'): the job is running, not pending");
  CHECK(bind_error([](ActionBatch& b) {
          b.start(0, ids({0, 1}));
          b.bind(1, ids({1}));
        }) == at + "action #1 (bind job 'b'): device 1 is already allocated to job 'a'");
  CHECK(bind_error([](ActionBatch& b) {
          b.bind(0, ids({0}));
          b.bind(1, ids({0}));
        }) == at + "action #1 (bind job 'b'): device 0 is bound to job 'a'");
  CHECK(bind_error([](ActionBatch& b) {
          b.bind(0, ids({0}));
          b.bind(0, ids({0}));
        }) == at + "action #1 (bind job 'a'): device 0 is already bound to this job");
  CHECK(bind_error([](ActionBatch& b) { b.bind(0, ids({2, 2})); }) == at + "action #0 (bind job 'a'): device 2 is listed twice");
  CHECK(bind_error([](ActionBatch& b) { b.bind(0, ids({0, 1, 2})); }) ==
        at + "action #0 (bind job 'a'): the job asks for 2 devices and has 0 bound; binding 3 more would exceed it");
  CHECK(bind_error([](ActionBatch& b) {
          b.bind(0, ids({0}));
          b.bind(0, ids({1, 2}));
        }) == at + "action #1 (bind job 'a'): the job asks for 2 devices and has 1 bound; binding 2 more would exceed it");
  CHECK(bind_error([](ActionBatch& b) { b.bind(0, ids({4})); }) ==
        at + "action #0 (bind job 'a'): device 4 does not exist (the cluster has devices 0..3)");
  CHECK(bind_error([](ActionBatch& b) { b.bind(0, {}); }) == at + "action #0 (bind job 'a'): a bind names at least one device");
  CHECK(bind_error([](ActionBatch& b) { b.bind(7, ids({0})); }) == at + "action #0 (bind job slot 7): no such job in the system");
  CHECK(bind_error([](ActionBatch& b) { b.bind(0, ids({0})); }, 2, true) ==
        at + "action #0 (bind job 'a'): devices are bound one by one to rigid jobs only; start the elastic job with a start action");
  // A start must keep the devices bound to the job.
  CHECK(bind_error([](ActionBatch& b) {
          b.bind(0, ids({0}));
          b.start(0, ids({1, 2}));
        }) == at + "action #1 (start job 'a'): the job has devices 0 bound; the start must include them all (missing: 0)");
  CHECK(bind_error([](ActionBatch& b) {
          b.start(0, ids({0, 1}));
          b.unbind(0);
        }) == at + "action #1 (unbind job 'a'): the job is running, not pending");
  // Legal: a start that includes the bound device; an unbind of a job with nothing bound.
  CHECK(bind_error([](ActionBatch& b) {
          b.bind(0, ids({3}));
          b.start(0, ids({2, 3}));
          b.unbind(1);
        }) == "no error");
}

TEST_CASE("a run that ends with jobs holding bound devices names the deadlock", "[sim][kernel][bind]") {
  // a and b ask for 3 GPUs each on one node of 4; each holds two: neither can ever start.
  BindRun r({make_job("a", 0, 3, 10), make_job("b", 0, 3, 10)}, 1, 4);
  while (r.sim.num_pending() < 2) REQUIRE(r.step());
  r.apply([](ActionBatch& b) {
    b.bind(0, ids({0, 1}));
    b.bind(1, ids({3, 2}));
  });
  std::string what = "no error";
  try {
    r.sim.run();
  } catch (const PolicyError& e) {
    what = e.what();
  }
  CHECK(what ==
        "policy 'binder' left 2 jobs waiting with nothing left to happen (first: job 'a' asking for 3 GPUs, 0 free); 4 GPUs are bound to "
        "waiting jobs that cannot start (deadlock: job 'a' holds devices 0-1 of 3, job 'b' holds devices 3, 2 of 3); the policy never started them");
}

TEST_CASE("bound devices survive a snapshot and the resumed run ends as the uninterrupted one", "[sim][kernel][bind][snapshot]") {
  // a (8 GPUs, 50 s) binds 0-3 at t=0 and 4-7 at t=100; a second job arrives at t=60 and
  // is where the snapshot is taken (the boundary before its instant).
  const std::vector<JobSpec> jobs{make_job("a", 0, 8, 50), make_job("b", 60, 1, 5)};
  const auto drive = [](BindRun& r) {
    while (r.step()) {
      const double t = r.sim.now().seconds();
      if (t == 0) {
        r.apply([](ActionBatch& b) {
          b.bind(0, ids({0, 1, 2, 3}));
          b.wake_at(Tick::from_seconds(100));
        });
      } else if (t == 100) {
        r.apply([](ActionBatch& b) { b.bind(0, ids({4, 5, 6, 7})); });
      }
    }
  };
  BindRun whole(jobs);
  drive(whole);
  SnapshotArchive out;
  BindRun first(jobs);
  first.sim.set_boundary_hook(Tick::from_seconds(50), [&] {
    if (first.sim.now() > Tick() && out.bytes().empty()) {
      first.sim.snapshot(out);
      first.metrics.snapshot(out);
      throw std::runtime_error("stop");
    }
  });
  CHECK_THROWS_WITH(drive(first), "stop");
  REQUIRE_FALSE(out.bytes().empty());
  BindRun resumed(jobs);
  SnapshotArchive in(out.bytes(), "test");
  resumed.sim.snapshot(in);
  resumed.metrics.snapshot(in);
  CHECK(resumed.sim.job(0).bound_devices == std::vector<DeviceId>{0, 1, 2, 3});
  CHECK(resumed.sim.bound_devices_total() == 4);
  CHECK(resumed.sim.cluster_state().free_devices() == 4);
  drive(resumed);
  CHECK(resumed.rec.get("a").start_s == 100);
  CHECK(resumed.rec.get("a").end_s == 150);
  CHECK(*resumed.metrics.summarize().bound_idle_gpu_hours == *whole.metrics.summarize().bound_idle_gpu_hours);
  CHECK(*whole.metrics.summarize().bound_idle_gpu_hours == 400.0 / 3600.0);
}

TEST_CASE("a bound device that fails is unbound from its waiting job alone", "[sim][kernel][bind][failures]") {
  // 2 nodes of 4 V100s, whose devices fail one at a time (MTBF 1 h, repair 0.5 h), and a
  // node of 4 T4s that never fail. a (8 GPUs) binds devices 0-3 at t=0 and is never given
  // more; r (4 GPUs, 10 h) runs on the T4s (8-11), which keeps the failure process going.
  // Each failure of a bound device takes that device, failed, out of a's set; the others
  // stay bound.
  const ClusterSpec cluster({NodeGroup{2, "V100", 4}, NodeGroup{1, "T4", 4}});
  FailureConfig c;
  c.devices.mtbf_h = 1;
  c.devices.mtbf_h_by_type = {{"T4", 0}};
  c.devices.repair_h = 0.5;
  c.devices.unit = DeviceFailureConfig::Unit::kDevice;
  c.devices.on_failure = DeviceFailureConfig::OnFailure::kWait;
  FailureModel model(c, cluster, 5, nullptr);
  SimulatorOptions options;
  VectorSource source({make_job("a", 0, 8, 50), make_job("r", 0, 4, 36000)});
  BindTestPolicy policy;
  Simulator sim(cluster, source, policy, options);
  FailureProcess failure_process(model);  // the failures model as a world process
  sim.add_process(failure_process);
  InvariantChecker checker;
  sim.add_observer(checker);
  std::size_t smallest = 4;
  int seen_failed_unbound = 0;
  // Until r is done (10 h plus its waits): with a waiting forever, the failures would go on.
  while (sim.advance() && sim.is_live(1)) {
    ActionBatch b;
    if (sim.now() == Tick()) {
      b.bind(0, ids({0, 1, 2, 3}));
      b.start(1, ids({8, 9, 10, 11}));
    }
    sim.apply(b);
    if (!sim.is_live(0)) continue;
    const Span<DeviceId> bound = sim.view().bound_devices(0);
    smallest = std::min(smallest, bound.size());
    for (DeviceId d = 0; d < 4; ++d) {
      const bool is_bound = std::find(bound.begin(), bound.end(), d) != bound.end();
      CHECK(is_bound == (sim.cluster_state().owner(d) == 0));  // bound iff the cluster gives it to a
      if (!is_bound && sim.cluster_state().is_failed(d)) ++seen_failed_unbound;
    }
    CHECK(sim.bound_devices_total() == static_cast<int>(bound.size()));
  }
  CHECK(sim.stats().unit_failures > 0);
  CHECK(smallest < 4);             // a lost bound devices ...
  CHECK(seen_failed_unbound > 0);  // ... failed, and no longer its
  CHECK(sim.job(0).status == JobStatus::kPending);
}

namespace {

// At every decision, compares what the view says of the run's future with the kernel's own
// answer (the RL policies' wait-legal rule reads it through the view).
class FutureProbe : public Policy {
 public:
  std::string name() const override { return "future probe"; }
  void on_run_start(const SchedulerView& view) override {
    ++run_starts;
    started_with = &view;
  }
  void on_job_queued(const SchedulerView& /*view*/, JobSlot job) override { queue.push_back(job); }
  void decide(const SchedulerView& view, ActionBatch& out) override {
    answers.emplace_back(view.has_future_events(), sim->has_future_events());
    if (view.service_devices(0).size() != 0 || view.service_devices(-1).size() != 0) ++services_seen;
    if (&view != started_with) ++other_views;
    std::vector<DeviceId> devices;
    while (!queue.empty() && view.cluster_state().free_devices() >= 1) {
      out.start(queue.front(), std::vector<DeviceId>{view.cluster_state().next_free(0)});
      queue.erase(queue.begin());
    }
  }
  const Simulator* sim = nullptr;
  const SchedulerView* started_with = nullptr;
  int run_starts = 0, services_seen = 0, other_views = 0;
  std::vector<JobSlot> queue;
  std::vector<std::pair<bool, bool>> answers;
};

}  // namespace

TEST_CASE("the scheduler view tells a policy whether anything is still to happen, as the kernel knows it", "[sim][kernel][job_view]") {
  const ClusterSpec cluster({NodeGroup{1, "V100", 1}});
  VectorSource source({make_job("a", 0, 1, 10), make_job("b", 5, 1, 10)});
  FutureProbe probe;
  Simulator sim(cluster, source, probe);
  probe.sim = &sim;
  CHECK(probe.run_starts == 1);
  CHECK(probe.started_with == &sim.view());
  sim.run();
  // Decisions at 0 (b's arrival ahead), 5 (a's completion ahead), 10 (b's completion
  // ahead) and 20 (nothing left).
  REQUIRE(probe.answers.size() == 4);
  for (const auto& [view_says, kernel_says] : probe.answers) CHECK(view_says == kernel_says);
  CHECK(probe.answers.front().first);
  CHECK_FALSE(probe.answers.back().first);
  CHECK(probe.services_seen == 0);
  CHECK(probe.other_views == 0);
}
