// Hand-built schedules for EASY backfilling, preemption and the compose/preset options.
#include <catch2/catch.hpp>

#include <map>
#include <stdexcept>
#include <string>

#include "policies/las.hpp"
#include "policies/queue_policy.hpp"
#include "policies/registry.hpp"
#include "base/error.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::VectorSource;

namespace {

struct Times {
  double start_s, end_s;
  std::uint32_t preemptions;
};

class TimesRecorder : public Observer {
 public:
  void on_job_end(const JobState& job) override { times[job.spec.id] = {job.start.seconds(), job.end.seconds(), job.preemptions}; }
  std::map<std::string, Times> times;
};

std::map<std::string, Times> run_on(const ClusterSpec& cluster, const std::string& policy_yaml, std::vector<JobSpec> jobs) {
  const PolicyRegistry registry = builtin_policies();
  PolicyInstance policy = registry.create(ConfigNode::load_string(policy_yaml, "policy.yaml"));
  VectorSource source(std::move(jobs));
  Simulator sim(cluster, source, *policy.policy);
  TimesRecorder rec;
  sim.add_observer(rec);
  sim.run();
  return rec.times;
}

std::map<std::string, Times> run(const std::string& policy_yaml, int devices, std::vector<JobSpec> jobs) {
  return run_on(ClusterSpec({NodeGroup{1, "test", devices}}), policy_yaml, std::move(jobs));
}

}  // namespace

TEST_CASE("EASY backfilling starts a short job ahead of a blocked wide job without delaying it", "[policies][backfill]") {
  // 4 devices. A holds 2 until t=100; W needs all 4, so its reservation is t=100.
  // S (2 GPUs, 50 s) fits now and ends at t=52 <= 100: it backfills.
  const std::vector<JobSpec> jobs = {make_job("A", 0, 2, 100), make_job("W", 1, 4, 50), make_job("S", 2, 2, 50)};
  const auto easy = run("{name: slurm-easy}", 4, jobs);
  CHECK(easy.at("S").start_s == Approx(2.0));
  CHECK(easy.at("S").end_s == Approx(52.0));
  CHECK(easy.at("W").start_s == Approx(100.0));  // the reservation holds
  CHECK(easy.at("W").end_s == Approx(150.0));
  const auto fifo = run("{name: fifo}", 4, jobs);  // head-of-line blocking: S waits for W
  CHECK(fifo.at("W").start_s == Approx(100.0));
  CHECK(fifo.at("S").start_s == Approx(150.0));
  // The same through compose.
  const auto composed = run("{name: compose, order: fifo, backfill: easy}", 4, jobs);
  CHECK(composed.at("S").start_s == Approx(2.0));
}

TEST_CASE("EASY backfilling does not start a job that would delay the reservation", "[policies][backfill]") {
  // L (2 GPUs, 200 s) would end at t=202, after W's reservation at t=100, and at t=100
  // no device is spare (2 free + 2 from A = W's 4): it must wait for W.
  const auto easy = run("{name: slurm-easy}", 4, {make_job("A", 0, 2, 100), make_job("W", 1, 4, 50), make_job("L", 2, 2, 200)});
  CHECK(easy.at("W").start_s == Approx(100.0));
  CHECK(easy.at("L").start_s == Approx(150.0));
  // The estimate, not the true duration, decides: S runs 50 s but says 500 s.
  const auto estimated = run("{name: slurm-easy}", 4, {make_job("A", 0, 2, 100), make_job("W", 1, 4, 50), make_job("S", 2, 2, 50, 500)});
  CHECK(estimated.at("S").start_s == Approx(150.0));
  // Running jobs' ends come from their estimates too: A says 40 s, so W's reservation is
  // t=40 and S (ends t=52) must not backfill.
  const auto early = run("{name: slurm-easy}", 4, {make_job("A", 0, 2, 100, 40), make_job("W", 1, 4, 50), make_job("S", 2, 2, 50)});
  CHECK(early.at("S").start_s == Approx(150.0));
}

