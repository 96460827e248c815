// Gittins-index, fair-share and Themis queue orders: closed-form rankings, hand-built
// schedules with the numbers they must produce, and option checking.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <random>

#include "policies/queue_policy.hpp"
#include "policies/registry.hpp"
#include "base/error.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"
#include "traces/synthetic.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::VectorSource;

namespace {

struct Run {
  double start_s, end_s;
  std::string user;
  int gpus;
  std::uint32_t preemptions;
};

class RunRecorder : public Observer {
 public:
  void on_job_end(const JobState& job) override { runs[job.spec.id] = {job.start.seconds(), job.end.seconds(), job.spec.user, job.spec.num_gpus, job.preemptions}; }
  std::map<std::string, Run> runs;
};

std::map<std::string, Run> run(const std::string& policy_yaml, int devices, std::vector<JobSpec> jobs) {
  const ClusterSpec cluster({NodeGroup{1, "test", devices}});
  const PolicyRegistry registry = builtin_policies();
  PolicyInstance policy = registry.create(ConfigNode::load_string(policy_yaml, "policy.yaml"));
  VectorSource source(std::move(jobs));
  Simulator sim(cluster, source, *policy.policy);
  RunRecorder rec;
  sim.add_observer(rec);
  sim.run();
  return rec.runs;
}

JobSpec owned(const std::string& id, double submit_s, double duration_s, const std::string& user) {
  JobSpec j = make_job(id, submit_s, 1, duration_s);
  j.user = user;
  j.group = user == "alice" ? "team-a" : "team-b";
  return j;
}

// Mean JCT on one device with Poisson arrivals (lambda 0.7/s) and the given service.
double mean_jct_s(const std::string& policy_yaml, const Distribution& service, std::uint64_t jobs) {
  SyntheticConfig w;
  w.num_jobs = jobs;
  w.mean_interarrival_s = 1 / 0.7;
  w.duration_s = service;
  w.gpus = {{1, 1.0}};
  const ClusterSpec cluster({NodeGroup{1, "test", 1}});
  const PolicyRegistry registry = builtin_policies();
  SyntheticJobSource source(w, 7);
  PolicyInstance policy = registry.create(ConfigNode::load_string(policy_yaml, "policy.yaml"));
  Simulator sim(cluster, source, *policy.policy);
  MetricsCollector metrics(1);
  sim.add_observer(metrics);
  sim.run();
  const Summary s = metrics.summarize();
  REQUIRE(s.jobs_completed == jobs);
  return *s.mean_jct_s;
}

// GPU-seconds each user holds within [from_s, to_s].
std::map<std::string, double> gpu_s_by_user(const std::map<std::string, Run>& runs, double from_s, double to_s) {
  std::map<std::string, double> out;
  for (const auto& [id, r] : runs) {
    const double lo = std::max(r.start_s, from_s), hi = std::min(r.end_s, to_s);
    if (hi > lo) out[r.user] += (hi - lo) * r.gpus;
  }
  return out;
}

}  // namespace

TEST_CASE("gittins behaves like LAS on hyperexponential service and beats FIFO", "[policies][gittins][queueing]") {
  // Hyperexponential service (90% mean 0.5 s and 10% mean 5.5 s) has a decreasing failure
  // rate: the Gittins index falls with attained service, so Gittins serves the least
  // served first, like LAS. FIFO is the Pollaczek-Khinchine 1 + 0.7 * 6.5 / 0.6 = 8.58 s.
  const Distribution service = Distribution::hyperexponential({0.9, 0.1}, {0.5, 5.5});
  const std::uint64_t jobs = 20'000;
  const double fifo_s = mean_jct_s("{name: fifo}", service, jobs);
  const double las_s = mean_jct_s("{name: las, discretized: false}", service, jobs);
  const double gittins_s =
      mean_jct_s("{name: gittins, durations: {dist: hyperexponential, weights: [0.9, 0.1], means: [0.5, 5.5]}, samples: 2000}", service, jobs);
  CHECK(gittins_s < 0.6 * fifo_s);
  CHECK(gittins_s == Approx(las_s).epsilon(0.15));
  WARN("mean JCT s: fifo " << fifo_s << " las " << las_s << " gittins " << gittins_s);
}

