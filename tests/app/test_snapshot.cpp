// Snapshot and resume (schedsim run --snapshot-every / --resume, docs/reliability.md): a
// run resumed from a snapshot taken in the middle writes exactly the bytes of an
// uninterrupted run (results.json, jobs.csv, timeline.csv, allocations.csv), across
// scenarios that exercise every saved component; taking snapshots does not change a
// run; a snapshot of another configuration, a damaged one, or one whose earlier rows are
// gone is refused with a clear message; and a process killed with SIGKILL after a
// snapshot resumes to the uninterrupted run's bytes.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "run/snapshot_run.hpp"
#include "base/error.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::read_file;
using schedsim::test::TempDir;
namespace fs = std::filesystem;

namespace {

const char* kOutputs[] = {"results.json", "jobs.csv", "timeline.csv", "allocations.csv"};

// Energy, price and carbon signals, a queue policy (overridden per test).
const std::string kBase = R"(name: snap-base
seed: 5
cluster:
  nodes:
    - {count: 4, type: V100, devices_per_node: 8}
workload:
  synthetic:
    num_jobs: 300
    arrival: {process: poisson, mean_interarrival_s: 200}
    duration_s: {dist: lognormal, median: 1800, sigma: 1.5}
    gpus: {1: 0.6, 2: 0.15, 4: 0.15, 8: 0.1}
energy: {pue: 1.2}
signals: {price: {diurnal: {mean: 80, amplitude: 40}}, carbon: {diurnal: {mean: 300, amplitude: 100}}}
information: oracle
policy: sjf
)";

// Node failures with repairs, loss spikes, periodic Young-Daly checkpoints, stragglers.
const std::string kFailures = R"(name: snap-failures
seed: 2
cluster:
  nodes:
    - {count: 8, type: H100, devices_per_node: 8}
workload:
  synthetic:
    num_jobs: 80
    arrival: {process: poisson, mean_interarrival_s: 3000}
    duration_s: {dist: lognormal, median: 20000, sigma: 0.8}
    gpus: {8: 0.5, 16: 0.3, 32: 0.2}
policy: {name: fifo, placement: packed}
failures:
  devices: {mtbf_h: 500, unit: node, repair_h: 2, on_failure: requeue, restart_s: 300}
  loss_spikes: {rate_per_gpu_hour: 1.0e-3, restart_s: 120}
  checkpoint: {interval: young_daly, cost_s: 60}
  stragglers: {fraction: 0.1, slowdown: 0.7}
)";

// Network contention: jobs across racks share oversubscribed links (max-min fair).
const std::string kTopology = R"(name: snap-topology
seed: 1
cluster:
  nodes:
    - {count: 8, type: H100-SXM, devices_per_node: 8}
  topology: {nodes_per_rack: 2, nic_bandwidth_gbps: 100, oversubscription: 4.0}
workload:
  synthetic:
    num_jobs: 120
    arrival: {process: poisson, mean_interarrival_s: 300}
    duration_s: {dist: lognormal, median: 3600, sigma: 1.0}
    gpus: {4: 0.3, 8: 0.3, 12: 0.2, 16: 0.2}
    models: {GPT-2-1.5B: 0.5, BERT-large: 0.5}
physics: {overlap: 0.0}
energy: {}
policy: {name: fifo, placement: packed}
)";

// Two datacenters with their own signals, elastic jobs, autoscaled inference services.
const std::string kGeo = R"(name: snap-geo
seed: 3
datacenters:
  sites:
    - name: A
      nodes: [{count: 2, type: A100-80GB, devices_per_node: 8}]
      pue: 1.2
      utc_offset_h: 1
      signals: {carbon: {diurnal: {mean: 300, amplitude: 150}}, price: 90}
    - name: B
      nodes: [{count: 2, type: A100-80GB, devices_per_node: 8}]
      pue: 1.1
      utc_offset_h: -8
      signals: {carbon: {diurnal: {mean: 200, amplitude: 100}}, price: 60}
  wan: {bandwidth_gbit_s: 10, latency_ms: 150}
  checkpoint_gb: 10
  restart_s: 60
  allowed: any
workload:
  synthetic:
    num_jobs: 120
    arrival: {process: poisson, mean_interarrival_s: 900}
    duration_s: {dist: lognormal, median: 7200, sigma: 1.0}
    gpus: {1: 0.5, 2: 0.2, 4: 0.2, 8: 0.1}
    elastic: {fraction: 0.3}
physics: {}
energy: {}
inference:
  services:
    - {name: chat-a, datacenter: A, rate: {diurnal: {mean_rps: 20, amplitude_rps: 15, peak_hour_local: 14}},
       bursts: [{start_s: 72800, duration_s: 1800, factor: 1.8}], capacity_rps: {A100-80GB: 10}, slo_p99_s: 1, min_replicas: 1, max_replicas: 4}
    - {name: chat-b, datacenter: B, rate: {diurnal: {mean_rps: 20, amplitude_rps: 15, peak_hour_local: 14}},
       capacity_rps: {A100-80GB: 10}, slo_p99_s: 1, min_replicas: 1, max_replicas: 4}
policy: {name: inference, autoscaler: predictive, base: {name: spatial, route: home}}
)";

// A trace with fractional (shared-GPU) jobs and several users.
std::string fractional_trace() {
  std::string t = "job_id,submit_time_s,num_gpus,duration_s,gpu_milli,user\n";
  for (int i = 0; i < 200; ++i) {
    const bool shared = i % 5 < 2;
    t += "j" + std::to_string(i) + "," + std::to_string(i * 150 + (i * 37) % 100) + "," + (shared ? "1" : std::to_string(1 << (i % 4))) + "," +
         std::to_string(600 + (i * 7919) % 7200) + "," + (shared ? std::to_string(250 + 250 * (i % 3)) : "") + ",u" + std::to_string(i % 4) + "\n";
  }
  return t;
}
const std::string kTrace = R"(name: snap-trace
seed: 1
cluster:
  nodes:
    - {count: 4, type: V100, devices_per_node: 8}
workload:
  trace: {path: trace.csv}
policy: fgd
)";