TEST_CASE("EASY backfilling lets a long job use devices the reservation does not need", "[policies][backfill]") {
  // 6 devices. A holds 4 until t=100; W needs 4: at t=100, 6 are free and 2 are spare,
  // so L (2 GPUs, 1000 s) starts now although it runs past the reservation.
  const auto easy = run("{name: slurm-easy}", 6, {make_job("A", 0, 4, 100), make_job("W", 1, 4, 50), make_job("L", 2, 2, 1000)});
  CHECK(easy.at("L").start_s == Approx(2.0));
  CHECK(easy.at("W").start_s == Approx(100.0));
  // A second long job finds no spare device left and waits.
  const auto two = run("{name: slurm-easy}", 8, {make_job("A", 0, 6, 100), make_job("W", 1, 6, 50), make_job("L1", 2, 2, 1000), make_job("L2", 3, 2, 1000)});
  CHECK(two.at("L1").start_s == Approx(2.0));
  CHECK(two.at("W").start_s == Approx(100.0));
  CHECK(two.at("L2").start_s == Approx(150.0));
}

TEST_CASE("SRTF preempts the longest-remaining running job for a shorter arrival", "[policies][preemption]") {
  // 2 devices: L1 (100 s) and L2 (300 s) run; S (10 s) arrives at t=50 and takes L2's
  // device (300 - 50 = 250 s left, more than L1's 50 s); L2 resumes at t=60.
  const auto t = run("{name: srtf}", 2, {make_job("L1", 0, 1, 100), make_job("L2", 0, 1, 300), make_job("S", 50, 1, 10)});
  CHECK(t.at("S").start_s == Approx(50.0));
  CHECK(t.at("S").end_s == Approx(60.0));
  CHECK(t.at("L1").end_s == Approx(100.0));
  CHECK(t.at("L1").preemptions == 0);
  CHECK(t.at("L2").preemptions == 1);
  CHECK(t.at("L2").end_s == Approx(310.0));
  // Without preemption S waits for L1.
  const auto np = run("{name: srtf, preemption: false}", 2, {make_job("L1", 0, 1, 100), make_job("L2", 0, 1, 300), make_job("S", 50, 1, 10)});
  CHECK(np.at("S").start_s == Approx(100.0));
}

TEST_CASE("priority runs the most important job first and preempts only when asked", "[policies][preemption]") {
  auto job = [](const std::string& id, double submit_s, double duration_s, double priority) {
    JobSpec j = make_job(id, submit_s, 1, duration_s);
    j.priority = priority;
    return j;
  };
  const std::vector<JobSpec> jobs = {job("low", 0, 100, 1), job("mid", 1, 10, 2), job("high", 2, 10, 5)};
  const auto np = run("{name: priority}", 1, jobs);
  CHECK(np.at("high").start_s == Approx(100.0));
  CHECK(np.at("mid").start_s == Approx(110.0));
  const auto p = run("{name: priority, preemption: true}", 1, jobs);
  CHECK(p.at("mid").start_s == Approx(1.0));   // preempts low
  CHECK(p.at("high").start_s == Approx(2.0));  // preempts mid
  CHECK(p.at("mid").end_s == Approx(21.0));
  CHECK(p.at("low").end_s == Approx(120.0));
}

TEST_CASE("EDF runs the earliest deadline first and jobs without deadlines last", "[policies]") {
  auto job = [](const std::string& id, double submit_s, double deadline_s) {
    JobSpec j = make_job(id, submit_s, 1, 10);
    j.deadline_s = deadline_s;
    return j;
  };
  const auto t = run("{name: edf}", 1, {job("first", 0, 1000), job("none", 1, std::nan("")), job("late", 2, 500), job("soon", 3, 100)});
  CHECK(t.at("soon").start_s == Approx(10.0));
  CHECK(t.at("late").start_s == Approx(20.0));
  CHECK(t.at("none").start_s == Approx(30.0));
}

TEST_CASE("LAS discretized queues and the starvation guard", "[policies][las]") {
  // Threshold 100 GPU-s. B (2 GPUs) crosses it at t=50 (A arrives at t=60 and its
  // service 0 ranks in queue 0 while B is in queue 1): A preempts B.
  const auto t = run("{name: las, thresholds_gpu_s: [100], starvation_multiple: 0}", 2,
                     {make_job("B", 0, 2, 200), make_job("A", 60, 2, 30)});
  CHECK(t.at("A").start_s == Approx(60.0));
  CHECK(t.at("B").preemptions == 1);
  CHECK(t.at("B").end_s == Approx(230.0));
  // Inside one queue LAS is FIFO: below the threshold nothing is preempted.
  const auto same = run("{name: las, thresholds_gpu_s: [1000]}", 2, {make_job("B", 0, 2, 200), make_job("A", 60, 2, 30)});
  CHECK(same.at("A").start_s == Approx(200.0));
  CHECK(same.at("B").preemptions == 0);
}

