// Every registered policy over the same four small scenarios (one with fractional GPU shares), with the invariant
// checker attached; and golden outputs that catch unintended changes of behaviour.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "policies/registry.hpp"
#include "sim/invariant_checker.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"
#include "traces/synthetic.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::VectorSource;

namespace {

// Records each job's end time and checks that every start holds exactly its gang.
class EndRecorder : public Observer {
 public:
  void on_job_start(const JobState& job) override {
    if (job.devices.size() != static_cast<std::size_t>(job.spec.num_gpus)) ++gang_violations;
  }
  void on_job_end(const JobState& job) override { end_us[job.spec.id] = job.end.us(); }
  std::map<std::string, std::int64_t> end_us;
  int gang_violations = 0;
};

struct Scenario {
  std::string name;
  ClusterSpec cluster;
  std::vector<JobSpec> jobs;
};

std::vector<JobSpec> synthetic_jobs(std::uint64_t num_jobs, double mean_interarrival_s, Distribution durations,
                                    std::vector<std::pair<int, double>> gpus, std::uint64_t seed) {
  SyntheticConfig w;
  w.num_jobs = num_jobs;
  w.mean_interarrival_s = mean_interarrival_s;
  w.duration_s = std::move(durations);
  w.gpus = std::move(gpus);
  SyntheticJobSource source(w, seed);
  std::vector<JobSpec> jobs;
  JobSpec j;
  while (source.next(j)) jobs.push_back(j);
  return jobs;
}

std::vector<Scenario> scenarios() {
  std::vector<Scenario> out;
  // M/M/1-like: one device, Poisson arrivals at load 0.8, exponential durations.
  out.push_back({"single GPU M/M/1", ClusterSpec({NodeGroup{1, "V100", 1}}), synthetic_jobs(300, 125, Distribution::exponential(100), {{1, 1.0}}, 3)});
  // Gangs of 1 to 16 GPUs with heavy-tailed durations on two node types.
  out.push_back({"multi-GPU mixed gangs", ClusterSpec({NodeGroup{2, "V100", 8}, NodeGroup{2, "K80", 4}}),
                 synthetic_jobs(400, 60, Distribution::lognormal(300, 1.3), {{1, 0.4}, {2, 0.2}, {4, 0.2}, {8, 0.15}, {16, 0.05}}, 11)});
  {  // a hand-made trace with deadlines (some missing), priorities and estimates
    std::vector<JobSpec> jobs;
    for (int i = 0; i < 60; ++i) {
      const int gpus = 1 << (i % 3);                        // 1, 2, 4
      const double duration_s = 50.0 + (i * 37) % 400;      // 50 .. 449 s
      JobSpec j = make_job("t" + std::to_string(i), 20.0 * i, gpus, duration_s, i % 4 == 0 ? std::nan("") : duration_s * (1 + (i % 5) * 0.5));
      if (i % 3 != 1) j.deadline_s = 20.0 * i + 3 * duration_s + (i * 53) % 900;
      j.priority = (i * 7) % 5;
      jobs.push_back(j);
    }
    out.push_back({"trace with deadlines and priorities", ClusterSpec({NodeGroup{1, "V100", 4}, NodeGroup{1, "V100", 2}}), jobs});
  }
  {  // fractional GPU requests (gpu_milli < 1000) mixed with whole-GPU gangs
    std::vector<JobSpec> jobs;
    for (int i = 0; i < 150; ++i) {
      JobSpec j = make_job("f" + std::to_string(i), 15.0 * i, i % 5 == 4 ? 1 + (i % 3) : 1, 40.0 + (i * 41) % 300);
      if (i % 5 != 4) j.gpu_milli = 100 + (i * 170) % 900;  // 100 .. 990 milli
      jobs.push_back(j);
    }
    out.push_back({"fractional shares", ClusterSpec({NodeGroup{2, "V100", 2}}), jobs});
  }
  return out;
}

}  // namespace