TEST_CASE("gittins with constant durations is FIFO", "[policies][gittins][queueing]") {
  // Every job has the same size: the index 1 / (c - a) only grows with attained service,
  // so a running job is never preempted and the queue is served in arrival order.
  const Distribution service = Distribution::constant(1.0);
  const double fifo_s = mean_jct_s("{name: fifo}", service, 5'000);
  const double gittins_s = mean_jct_s("{name: gittins, durations: {dist: constant, value: 1}}", service, 5'000);
  CHECK(gittins_s == Approx(fifo_s).epsilon(1e-9));
  // M/D/1: 1 + lambda / (2 mu (1 - rho)) = 1 + 0.7 / 0.6 = 2.17 s.
  CHECK(fifo_s == Approx(1 + 0.7 / (2 * 0.3)).epsilon(0.1));
}

TEST_CASE("gittins preempts a job past the short phase for a fresh one", "[policies][gittins]") {
  // Service hyperexponential (90% mean 0.5 s and 10% mean 5.5 s): after 2 s of service a
  // job is most likely in the long phase, so its index is below a fresh job's. With one
  // device L (10 s) runs from 0; S (1 s) arrives at 2 and preempts it; L resumes at 3 with
  // 8 s left and ends at 11. FIFO runs S after L, at 10.
  const std::vector<JobSpec> jobs = {make_job("L", 0, 1, 10), make_job("S", 2, 1, 1)};
  const std::string yaml = "{name: gittins, durations: {dist: hyperexponential, weights: [0.9, 0.1], means: [0.5, 5.5]}}";
  const auto g = run(yaml, 1, jobs);
  CHECK(g.at("S").start_s == Approx(2.0));
  CHECK(g.at("S").end_s == Approx(3.0));
  CHECK(g.at("L").end_s == Approx(11.0));
  CHECK(g.at("L").preemptions == 1);
  const auto np = run("{name: gittins, preemption: false, durations: {dist: hyperexponential, weights: [0.9, 0.1], means: [0.5, 5.5]}}", 1, jobs);
  CHECK(np.at("S").start_s == Approx(10.0));
  const auto composed = run("{name: compose, order: {name: gittins, samples: 500, durations: {dist: hyperexponential, weights: [0.9, 0.1], means: [0.5, 5.5]}}}", 1, jobs);
  CHECK(composed.at("S").end_s == Approx(3.0));
  CHECK(composed.at("L").end_s == Approx(11.0));
}

TEST_CASE("fair-share starts a late user before the early flood drains and equalizes GPU shares", "[policies][fair-share]") {
  // 4 devices. alice submits 40 one-GPU jobs of 100 s at t=0; bob submits 20 at t=50.
  std::vector<JobSpec> jobs;
  for (int i = 0; i < 40; ++i) jobs.push_back(owned("a" + std::to_string(i), 0, 100, "alice"));
  for (int i = 0; i < 20; ++i) jobs.push_back(owned("b" + std::to_string(i), 50, 100, "bob"));
  auto first_start = [](const std::map<std::string, Run>& runs, const std::string& user) {
    double t = 1e300;
    for (const auto& [id, r] : runs)
      if (r.user == user) t = std::min(t, r.start_s);
    return t;
  };
  const auto fifo = run("{name: fifo}", 4, jobs);
  CHECK(first_start(fifo, "bob") == Approx(1000.0));  // after all 40 of alice's jobs
  const auto fair = run("{name: fair-share}", 4, jobs);
  CHECK(first_start(fair, "bob") == Approx(100.0));  // the first devices that free up
  // While both have work queued, each holds 2 of the 4 GPUs: bob's 20 jobs run 2 at a time
  // from 100 to 1100, and so do 20 of alice's.
  const auto shares = gpu_s_by_user(fair, 100, 1100);
  CHECK(shares.at("alice") == Approx(2000.0));
  CHECK(shares.at("bob") == Approx(2000.0));
  double bob_last_end = 0, alice_last_end = 0;
  for (const auto& [id, r] : fair) (r.user == "bob" ? bob_last_end : alice_last_end) = std::max(r.user == "bob" ? bob_last_end : alice_last_end, r.end_s);
  CHECK(bob_last_end == Approx(1100.0));
  CHECK(alice_last_end == Approx(1500.0));  // the total work is the same: the makespan is FIFO's
  // By group (team-a / team-b) the schedule is the same.
  const auto by_group = run("{name: fair-share, by: group}", 4, jobs);
  CHECK(gpu_s_by_user(by_group, 100, 1100).at("bob") == Approx(2000.0));
}

TEST_CASE("fair-share weights split GPUs in proportion", "[policies][fair-share]") {
  // alice has weight 3: she holds 3 of 4 GPUs while both have work queued.
  std::vector<JobSpec> jobs;
  for (int i = 0; i < 40; ++i) jobs.push_back(owned("a" + std::to_string(i), 0, 100, "alice"));
  for (int i = 0; i < 40; ++i) jobs.push_back(owned("b" + std::to_string(i), 50, 100, "bob"));
  const auto fair = run("{name: fair-share, weights: {alice: 3}}", 4, jobs);
  const auto shares = gpu_s_by_user(fair, 100, 1100);
  CHECK(shares.at("alice") == Approx(3000.0));
  CHECK(shares.at("bob") == Approx(1000.0));
}

TEST_CASE("fair-share preempts the user over its share when asked", "[policies][fair-share][preemption]") {
  // 2 devices held by alice (1000 s jobs); bob arrives at 10: with preemption one of
  // alice's jobs (the latest) stops for him. Without preemption he waits until 1000.
  const std::vector<JobSpec> jobs = {owned("a0", 0, 1000, "alice"), owned("a1", 0, 1000, "alice"), owned("b0", 10, 100, "bob")};
  const auto np = run("{name: fair-share}", 2, jobs);
  CHECK(np.at("b0").start_s == Approx(1000.0));
  const auto p = run("{name: fair-share, preemption: true}", 2, jobs);
  CHECK(p.at("b0").start_s == Approx(10.0));
  CHECK(p.at("b0").end_s == Approx(110.0));
  CHECK(p.at("a0").end_s == Approx(1000.0));
  CHECK(p.at("a1").end_s == Approx(1100.0));
}

TEST_CASE("themis starts the job with the worst finish-time fairness first", "[policies][themis]") {
  // One device, X runs 0-100. L (100 s) arrives at 1 and S (50 s) at 90. At t=100:
  // rho(L) = (99 + 100) / 100 = 1.99 and rho(S) = (10 + 50) / 50 = 1.2: L goes first
  // although it is longer (SJF would pick S).
  const std::vector<JobSpec> a = {make_job("X", 0, 1, 100), make_job("L", 1, 1, 100), make_job("S", 90, 1, 50)};
  const auto t = run("{name: themis}", 1, a);
  CHECK(t.at("L").start_s == Approx(100.0));
  CHECK(t.at("S").start_s == Approx(200.0));
  CHECK(run("{name: sjf}", 1, a).at("S").start_s == Approx(100.0));
  // L (1000 s) at 1 and S (10 s) at 2: at t=100 rho(L) = (99 + 1000) / 1000 = 1.099 and
  // rho(S) = (98 + 10) / 10 = 10.8: S goes first although it came later (FIFO: L).
  const std::vector<JobSpec> b = {make_job("X", 0, 1, 100), make_job("L", 1, 1, 1000), make_job("S", 2, 1, 10)};
  const auto u = run("{name: compose, order: themis}", 1, b);
  CHECK(u.at("S").start_s == Approx(100.0));
  CHECK(u.at("L").start_s == Approx(110.0));
  CHECK(run("{name: fifo}", 1, b).at("S").start_s == Approx(1100.0));
}

TEST_CASE("gittins fair-share and themis resolve their options and reject unknown keys", "[policies]") {
  const PolicyRegistry r = builtin_policies();
  const PolicyInstance g = r.create("gittins");
  CHECK(g.resolved["preemption"].as<bool>());
  CHECK(g.resolved["samples"].as<int>() == 1000);
  CHECK(g.resolved["durations"]["dist"].as<std::string>() == "lognormal");
  const PolicyInstance f = r.create(ConfigNode::load_string("{name: fair-share, by: group, weights: {alice: 2}}", "p.yaml"));
  CHECK_FALSE(f.resolved["preemption"].as<bool>());
  CHECK(f.resolved["by"].as<std::string>() == "group");
  CHECK(f.resolved["weights"]["alice"].as<double>() == 2.0);
  CHECK_FALSE(r.create("themis").resolved["preemption"].as<bool>());
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: gittins, quantum: 5}", "p.yaml")),
                    Catch::Contains("unknown key 'quantum'; valid keys here: name, durations, samples, placement"));
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: fair-share, by: team}", "p.yaml")),
                    Catch::Contains("by: 'team' is not allowed; choose one of: user, group"));
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: fair-share, weights: {alice: 0}}", "p.yaml")), Catch::Contains("weights.alice"));
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: themis, by: user}", "p.yaml")),
                    Catch::Contains("unknown key 'by'; valid keys here: name, placement"));
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: compose, order: {name: fair-share, share: 1}}", "p.yaml")),
                    Catch::Contains("unknown key 'share'; valid keys here: name, by, weights"));
}