TEST_CASE("compose and presets resolve their options and reject bad ones", "[policies][compose]") {
  const PolicyRegistry r = builtin_policies();
  const PolicyInstance c = r.create(ConfigNode::load_string("{name: compose, order: {name: sjf, by: duration}, placement: packed, backfill: easy}", "p.yaml"));
  CHECK(c.resolved["order"]["name"].as<std::string>() == "sjf");
  CHECK(c.resolved["order"]["by"].as<std::string>() == "duration");
  CHECK(c.resolved["placement"].as<std::string>() == "packed");
  CHECK(c.resolved["backfill"].as<std::string>() == "easy");
  CHECK(c.resolved["preemption"].as<bool>() == false);
  CHECK(r.create(ConfigNode::load_string("{name: compose, order: las}", "p.yaml")).resolved["preemption"].as<bool>() == true);
  CHECK(r.create("tiresias").resolved["placement"].as<std::string>() == "packed");
  CHECK(r.create("tiresias").resolved["discretized"].as<bool>() == true);
  CHECK(r.create("slurm-easy").resolved["backfill"].as<std::string>() == "easy");
  CHECK(r.create("volcano-binpack").resolved["placement"].as<std::string>() == "packed");
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: compose, order: lifo}", "p.yaml")),
                    Catch::Contains("unknown order 'lifo'; choose one of: fifo, sjf, srtf, las, edf, priority, gittins, fair-share, themis"));
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: compose, backfil: easy}", "p.yaml")),
                    Catch::Contains("unknown key 'backfil'") && Catch::Contains("backfill"));
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: compose, backfill: conservative}", "p.yaml")),
                    Catch::Contains("'conservative' is not allowed; choose one of: none, easy"));
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: las, thresholds_gpu_s: [10, 5]}", "p.yaml")), Catch::Contains("thresholds must increase"));
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: edf, by: duration}", "p.yaml")),
                    Catch::Contains("unknown key 'by'; valid keys here: name, placement, preemption, backfill, backfill_depth, discipline, spot, spot_short_s"));
}

TEST_CASE("discipline skip starts any later job that fits past a blocked head; blocking keeps it waiting", "[policies][discipline]") {
  // 4 devices. A holds 2 until t=100; W needs all 4. L (2 GPUs, 500 s) would delay W's
  // reservation, so EASY holds it back; skip starts it at once and W waits for both.
  const std::vector<JobSpec> jobs = {make_job("A", 0, 2, 100), make_job("W", 1, 4, 50), make_job("L", 2, 2, 500)};
  const auto skip = run("{name: fifo, discipline: skip}", 4, jobs);
  CHECK(skip.at("L").start_s == Approx(2.0));
  CHECK(skip.at("W").start_s == Approx(502.0));
  const auto blocking = run("{name: fifo}", 4, jobs);
  CHECK(blocking.at("W").start_s == Approx(100.0));
  CHECK(blocking.at("L").start_s == Approx(150.0));
  const PolicyRegistry r = builtin_policies();
  CHECK(r.create("fifo").resolved["discipline"].as<std::string>() == "blocking");
  CHECK(r.create("tiresias-dlas").resolved["discipline"].as<std::string>() == "repack");
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: fifo, discipline: skip, backfill: easy}", "p.yaml")),
                    Catch::Contains("p.yaml") &&
                        Catch::Contains("discipline: skip starts every queued job that fits, so it excludes backfill: easy; use discipline: blocking with backfill, or backfill: none"));
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: fifo, discipline: repack}", "p.yaml")),
                    Catch::Contains("discipline: repack preempts the running jobs it leaves out, so it needs preemption: true"));
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: fifo, discipline: lazy}", "p.yaml")),
                    Catch::Contains("'lazy' is not allowed; choose one of: blocking, skip, repack"));
}

