// The measurement window, the time averages and the realised offered load
// (sim/metrics.hpp, docs/metrics.md#measurement-window): closed-form values on
// hand-made runs, the config keys and results.json's fields.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "app/compare.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "policies/registry.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::read_file;
using schedsim::test::TempDir;
using schedsim::test::VectorSource;

namespace {

// 4 GPUs under fifo: a (4 GPUs, 10 s) at 0 runs [0, 10]; b (2 GPUs, 6 s) at 2 and
// c (2 GPUs, 4 s) at 4 wait for it and run [10, 16] and [10, 14].
//   allocated devices: 4 on [0, 14), 2 on [14, 16)  -> 60 device-s
//   pending jobs:      b on [2, 10), c on [4, 10)   -> 14 job-s
//   jobs in system:    a [0, 10), b [2, 16), c [4, 14) -> 34 job-s
Summary run_three(const MeasurementWindowConfig& window, std::uint64_t expected_jobs = 3) {
  const ClusterSpec cluster({NodeGroup{1, "V100", 4}});
  VectorSource source({make_job("a", 0, 4, 10), make_job("b", 2, 2, 6), make_job("c", 4, 2, 4)});
  PolicyInstance p = builtin_policies().create("fifo");
  Simulator sim(cluster, source, *p.policy);
  MetricsCollector metrics(cluster.num_devices(), window, expected_jobs);
  sim.add_observer(metrics);
  sim.run();
  return metrics.summarize();
}

MeasurementWindowConfig window(std::uint64_t warmup_jobs, MeasurementWindowConfig::End end) {
  MeasurementWindowConfig w;
  w.warmup_jobs = warmup_jobs;
  w.end = end;
  return w;
}

constexpr auto kLastArrival = MeasurementWindowConfig::End::kLastArrival;
constexpr auto kLastCompletion = MeasurementWindowConfig::End::kLastCompletion;

}  // namespace

TEST_CASE("whole-run time averages and the offered load of three jobs have their closed forms", "[sim][metrics][window]") {
  const Summary s = run_three(window(0, kLastCompletion));
  CHECK(s.makespan_s == 16);
  CHECK(*s.gpu_utilization == Approx(60.0 / (4 * 16)).epsilon(1e-12));
  CHECK(*s.mean_queue_length == Approx(14.0 / 16).epsilon(1e-12));
  CHECK(*s.mean_jobs_in_system == Approx(34.0 / 16).epsilon(1e-12));
  // 60 GPU-seconds demanded over 4 s of arrivals on 4 GPUs.
  CHECK(*s.offered_load == Approx(60.0 / (4 * 4)).epsilon(1e-12));
  // A window from the first arrival to the last end is the whole run.
  CHECK(s.window.warmup_jobs == 0);
  CHECK(*s.window.start_s == 0);
  CHECK(*s.window.end_s == 16);
  CHECK(s.window.jobs_arrived == 2);
  CHECK(*s.window.gpu_utilization == Approx(*s.gpu_utilization).epsilon(1e-12));
  CHECK(*s.window.mean_queue_length == Approx(*s.mean_queue_length).epsilon(1e-12));
  CHECK(*s.window.mean_jobs_in_system == Approx(*s.mean_jobs_in_system).epsilon(1e-12));
}

