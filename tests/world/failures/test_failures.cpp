// Failures, loss-spike restarts and periodic checkpoints against closed forms.
//
// The model under test (docs/failures.md): one job of work W runs at rate 1. It
// checkpoints after every tau seconds of compute; a checkpoint write stalls it for delta
// and commits at its end. Failures (here loss spikes, exponential with mean M = 1/lambda)
// strike while the job computes or writes a checkpoint, never during the restart R that
// follows each failure. A failure rolls the job back to its last committed checkpoint.
//
// Expected completion time. Split the work into segments that end at a checkpoint
// commit: n = floor(W / tau) segments of length T = tau + delta (compute, then write)
// and a last one of length r = W - n*tau (no checkpoint after the last compute). A
// segment of length T is retried until one attempt runs T without a failure. Attempts
// fail independently (memoryless failures, clock restarted after each restart), each
// with probability q = 1 - e^{-lambda T}; the number of failed attempts N is geometric,
// E[N] = e^{lambda T} - 1. A failed attempt lasts X | X < T plus R, with
//   E[X | X < T] = 1/lambda - T e^{-lambda T} / (1 - e^{-lambda T}).
// So E[time of segment] = T + E[N] (E[X | X < T] + R)
//                       = T + (e^{lambda T} - 1)(1/lambda + R) - T
//                       = (e^{lambda T} - 1)(1/lambda + R).
// Segments are independent, hence
//   E[completion] = n (e^{lambda (tau + delta)} - 1)(M + R) + (e^{lambda r} - 1)(M + R).
// Per unit of work the cost is (e^{lambda (tau + delta)} - 1)(M + R) / tau, whose
// minimum over tau satisfies lambda tau e^{lambda (tau + delta)} = e^{lambda (tau + delta)} - 1;
// to first order in delta / M that is Young's tau* = sqrt(2 delta M).
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "policies/placement.hpp"
#include "policies/registry.hpp"
#include "world/failures/failure_process.hpp"
#include "base/error.hpp"
#include "world/failures/failure_model.hpp"
#include "sim/invariant_checker.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "first_fit_policy.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::TempDir;
using schedsim::test::VectorSource;
using schedsim::test::Ends;
using schedsim::test::FirstFit;

namespace {

FailureConfig spike_config(double mtbf_s, double tau_s, double delta_s, double restart_s, int gpus = 1) {
  FailureConfig c;
  // Hazard per job = rate * gpus / 3600 per second = 1 / mtbf_s.
  c.loss_spikes.rate_per_gpu_hour = 3600.0 / mtbf_s / gpus;
  c.loss_spikes.restart_s = restart_s;
  c.checkpoint.policy = CheckpointConfig::Policy::kFixed;
  c.checkpoint.interval_s = tau_s;
  c.checkpoint.cost_s = delta_s;
  return c;
}

struct OneRun {
  JobState job;
  SimulatorStats stats;
};

OneRun run_one(const FailureConfig& config, std::uint64_t seed, double work_s, int gpus = 1, int nodes = 1, Observer* extra = nullptr) {
  const ClusterSpec cluster({NodeGroup{nodes, "test", 8}});
  VectorSource source({make_job("long", 0, gpus, work_s)});
  FirstFit policy;
  FailureModel model(config, cluster, seed, nullptr);
  SimulatorOptions options;
  Simulator sim(cluster, source, policy, options);
  FailureProcess failure_process(model);  // the failures model as a world process
  sim.add_process(failure_process);
  Ends ends;
  InvariantChecker checker;
  sim.add_observer(ends);
  sim.add_observer(checker);
  if (extra) sim.add_observer(*extra);
  sim.run();
  REQUIRE(ends.jobs.size() == 1);
  return {ends.jobs[0], sim.stats()};
}

double expected_completion_s(double work_s, double mtbf_s, double tau_s, double delta_s, double restart_s) {
  const double lambda = 1.0 / mtbf_s;
  const double n = std::floor(work_s / tau_s);
  const double r = work_s - n * tau_s;
  return n * std::expm1(lambda * (tau_s + delta_s)) * (mtbf_s + restart_s) + std::expm1(lambda * r) * (mtbf_s + restart_s);
}

double mean_completion_s(const FailureConfig& c, double work_s, int seeds) {
  double sum = 0.0;
  for (int s = 1; s <= seeds; ++s) sum += run_one(c, static_cast<std::uint64_t>(s), work_s).job.end.seconds();
  return sum / seeds;
}

}  // namespace

TEST_CASE("mean completion time with exponential failures matches the closed form", "[sim][failures]") {
  // M = 10,000 s, tau = 1,000 s, delta = 100 s, R = 50 s, W = 10,500 s:
  // E = 10 (e^0.11 - 1)(10,050) + (e^0.05 - 1)(10,050) = 12,201.2 s.
  const double M = 10000, tau = 1000, delta = 100, R = 50, W = 10500;
  const double expected = expected_completion_s(W, M, tau, delta, R);
  CHECK(expected == Approx(12201.2).epsilon(1e-4));
  const double mean = mean_completion_s(spike_config(M, tau, delta, R), W, 2000);
  CHECK(mean == Approx(expected).epsilon(0.03));
  // Failure-free, the same job takes W + 10 delta exactly.
  FailureConfig none = spike_config(M, tau, delta, R);
  none.loss_spikes.rate_per_gpu_hour = 0.0;
  const OneRun clean = run_one(none, 1, W);
  CHECK(clean.job.end.seconds() == Approx(W + 10 * delta).margin(1e-6));
  CHECK(clean.job.checkpoint_device_us == 10 * 100 * 1000000LL);
  CHECK(clean.job.lost_device_us == 0);
}