TEST_CASE("LAS demotion: exact timers act at the crossing, next_event waits for an event", "[policies][las]") {
  // One device. B (300 s) crosses 100 s of service at t=100; A (50 s) queued since t=10
  // is in queue 0. Exactly at t=100 A preempts B; without the timer nothing happens
  // until B ends at t=300.
  const std::vector<JobSpec> jobs = {make_job("B", 0, 1, 300), make_job("A", 10, 1, 50)};
  const auto exact = run("{name: las, thresholds_s: [100], starvation_multiple: 0, demotion: exact}", 1, jobs);
  CHECK(exact.at("A").start_s == Approx(100.0));
  CHECK(exact.at("A").end_s == Approx(150.0));
  CHECK(exact.at("B").end_s == Approx(350.0));
  CHECK(exact.at("B").preemptions == 1);
  const auto lazy = run("{name: las, thresholds_s: [100], starvation_multiple: 0}", 1, jobs);
  CHECK(lazy.at("A").start_s == Approx(300.0));
  CHECK(lazy.at("B").preemptions == 0);
}

TEST_CASE("LAS thresholds in time (thresholds_s) or in GPU time (thresholds_gpu_s)", "[policies][las]") {
  // B holds both devices (2 GPUs, 300 s); A (2 GPUs, 30 s) arrives at t=10. 100 GPU-s are
  // reached at t=50, 100 s at t=100.
  const std::vector<JobSpec> jobs = {make_job("B", 0, 2, 300), make_job("A", 10, 2, 30)};
  CHECK(run("{name: las, thresholds_gpu_s: [100], starvation_multiple: 0, demotion: exact}", 2, jobs).at("A").start_s == Approx(50.0));
  CHECK(run("{name: las, thresholds_s: [100], starvation_multiple: 0, demotion: exact}", 2, jobs).at("A").start_s == Approx(100.0));
  const PolicyRegistry r = builtin_policies();
  const PolicyInstance t = r.create(ConfigNode::load_string("{name: las, thresholds_s: [10, 20]}", "p.yaml"));
  CHECK(t.resolved["thresholds_s"].size() == 2);
  CHECK(!t.resolved["thresholds_gpu_s"]);
  CHECK(t.resolved["demotion"].as<std::string>() == "next_event");
  CHECK(r.create("las").resolved["thresholds_gpu_s"][0].as<double>() == 3600.0);
  CHECK(r.create("tiresias-dlas").resolved["thresholds_s"][1].as<double>() == 7200.0);
  CHECK(r.create("tiresias-dlas-gpu").resolved["thresholds_gpu_s"][0].as<double>() == 3250.0);
  CHECK(r.create("tiresias-dlas-gpu").resolved["starvation_multiple"].as<double>() == 0.0);
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: las, thresholds_s: [10], thresholds_gpu_s: [10]}", "p.yaml")),
                    Catch::Contains("give thresholds_gpu_s (service in GPU-seconds) or thresholds_s (service in seconds), not both"));
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: las, thresholds_s: 10}", "p.yaml")),
                    Catch::Contains("expected a non-empty list of increasing second thresholds, e.g. [3600, 36000]"));
  CHECK_THROWS_WITH(r.create(ConfigNode::load_string("{name: las, demotion: soon}", "p.yaml")),
                    Catch::Contains("'soon' is not allowed; choose one of: next_event, exact"));
}

TEST_CASE("discipline repack keeps jobs in queue order and preempts only those that no longer fit", "[policies][discipline][las]") {
  // 5 devices, one queue boundary at 10 s of service. X (4 GPUs) and Y (1 GPU) run from
  // t=0 and t=1 and enter queue 1 at t=10 and t=11, in that order. J (2 GPUs, 10 s)
  // arrives at t=20 in queue 0: the pass lets J in (3 devices left), X no longer fits
  // and is preempted, Y (1 GPU) still fits and keeps running. Preempting the worst
  // jobs, latest first, until J fits (skip with preemption) stops Y as well.
  const std::vector<JobSpec> jobs = {make_job("X", 0, 4, 1000), make_job("Y", 1, 1, 1000), make_job("J", 20, 2, 10)};
  const auto repack = run("{name: las, thresholds_s: [10], starvation_multiple: 0, demotion: exact, discipline: repack}", 5, jobs);
  CHECK(repack.at("J").start_s == Approx(20.0));
  CHECK(repack.at("X").preemptions == 1);
  CHECK(repack.at("Y").preemptions == 0);
  CHECK(repack.at("X").end_s == Approx(1010.0));  // back at t=30, when J ends
  CHECK(repack.at("Y").end_s == Approx(1001.0));
  const auto skip = run("{name: las, thresholds_s: [10], starvation_multiple: 0, demotion: exact, discipline: skip}", 5, jobs);
  CHECK(skip.at("J").start_s == Approx(20.0));
  CHECK(skip.at("X").preemptions == 1);
  CHECK(skip.at("Y").preemptions == 1);
}