TEST_CASE("the window opens at the arrival after the warm-up and closes at the last arrival or end", "[sim][metrics][window]") {
  SECTION("one warm-up job, until the last arrival: [2, 4]") {
    const Summary s = run_three(window(1, kLastArrival));
    CHECK(*s.window.start_s == 2);
    CHECK(*s.window.end_s == 4);
    CHECK(s.window.jobs_arrived == 1);
    CHECK(*s.window.gpu_utilization == 1.0);           // a holds all 4 GPUs
    CHECK(*s.window.mean_queue_length == 1.0);         // b waits the whole 2 s
    CHECK(*s.window.mean_jobs_in_system == 2.0);       // a and b
    CHECK(*s.gpu_utilization == Approx(60.0 / 64).epsilon(1e-12));  // whole run unchanged
  }
  SECTION("one warm-up job, until the last end: [2, 16]") {
    const Summary s = run_three(window(1, kLastCompletion));
    CHECK(*s.window.start_s == 2);
    CHECK(*s.window.end_s == 16);
    // 4 x 12 s + 2 x 2 s of devices; b 8 s + c 6 s pending; a 8 + b 14 + c 10 in the system.
    CHECK(*s.window.gpu_utilization == Approx(52.0 / (4 * 14)).epsilon(1e-12));
    CHECK(*s.window.mean_queue_length == Approx(14.0 / 14).epsilon(1e-12));
    CHECK(*s.window.mean_jobs_in_system == Approx(32.0 / 14).epsilon(1e-12));
  }
  SECTION("a window of no length has no averages") {
    const Summary s = run_three(window(2, kLastArrival));
    CHECK(*s.window.start_s == 4);
    CHECK(*s.window.end_s == 4);
    CHECK(s.window.jobs_arrived == 0);
    CHECK(!s.window.gpu_utilization);
    CHECK(!s.window.mean_queue_length);
    CHECK(!s.window.mean_jobs_in_system);
  }
  SECTION("a window that never opens is empty") {
    const Summary s = run_three(window(3, kLastArrival));
    CHECK(s.window.warmup_jobs == 3);
    CHECK(!s.window.start_s);
    CHECK(!s.window.end_s);
    CHECK(!s.window.gpu_utilization);
  }
  SECTION("warmup_fraction applies to the workload's job count") {
    MeasurementWindowConfig w;
    w.warmup_fraction = 0.5;
    CHECK(w.warmup_job_count(3) == 1);
    CHECK(w.warmup_job_count(0) == 0);  // unknown count: no warm-up
    CHECK(MeasurementWindowConfig{}.warmup_job_count(2000) == 200);
    const Summary s = run_three(w, 3);
    CHECK(s.window.warmup_jobs == 1);
    CHECK(*s.window.start_s == 2);
  }
}

TEST_CASE("metrics.window is parsed strictly and resolved with its defaults", "[sim][metrics][window][config]") {
  auto parse = [](const std::string& yaml) { return MeasurementWindowConfig::parse(ConfigNode::load_string(yaml, "s.yaml").child("metrics")); };
  const MeasurementWindowConfig d = parse("metrics: {}");
  CHECK(!d.warmup_jobs);
  CHECK(d.warmup_fraction == 0.1);
  CHECK(d.end == kLastArrival);
  const YAML::Node resolved = d.to_yaml();
  CHECK(resolved["window"].size() == 2);
  CHECK(resolved["window"]["warmup_fraction"].as<double>() == 0.1);
  CHECK(resolved["window"]["end"].as<std::string>() == "last_arrival");
  const MeasurementWindowConfig j = parse("metrics: {window: {warmup_jobs: 7, end: last_completion}}");
  CHECK(*j.warmup_jobs == 7);
  CHECK(j.end == kLastCompletion);
  CHECK(YAML::Dump(j.to_yaml()) == "window:\n  warmup_jobs: 7\n  end: last_completion");
  CHECK_THROWS_WITH(parse("metrics: {window: {warmup_jobs: 1, warmup_fraction: 0.2}}"),
                    "s.yaml:1: metrics.window.warmup_fraction: give either warmup_jobs (a count) or warmup_fraction (a share of the workload's jobs), not both");
  CHECK_THROWS_WITH(parse("metrics: {window: {warmup_fraction: 1}}"), "s.yaml:1: metrics.window.warmup_fraction: expected a share of the jobs in [0, 1), got 1");
  CHECK_THROWS_WITH(parse("metrics: {window: {warmup_jobs: -2}}"), "s.yaml:1: metrics.window.warmup_jobs: expected a job count >= 0, got -2");
  CHECK_THROWS_WITH(parse("metrics: {window: {end: drain}}"), Catch::Contains("metrics.window.end") && Catch::Contains("last_arrival"));
  CHECK_THROWS_WITH(parse("metrics: {windows: {}}"), Catch::Contains("metrics: unknown key 'windows'"));
}