TEST_CASE("the simulated optimal checkpoint interval lies within 15 percent of Young-Daly", "[sim][failures]") {
  // delta / M = 0.01: Young-Daly gives sqrt(2 * 100 * 10,000) = 1,414 s; the exact optimum
  // of the model above is 1,351 s, and the parabola through the exact expectations at
  // these points peaks at 1,317 s. The simulated optimum is the vertex of a parabola
  // fitted to the mean time per unit of work against ln(tau) (a raw argmin over a flat
  // valley is noise).
  const double M = 10000, delta = 100, R = 50, W = 200000;
  const double young_daly = young_daly_interval_s(delta, M);
  CHECK(young_daly == Approx(1414.21).epsilon(1e-5));
  std::vector<double> taus = {500, 700, 1000, 1400, 2000, 2800, 4000};
  std::vector<double> xs, ys;
  for (double tau : taus) {
    const double mean = mean_completion_s(spike_config(M, tau, delta, R), W, 100);
    // Each point also agrees with the closed form.
    CHECK(mean == Approx(expected_completion_s(W, M, tau, delta, R)).epsilon(0.03));
    xs.push_back(std::log(tau));
    ys.push_back(mean / W);
  }
  // Least squares y = a x^2 + b x + c (normal equations, 3x3, Cramer's rule).
  double s[5] = {0, 0, 0, 0, 0}, t[3] = {0, 0, 0};
  for (std::size_t i = 0; i < xs.size(); ++i) {
    double p = 1;
    for (int k = 0; k < 5; ++k, p *= xs[i]) s[k] += p;
    t[0] += ys[i];
    t[1] += ys[i] * xs[i];
    t[2] += ys[i] * xs[i] * xs[i];
  }
  auto det3 = [](double a, double b, double c, double d, double e, double f, double g, double h, double i) {
    return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g);
  };
  const double D = det3(s[4], s[3], s[2], s[3], s[2], s[1], s[2], s[1], s[0]);
  const double a = det3(t[2], s[3], s[2], t[1], s[2], s[1], t[0], s[1], s[0]) / D;
  const double b = det3(s[4], t[2], s[2], s[3], t[1], s[1], s[2], t[0], s[0]) / D;
  REQUIRE(a > 0);
  const double optimum = std::exp(-b / (2 * a));
  INFO("simulated optimum " << optimum << " s, Young-Daly " << young_daly << " s");
  CHECK(std::fabs(optimum - young_daly) / young_daly < 0.15);
}

namespace {

// Watches one job between events: every rollback loses at most tau of work, and a
// failure during a checkpoint write falls back to the checkpoint before it.
class RollbackWatch : public Observer {
 public:
  explicit RollbackWatch(double tau_s) : tau_s_(tau_s) {}
  void after_event(const Simulator& sim) override {
    sim.for_each_job([&](const JobState& j) {
      const double lost = j.lost_work_s - prev_lost_;
      if (lost > 1e-9) {
        ++rollbacks;
        max_loss_s = std::max(max_loss_s, lost);
        if (prev_kind_ == StallKind::kCheckpoint) {
          ++during_write;
          // The write in progress had saved nothing: the job is back at the previous mark,
          // tau of work behind where the write started.
          if (std::fabs(lost - tau_s_) > 1e-6 || std::fabs(j.checkpoints.back().progress_s - prev_mark_s_) > 1e-6) ++bad_fallbacks;
        }
        const double progress = j.work_done_s - j.lost_work_s;
        if (std::fabs(progress - j.checkpoints.back().progress_s) > 1e-6) ++bad_rollbacks;
      }
      prev_lost_ = j.lost_work_s;
      prev_kind_ = j.stall_kind;
      prev_mark_s_ = j.checkpoints.back().progress_s;
    });
  }
  int rollbacks = 0, during_write = 0, bad_fallbacks = 0, bad_rollbacks = 0;
  double max_loss_s = 0.0;

 private:
  double tau_s_;
  double prev_lost_ = 0.0;
  StallKind prev_kind_ = StallKind::kNone;
  double prev_mark_s_ = 0.0;
};

}  // namespace

TEST_CASE("work is never lost beyond the last checkpoint and a failure during a write falls back", "[sim][failures]") {
  // Long writes (delta = 400 of every 1,400 s) so that many failures hit one.
  const double tau = 1000;
  RollbackWatch watch(tau);
  // W = 100,000 s: about 60 failures expected, a quarter of them during a write.
  const OneRun r = run_one(spike_config(3000, tau, 400, 20), 7, 100000, 1, 1, &watch);
  CHECK(watch.rollbacks == static_cast<int>(r.job.loss_spike_restarts));
  CHECK(watch.rollbacks > 30);
  CHECK(watch.during_write > 5);
  CHECK(watch.bad_fallbacks == 0);
  CHECK(watch.bad_rollbacks == 0);
  CHECK(watch.max_loss_s <= tau + 1e-6);
  CHECK(r.job.work_done_s - r.job.lost_work_s == Approx(100000).margin(1e-6));
  // Lost device-time equals lost work on one device at rate 1.
  CHECK(static_cast<double>(r.job.lost_device_us) / 1e6 == Approx(r.job.lost_work_s).margin(1e-3));
}