namespace {

// Checkpoints that take time, a different time per job (its model names the seconds to
// save); restores take 2 s; every job runs at rate 1 anywhere.
class SlowCheckpoints : public PhysicsModel {
 public:
  std::string placement_problem(const JobSpec&, Span<DeviceId>) const override { return ""; }
  void update_rates(const Simulator& sim, const std::vector<JobSlot>&, std::vector<std::pair<JobSlot, double>>& rates) override {
    for (JobSlot s = sim.first_running(); s != kNoJob; s = sim.job(s).next_in_list) rates.emplace_back(s, 1.0);
  }
  double estimated_rate(const JobSpec&, int, int) const override { return 1.0; }
  double checkpoint_save_s(const JobSpec& job, int) const override { return std::stod(job.model); }
  double checkpoint_restore_s(const JobSpec&, int) const override { return 2.0; }
};

// Stops a run that has gone on for far more events than its jobs need (a livelock)
// with an error instead of a hang.
class EventCap : public Observer {
 public:
  void after_event(const Simulator&) override {
    if (++events > 10000) throw std::runtime_error("more than 10000 events: the policy keeps preempting and restarting the same jobs");
  }
  int events = 0;
};

}  // namespace

TEST_CASE("discipline repack keeps the devices of jobs still saving a checkpoint for the job they were preempted for", "[policies][discipline][las]") {
  // 4 devices; A (1 GPU), B (1 GPU) and C (2 GPUs) run from t=0 and enter queue 1 at
  // t=10; W (4 GPUs, 8 s) arrived at t=1 and now ranks first: all three are preempted
  // and save for 3, 5 and 7 s. When A is back in the queue (t=13) only its device is
  // free; counting only free devices, W no longer fit, A started again, and so did B
  // and C as they came back, and W preempted them all again once they ran, round after
  // round (989 preemptions each, W starting at t=5950; with restores longer than a round
  // nobody progressed at all). The devices still on their way count for W, which starts
  // at t=17 when C's are back.
  std::vector<JobSpec> jobs = {make_job("A", 0, 1, 1000), make_job("B", 0, 1, 1000), make_job("C", 0, 2, 1000), make_job("W", 1, 4, 8)};
  jobs[0].model = "3";
  jobs[1].model = "5";
  jobs[2].model = "7";
  jobs[3].model = "3";
  const PolicyRegistry registry = builtin_policies();
  PolicyInstance policy =
      registry.create(ConfigNode::load_string("{name: las, thresholds_s: [10], starvation_multiple: 0, demotion: exact, discipline: repack}", "policy.yaml"));
  VectorSource source(std::move(jobs));
  SlowCheckpoints physics;
  SimulatorOptions options;
  options.physics = &physics;
  const ClusterSpec cluster({NodeGroup{1, "test", 4}});  // the simulator keeps a reference
  Simulator sim(cluster, source, *policy.policy, options);
  TimesRecorder rec;
  EventCap cap;
  sim.add_observer(rec);
  sim.add_observer(cap);
  sim.run();
  const auto& t = rec.times;
  CHECK(t.at("W").start_s == Approx(17.0));
  CHECK(t.at("W").end_s == Approx(25.0));
  for (const char* id : {"A", "B", "C"}) {
    INFO(id);
    CHECK(t.at(id).preemptions == 1);
    // 10 s before the preemption, 990 s after W ends at 25 and a 2 s restore.
    CHECK(t.at(id).end_s == Approx(25.0 + 2.0 + 990.0));
  }
}