// The same trace replayed as windows (workload.trace.windows): a validation window of 40
// jobs, load-scaled and time-shifted by the seed.
const std::string kTraceWindows = R"(name: snap-trace-windows
seed: 1
cluster:
  nodes:
    - {count: 4, type: V100, devices_per_node: 8}
workload:
  trace: {path: trace.csv, windows: {jobs: 40, use: validation, load_scale: [0.8, 1.2], time_shift_s: 3600}}
policy: fgd
)";

// Spot offers reclaimed on a seeded on/off model, compute prices, the ledger.
const std::string kMarket = R"(name: snap-market
seed: 5
datacenters:
  sites:
    - {name: DE-LU, provider: cloud-a, nodes: [{count: 2, type: A100-80GB, devices_per_node: 8}], pue: 1.2, signals: {price: 90, carbon: 350}}
    - {name: SG, provider: cloud-b, nodes: [{count: 2, type: V100, devices_per_node: 8}], pue: 1.4, signals: {price: 130, carbon: 480}}
energy: {}
physics: {}
market:
  offers:
    - {datacenter: DE-LU, type: A100-80GB, on_demand_usd_h: 3.2, reserved: {devices: 4, usd_h: 2.0},
       spot: {devices: 8, usd_h: 1.1, availability: {model: on_off, mean_up_h: 6, mean_down_h: 1, fraction_reclaimed: 0.5}}}
    - {datacenter: SG, type: V100, on_demand_usd_h: 1.4}
failures:
  checkpoint: {interval: fixed, interval_s: 1800, cost_s: 30}
workload:
  synthetic:
    num_jobs: 150
    arrival: {process: poisson, mean_interarrival_s: 600}
    duration_s: {dist: lognormal, median: 3600, sigma: 1.0}
    gpus: {1: 0.5, 2: 0.25, 4: 0.15, 8: 0.1}
information: oracle
policy: spatial
)";
// A hot site: hourly outside temperatures, set-point actions, throttling.
const std::string kThermal = R"(name: snap-thermal
seed: 3
cluster:
  nodes:
    - {count: 2, type: A100-80GB, devices_per_node: 8}
workload:
  synthetic:
    num_jobs: 150
    arrival: {process: poisson, mean_interarrival_s: 1800}
    duration_s: {dist: lognormal, median: 7200, sigma: 1.0}
    gpus: {1: 0.5, 2: 0.2, 4: 0.2, 8: 0.1}
energy:
  pue: 1.1
  thermal:
    outside_c: {synthetic: {mean_c: 36, amplitude_c: 10, peak_hour_local: 15}}
    utc_offset_h: 3
    setpoint_c: 22
    setpoint_range_c: [18, 35]
policy: {name: thermal-aware, base: fifo}
)";

// LLM jobs under parallelism plans (issue 26): auto and declared plans, DP traffic
// shared over 2:1 oversubscribed racks, the jobs.csv plan column.
const std::string kLlmPlans = R"(name: snap-llm
seed: 5
cluster:
  nodes:
    - {count: 8, type: H100-SXM, devices_per_node: 8}
  topology: {nodes_per_rack: 2, nic_bandwidth_gbps: 100, oversubscription: 2.0}
workload:
  synthetic:
    num_jobs: 40
    arrival: {process: poisson, mean_interarrival_s: 1800}
    duration_s: {dist: lognormal, median: 7200, sigma: 1.0}
    gpus: {16: 0.5, 32: 0.5}
    models: {LLaMA-2-7B: 0.4, LLaMA-2-70B: 0.3, LLaMA-3-8B: {share: 0.3, plan: {tensor: 2, sharding: zero1}}}
physics: {}
information: oracle
policy: sjf
)";

struct Case {
  std::string name, scenario;
  std::vector<std::string> sets;
};

RunResult run(const TempDir& dir, const Case& c, const std::string& out, const SnapshotOptions& snap = {}) {
  const std::string config = dir.write("run.yaml", c.scenario);
  const PolicyRegistry reg = builtin_policies();
  RunOptions options{dir.path(out)};
  options.timeline = true;
  options.check_invariants = true;
  options.snapshot = snap;
  return run_scenario(load_scenario(config, c.sets, std::nullopt, reg), reg, options);
}

void check_same_outputs(const TempDir& dir, const std::string& expected, const std::string& actual) {
  for (const char* f : kOutputs) {
    INFO(actual << "/" << f << " against " << expected << "/" << f);
    const std::string want = read_file(dir.path(expected + "/" + f));
    REQUIRE(want.size() > 0);
    CHECK(read_file(dir.path(actual + "/" + f)) == want);
  }
  // Runs with a market also write the settlement ledger.
  REQUIRE(fs::exists(dir.path(expected + "/ledger.csv")) == fs::exists(dir.path(actual + "/ledger.csv")));
  if (fs::exists(dir.path(expected + "/ledger.csv"))) CHECK(read_file(dir.path(actual + "/ledger.csv")) == read_file(dir.path(expected + "/ledger.csv")));
}

// What a run interrupted after its last snapshot leaves for the resumed run: the rows
// written so far (a finished run's files hold them as a prefix, which is all the resumed
// run reads: the length and hash are in the snapshot).
void leave_interrupted_rows(const TempDir& dir, const std::string& from, const std::string& to) {
  fs::create_directories(dir.path(to));
  for (const char* f : {"jobs.csv", "timeline.csv", "allocations.csv"}) {
    fs::copy_file(dir.path(from + "/" + f), dir.path(to + "/" + f + ".interrupted"));
  }
}

Tick period(const RunResult& r, double fraction) { return Tick::from_seconds(std::max(1.0, std::floor(r.summary.makespan_s * fraction))); }

}  // namespace