TEST_CASE("conformance: every registered policy completes all jobs within the invariants", "[policies][conformance]") {
  const PolicyRegistry registry = builtin_policies();
  REQUIRE(registry.all().size() >= 10);
  for (const Scenario& sc : scenarios()) {
    for (const PolicyInfo& info : registry.all()) {
      INFO("policy " << info.name << " on " << sc.name);
      std::map<std::string, std::int64_t> first_run;
      for (int run = 0; run < 2; ++run) {
        VectorSource source(sc.jobs);
        PolicyInstance policy = registry.create(info.name);
        // Diurnal price and carbon, so that the signal-driven policies shift jobs too.
        std::vector<double> day(24);
        for (int h = 0; h < 24; ++h) day[static_cast<std::size_t>(h)] = 300.0 + 150.0 * ((h * 7) % 24 - 12) / 12.0;
        const GridSignals signals(0, StepSeries::periodic("price", day, 3'600'000'000LL, 0),
                                  StepSeries::periodic("carbon", day, 3'600'000'000LL, 1'800'000'000LL));
        SimulatorOptions options;
        options.signals = &signals;
        Simulator sim(sc.cluster, source, *policy.policy, options);
        InvariantChecker checker;
        EndRecorder ends;
        MetricsCollector metrics(sc.cluster.num_devices());
        sim.add_observer(checker);
        sim.add_observer(ends);
        sim.add_observer(metrics);
        REQUIRE_NOTHROW(sim.run());
        const Summary s = metrics.summarize();
        CHECK(s.jobs_completed == sc.jobs.size());
        CHECK(checker.checks() == sim.stats().events);  // over-allocation checked after every event
        CHECK(ends.gang_violations == 0);
        CHECK(sim.num_running() == 0);
        CHECK(sim.cluster_state().free_devices() == sc.cluster.num_devices());
        double demand_gpu_h = 0;
        for (const auto& j : sc.jobs) demand_gpu_h += static_cast<double>(j.device_milli()) / 1000 * j.duration_s / 3600;
        // Free checkpoints: no work lost or added (fractional shares round to the microsecond).
        CHECK(s.allocated_gpu_hours == Approx(demand_gpu_h).epsilon(1e-8));
        if (run == 0) {
          first_run = ends.end_us;
        } else {
          CHECK(ends.end_us == first_run);  // deterministic
        }
      }
    }
  }
}

TEST_CASE("golden outputs: each registered policy reproduces tests/golden/<policy>.csv byte for byte", "[policies][golden]") {
  const std::string golden_dir = std::string(SCHEDSIM_SOURCE_DIR) + "/tests/golden";
  const PolicyRegistry registry = builtin_policies();
  schedsim::test::TempDir dir;
  for (const PolicyInfo& info : registry.all()) {
    INFO("policy " << info.name);
    const std::string golden_path = golden_dir + "/" + info.name + ".csv";
    if (!std::filesystem::exists(golden_path)) {
      FAIL("no golden file " << golden_path << " for registered policy '" << info.name << "': run scripts/regen_golden.sh after building, and review the new file");
    }
    const ScenarioConfig scenario = load_scenario(golden_dir + "/scenario.yaml", {"policy=" + info.name}, std::nullopt, registry);
    run_scenario(scenario, registry, RunOptions{dir.path(info.name)});
    std::ifstream got(dir.path(info.name + "/jobs.csv"), std::ios::binary), want(golden_path, std::ios::binary);
    std::stringstream got_text, want_text;
    got_text << got.rdbuf();
    want_text << want.rdbuf();
    CHECK(!want_text.str().empty());
    // On an intended change of behaviour, rerun scripts/regen_golden.sh and review the diff.
    CHECK(got_text.str() == want_text.str());
  }
}

TEST_CASE("golden outputs: under information: oracle each registered policy reproduces tests/golden/oracle/<policy>.csv byte for byte", "[policies][golden][information]") {
  // The information model's regression anchor: with the truth declared, every policy
  // schedules exactly as it did before `information:` existed.
  const std::string golden_dir = std::string(SCHEDSIM_SOURCE_DIR) + "/tests/golden";
  const PolicyRegistry registry = builtin_policies();
  schedsim::test::TempDir dir;
  for (const PolicyInfo& info : registry.all()) {
    INFO("policy " << info.name);
    const std::string golden_path = golden_dir + "/oracle/" + info.name + ".csv";
    if (!std::filesystem::exists(golden_path)) FAIL("no golden file " << golden_path << " for registered policy '" << info.name << "': run scripts/regen_golden.sh");
    const ScenarioConfig scenario = load_scenario(golden_dir + "/scenario.yaml", {"policy=" + info.name, "information=oracle"}, std::nullopt, registry);
    run_scenario(scenario, registry, RunOptions{dir.path(info.name)});
    std::ifstream got(dir.path(info.name + "/jobs.csv"), std::ios::binary), want(golden_path, std::ios::binary);
    std::stringstream got_text, want_text;
    got_text << got.rdbuf();
    want_text << want.rdbuf();
    CHECK(!want_text.str().empty());
    CHECK(got_text.str() == want_text.str());
  }
}

TEST_CASE("preemptive policies under physics wait for checkpoint saves and complete every job", "[policies][conformance][physics]") {
  // The placement experiment turns physics on: preemptions cost checkpoint time, so a
  // preempting head starts only when the victims' saves end (not in the same batch).
  const PolicyRegistry registry = builtin_policies();
  const std::string config = std::string(SCHEDSIM_SOURCE_DIR) + "/experiments/configs/placement_topology.yaml";
  for (const std::string policy : {"srtf", "tiresias", "{name: las, discretized: false}", "{name: priority, preemption: true}",
                                   "{name: compose, order: srtf, backfill: easy, placement: packed}"}) {
    INFO("policy " << policy);
    const ScenarioConfig scenario = load_scenario(config, {"policy=" + policy}, std::nullopt, registry);
    const RunResult r = run_scenario(scenario, registry, RunOptions{});
    CHECK(r.summary.jobs_completed == r.summary.jobs_arrived);
    CHECK(r.summary.jobs_completed == 600);
    if (policy.find("priority") == std::string::npos) {  // the experiment's jobs all share one priority
      CHECK(r.summary.preemptions > 0);
      CHECK(r.summary.checkpoint_overhead_gpu_hours > 0);
    }
  }
}

TEST_CASE("the tiresias-* and gavel-* presets run on the built-in default scenario", "[policies][presets]") {
  // Modelled on Tiresias' 32 x 4 cluster and trace (Gavel's 36:36:36 and its trace), they must work elsewhere too: the
  // default scenario (16 nodes of 8 V100s, 1- to 8-GPU gangs), 300 of its jobs, invariants on.
  const PolicyRegistry registry = builtin_policies();
  for (const std::string name : {"tiresias-dlas", "tiresias-dlas-gpu", "tiresias-fifo-yarn", "gavel-fifo-perf", "gavel-las"}) {
    INFO("policy " << name);
    const ScenarioConfig scenario = load_scenario("", {"policy=" + name, "workload.synthetic.num_jobs=300"}, std::nullopt, registry);
    RunOptions options;
    options.check_invariants = true;
    const RunResult r = run_scenario(scenario, registry, options);
    CHECK(r.policy_name == name);
    CHECK(r.summary.jobs_completed == 300);
  }
}