TEST_CASE("yarn placement keeps a job on one node, or on whole idle nodes plus one", "[policies][placement]") {
  // 3 nodes of 4 devices. A (2 GPUs) takes node 0; B (3 GPUs) does not fit node 0's free
  // 2 and goes to node 1; C (6 GPUs) takes the idle node 2 and 2 devices of one node (node
  // 0's free 2).
  const ClusterSpec cluster({NodeGroup{3, "test", 4}});
  const auto t = run_on(cluster, "{name: fifo, placement: yarn}", {make_job("A", 0, 2, 100), make_job("B", 1, 3, 100), make_job("C", 2, 6, 100)});
  CHECK(t.at("A").start_s == Approx(0.0));
  CHECK(t.at("B").start_s == Approx(1.0));
  CHECK(t.at("C").start_s == Approx(2.0));
  // After t=10 node 0 holds A and K1, node 1 K2, node 2 K3: one device free on each.
  // G (3 GPUs) fits by count but on no single node: under yarn it waits until A ends.
  const std::vector<JobSpec> jobs = {make_job("A", 0, 2, 100),   make_job("E", 0, 4, 10),      make_job("F", 0, 4, 10),
                                     make_job("K1", 11, 1, 200), make_job("K2", 12, 3, 300),   make_job("K3", 12.5, 3, 400),
                                     make_job("G", 13, 3, 10)};
  CHECK(run_on(cluster, "{name: fifo, placement: yarn}", jobs).at("G").start_s == Approx(100.0));
  CHECK(run_on(cluster, "{name: fifo}", jobs).at("G").start_s == Approx(13.0));
  CHECK(run_on(cluster, "tiresias-fifo-yarn", jobs).at("G").start_s == Approx(100.0));
}

TEST_CASE("LAS exact demotion sets no timer for a crossing after the job's end", "[policies][las]") {
  // J (50 s) would reach the 100 s boundary at t=100, after it ends at t=50; K arrives at
  // t=200. Decision points: J's arrival, J's end, K's arrival, K's end; a timer for J's
  // crossing would add a fifth at t=100.
  const ClusterSpec cluster({NodeGroup{1, "test", 1}});
  PolicyInstance policy = builtin_policies().create(ConfigNode::load_string("{name: las, thresholds_s: [100], demotion: exact}", "p.yaml"));
  VectorSource source({make_job("J", 0, 1, 50), make_job("K", 200, 1, 10)});
  Simulator sim(cluster, source, *policy.policy);
  sim.run();
  CHECK(sim.stats().decision_points == 4);
  CHECK(sim.now().seconds() == Approx(210.0));
}

TEST_CASE("LAS exact demotion times the jobs a decision starts", "[policies][las]") {
  // One device. X ends at t=20 and B starts then; no event follows until B's end at 320,
  // but B crosses the 100 s boundary at t=120, when A (queue 0 since t=2) preempts it.
  const auto t = run("{name: las, thresholds_s: [100], starvation_multiple: 0, demotion: exact}", 1,
                     {make_job("X", 0, 1, 20), make_job("B", 1, 1, 300), make_job("A", 2, 1, 50)});
  CHECK(t.at("B").start_s == Approx(20.0));
  CHECK(t.at("A").start_s == Approx(120.0));
  CHECK(t.at("B").end_s == Approx(370.0));
  CHECK(t.at("B").preemptions == 1);
}

TEST_CASE("discipline repack: a demoted job enters its queue behind the jobs waiting there", "[policies][discipline][las]") {
  // 2 devices, one boundary at 10 s. K (1 GPU) runs until t=9; X (2 GPUs, t=1) waits;
  // Y (1 GPU, t=2) starts past it and keeps running when K ends (a running job goes
  // before the waiting ones of its queue). Y enters queue 1 at t=12: X is let in and Y
  // preempted. At t=22 X enters queue 1 behind Y, which has waited there since t=12: Y is
  // let in first and X, which no longer fits, is preempted (by arrival X would rank first
  // and keep running). Y ends at 22 + (500 - 10) = 512, then X runs its last 490 s.
  // Tiresias' simulator (run_sim.py --schedule=dlas, limits set to [10, ...], 1 node of 2
  // GPUs) gives the same starts, ends and preemptions on these three jobs.
  const auto t = run("{name: las, thresholds_s: [10], starvation_multiple: 0, demotion: exact, discipline: repack}", 2,
                     {make_job("K", 0, 1, 9), make_job("X", 1, 2, 500), make_job("Y", 2, 1, 500)});
  CHECK(t.at("Y").start_s == Approx(2.0));
  CHECK(t.at("X").start_s == Approx(12.0));
  CHECK(t.at("Y").end_s == Approx(512.0));
  CHECK(t.at("X").end_s == Approx(1002.0));
  CHECK(t.at("X").preemptions == 1);
  CHECK(t.at("Y").preemptions == 1);
}