TEST_CASE("runs resumed from a snapshot write the uninterrupted run's bytes", "[snapshot]") {
  const std::vector<Case> cases = {
      {"default scenario, sjf, energy and signals", kBase, {}},
      {"tiresias (LAS with preemption)", kBase, {"policy=tiresias"}},
      {"gandiva (time slicing)", kBase, {"policy=gandiva"}},
      {"gavel (rounds)", kBase, {"policy=gavel"}},
      {"gavel-las (rounds, LP solved at most every 1,920 s)", kBase, {"policy=gavel-las"}},
      {"gavel-fifo-perf (round-based re-allocation)", kBase, {"policy=gavel-fifo-perf"}},
      {"rounds around las (a base built afresh at each re-allocation)", kBase, {"policy={name: rounds, round_s: 600, reallocate_every_s: 1200, base: {name: las, placement: packed}}"}},
      {"fair-share", kBase, {"policy=fair-share"}},
      {"themis", kBase, {"policy=themis"}},
      {"slurm-easy (backfilling)", kBase, {"policy=slurm-easy"}},
      {"slurm (multifactor priority, topology_tree)", kBase, {"policy=slurm"}},
      {"random placement", kBase, {"policy={name: fifo, placement: random}"}},
      {"carbon-aware (deferral)", kBase, {"policy={name: carbon-aware, slack_s: 43200}"}},
      {"elastic-goodput", kBase, {"policy=elastic-goodput", "workload.synthetic.elastic={fraction: 0.4}"}},
      {"pai-reservation (reservations recomputed at each decision)", kBase, {"policy={name: pai-reservation, reserve_min_gpus: 2}"}},
      {"singularity (shrink, preempt, migrate, grow) under topology contention", kTopology, {"policy=singularity", "workload.synthetic.elastic={fraction: 0.4}", "information=oracle"}},
      {"failures, checkpoints, loss spikes", kFailures, {}},
      {"failures under tiresias", kFailures, {"policy=tiresias"}},
      {"topology contention", kTopology, {}},
      {"datacenters and inference services", kGeo, {}},
      {"spatio-temporal", kGeo, {"policy=spatio-temporal", "information=oracle"}},
      {"fractional jobs from a trace, fgd", kTrace, {}},
      {"a window of a trace (workload.trace.windows), fgd", kTraceWindows, {}},
      {"market: spot reclamations and the ledger", kMarket, {}},
      {"thermal model under thermal-aware", kThermal, {}},
      {"thermal model at a fixed hot set-point (throttling)", kThermal, {"policy=fifo", "energy.thermal.setpoint_c=35"}},
      {"volcano (queue tree, nvlink placement)", kTopology, {"policy=volcano"}},
      {"yunikorn placeholders under failures", kFailures, {"policy={name: yunikorn, placeholder_timeout_s: 600}"}},
      {"LLM jobs under parallelism plans", kLlmPlans, {}},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      TempDir dir;
      dir.write("trace.csv", fractional_trace());
      const RunResult a = run(dir, c, "A");
      REQUIRE(a.summary.jobs_completed > 0);
      int i = 0;
      for (const double fraction : {0.2, 0.45, 0.7}) {
        INFO("snapshot every " << fraction << " of the makespan");
        const std::string b = "B" + std::to_string(i), r = "R" + std::to_string(i);
        ++i;
        SnapshotOptions snap;
        snap.every = period(a, fraction);
        run(dir, c, b, snap);
        check_same_outputs(dir, "A", b);  // taking snapshots changes nothing
        REQUIRE(fs::exists(dir.path(b + "/snapshot.bin")));
        leave_interrupted_rows(dir, b, r);
        SnapshotOptions resume;
        resume.resume_from = dir.path(b + "/snapshot.bin");
        resume.every = period(a, 0.1);  // and keeps taking snapshots after the resume
        run(dir, c, r, resume);
        check_same_outputs(dir, "A", r);
        CHECK_FALSE(fs::exists(dir.path(r + "/jobs.csv.partial-" + std::to_string(::getpid()))));
      }
      // B2 took one snapshot (at 0.7 of the makespan), R2 resumed from it and took its
      // own later ones: resuming from R2's continues a chain of interruptions.
      REQUIRE(fs::exists(dir.path("R2/snapshot.bin")));
      REQUIRE(read_file(dir.path("R2/snapshot.bin")) != read_file(dir.path("B2/snapshot.bin")));
      leave_interrupted_rows(dir, "R2", "R2b");
      SnapshotOptions again;
      again.resume_from = dir.path("R2/snapshot.bin");
      run(dir, c, "R2b", again);
      check_same_outputs(dir, "A", "R2b");
    }
  }
}

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("snapshots of another run, damaged snapshots and lost rows are refused", "[snapshot]") {
  TempDir dir;
  const Case c{"base", kBase, {}};
  const RunResult a = run(dir, c, "A");
  SnapshotOptions snap;
  snap.every = period(a, 0.5);
  run(dir, c, "B", snap);
  const std::string good = read_file(dir.path("B/snapshot.bin"));
  const auto resume_error = [&](const std::string& file, const Case& cc) {
    fs::remove_all(dir.path("R"));
    leave_interrupted_rows(dir, "B", "R");
    SnapshotOptions r;
    r.resume_from = file;
    return error_of([&] { run(dir, cc, "R", r); });
  };
  const std::string s = dir.path("s.bin");

  SECTION("another configuration") {
    dir.write("s.bin", good);
    CHECK(resume_error(s, Case{"seed", kBase, {"seed=6"}}) ==
          s + ": the snapshot was written by a run with a different configuration (scenario, --set values, policy or seed); resume with exactly "
              "the options of the run that wrote it");
    CHECK_THAT(resume_error(s, Case{"policy", kBase, {"policy=fifo"}}), Catch::Contains("different configuration"));
    CHECK(fs::exists(dir.path("R/jobs.csv.interrupted")));  // the rows stay for a correct resume
    CHECK_FALSE(fs::exists(dir.path("R/jobs.csv")));
    CHECK_FALSE(fs::exists(dir.path("R/results.json")));
  }
  SECTION("truncated") {
    dir.write("s.bin", good.substr(0, good.size() / 2));
    CHECK_THAT(resume_error(s, c), Catch::StartsWith(s + ": the snapshot is truncated or damaged: its header announces") &&
                                       Catch::EndsWith("(was the copy interrupted?)"));
    dir.write("s.bin", good.substr(0, 20));
    CHECK_THAT(resume_error(s, c), Catch::StartsWith(s + ": the snapshot is truncated (20 bytes, shorter than its header)"));
  }
  SECTION("corrupted") {
    std::string bad = good;
    bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x10);
    dir.write("s.bin", bad);
    CHECK(resume_error(s, c) == s + ": the snapshot is corrupted (its checksum does not match its contents)");
  }
  SECTION("not a snapshot") {
    dir.write("s.bin", "name: x\n");
    CHECK(resume_error(s, c) == s + ": not a schedsim snapshot (it does not start with 'schedsim-snapshot')");
    CHECK(resume_error(dir.path("none.bin"), c) == dir.path("none.bin") + ": cannot open the snapshot (does it exist?)");
  }
  SECTION("another format version") {
    std::string other = good;
    other[18] = 9;  // the version field follows the 18-byte magic line
    dir.write("s.bin", other);
    CHECK_THAT(resume_error(s, c), Catch::Contains("snapshot format version 9; this schedsim reads version " + std::to_string(kSnapshotFormatVersion)));
  }
  SECTION("the rows written before the snapshot are gone or changed") {
    fs::remove_all(dir.path("R"));
    SnapshotOptions r;
    r.resume_from = dir.path("B/snapshot.bin");
    CHECK_THAT(error_of([&] { run(dir, c, "R", r); }),
               Catch::Contains("the snapshot continues " + dir.path("R") + "/jobs.csv.partial-") &&
                   Catch::Contains("which is missing or was changed (also looked for " + dir.path("R/jobs.csv.interrupted") +
                                   "); resume with --out naming the folder of the interrupted run"));
    leave_interrupted_rows(dir, "B", "R");
    std::string rows = read_file(dir.path("R/jobs.csv.interrupted"));
    rows[40] = rows[40] == '9' ? '8' : '9';
    dir.write("R/jobs.csv.interrupted", rows);
    CHECK_THAT(error_of([&] { run(dir, c, "R", r); }), Catch::Contains("which is missing or was changed"));
  }
}