TEST_CASE("results.json has the offered load, the time averages and the window with their exact values", "[experiments][metrics][window]") {
  TempDir dir;
  dir.write("t.csv", "job_id,submit_time_s,num_gpus,duration_s\na,0,4,10\nb,2,2,6\nc,4,2,4\n");
  const std::string scenario = dir.write("s.yaml",
                                         "cluster: {nodes: [{count: 1, type: V100, devices_per_node: 4}]}\n"
                                         "workload: {trace: t.csv}\npolicy: fifo\nmetrics: {window: {warmup_jobs: 1, end: last_completion}}\n");
  const ScenarioConfig s = load_scenario(scenario, {}, std::nullopt, builtin_policies());
  const RunResult r = run_scenario(s, builtin_policies(), RunOptions{dir.path("out")});
  const auto j = nlohmann::ordered_json::parse(read_file(dir.path("out/results.json")));
  const auto& sum = j["summary"];
  CHECK(sum["offered_load"].get<double>() == 3.75);
  CHECK(sum["mean_queue_length"].get<double>() == 0.875);
  CHECK(sum["mean_jobs_in_system"].get<double>() == 2.125);
  CHECK(sum["window"].dump() ==
        R"({"warmup_jobs":1,"start_s":2.0,"end_s":16.0,"jobs_arrived":1,"gpu_utilization":0.9285714285714286,"mean_queue_length":1.0,"mean_jobs_in_system":2.2857142857142856})");
  CHECK(j["config"]["metrics"].dump() == R"({"window":{"warmup_jobs":1,"end":"last_completion"}})");
  // The new keys come after the existing ones, in this order.
  std::vector<std::string> tail;
  for (const auto& [k, v] : sum.items()) tail.push_back(k);
  REQUIRE(tail.size() >= 5);
  CHECK(std::vector<std::string>(tail.end() - 5, tail.end()) ==
        std::vector<std::string>{"goodput", "offered_load", "mean_queue_length", "mean_jobs_in_system", "window"});
  // The table's header lines and comparison.csv's new columns.
  CHECK(comparison_header({r}, 4) ==
        "offered load 3.750 (realised: GPU-seconds the jobs demand at rate 1 / (4 GPUs x arrival span))\n"
        "window: 0.00 h to 0.00 h (opens at the arrival of job 2 after 1 warm-up jobs; closes at the last completion)\n"
        "information: none\n");  // a trace without estimates
  const std::string csv = comparison_csv({r});
  CHECK(csv.substr(0, csv.find('\n')).find(",makespan_s,offered_load,mean_queue_length,mean_jobs_in_system,window_gpu_utilization,"
                                            "window_mean_queue_length,window_mean_jobs_in_system") != std::string::npos);
  CHECK(csv.find(",16,3.75,0.875,2.125,0.9285714285714286,1,2.2857142857142856\n") != std::string::npos);
}

TEST_CASE("on the default scenario the window separates the policies that whole-run utilization cannot", "[experiments][metrics][window]") {
  // The issue's example: one 83-hour job makes fifo and sjf both report 0.437 over the
  // makespan; inside the window round_fifo's idle rounds show.
  const ScenarioConfig s = load_scenario("", {}, std::nullopt, builtin_policies());
  const auto runs = compare_policies(s, builtin_policies(), {"fifo", "sjf", "round_fifo"}, RunOptions{});
  REQUIRE(runs.size() == 3);
  CHECK(*runs[0].summary.gpu_utilization == Approx(0.437).margin(5e-4));
  CHECK(*runs[1].summary.gpu_utilization == Approx(0.436).margin(5e-4));  // sjf on the default's noisy estimates
  CHECK(*runs[0].summary.offered_load == Approx(1.1335478386283173).epsilon(1e-12));
  CHECK(runs[0].summary.window.warmup_jobs == 200);
  CHECK(*runs[0].summary.window.gpu_utilization == Approx(0.97828).margin(1e-5));
  CHECK(*runs[2].summary.window.gpu_utilization == Approx(0.78820).margin(1e-5));
  CHECK(*runs[0].summary.window.mean_queue_length == Approx(90.996).margin(1e-3));
  CHECK(*runs[1].summary.window.mean_queue_length == Approx(19.750).margin(1e-3));
}