TEST_CASE("discipline repack sorts each pass from the last decision's order: about one step an entry", "[policies][discipline][las][repack-work]") {
  // 600 jobs of 1-4 GPUs on 64 devices, durations 20-3,000 s, an arrival every 60 s
  // (offered load about 0.9): tens of jobs run at once and each decision ranks them all.
  // When every queued job fits in the free devices only the queued entries are sorted;
  // otherwise the pass, laid out in the last decision's order, is nearly sorted and the
  // insertion sort shifts only the jobs that changed queue or came back (std::sort from
  // scratch did about log2(n) comparisons an entry for every pass before). Running jobs'
  // keys are reused between decisions until the order's stable window ends.
  std::vector<JobSpec> jobs;
  std::uint64_t x = 12345;
  for (int i = 0; i < 600; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const int gpus = 1 << static_cast<int>((x >> 33) % 3);
    const double duration_s = 20.0 + static_cast<double>((x >> 40) % 2981);
    jobs.push_back(make_job("j" + std::to_string(i), 60.0 * i, gpus, duration_s));
  }
  PolicyInstance policy = builtin_policies().create(
      ConfigNode::load_string("{name: las, thresholds_s: [100, 1000], starvation_multiple: 0, demotion: exact, discipline: repack}", "p.yaml"));
  VectorSource source(jobs);
  const ClusterSpec cluster({NodeGroup{1, "test", 64}});  // the simulator keeps a reference
  Simulator sim(cluster, source, *policy.policy);
  sim.run();
  const auto* queue = dynamic_cast<const QueuePolicy*>(policy.policy.get());
  REQUIRE(queue != nullptr);
  const QueuePolicy::RepackWork& w = queue->repack_work();
  CHECK(w.queued_only + w.passes == sim.stats().decision_points);
  // 1,784 decisions: 546 with every queued job fitting, 1,238 full passes of 31 entries
  // on average (the running ones in the last full pass's order, kept by the policy), 0.65
  // shifts an entry, 2 passes past the move budget.
  CHECK(w.queued_only == 546);
  CHECK(w.passes == 1238);
  CHECK(w.entries == 38422);
  CHECK(w.moves == 24853);
  CHECK(w.moves < w.entries);
  CHECK(w.full_sorts == 2);
  // Running keys: 2,182 asked of the order (a job's first decision running, a demotion,
  // a crossing too close to call), 42,121 reused from an earlier decision (95%), and
  // 2,576 next key changes asked again for the wake-up (the candidates for the earliest:
  // 1.4 a decision, not one per running job).
  CHECK(w.keys_asked == 2182);
  CHECK(w.keys_reused == 42121);
  CHECK(w.wake_asked == 2576);
  CHECK(w.keys_reused > 19 * w.keys_asked);
}

namespace {

// LAS with every running key asked again at every decision (the default running_key_info,
// valid at its own instant only): the reference the repack pass's reuse must equal.
class AskEveryTime : public QueueOrder {
 public:
  explicit AskEveryTime(std::unique_ptr<QueueOrder> inner) : inner_(std::move(inner)) {}
  double queued_key(const SchedulerView& v, JobSlot j) override { return inner_->queued_key(v, j); }
  double running_key(const SchedulerView& v, JobSlot j) const override { return inner_->running_key(v, j); }
  bool running_keys_only_improve() const override { return inner_->running_keys_only_improve(); }
  double promote_at_s(const SchedulerView& v, JobSlot j) const override { return inner_->promote_at_s(v, j); }
  double promoted_key() const override { return inner_->promoted_key(); }
  void on_promoted(const SchedulerView& v, JobSlot j) override { inner_->on_promoted(v, j); }
  bool keys_change_while_queued() const override { return inner_->keys_change_while_queued(); }
  bool has_timers() const override { return inner_->has_timers(); }
  double next_key_change_s(const SchedulerView& v, JobSlot j) const override { return inner_->next_key_change_s(v, j); }
  double running_key_and_next_change(const SchedulerView& v, JobSlot j, double& next_s) const override { return inner_->running_key_and_next_change(v, j, next_s); }
  void on_decision(const SchedulerView& v) override { inner_->on_decision(v); }
  void on_started(const SchedulerView& v, JobSlot j) override { inner_->on_started(v, j); }
  void on_stopped(const SchedulerView& v, JobSlot j) override { inner_->on_stopped(v, j); }