namespace {

// Checks that every rollback lands on the k-th newest committed checkpoint as they stood
// before the spike (the start when there are fewer than k).
class KBackWatch : public Observer {
 public:
  explicit KBackWatch(std::size_t k) : k_(k) {}
  void after_event(const Simulator& sim) override {
    sim.for_each_job([&](const JobState& j) {
      if (j.lost_work_s > prev_lost_ + 1e-9) {
        ++rollbacks;
        const double want = prev_marks_.size() > k_ ? prev_marks_[prev_marks_.size() - k_].progress_s : 0.0;
        if (std::fabs(j.work_done_s - j.lost_work_s - want) > 1e-6) ++wrong;
        if (prev_marks_.size() > k_) ++deep;  // a real k-back, not a fall to the start
      }
      prev_lost_ = j.lost_work_s;
      prev_marks_ = j.checkpoints;
    });
  }
  int rollbacks = 0, wrong = 0, deep = 0;

 private:
  std::size_t k_;
  double prev_lost_ = 0.0;
  std::vector<CheckpointMark> prev_marks_;
};

}  // namespace

TEST_CASE("rolling back k checkpoints lands on the k-th newest one", "[sim][failures]") {
  // A spike discards the checkpoints after the one it returns to (they may hold the
  // diverging state); with fewer than k left, the job restarts from the beginning.
  FailureConfig c = spike_config(8000, 1000, 0, 0);
  c.loss_spikes.rollback_checkpoints = 3;
  KBackWatch watch(3);
  const OneRun r = run_one(c, 3, 50000, 1, 1, &watch);
  CHECK(watch.rollbacks == static_cast<int>(r.job.loss_spike_restarts));
  CHECK(watch.rollbacks > 5);
  CHECK(watch.deep > 2);
  CHECK(watch.wrong == 0);
  CHECK(r.job.work_done_s - r.job.lost_work_s == Approx(50000).margin(1e-6));
}

TEST_CASE("asynchronous checkpoints cost no stall but commit late", "[sim][failures]") {
  FailureConfig c = spike_config(1e12, 1000, 100, 0);  // no spikes in practice
  c.checkpoint.async = true;
  const OneRun clean = run_one(c, 1, 10500);
  CHECK(clean.job.end.seconds() == Approx(10500).margin(1e-6));
  CHECK(clean.job.checkpoint_device_us == 0);
  CHECK(clean.stats.checkpoints == 10);
  // With failures, a rollback goes to the last *committed* checkpoint: up to tau + delta back.
  c.loss_spikes.rate_per_gpu_hour = 3600.0 / 3000.0;
  const OneRun r = run_one(c, 5, 30000);
  REQUIRE(r.job.loss_spike_restarts > 3);
  CHECK(r.job.lost_work_s / r.job.loss_spike_restarts <= 1100 + 1e-6);
}

TEST_CASE("Young-Daly checkpoint interval from the job's failure rate and cost", "[sim][failures]") {
  const ClusterSpec cluster({NodeGroup{4, "A100", 8}});
  FailureConfig c;
  c.loss_spikes.rate_per_gpu_hour = 1e-4;        // 16 GPUs: 1.6e-3 per hour
  c.devices.mtbf_h = 8000;                       // node of 8: 1e-3 per hour, 2 nodes: 2e-3
  c.checkpoint.policy = CheckpointConfig::Policy::kYoungDaly;
  c.checkpoint.cost_s = 60;
  FailureModel model(c, cluster, 1, nullptr);
  std::vector<DeviceId> devices;
  for (DeviceId d = 0; d < 16; ++d) devices.push_back(d);
  const JobSpec job = make_job("j", 0, 16, 1000);
  const double rate_per_h = 1.6e-3 + 2e-3;
  CHECK(model.job_failure_rate_per_s(job, devices) * 3600 == Approx(rate_per_h).epsilon(1e-12));
  CHECK(model.checkpoint_interval_s(job, devices) == Approx(std::sqrt(2 * 60 * 3600 / rate_per_h)).epsilon(1e-12));
  // The same 16 devices spread over 4 nodes see twice the node failures.
  std::vector<DeviceId> spread;
  for (int n = 0; n < 4; ++n) {
    for (int k = 0; k < 4; ++k) spread.push_back(n * 8 + k);
  }
  CHECK(model.job_failure_rate_per_s(job, spread) * 3600 == Approx(1.6e-3 + 4e-3).epsilon(1e-12));
}

TEST_CASE("Weibull lifetimes have the configured mean", "[sim][failures]") {
  for (double shape : {0.7, 1.0, 2.5}) {
    Lifetime l;
    l.kind = Lifetime::Kind::kWeibull;
    l.weibull_shape = shape;
    Rng rng(11, "weibull");
    double sum = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) sum += l.sample(rng, 3600.0);
    CHECK(sum / n == Approx(3600.0).epsilon(0.01));
  }
}

TEST_CASE("failed devices are neither free nor allocatable until repaired", "[sim][failures]") {
  const ClusterSpec cluster({NodeGroup{2, "test", 4}});
  ClusterState state(cluster);
  state.mark_failed(1);
  CHECK(state.is_failed(1));
  CHECK_FALSE(state.is_free(1));
  CHECK(state.free_devices() == 7);
  CHECK(state.failed_devices() == 1);
  CHECK(state.free_on_node(0) == 3);
  CHECK(state.next_free(1) == 2);
  const std::vector<DeviceId> one{1};
  CHECK_THROWS_AS(state.allocate(one, 0), InvariantError);
  const std::vector<DeviceId> held{2};
  state.allocate(held, 0);
  CHECK_THROWS_AS(state.mark_failed(2), InvariantError);
  state.mark_repaired(1);
  CHECK(state.is_free(1));
  CHECK(state.free_devices() == 7);  // 8 minus the one job 0 holds
  CHECK(state.failed_devices() == 0);
  CHECK_THROWS_AS(state.mark_repaired(1), InvariantError);
}