namespace {

// A policy that keeps state but does not say how to save it.
class ForgetfulPolicy : public Policy {
 public:
  std::string name() const override { return "forgetful"; }
  void on_job_queued(const SchedulerView&, JobSlot job) override { queue_.push_back(job); }
  void decide(const SchedulerView& view, ActionBatch& out) override {
    std::vector<DeviceId> devices;
    while (!queue_.empty()) {
      const JobView j = view.job(queue_.front());
      devices.clear();
      for (DeviceId d = view.cluster_state().next_free(0); d >= 0 && static_cast<int>(devices.size()) < j.num_gpus(); d = view.cluster_state().next_free(d + 1)) {
        devices.push_back(d);
      }
      if (static_cast<int>(devices.size()) < j.num_gpus()) return;
      out.start(queue_.front(), devices);
      queue_.erase(queue_.begin());
    }
  }

 private:
  std::vector<JobSlot> queue_;
};

}  // namespace

TEST_CASE("a component without snapshot support makes --snapshot-every fail before the run", "[snapshot]") {
  TempDir dir;
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig scenario = load_scenario(dir.write("run.yaml", kBase), {}, std::nullopt, reg);
  ForgetfulPolicy policy;
  RunOptions options{dir.path("out")};
  options.snapshot.every = Tick::from_seconds(3600);
  CHECK(error_of([&] { run_scenario(scenario, policy, YAML::Node("forgetful"), options); }) ==
        "--snapshot-every: policy 'forgetful' cannot be saved in a snapshot; run without --snapshot-every");
  CHECK(dir.files() == std::vector<std::string>{"run.yaml"});  // nothing was simulated or written

  class Counter : public Observer {
    void on_job_end(const JobState&) override { ++ended; }
    int ended = 0;
  } counter;
  RunOptions plain{dir.path("out2")};
  plain.snapshot.every = Tick::from_seconds(3600);
  const YAML::Node fifo("fifo");
  PolicyInstance p = reg.create(ConfigNode(fifo, "test", "policy"), policy_context(scenario));
  CHECK(error_of([&] { run_scenario(scenario, *p.policy, p.resolved, plain, {&counter}); }) ==
        "--snapshot-every: an observer of this run cannot be saved in a snapshot; run without --snapshot-every");
}

TEST_CASE("snapshot periods are simulated time: seconds or s, m, h, d", "[snapshot]") {
  CHECK(parse_snapshot_period("3600", "--snapshot-every") == Tick::from_seconds(3600));
  CHECK(parse_snapshot_period("90s", "--snapshot-every") == Tick::from_seconds(90));
  CHECK(parse_snapshot_period("30m", "--snapshot-every") == Tick::from_seconds(1800));
  CHECK(parse_snapshot_period("1.5h", "--snapshot-every") == Tick::from_seconds(5400));
  CHECK(parse_snapshot_period("2d", "--snapshot-every") == Tick::from_seconds(172800));
  for (const char* bad : {"", "0", "-1h", "1w", "h", "1e300", "nan", "3 d"}) {
    INFO(bad);
    CHECK(error_of([&] { parse_snapshot_period(bad, "--snapshot-every"); }) ==
          std::string("--snapshot-every: '") + bad +
              "' is not a period of simulated time; give seconds (3600) or a number with s, m, h or d (90s, 30m, 6h, 2d), more than 0");
  }
}

namespace {

pid_t spawn(const std::vector<std::string>& args, const std::string& stderr_path) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (std::FILE* f = std::freopen(stderr_path.c_str(), "w", stderr)) (void)f;
    ::execv(SCHEDSIM_EXE, argv.data());
    ::_exit(127);
  }
  return pid;
}

int wait_status(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

}  // namespace