 private:
  std::unique_ptr<QueueOrder> inner_;
};

struct RepackRun {
  std::map<std::string, std::tuple<std::int64_t, std::int64_t, std::uint32_t>> jobs;  // start, end (us), preemptions
  std::uint64_t decisions = 0;
  QueuePolicy::RepackWork work;
};

class ExactRecorder : public Observer {
 public:
  void on_job_end(const JobState& job) override { jobs[job.spec.id] = {job.start.us(), job.end.us(), job.preemptions}; }
  std::map<std::string, std::tuple<std::int64_t, std::int64_t, std::uint32_t>> jobs;
};

RepackRun run_repack(const std::vector<JobSpec>& jobs, const LasOptions& las, bool reference) {
  std::unique_ptr<QueueOrder> order = las_order(las).make(ConfigNode::load_string("{}", "las.yaml"));
  if (reference) order = std::make_unique<AskEveryTime>(std::move(order));
  QueuePolicyOptions options;
  options.discipline = Discipline::kRepack;
  options.preemption = true;
  QueuePolicy policy("las", std::move(order), options);
  VectorSource source(jobs);
  const ClusterSpec cluster({NodeGroup{4, "test", 8}});
  Simulator sim(cluster, source, policy);
  ExactRecorder rec;
  sim.add_observer(rec);
  sim.run();
  return RepackRun{rec.jobs, sim.stats().decision_points, policy.repack_work()};
}

}  // namespace

TEST_CASE("discipline repack reusing running keys schedules exactly as asking every key at every decision", "[policies][discipline][las][repack-work]") {
  // Random LAS workloads on 32 devices, with durations, arrivals and thresholds off the
  // whole second (so that rounding decides near the crossings), some jobs sharing a
  // device, service in seconds and in GPU-seconds, with and without the starvation guard.
  // Every job's start, end (to the microsecond) and preemption count, and the number of
  // decisions, must equal the reference's, which asks every running job's key at every
  // decision; the reuse must be the common case.
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    std::vector<JobSpec> jobs;
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL;
    auto next = [&x](std::uint64_t mod) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      return (x >> 33) % mod;
    };
    double at_s = 0.0;
    for (int i = 0; i < 300; ++i) {
      at_s += static_cast<double>(next(900000)) / 1000.0 + 0.25;
      const int gpus = 1 << static_cast<int>(next(4));
      const double duration_s = 5.0 + static_cast<double>(next(40000000)) / 7000.0;
      JobSpec j = make_job("j" + std::to_string(i), at_s, gpus, duration_s);
      if (gpus == 1 && next(5) == 0) j.gpu_milli = 500;
      jobs.push_back(j);
    }
    LasOptions las;
    las.demotion = LasDemotion::kExact;
    las.service = seed % 2 ? LasService::kTime : LasService::kGpuTime;
    las.thresholds = seed % 2 ? std::vector<double>{250.3, 1999.7} : std::vector<double>{700.1, 3250.0, 9000.9};
    las.starvation_multiple = seed % 3 == 0 ? 2.5 : 0.0;
    const RepackRun fast = run_repack(jobs, las, false);
    const RepackRun reference = run_repack(jobs, las, true);
    INFO("seed " << seed);
    REQUIRE(fast.jobs.size() == 300);
    CHECK(fast.decisions == reference.decisions);
    CHECK(fast.jobs == reference.jobs);
    CHECK(reference.work.keys_reused == 0);
    CHECK(fast.work.keys_reused > 4 * fast.work.keys_asked);
  }
}