TEST_CASE("node failures requeue jobs that restart elsewhere from their checkpoint", "[sim][failures]") {
  // 4 nodes of 8, device MTBF 2,000 h: each node fails every 250 h on average; the jobs
  // keep the cluster busy for about 2,000 h, so about 30 failures.
  FailureConfig c;
  c.devices.mtbf_h = 2000;
  c.devices.repair_h = 24;
  c.devices.restart_s = 300;
  c.checkpoint.policy = CheckpointConfig::Policy::kFixed;
  c.checkpoint.interval_s = 3600;
  c.checkpoint.cost_s = 60;
  const ClusterSpec cluster({NodeGroup{4, "test", 8}});
  std::vector<JobSpec> jobs;
  for (int i = 0; i < 40; ++i) jobs.push_back(make_job("j" + std::to_string(i), i * 3600.0, 8, 200 * 3600.0));
  VectorSource source(jobs);
  FirstFit policy;
  FailureModel model(c, cluster, 42, nullptr);
  SimulatorOptions options;
  Simulator sim(cluster, source, policy, options);
  FailureProcess failure_process(model);  // the failures model as a world process
  sim.add_process(failure_process);
  Ends ends;
  InvariantChecker checker;  // also checks failed devices are never held: held + free + failed = all
  sim.add_observer(ends);
  sim.add_observer(checker);
  MetricsCollector metrics(cluster.num_devices());
  sim.add_observer(metrics);
  sim.run();
  const Summary s = metrics.summarize();
  CHECK(s.jobs_completed == 40);
  CHECK(sim.stats().unit_failures > 10);
  CHECK(s.restarts_device_failure == sim.stats().job_failure_hits);
  CHECK(s.restarts_device_failure > 5);
  CHECK(s.restarts_loss_spike == 0);
  CHECK(s.lost_gpu_hours > 0);
  // A failure loses at most one interval plus one write of compute on 8 devices.
  CHECK(s.lost_gpu_hours <= s.restarts_device_failure * 8 * (3600.0 + 60.0) / 3600.0 + 1e-9);
  // Each requeued restart pays 300 s on 8 devices.
  CHECK(s.restart_gpu_hours == Approx(s.restarts_device_failure * 8 * 300.0 / 3600.0).epsilon(1e-12));
  REQUIRE(s.goodput.has_value());
  const double useful = s.allocated_gpu_hours - s.checkpoint_gpu_hours - s.restart_gpu_hours - s.lost_gpu_hours;
  CHECK(*s.goodput == Approx(useful / s.allocated_gpu_hours).epsilon(1e-12));
  CHECK(*s.goodput < 1.0);
  // Useful device-time is exactly the work asked for (rate 1).
  CHECK(useful == Approx(40 * 8 * 200.0).epsilon(1e-9));
}

TEST_CASE("with on_failure wait a job keeps its devices and resumes after the repair", "[sim][failures]") {
  FailureConfig c;
  c.devices.mtbf_h = 8 * 500;  // the job's node fails every 500 h on average
  c.devices.repair_h = 10;
  c.devices.restart_s = 600;
  c.devices.on_failure = DeviceFailureConfig::OnFailure::kWait;
  const OneRun r = run_one(c, 9, 2000 * 3600.0, 8, 1);
  REQUIRE(r.job.failure_restarts > 0);
  CHECK(r.job.preemptions == 0);
  // No checkpoints: each failure loses everything; waiting costs repair + restart on 8 devices.
  CHECK(r.job.restart_device_us == static_cast<std::int64_t>(r.job.failure_restarts) * 8 * (10 * 3600 + 600) * 1000000LL);
  CHECK(r.job.end.seconds() == Approx(2000 * 3600.0 + r.job.lost_work_s + r.job.failure_restarts * (10 * 3600.0 + 600)).margin(1e-3));
}

TEST_CASE("stragglers slow every job that touches a slow node", "[sim][failures]") {
  FailureConfig c;
  c.stragglers.fraction = 1.0;
  c.stragglers.slowdown = 0.5;
  const OneRun r = run_one(c, 1, 1000, 4, 2);
  CHECK(r.job.end.seconds() == Approx(2000).margin(1e-6));
}

TEST_CASE("trace-recorded failed and killed jobs count apart from completed ones", "[sim][failures]") {
  auto run = [](bool separate) {
    const ClusterSpec cluster({NodeGroup{1, "test", 8}});
    std::vector<JobSpec> jobs = {make_job("ok", 0, 1, 100), make_job("bad", 0, 1, 30), make_job("gone", 0, 1, 50), make_job("ok2", 0, 1, 200)};
    jobs[1].recorded_status = RecordedStatus::kFailed;
    jobs[2].recorded_status = RecordedStatus::kKilled;
    VectorSource source(jobs);
    FirstFit policy;
    FailureConfig c;
    c.recorded_outcomes_separate = separate;
    FailureModel model(c, cluster, 1, nullptr);
    SimulatorOptions options;
    Simulator sim(cluster, source, policy, options);
    FailureProcess failure_process(model);  // the failures model as a world process
    sim.add_process(failure_process);
    MetricsCollector metrics(8);
    Ends ends;
    sim.add_observer(metrics);
    sim.add_observer(ends);
    sim.run();
    return std::make_pair(metrics.summarize(), ends.jobs);
  };
  const auto [s, jobs] = run(true);
  CHECK(s.jobs_completed == 2);
  CHECK(s.jobs_failed == 1);
  CHECK(s.jobs_killed == 1);
  CHECK(*s.mean_jct_s == Approx(150));  // completed jobs only
  CHECK(s.makespan_s == Approx(200));
  CHECK(s.allocated_gpu_hours == Approx(380.0 / 3600));
  CHECK(*s.goodput == Approx(300.0 / 380));  // a failed job's device-time produced nothing
  for (const auto& j : jobs) {
    if (j.spec.id == "bad") CHECK(j.status == JobStatus::kFailed);
    if (j.spec.id == "gone") CHECK(j.status == JobStatus::kKilled);
    if (j.spec.id == "bad") CHECK(j.end.seconds() == Approx(30));  // ends at its recorded time
  }
  const auto [all, unused] = run(false);
  CHECK(all.jobs_completed == 4);
  CHECK(all.jobs_failed == 0);
  CHECK(*all.mean_jct_s == Approx(95));
  CHECK(*all.goodput == Approx(1.0));
}