TEST_CASE("a run killed with SIGKILL after a snapshot resumes to the uninterrupted run's bytes", "[snapshot]") {
  TempDir dir;
  // 200,000 jobs of the default scenario (about 500 simulated days; a few seconds), a
  // snapshot every 20 simulated days.
  const std::vector<std::string> run = {SCHEDSIM_EXE, "run", "--quiet", "--set", "workload.synthetic.num_jobs=200000"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = run;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const std::string killed = dir.path("killed");
  const pid_t child = spawn(with({"--snapshot-every", "20d", "--out", killed}), dir.path("killed.err"));
  // Kill it as soon as its first snapshot is in place.
  bool snapshot_seen = false;
  for (int i = 0; i < 6000 && !snapshot_seen; ++i) {
    snapshot_seen = fs::exists(killed + "/snapshot.bin");
    if (!snapshot_seen) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(child, SIGKILL);
  const int status = wait_status(child);
  REQUIRE(snapshot_seen);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(WTERMSIG(status) == SIGKILL);
  CHECK_FALSE(fs::exists(killed + "/results.json"));
  CHECK_FALSE(fs::exists(killed + "/jobs.csv"));

  REQUIRE(wait_status(spawn(with({"--snapshot-every", "20d", "--resume", killed + "/snapshot.bin", "--out", killed}), dir.path("resume.err"))) == 0);
  REQUIRE(wait_status(spawn(with({"--out", dir.path("whole")}), dir.path("whole.err"))) == 0);
  for (const char* f : {"results.json", "jobs.csv"}) {
    INFO(f);
    const std::string want = read_file(dir.path("whole") + "/" + f);
    REQUIRE(want.size() > 1000);
    CHECK(read_file(killed + "/" + f) == want);
  }
  // The killed run's partial rows were used and removed; only results and the snapshot remain.
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(killed)) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  CHECK(left == std::vector<std::string>{"jobs.csv", "results.json", "snapshot.bin"});

  // Ctrl-C in a run that takes snapshots: it stops at the end of the instant, after a last
  // snapshot that matches the rows it keeps, and says how to continue.
  const std::string stopped = dir.path("stopped");
  const pid_t second = spawn(with({"--snapshot-every", "10000d", "--out", stopped}), dir.path("stopped.err"));
  bool simulating = false;
  for (int i = 0; i < 6000 && !simulating; ++i) {
    if (fs::exists(stopped)) {
      for (const auto& e : fs::directory_iterator(stopped)) {
        std::error_code ec;
        simulating = simulating || (e.path().filename().string().rfind("jobs.csv.partial-", 0) == 0 && fs::file_size(e.path(), ec) > 4096);
      }
    }
    if (!simulating) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(second, SIGINT);
  const int stopped_status = wait_status(second);
  REQUIRE(simulating);
  REQUIRE(WIFEXITED(stopped_status));
  REQUIRE(WEXITSTATUS(stopped_status) == 130);
  const std::string message = read_file(dir.path("stopped.err"));
  CHECK_THAT(message, Catch::StartsWith("schedsim: interrupted by SIGINT (Ctrl-C) at simulated time ") &&
                          Catch::Contains(" s, after a snapshot of that instant; the ") &&
                          Catch::EndsWith("; continue from the last snapshot with --resume " + stopped + "/snapshot.bin\n"));
  REQUIRE(fs::exists(stopped + "/snapshot.bin"));
  REQUIRE(fs::exists(stopped + "/jobs.csv.interrupted"));
  REQUIRE(wait_status(spawn(with({"--snapshot-every", "10000d", "--resume", stopped + "/snapshot.bin", "--out", stopped}), dir.path("resume2.err"))) == 0);
  for (const char* f : {"results.json", "jobs.csv"}) {
    INFO(f);
    CHECK(read_file(stopped + "/" + f) == read_file(dir.path("whole") + "/" + f));
  }
  CHECK_FALSE(fs::exists(stopped + "/jobs.csv.interrupted"));
}

TEST_CASE("the rl policy resumes from a snapshot to the uninterrupted run's bytes", "[snapshot]") {
  // The shipped agent on rl_default.yaml (physics, loss spikes, checkpoints; the agent
  // moves jobs), through the CLI: only builds with LibTorch have the rl policy.
  TempDir dir;
  const std::string src = SCHEDSIM_SOURCE_DIR;
  const std::vector<std::string> run = {SCHEDSIM_EXE, "run", src + "/experiments/configs/rl_default.yaml", "--quiet", "--timeline",
                                        "--set", "policy={name: rl, path: '" + src + "/experiments/agents/default.pt'}"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = run;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  if (wait_status(spawn(with({"--out", dir.path("A")}), dir.path("A.err"))) != 0) {
    const std::string why = read_file(dir.path("A.err"));
    // Builds without LibTorch register no rl policy.
    REQUIRE_THAT(why, Catch::Contains("LibTorch") || Catch::Contains("unknown policy 'rl'"));
    WARN("skipped: this build has no LibTorch, so no rl policy (" << why << ")");
    return;
  }
  // The run lasts about 71,000 s: one snapshot at 43,200 s, or three, the last at 54,000 s.
  for (const char* every : {"12h", "5h"}) {
    INFO("--snapshot-every " << every);
    const std::string b = dir.path(std::string("B") + every), r = dir.path(std::string("R") + every);
    REQUIRE(wait_status(spawn(with({"--snapshot-every", every, "--out", b}), dir.path("B.err"))) == 0);
    fs::create_directories(r);
    for (const char* f : {"jobs.csv", "timeline.csv", "allocations.csv"}) fs::copy_file(b + "/" + f, r + "/" + f + ".interrupted");
    REQUIRE(wait_status(spawn(with({"--resume", b + "/snapshot.bin", "--out", r}), dir.path("R.err"))) == 0);
    for (const char* f : kOutputs) {
      INFO(f);
      const std::string want = read_file(dir.path("A") + "/" + f);
      REQUIRE(want.size() > 0);
      CHECK(read_file(b + "/" + f) == want);
      CHECK(read_file(r + "/" + f) == want);
    }
  }
}

namespace {

// Where the kernel's fields lie in a snapshot's payload: a reader of the layout that
// Simulator::snapshot writes (sim/simulator_snapshot.cpp), for tests that edit one field
// and recompute the checksum, as someone crafting a hostile snapshot would.
struct KernelLayout {
  std::size_t jobs_count = 0;                 // the job table's length (u64)
  std::vector<std::size_t> event_times;       // each pending event's time (i64, us), in events_
  std::vector<std::size_t> first_device;      // by running job: its first device id (i32)
  std::size_t running_head = 0;               // running_.head (i32)
  std::int64_t now_us = 0;
};

class PayloadReader {
 public:
  explicit PayloadReader(const std::string& p) : p_(p) {}
  std::uint64_t u64() { return get<std::uint64_t>(); }
  template <typename T>
  T get() {
    REQUIRE(pos_ + sizeof(T) <= p_.size());
    T v;
    std::memcpy(&v, p_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string str() {
    const std::uint64_t n = u64();
    REQUIRE(pos_ + n <= p_.size());
    std::string s = p_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  void skip(std::size_t n) { pos_ += n; }
  void vec(std::size_t each) { skip(u64() * each); }
  std::size_t pos() const { return pos_; }

 private:
  const std::string& p_;
  std::size_t pos_ = 0;
};

KernelLayout kernel_layout(const std::string& payload) {
  KernelLayout k;
  PayloadReader r(payload);
  r.u64();  // the config hash
  REQUIRE(r.str() == "kernel");
  REQUIRE(r.str() == "simulator");
  k.now_us = r.get<std::int64_t>();
  REQUIRE(r.str() == "event queue");
  r.skip(16);  // front
  r.vec(16);   // heap
  const std::uint64_t events = r.u64();
  for (std::uint64_t i = 0; i < events; ++i) {
    const std::size_t at = r.pos();
    r.skip(8);
    if (r.u64() != 0) k.event_times.push_back(at);  // a pending event (id != 0)
    r.skip(4 + 8);
  }
  r.vec(4);  // pos_
  r.vec(4);  // free slots
  r.skip(16);
  REQUIRE(r.str() == "cluster state");
  r.vec(8);
  r.vec(8);
  r.skip(8);  // the free bitset
  r.vec(8);   // owners
  r.vec(4);
  r.skip(8);
  r.vec(4);
  const std::uint64_t devices = r.u64();
  for (std::uint64_t d = 0; d < devices; ++d) r.vec(12);  // shares
  r.skip(12);
  k.jobs_count = r.pos();
  const std::uint64_t jobs = r.u64();
  for (std::uint64_t j = 0; j < jobs; ++j) {
    r.str();
    r.skip(8 + 4 + 8 + 8 + 8);
    for (int s = 0; s < 4; ++s) r.str();
    r.skip(4 + 8 + 8 + 8 + 1 + 4 + 4);
    r.str();
    const std::uint64_t regions = r.u64();
    for (std::uint64_t i = 0; i < regions; ++i) r.str();
    const auto status = r.get<std::uint8_t>();
    r.skip(8 + 8 + 8);
    const std::size_t devices_at = r.pos();
    const std::uint64_t held = r.u64();
    if (status == 1 && held > 0) k.first_device.push_back(devices_at + 8);
    r.skip(4 * held);
    r.skip(8 * 5 + 8 + 8 + 1 + 8 * 4 + 4 + 4 + 1);
    r.vec(16);
    r.skip(16 + 8 * 3 + 1 + 8 * 5 + 4 + 4 + 4 + 4 + 4);
    r.vec(4);     // bound devices (non-gang placement)
    r.skip(8 + 8);  // bound_since, bound_idle_device_us
  }
  r.vec(1);  // live
  r.vec(4);  // free slots
  r.skip(8);
  k.running_head = r.pos();
  return k;
}

template <typename T>
std::string with_field(std::string payload, std::size_t at, T value) {
  std::memcpy(&payload[at], &value, sizeof value);
  return payload;
}

std::uint64_t header_config_hash(const std::string& file) {
  std::uint64_t h;
  std::memcpy(&h, file.data() + 22, sizeof h);
  return h;
}

constexpr std::size_t kSnapshotHeaderBytes = 18 + 4 + 8 + 8 + 8;

}  // namespace

TEST_CASE("a snapshot edited with its checksum recomputed is refused with a clean error, never a crash", "[snapshot]") {
  TempDir dir;
  // One snapshot, at 0.6 of the makespan, with jobs running and pending (the failures
  // scenario would take its last one after the last job, on a failure event).
  const Case c{"base", kBase, {}};
  const RunResult a = run(dir, c, "A");
  SnapshotOptions snap;
  snap.every = period(a, 0.6);
  run(dir, c, "B", snap);
  const std::string good = read_file(dir.path("B/snapshot.bin"));
  const std::uint64_t hash = header_config_hash(good);
  const std::string payload = good.substr(kSnapshotHeaderBytes);
  const KernelLayout k = kernel_layout(payload);
  REQUIRE(k.now_us > 0);
  REQUIRE_FALSE(k.first_device.empty());
  REQUIRE_FALSE(k.event_times.empty());
  const std::string s = dir.path("s.bin");
  const std::string refused = s + ": snapshot is not a state of this scenario: ";
  const auto resume_with = [&](const std::string& edited) {
    dir.write("s.bin", encode_snapshot_file(hash, edited));
    fs::remove_all(dir.path("R"));
    leave_interrupted_rows(dir, "B", "R");
    SnapshotOptions r;
    r.resume_from = s;
    return error_of([&] { run(dir, c, "R", r); });
  };
  // The unedited payload, re-wrapped, resumes to the uninterrupted run's bytes.
  CHECK(resume_with(payload).empty());
  check_same_outputs(dir, "A", "R");

  SECTION("a job slot out of range") {
    CHECK(resume_with(with_field<std::int32_t>(payload, k.running_head, 1000000)) ==
          refused + "the running list links to job slot 1000000, which is free, out of range or beyond its count");
  }
  SECTION("a device id out of range") {
    const std::string e = resume_with(with_field<std::int32_t>(payload, k.first_device[0], 4096));
    CHECK_THAT(e, Catch::StartsWith(refused + "job slot ") && Catch::EndsWith(" holds device 4096, which this cluster (32 devices) does not have"));
    // Another device, which the cluster state gives to someone else.
    const std::string other = resume_with(with_field<std::int32_t>(payload, k.first_device[0], 31));
    CHECK_THAT(other, Catch::StartsWith(refused));
  }
  SECTION("a huge count") {
    CHECK(resume_with(with_field<std::uint64_t>(payload, k.jobs_count, std::uint64_t{1} << 60)) ==
          refused + "a list length (1152921504606846976) exceeds the data left");
  }
  SECTION("an event time in the past") {
    const std::string e = resume_with(with_field<std::int64_t>(payload, k.event_times[0], 0));
    CHECK_THAT(e, Catch::StartsWith(refused + "event ") && Catch::EndsWith(" is at t=" + format_seconds(Tick()) + " s, before the clock (" + format_seconds(Tick::from_us(k.now_us)) + " s)"));
  }
  SECTION("a truncated state, and bytes after it") {
    CHECK_THAT(resume_with(payload.substr(0, payload.size() / 2)), Catch::StartsWith(refused));
    CHECK_THAT(resume_with(payload + "x"), Catch::Contains(refused) && Catch::EndsWith("1 bytes left after the simulation state"));
  }
  SECTION("every single byte flipped: a clean error or the same run") {
    // A sample of positions across the whole state (every byte would take minutes).
    for (std::size_t at = 8; at < payload.size(); at += payload.size() / 97 + 1) {
      INFO("byte " << at << " of " << payload.size());
      std::string edited = payload;
      edited[at] = static_cast<char>(edited[at] ^ 0x5a);
      const std::string e = resume_with(edited);
      // The state refused, the rows it continues not found, or the workload shorter than
      // the jobs it claims were read: each an InputError naming the file.
      if (!e.empty()) CHECK_THAT(e, Catch::StartsWith(refused) || Catch::StartsWith(s + ": the snapshot continues") || Catch::Contains("the workload ends after"));
    }
  }
}

TEST_CASE("a snapshot whose header names another seed's configuration is refused", "[snapshot]") {
  TempDir dir;
  const Case c5{"seed 5", kBase, {}}, c6{"seed 6", kBase, {"seed=6"}};
  const RunResult a = run(dir, c5, "A");
  SnapshotOptions snap;
  snap.every = period(a, 0.5);
  run(dir, c5, "B5", snap);
  run(dir, c6, "B6", snap);
  const std::string five = read_file(dir.path("B5/snapshot.bin")), six = read_file(dir.path("B6/snapshot.bin"));
  const std::uint64_t hash6 = header_config_hash(six);
  REQUIRE(hash6 != header_config_hash(five));
  const std::string s = dir.path("s.bin");
  const auto resume6 = [&](const std::string& file) {
    dir.write("s.bin", file);
    fs::remove_all(dir.path("R"));
    leave_interrupted_rows(dir, "B5", "R");
    SnapshotOptions r;
    r.resume_from = s;
    return error_of([&] { run(dir, c6, "R", r); });
  };
  // The header's config hash is under the checksum: edited alone, the file is damaged.
  std::string edited = five;
  std::memcpy(&edited[22], &hash6, sizeof hash6);
  CHECK(resume6(edited) == s + ": the snapshot is corrupted (its checksum does not match its contents)");
  // With the checksum recomputed: the state itself names its configuration.
  const std::string payload5 = five.substr(kSnapshotHeaderBytes);
  CHECK(resume6(encode_snapshot_file(hash6, payload5)) ==
        s + ": snapshot is not a state of this scenario: it was written by a run with a different configuration (scenario, --set values, policy or "
            "seed), though its header names this one");
  // And with that rewritten too: seed 5's jobs are not seed 6's workload.
  CHECK_THAT(resume6(encode_snapshot_file(hash6, with_field<std::uint64_t>(payload5, 0, hash6))),
             Catch::StartsWith(s + ": snapshot is not a state of this scenario: ") &&
                 (Catch::Contains("which is not one of this workload's first") || Catch::Contains("the next arrival is not this workload's job")));
  CHECK_FALSE(fs::exists(dir.path("R/results.json")));
}

TEST_CASE("a keyed snapshot resumes only with its key and refuses an edit whose checksum was recomputed", "[snapshot]") {
  TempDir dir;
  const Case c{"base", kBase, {}};
  const RunResult a = run(dir, c, "A");
  const std::string key = "0123456789abcdef0123456789abcdef";
  SnapshotOptions snap;
  snap.every = period(a, 0.6);
  run(dir, c, "U", snap);  // unkeyed
  snap.key = key;
  run(dir, c, "K", snap);
  check_same_outputs(dir, "A", "K");  // the key changes no output
  const std::string unkeyed = read_file(dir.path("U/snapshot.bin")), keyed = read_file(dir.path("K/snapshot.bin"));
  // The keyed file is the unkeyed one, byte for byte, and a MAC trailer line.
  REQUIRE(keyed.size() == unkeyed.size() + 99);
  REQUIRE(keyed.compare(0, unkeyed.size(), unkeyed) == 0);
  CHECK(keyed == seal_snapshot(unkeyed, key));
  CHECK_THAT(keyed.substr(unkeyed.size()), Catch::StartsWith("schedsim-snapshot-mac hmac-sha256 ") && Catch::EndsWith("\n"));

  const std::string s = dir.path("s.bin");
  const auto resume_with = [&](const std::string& file, const std::optional<std::string>& k) {
    dir.write("s.bin", file);
    fs::remove_all(dir.path("R"));
    leave_interrupted_rows(dir, "K", "R");
    SnapshotOptions r;
    r.resume_from = s;
    r.key = k;
    return error_of([&] { run(dir, c, "R", r); });
  };
  const std::string bad_mac = s + ": the snapshot's MAC does not match the key: it was changed or written with another key";

  SECTION("with its key: the uninterrupted run's bytes") {
    CHECK(resume_with(keyed, key).empty());
    check_same_outputs(dir, "A", "R");
  }
  SECTION("one byte edited, the checksum recomputed: accepted unkeyed, refused keyed") {
    const std::uint64_t hash = header_config_hash(unkeyed);
    const std::string payload = unkeyed.substr(kSnapshotHeaderBytes);
    // The first sampled edit that the unkeyed checks accept (a self-consistent state).
    std::string accepted;
    for (std::size_t at = 8; at < payload.size() && accepted.empty(); at += payload.size() / 97 + 1) {
      std::string edited = payload;
      edited[at] = static_cast<char>(edited[at] ^ 0x01);
      if (resume_with(encode_snapshot_file(hash, edited), std::nullopt).empty()) accepted = encode_snapshot_file(hash, edited);
    }
    REQUIRE_FALSE(accepted.empty());
    const std::string mac_trailer = keyed.substr(unkeyed.size());
    CHECK(resume_with(accepted + mac_trailer, key) == bad_mac);
    CHECK_FALSE(fs::exists(dir.path("R/results.json")));
    // A MAC edited in place is refused too.
    std::string edited_mac = keyed;
    edited_mac[edited_mac.size() - 2] = edited_mac[edited_mac.size() - 2] == '0' ? '1' : '0';
    CHECK(resume_with(edited_mac, key) == bad_mac);
  }
  SECTION("another key") {
    CHECK(resume_with(keyed, std::string("another key")) == bad_mac);
    CHECK(resume_with(seal_snapshot(unkeyed, "another key"), key) == bad_mac);
  }
  SECTION("keyed and unkeyed do not mix") {
    CHECK(resume_with(keyed, std::nullopt) ==
          s + ": the snapshot is keyed (HMAC-SHA256): resume it with its key (--snapshot-key-file FILE or SCHEDSIM_SNAPSHOT_KEY)");
    // An unkeyed snapshot, or a keyed one with its MAC line cut off.
    CHECK(resume_with(unkeyed, key) == s + ": a snapshot key was given but the snapshot is not keyed: it was written without a key, or its MAC was removed");
    CHECK(resume_with(keyed.substr(0, unkeyed.size()), key) ==
          s + ": a snapshot key was given but the snapshot is not keyed: it was written without a key, or its MAC was removed");
  }
  SECTION("not a snapshot, with a key: the decoder's message") {
    CHECK(resume_with("name: x\n", key) == s + ": not a schedsim snapshot (it does not start with 'schedsim-snapshot')");
  }
}

TEST_CASE("the CLI keys snapshots from --snapshot-key-file or SCHEDSIM_SNAPSHOT_KEY", "[snapshot][cli]") {
  TempDir dir;
  const std::string config = dir.write("run.yaml", kBase);
  const std::string key = dir.write("snap.key", "0123456789abcdef0123456789abcdef\n");
  const std::string exe = SCHEDSIM_EXE;
  const auto sh = [&](const std::string& command) {
    const int status = std::system(("unset SCHEDSIM_SNAPSHOT_KEY; " + command + " > " + dir.path("out.txt") + " 2>&1").c_str());
    return std::make_pair(WEXITSTATUS(status), read_file(dir.path("out.txt")));
  };
  const std::string run_cmd = exe + " run " + config + " --quiet ";
  REQUIRE(sh(run_cmd + "--out " + dir.path("A")).first == 0);
  REQUIRE(sh(run_cmd + "--snapshot-every 20000 --snapshot-key-file " + key + " --out " + dir.path("K")).first == 0);
  REQUIRE(sh(run_cmd + "--snapshot-every 20000 --out " + dir.path("U")).first == 0);
  const std::string keyed = read_file(dir.path("K/snapshot.bin")), unkeyed = read_file(dir.path("U/snapshot.bin"));
  // The same state but for the partial file's name (it holds the process id), so the
  // bytes differ; the MAC verifies under the key without the file's final line break.
  CHECK(keyed.size() == unkeyed.size() + 99);
  CHECK(open_snapshot(keyed, "k", std::string("0123456789abcdef0123456789abcdef")) == keyed.substr(0, keyed.size() - 99));
  CHECK(open_snapshot(unkeyed, "u", std::nullopt) == unkeyed);
  // Without --timeline the run streams jobs.csv only.
  const auto leave_interrupted_rows = [&](const std::string& from, const std::string& to) {
    fs::create_directories(dir.path(to));
    fs::copy_file(dir.path(from + "/jobs.csv"), dir.path(to + "/jobs.csv.interrupted"));
  };
  // The key from the environment resumes it; without a key it is refused (status 1).
  leave_interrupted_rows("K", "R");
  CHECK(sh("SCHEDSIM_SNAPSHOT_KEY=0123456789abcdef0123456789abcdef " + run_cmd + "--resume " + dir.path("K/snapshot.bin") + " --out " + dir.path("R")).first == 0);
  CHECK(read_file(dir.path("R/results.json")) == read_file(dir.path("A/results.json")));
  leave_interrupted_rows("K", "R2");
  const auto no_key = sh(run_cmd + "--resume " + dir.path("K/snapshot.bin") + " --out " + dir.path("R2"));
  CHECK(no_key.first == 1);
  CHECK_THAT(no_key.second, Catch::Contains("schedsim: error: " + dir.path("K/snapshot.bin") +
                                            ": the snapshot is keyed (HMAC-SHA256): resume it with its key (--snapshot-key-file FILE or SCHEDSIM_SNAPSHOT_KEY)"));
  const auto wrong = sh("SCHEDSIM_SNAPSHOT_KEY=wrong " + run_cmd + "--resume " + dir.path("K/snapshot.bin") + " --out " + dir.path("R2"));
  CHECK(wrong.first == 1);
  CHECK_THAT(wrong.second, Catch::Contains(dir.path("K/snapshot.bin") + ": the snapshot's MAC does not match the key: it was changed or written with another key"));
  const auto missing = sh(run_cmd + "--snapshot-every 20000 --snapshot-key-file " + dir.path("nokey") + " --out " + dir.path("M"));
  CHECK(missing.first == 1);
  CHECK_THAT(missing.second, Catch::Contains(dir.path("nokey") + ": cannot open the snapshot key file (does it exist?)"));
  const auto alone = sh(run_cmd + "--snapshot-key-file " + key + " --out " + dir.path("M"));
  CHECK(alone.first == 2);
  CHECK_THAT(alone.second, Catch::Contains("--snapshot-key-file: applies only with --snapshot-every or --resume"));
}