namespace {

// Fair share as it was first written: every decision recounts the GPUs each owner holds
// from the running jobs and the engine re-keys every queued job (the plain, ungrouped
// path). The grouped fair-share policy must schedule exactly like it.
class RecountingFairShare : public QueueOrder {
 public:
  RecountingFairShare(bool by_group, std::map<std::string, double> weights) : by_group_(by_group), weights_(std::move(weights)) {}
  double queued_key(const SchedulerView& view, JobSlot job) override { return share(view, view.job(job)); }
  double running_key(const SchedulerView& view, JobSlot job) const override { return share(view, view.job(job)); }
  bool keys_change_while_queued() const override { return true; }
  void on_decision(const SchedulerView& view) override {
    held_.clear();
    for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
      const JobView r = view.job(s);
      held_[owner(r)] += static_cast<double>(r.devices().size());
    }
  }
  void on_started(const SchedulerView& view, JobSlot job) override { held_[owner(view.job(job))] += view.job(job).num_gpus(); }

 private:
  const std::string& owner(const JobView& job) const { return by_group_ ? job.group() : job.user(); }
  double share(const SchedulerView& view, const JobView& spec) const {
    const auto h = held_.find(owner(spec));
    const auto w = weights_.find(owner(spec));
    return (h == held_.end() ? 0.0 : h->second) / view.cluster().num_devices() / (w == weights_.end() ? 1.0 : w->second);
  }
  bool by_group_;
  std::map<std::string, double> weights_;
  std::map<std::string, double> held_;
};