namespace {

const char* kFailureScenario = R"(
seed: 5
cluster:
  nodes: [{count: 4, type: A100, devices_per_node: 8}]
workload:
  synthetic:
    num_jobs: 60
    arrival: {process: poisson, mean_interarrival_s: 1800}
    duration_s: {dist: lognormal, median: 20000, sigma: 1.0}
    gpus: {1: 0.3, 2: 0.2, 4: 0.2, 8: 0.2, 16: 0.1}
policy: fifo
failures:
  loss_spikes: {rate_per_gpu_hour: 0.002, restart_s: 300}
  devices: {mtbf_h: 5000, repair_h: 8, restart_s: 600}
  checkpoint: {interval: young_daly, cost_s: 120}
)";

}  // namespace

TEST_CASE("same seed gives the same failures and byte-identical outputs", "[sim][failures][determinism]") {
  const PolicyRegistry registry = builtin_policies();
  TempDir dir;
  const std::string path = dir.write("s.yaml", kFailureScenario);
  const ScenarioConfig scenario = load_scenario(path, {}, std::nullopt, registry);
  const RunResult a = run_scenario(scenario, registry, RunOptions{dir.path("a"), false, true});
  run_scenario(scenario, registry, RunOptions{dir.path("b"), false, true});
  const ScenarioConfig other = load_scenario(path, {}, 6, registry);
  run_scenario(other, registry, RunOptions{dir.path("c"), false, false});
  CHECK(test::read_file(dir.path("a/jobs.csv")) == test::read_file(dir.path("b/jobs.csv")));
  CHECK(test::read_file(dir.path("a/results.json")) == test::read_file(dir.path("b/results.json")));
  CHECK(test::read_file(dir.path("a/jobs.csv")) != test::read_file(dir.path("c/jobs.csv")));
  CHECK(a.summary.jobs_completed == 60);
  CHECK(a.summary.restarts_loss_spike > 0);
  CHECK(a.summary.restarts_device_failure > 0);
  CHECK(a.summary.checkpoint_gpu_hours > 0);
  REQUIRE(a.summary.goodput.has_value());
  CHECK(*a.summary.goodput < 1.0);
  CHECK(*a.summary.goodput > 0.5);
  const std::string results = test::read_file(dir.path("a/results.json"));
  CHECK(results.find("\"restarts_loss_spike\": " + std::to_string(a.summary.restarts_loss_spike)) != std::string::npos);
  CHECK(results.find("\"interval\": \"young_daly\"") != std::string::npos);
  const std::string csv = test::read_file(dir.path("a/jobs.csv"));
  CHECK(csv.rfind("job_id,submit_s,start_s,end_s,num_gpus,jct_s,queue_delay_s,status,gpu_s,checkpoint_gpu_s,preemptions,moves,"
                  "loss_spike_restarts,failure_restarts,periodic_checkpoint_gpu_s,restart_gpu_s,lost_gpu_s,energy_kwh,cost_usd,co2_kg\n", 0) == 0);
}

TEST_CASE("bad failures config is rejected with the key and what is allowed", "[sim][failures][errors]") {
  const PolicyRegistry registry = builtin_policies();
  auto load = [&](const std::string& failures) {
    const std::string doc = "cluster: {nodes: [{count: 1, type: A100, devices_per_node: 8}]}\n"
                            "workload: {synthetic: {num_jobs: 5}}\nfailures: " + failures + "\n";
    ScenarioConfig::parse(ConfigNode::load_string(doc, "t.yaml"), registry);
  };
  CHECK_THROWS_WITH(load("{loss_spike: {}}"), Catch::Contains("unknown key 'loss_spike'") && Catch::Contains("loss_spikes"));
  CHECK_THROWS_WITH(load("{loss_spikes: {weibull_shape: 2}}"), Catch::Contains("only applies with distribution: weibull"));
  CHECK_THROWS_WITH(load("{devices: {unit: rack}}"), Catch::Contains("node") && Catch::Contains("device"));
  CHECK_THROWS_WITH(load("{checkpoint: {interval: fixed}}"), Catch::Contains("needs interval_s"));
  CHECK_THROWS_WITH(load("{checkpoint: {interval: young_daly}}"), Catch::Contains("needs cost_s"));
  CHECK_THROWS_WITH(load("{devices: {mtbf_h_by_type: {H100: 100}}}"), Catch::Contains("no node group of the cluster has device type 'H100'"));
  CHECK_THROWS_WITH(load("{stragglers: {slowdown: 2}}"), Catch::Contains("rate multiplier in (0, 1]"));
  CHECK_NOTHROW(load("{}"));
}

TEST_CASE("the resolved failures config parses back to itself", "[sim][failures]") {
  const ConfigNode node = ConfigNode::load_string(
      "{recorded_outcomes: completed, loss_spikes: {rate_per_gpu_hour: 1.0e-5, by_model: {llm: 2.0e-5}, distribution: weibull, weibull_shape: 0.8,"
      " rollback_checkpoints: 2, restart_s: 60}, devices: {mtbf_h: 50000, unit: device, on_failure: wait}, stragglers: {fraction: 0.1, slowdown: 0.5},"
      " checkpoint: {interval_s: 3600, cost_s: 30, async: true}}",
      "t.yaml");
  const YAML::Node first = FailureConfig::parse(node).to_yaml();
  const YAML::Node second = FailureConfig::parse(ConfigNode(first, "resolved")).to_yaml();
  CHECK(YAML::Dump(first) == YAML::Dump(second));
  CHECK(first["checkpoint"]["interval"].as<std::string>() == "fixed");
  CHECK(first["loss_spikes"]["by_model"]["llm"].as<double>() == 2.0e-5);
  // Without cost_s the resolved config leaves it out (the physics model decides).
  const YAML::Node yd = FailureConfig::parse(ConfigNode::load_string("{checkpoint: {interval: young_daly}}", "t.yaml")).to_yaml();
  CHECK_FALSE(yd["checkpoint"]["cost_s"].IsDefined());
  CHECK_NOTHROW(FailureConfig::parse(ConfigNode(yd, "resolved")));
}

TEST_CASE("every registered policy runs with failures on and keeps the invariants", "[sim][failures][policies]") {
  // The golden scenario (80 jobs on 2 nodes of 8) with physics (costed preemption saves and
  // restores, checkpoint cost from size / bandwidth) and frequent spikes and node failures:
  // preemption, moves and resizes meet rollbacks, requeues and failed devices.
  const PolicyRegistry registry = builtin_policies();
  const std::string scenario_path = std::string(SCHEDSIM_SOURCE_DIR) + "/tests/golden/scenario.yaml";
  for (const char* on_failure : {"requeue", "wait"}) {
    for (const PolicyInfo& info : registry.all()) {
      INFO("policy " << info.name << ", on_failure " << on_failure);
      const std::vector<std::string> sets = {
          "policy=" + info.name, "physics={}",
          std::string("failures={loss_spikes: {rate_per_gpu_hour: 0.5, restart_s: 30}, devices: {mtbf_h: 4, repair_h: 0.1, restart_s: 20, on_failure: ") +
              on_failure + "}, checkpoint: {interval_s: 120}}"};
      const ScenarioConfig scenario = load_scenario(scenario_path, sets, std::nullopt, registry);
      const RunResult r = run_scenario(scenario, registry, RunOptions{"", false, true});
      CHECK(r.summary.jobs_completed == 80);
      CHECK(r.summary.restarts_loss_spike > 0);
      CHECK(r.summary.restarts_device_failure > 0);
      REQUIRE(r.summary.goodput.has_value());
      CHECK(*r.summary.goodput < 1.0);
      CHECK(*r.summary.goodput > 0.3);
    }
  }
}

TEST_CASE("per-class spike rates per-type MTBF and single-device failures", "[sim][failures]") {
  LossSpikeConfig ls;
  ls.rate_per_gpu_hour = 1e-4;
  ls.gpu_exponent = 0.5;
  ls.rate_per_gpu_hour_by_model = {{"llm", 1e-3}};
  JobSpec job = make_job("j", 0, 16, 100);
  CHECK(ls.hazard_per_s(job, 16) * 3600 == Approx(1e-4 * 4).epsilon(1e-12));  // 16^0.5 = 4
  job.model = "llm";
  CHECK(ls.hazard_per_s(job, 16) * 3600 == Approx(1e-3 * 4).epsilon(1e-12));

  // Devices fail one at a time: a job on 4 devices of one node sees 4 device rates, not a node's 8.
  const ClusterSpec cluster({NodeGroup{1, "A100", 8}, NodeGroup{1, "H100", 8}});
  FailureConfig c;
  c.devices.mtbf_h = 1000;
  c.devices.mtbf_h_by_type = {{"H100", 500}};
  c.devices.unit = DeviceFailureConfig::Unit::kDevice;
  FailureModel model(c, cluster, 1, nullptr);
  CHECK(model.num_units() == 16);
  const std::vector<DeviceId> a100{0, 1, 2, 3}, h100{8, 9, 10, 11};
  CHECK(model.job_failure_rate_per_s(make_job("j", 0, 4, 1), a100) * 3600 == Approx(4.0 / 1000).epsilon(1e-12));
  CHECK(model.job_failure_rate_per_s(make_job("j", 0, 4, 1), h100) * 3600 == Approx(4.0 / 500).epsilon(1e-12));

  // And a whole run with Weibull device failures, asynchronous checkpoints and the
  // invariant checker on.
  const PolicyRegistry registry = builtin_policies();
  const std::string scenario_path = std::string(SCHEDSIM_SOURCE_DIR) + "/tests/golden/scenario.yaml";
  const ScenarioConfig scenario = load_scenario(
      scenario_path,
      {"failures={devices: {mtbf_h: 20, unit: device, distribution: weibull, weibull_shape: 0.7, repair_h: 0.2, restart_s: 10},"
       " checkpoint: {interval_s: 60, cost_s: 5, async: true}}"},
      std::nullopt, registry);
  const RunResult r = run_scenario(scenario, registry, RunOptions{"", false, true});
  CHECK(r.summary.jobs_completed == 80);
  CHECK(r.summary.restarts_device_failure > 0);
  CHECK(r.summary.checkpoint_gpu_hours == 0.0);  // asynchronous: no stall
  CHECK(r.stats.checkpoints > 0);
  REQUIRE(r.summary.goodput.has_value());
  CHECK(*r.summary.goodput < 1.0);
}