struct Placed {
  double start_s, end_s;
  std::uint32_t preemptions;
  std::int64_t held_us;
  bool operator==(const Placed& o) const { return start_s == o.start_s && end_s == o.end_s && preemptions == o.preemptions && held_us == o.held_us; }
};

class PlacedRecorder : public Observer {
 public:
  void on_job_end(const JobState& job) override { runs[job.spec.id] = {job.start.seconds(), job.end.seconds(), job.preemptions, job.held_us}; }
  std::map<std::string, Placed> runs;
};

// 600 jobs of 5 users (2 groups) on 2 nodes of 8 GPUs, loaded so that the queue is long.
std::vector<JobSpec> multi_user_jobs() {
  std::mt19937 rng(2024);
  std::vector<JobSpec> jobs;
  double t = 0;
  const int sizes[] = {1, 1, 1, 2, 2, 4, 8};
  for (int i = 0; i < 600; ++i) {
    t += static_cast<double>(rng() % 200);
    JobSpec j = make_job("j" + std::to_string(i), t, sizes[rng() % 7], 100.0 + static_cast<double>(rng() % 3000));
    j.user = "u" + std::to_string(rng() % 5);
    j.group = j.user < "u2" ? "team-a" : "team-b";
    jobs.push_back(j);
  }
  return jobs;
}

std::map<std::string, Placed> run_policy(Policy& policy) {
  const ClusterSpec cluster({NodeGroup{2, "test", 8}});
  VectorSource source(multi_user_jobs());
  Simulator sim(cluster, source, policy);
  PlacedRecorder rec;
  sim.add_observer(rec);
  sim.run();
  return rec.runs;
}

}  // namespace

TEST_CASE("grouped fair-share schedules exactly like re-keying every queued job", "[policies][fair-share]") {
  struct Case {
    std::string yaml;
    bool by_group, preemption, backfill;
    std::map<std::string, double> weights;
  };
  const std::vector<Case> cases = {
      {"{name: fair-share}", false, false, false, {}},
      {"{name: fair-share, weights: {u1: 3, u3: 0.5}}", false, false, false, {{"u1", 3}, {"u3", 0.5}}},
      {"{name: fair-share, by: group}", true, false, false, {}},
      {"{name: fair-share, preemption: true}", false, true, false, {}},
      {"{name: fair-share, backfill: easy, placement: packed}", false, false, true, {}},
  };
  const PolicyRegistry registry = builtin_policies();
  for (const Case& c : cases) {
    INFO(c.yaml);
    PolicyInstance grouped = registry.create(ConfigNode::load_string(c.yaml, "policy.yaml"));
    QueuePolicyOptions options;
    options.preemption = c.preemption;
    if (c.backfill) {
      options.backfill = Backfill::kEasy;
      options.placement = Placement::kPacked;
    }
    QueuePolicy recounting("fair-share", std::make_unique<RecountingFairShare>(c.by_group, c.weights), options);
    const auto a = run_policy(*grouped.policy);
    const auto b = run_policy(recounting);
    REQUIRE(a.size() == 600);
    REQUIRE(b.size() == 600);
    int differ = 0, preempted = 0;
    for (const auto& [id, r] : a) {
      differ += !(r == b.at(id));
      preempted += r.preemptions > 0;
    }
    CHECK(differ == 0);
    if (c.preemption) CHECK(preempted > 0);  // the case exercises preemption
  }
}