// ---- World processes (sim/world_process.hpp) ----
namespace {

// A process that counts every hook the kernel calls and, with kEvents, drives device
// availability reasons on device 0 at fixed times (kinds 40.. are free for processes).
class ProbeProcess final : public WorldProcess {
 public:
  explicit ProbeProcess(std::uint32_t hooks, std::vector<std::pair<double, int>> script = {}) : hooks_(hooks), script_(std::move(script)) {}
  const char* name() const override { return "probe"; }
  std::uint32_t hooks() const override { return hooks_; }
  void start(WorldContext& ctx) override {
    ++calls["start"];
    for (std::size_t i = 0; i < script_.size(); ++i) ctx.schedule(Tick::from_seconds(script_[i].first), 40, static_cast<std::int64_t>(i));
  }
  std::vector<std::uint32_t> event_kinds() const override { return {40}; }
  // Step codes: +1 / -1 add / clear kUnderRepair, +2 / -2 add / clear kTakenBack.
  void handle(WorldContext& ctx, const Event& e) override {
    ++calls["handle"];
    const int step = script_[static_cast<std::size_t>(e.arg)].second;
    const DeviceReasons r = std::abs(step) == 1 ? device_reason::kUnderRepair : device_reason::kTakenBack;
    if (step > 0) {
      const DeviceTaken taken = ctx.add_reason(0, r);
      holders.push_back(taken.holder);
    } else {
      ctx.clear_reason(0, r);
    }
    failed_after.push_back(ctx.cluster().is_failed(0));
    reasons_after.push_back(ctx.reasons(0));
    ctx.mark_decision_point();
  }
  double rate_factor(const JobState&) const override {
    ++calls["rate_factor"];
    return 1.0;
  }
  std::string placement_problem(const JobSpec&, Span<DeviceId>) const override {
    ++calls["placement_problem"];
    return {};
  }
  void on_job_arrival(WorldContext&, JobSlot) override { ++calls["on_job_arrival"]; }
  void on_compute_begins(WorldContext&, JobSlot) override { ++calls["on_compute_begins"]; }
  void on_progress_interrupted(WorldContext&, JobSlot, Interruption) override { ++calls["on_progress_interrupted"]; }
  void start_overhead(WorldContext&, JobSlot, Span<DeviceId>, bool, StartOverhead&) override { ++calls["start_overhead"]; }
  void completion_status(const JobState&, JobStatus&) const override { ++calls["completion_status"]; }
  void end_of_instant(WorldContext&) override { ++calls["end_of_instant"]; }
  DeviceReasons device_reasons_used() const override { return device_reason::kUnderRepair | device_reason::kTakenBack; }

  mutable std::map<std::string, int> calls;
  std::vector<DeviceTaken::Holder> holders;
  std::vector<bool> failed_after;
  std::vector<DeviceReasons> reasons_after;

 private:
  std::uint32_t hooks_;
  std::vector<std::pair<double, int>> script_;
};

struct ProbeRun {
  SimulatorStats stats;
  std::vector<JobState> jobs;
};

ProbeRun run_with_probe(ProbeProcess* probe) {
  const ClusterSpec cluster({NodeGroup{1, "test", 4}});
  VectorSource source({make_job("a", 0, 2, 100), make_job("b", 5, 4, 50), make_job("c", 7, 1, 30)});
  FirstFit policy;
  Simulator sim(cluster, source, policy);
  if (probe) sim.add_process(*probe);
  Ends ends;
  InvariantChecker checker;
  sim.add_observer(ends);
  sim.add_observer(checker);
  sim.run();
  return {sim.stats(), ends.jobs};
}

}  // namespace

TEST_CASE("a world process is called only for the hooks it subscribes to", "[sim][failures][kernel]") {
  const ProbeRun plain = run_with_probe(nullptr);
  // Subscribed to nothing: no hook is called, and the run is the same as without it.
  ProbeProcess none(0);
  const ProbeRun with_none = run_with_probe(&none);
  CHECK(none.calls.empty());
  CHECK(with_none.stats.events == plain.stats.events);
  CHECK(with_none.stats.decision_points == plain.stats.decision_points);
  REQUIRE(with_none.jobs.size() == plain.jobs.size());
  for (std::size_t i = 0; i < plain.jobs.size(); ++i) CHECK(with_none.jobs[i].end == plain.jobs[i].end);
  // Subscribed to the start only: called once, nothing else.
  ProbeProcess start_only(WorldProcess::kStart);
  run_with_probe(&start_only);
  CHECK(start_only.calls == std::map<std::string, int>{{"start", 1}});
  // Every per-job hook: arrivals, placements, compute, completions (3 jobs, no preemption).
  ProbeProcess all(WorldProcess::kJobArrival | WorldProcess::kPlacementVeto | WorldProcess::kComputeBegins | WorldProcess::kProgressInterrupted |
                   WorldProcess::kStartOverhead | WorldProcess::kCompletionStatus | WorldProcess::kRateFactor);
  const ProbeRun with_all = run_with_probe(&all);
  CHECK(all.calls["on_job_arrival"] == 3);
  CHECK(all.calls["placement_problem"] == 3);
  CHECK(all.calls["start_overhead"] == 3);
  CHECK(all.calls["on_compute_begins"] == 3);
  CHECK(all.calls["on_progress_interrupted"] == 3);  // each completion
  CHECK(all.calls["completion_status"] == 3);
  CHECK(all.calls["rate_factor"] == 3);              // at each start (no physics: rate 1 x factors)
  CHECK(all.calls.count("start") == 0);
  for (std::size_t i = 0; i < plain.jobs.size(); ++i) CHECK(with_all.jobs[i].end == plain.jobs[i].end);
}

TEST_CASE("a device under repair and taken back returns only when both reasons clear", "[sim][failures][market][kernel]") {
  // t=200: under repair (device 0 is free: it fails); 201: also taken back; 202:
  // repaired, still taken back (stays failed); 203: returned (free again). Then from 300
  // the same with the reasons added and cleared in the other order. Job "a" (2 GPUs)
  // runs 0..100 on devices 0-1, before any reason.
  ProbeProcess probe(WorldProcess::kStart | WorldProcess::kEvents,
                     {{200, 1}, {201, 2}, {202, -1}, {203, -2}, {300, 2}, {301, 1}, {302, -2}, {303, -1}});
  const ClusterSpec cluster({NodeGroup{1, "test", 4}});
  VectorSource source({make_job("a", 0, 2, 100), make_job("late", 300.5, 4, 10)});
  FirstFit policy;
  Simulator sim(cluster, source, policy);
  sim.add_process(probe);
  InvariantChecker checker;
  Ends ends;
  sim.add_observer(checker);
  sim.add_observer(ends);
  sim.run();
  CHECK(probe.failed_after == std::vector<bool>{true, true, true, false, true, true, true, false});
  using R = DeviceReasons;
  const R repair = device_reason::kUnderRepair, back = device_reason::kTakenBack;
  CHECK(probe.reasons_after == std::vector<R>{repair, R(repair | back), back, 0, back, R(repair | back), repair, 0});
  CHECK(probe.holders == std::vector<DeviceTaken::Holder>(4, DeviceTaken::kNobody));
  // "late" needs all four devices: it waits for device 0 from 300.5 until 303.
  REQUIRE(ends.jobs.size() == 2);
  CHECK(ends.jobs[1].start == Tick::from_seconds(303));
}

TEST_CASE("a reason added to a running job's device reports the job, every time", "[sim][failures][market][kernel]") {
  // Job "a" holds devices 0-1 from 0 to 100. At t=10 device 0 goes under repair (the probe
  // does nothing to the job); at t=20 it is also taken back: reported again (the rule the
  // failures and spot processes had before, not only at the first reason).
  ProbeProcess probe(WorldProcess::kStart | WorldProcess::kEvents, {{10, 1}, {20, 2}, {150, -1}, {160, -2}});
  const ClusterSpec cluster({NodeGroup{1, "test", 4}});
  VectorSource source({make_job("a", 0, 2, 100)});
  FirstFit policy;
  Simulator sim(cluster, source, policy);
  sim.add_process(probe);
  InvariantChecker checker;
  sim.add_observer(checker);
  sim.run();
  CHECK(probe.holders == std::vector<DeviceTaken::Holder>{DeviceTaken::kPlacedJob, DeviceTaken::kPlacedJob});
  // Held while reasons were added: not failed until released at 100, then failed until
  // the last reason cleared at 160.
  CHECK(probe.failed_after == std::vector<bool>{false, false, true, false});
}

TEST_CASE("two world processes cannot claim the same event kind", "[sim][failures][kernel]") {
  const ClusterSpec cluster({NodeGroup{1, "test", 4}});
  VectorSource source({make_job("a", 0, 1, 10)});
  FirstFit policy;
  Simulator sim(cluster, source, policy);
  ProbeProcess a(WorldProcess::kEvents), b(WorldProcess::kEvents);
  sim.add_process(a);
  try {
    sim.add_process(b);
    FAIL("no error");
  } catch (const InvariantError& e) {
    CHECK(std::string(e.what()) == "world processes 'probe' and 'probe' both claim event kind 40");
  }
}

TEST_CASE("the failures process keeps its per-job timers in a side table reset on arrival", "[sim][failures]") {
  // Checkpoints every 100 s (instant writes) for a 1000 s job: while it runs its
  // checkpoint timer is armed; after the run the slot's timers are disarmed.
  FailureConfig c;
  c.checkpoint.policy = CheckpointConfig::Policy::kFixed;
  c.checkpoint.interval_s = 100;
  c.checkpoint.cost_s = 0;
  const ClusterSpec cluster({NodeGroup{1, "test", 8}});
  VectorSource source({make_job("a", 0, 1, 1000)});
  FirstFit policy;
  FailureModel model(c, cluster, 1, nullptr);
  Simulator sim(cluster, source, policy);
  FailureProcess process(model);
  sim.add_process(process);
  CHECK(process.timers(0).checkpoint_due_event == 0);  // no job yet: defaults
  sim.run();
  CHECK(sim.stats().checkpoints == 9);
  const FailureProcess::JobTimers t = process.timers(0);
  CHECK(t.checkpoint_due_event == 0);
  CHECK(t.loss_spike_event == 0);
  CHECK(t.checkpoint_commit_event == 0);
  CHECK_FALSE(t.needs_restart);
}
