// workload.trace.windows: a trace cut into train / validation / test windows, one window
// per run drawn from the run's seed (issue 25).
#include <catch2/catch.hpp>

#include <set>
#include <sstream>
#include <thread>

#include "base/config_node.hpp"
#include "base/error.hpp"
#include "test_support.hpp"
#include "traces/trace_windows.hpp"
#include "traces/workload_config.hpp"
#include "policies/registry.hpp"
#include "scenario/scenario.hpp"

namespace schedsim {
namespace {

using test::TempDir;

// 100 jobs, one every 10 s (job k at 10k s), job k runs k+1 s on 1 GPU.
std::string hundred_jobs() {
  std::ostringstream t;
  t << "job_id,submit_time_s,num_gpus,duration_s\n";
  for (int k = 0; k < 100; ++k) t << "j" << k << "," << 10 * k << ",1," << k + 1 << "\n";
  return t.str();
}

WorkloadConfig parse(TempDir& dir, const std::string& windows) {
  dir.write("jobs.csv", hundred_jobs());
  const std::string path = dir.write("w.yaml", "workload: {trace: {path: jobs.csv, windows: " + windows + "}}\n");
  return WorkloadConfig::parse(ConfigNode::load_file(path).child("workload"));
}

std::vector<JobSpec> run_jobs(const WorkloadConfig& w, std::uint64_t seed) {
  std::vector<std::string> warnings;
  auto source = w.make_source(seed, warnings);
  std::vector<JobSpec> out;
  JobSpec j;
  while (source->next(j)) out.push_back(j);
  return out;
}

int first_index(const std::vector<JobSpec>& jobs) { return std::stoi(jobs.front().id.substr(1)); }

}  // namespace

TEST_CASE("Trace windows: 10 windows of 10 jobs split 6/2/2 in trace order; a run replays one, rebased to t=0", "[traces][windows]") {
  TempDir dir;
  WorkloadConfig w = parse(dir, "{jobs: 10}");  // defaults: train 0.6, validation 0.2, use test
  std::set<int> test_windows;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const std::vector<JobSpec> jobs = run_jobs(w, seed);
    REQUIRE(jobs.size() == 10u);
    const int first = first_index(jobs);
    CHECK(first % 10 == 0);
    test_windows.insert(first / 10);
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      CHECK(jobs[i].id == "j" + std::to_string(first + static_cast<int>(i)));
      CHECK(jobs[i].submit.seconds() == 10.0 * static_cast<double>(i));  // rebased, load scale 1, no shift
      CHECK(jobs[i].duration_s == first + static_cast<double>(i) + 1.0);
    }
  }
  CHECK(test_windows == std::set<int>{8, 9});  // the last two windows; training never sees them

  w.trace->windows->use = WindowSplit::kTrain;
  std::set<int> train_windows;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) train_windows.insert(first_index(run_jobs(w, seed)) / 10);
  CHECK(train_windows == std::set<int>{0, 1, 2, 3, 4, 5});
  w.trace->windows->use = WindowSplit::kValidation;
  std::set<int> validation_windows;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) validation_windows.insert(first_index(run_jobs(w, seed)) / 10);
  CHECK(validation_windows == std::set<int>{6, 7});

  // The same seed gives the same window; the trace is read once and shared by copies.
  const WorkloadConfig copy = w;
  CHECK(first_index(run_jobs(copy, 7)) == first_index(run_jobs(w, 7)));
  CHECK(copy.trace->window_cache == w.trace->window_cache);
}

TEST_CASE("Trace windows: load scale divides the inter-arrival times, time shift offsets them, within the ranges", "[traces][windows]") {
  TempDir dir;
  const WorkloadConfig w = parse(dir, "{jobs: 10, split: {train: 0.5, validation: 0.0}, use: train, load_scale: [2, 4], time_shift_s: 3600}");
  std::set<double> scales;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const std::vector<JobSpec> jobs = run_jobs(w, seed);
    CHECK(first_index(jobs) < 50);  // train: the first 5 of 10 windows
    const double shift_s = jobs[0].submit.seconds();
    CHECK(shift_s >= 0.0);
    CHECK(shift_s <= 3600.0);
    const double gap_s = jobs[9].submit.seconds() - shift_s;  // 90 s in the trace
    const double scale = 90.0 / gap_s;
    CHECK(scale >= 2.0 - 1e-6);
    CHECK(scale <= 4.0 + 1e-6);
    scales.insert(scale);
    for (std::size_t i = 1; i < jobs.size(); ++i) CHECK(jobs[i].submit >= jobs[i - 1].submit);
  }
  CHECK(scales.size() > 10u);  // drawn per seed
  // The resolved config writes what was read.
  const YAML::Node y = w.to_yaml()["trace"]["windows"];
  CHECK(y["jobs"].as<int>() == 10);
  CHECK(y["use"].as<std::string>() == "train");
  CHECK(y["load_scale"][1].as<double>() == 4.0);
  CHECK(y["time_shift_s"].as<double>() == 3600.0);
}

TEST_CASE("Trace windows: bad keys and splits without a window are refused with the numbers", "[traces][windows][errors]") {
  TempDir dir;
  CHECK_THROWS_WITH(parse(dir, "{size: 10}"), Catch::Contains("workload.trace.windows") && Catch::Contains("size"));
  CHECK_THROWS_WITH(parse(dir, "{split: {train: 0.5}}"), Catch::Contains("needs 'jobs': the number of jobs per window"));
  CHECK_THROWS_WITH(parse(dir, "{jobs: 10, split: {train: 0.8, validation: 0.3}}"), Catch::Contains("train + validation must be at most 1"));
  CHECK_THROWS_WITH(parse(dir, "{jobs: 10, load_scale: [3, 2]}"), Catch::Contains("the range [min, max] needs min <= max"));
  CHECK_THROWS_WITH(parse(dir, "{jobs: 10, use: holdout}"), Catch::Contains("holdout"));
  // 100 jobs in windows of 40: 2 windows; 0.6 of them trains (1), 0.2 validates (0).
  const WorkloadConfig w = parse(dir, "{jobs: 40}");
  CHECK_THROWS_WITH(run_jobs(w, 1), Catch::Contains("workload.trace.windows: the validation split (share 0.2) gets no whole window: the trace has 100 jobs, "
                                                    "2 windows of 40 jobs (train 1, validation 0, test 1)"));
}

namespace {
// A second trace: 50 jobs "k0".."k49", one every 5 s, each 7 s on 1 GPU.
std::string fifty_jobs() {
  std::ostringstream t;
  t << "job_id,submit_time_s,num_gpus,duration_s\n";
  for (int k = 0; k < 50; ++k) t << "k" << k << "," << 5 * k << ",1,7\n";
  return t.str();
}
}  // namespace

TEST_CASE("Trace windows: more_traces cuts every file by the same rule and a run draws among all their windows", "[traces][windows]") {
  TempDir dir;
  dir.write("more.csv", fifty_jobs());
  // jobs.csv: 10 windows of 10 (train 6, validation 2, test 2); more.csv: 5 (3, 1, 1).
  WorkloadConfig w = parse(dir, "{jobs: 10, more_traces: [more.csv]}");
  auto key = [](const std::vector<JobSpec>& jobs) { return jobs.front().id.substr(0, 1) + std::to_string(std::stoi(jobs.front().id.substr(1)) / 10); };
  auto windows_of = [&](WindowSplit split) {
    w.trace->windows->use = split;
    std::set<std::string> seen;
    for (std::uint64_t seed = 1; seed <= 200; ++seed) seen.insert(key(run_jobs(w, seed)));
    return seen;
  };
  CHECK(windows_of(WindowSplit::kTest) == std::set<std::string>{"j8", "j9", "k4"});
  CHECK(windows_of(WindowSplit::kValidation) == std::set<std::string>{"j6", "j7", "k3"});
  CHECK(windows_of(WindowSplit::kTrain) == std::set<std::string>{"j0", "j1", "j2", "j3", "j4", "j5", "k0", "k1", "k2"});
  // The run's description names the file its window comes from.
  w.trace->windows->use = WindowSplit::kTest;
  std::set<std::string> described;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    std::vector<std::string> warnings;
    described.insert(w.make_source(seed, warnings)->describe());
  }
  CHECK(described == std::set<std::string>{"jobs.csv (test window 12 of 15)", "jobs.csv (test window 13 of 15)",
                                           "more.csv (test window 14 of 15)"});
  const YAML::Node y = w.to_yaml()["trace"]["windows"];
  CHECK(y["more_traces"][0].as<std::string>() == "more.csv");
  // A split that no file fills names every file's jobs.
  const WorkloadConfig big = parse(dir, "{jobs: 40, more_traces: [more.csv]}");
  CHECK_THROWS_WITH(run_jobs(big, 1), Catch::Contains("workload.trace.windows: the validation split (share 0.2) gets no whole window: the 2 traces have 150 jobs, "
                                                      "3 windows of 40 jobs (train 1, validation 0, test 2)"));
}

TEST_CASE("Trace windows: episode_jobs and start_jobs replay a seeded part of the window, never past its end", "[traces][windows]") {
  TempDir dir;
  const WorkloadConfig w = parse(dir, "{jobs: 10, split: {train: 1.0, validation: 0.0}, use: train, episode_jobs: [3, 6], start_jobs: [0, 4]}");
  std::set<std::size_t> lengths;
  std::set<int> starts;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const std::vector<JobSpec> jobs = run_jobs(w, seed);
    REQUIRE(jobs.size() >= 3u);
    REQUIRE(jobs.size() <= 6u);
    lengths.insert(jobs.size());
    const int first = first_index(jobs);
    const int offset = first % 10;
    starts.insert(offset);
    CHECK(offset + static_cast<int>(jobs.size()) <= 10);  // inside its window
    CHECK(jobs.front().submit.seconds() == 0.0);           // rebased at the first replayed job
    CHECK(jobs.back().submit.seconds() == 10.0 * static_cast<double>(jobs.size() - 1));
  }
  CHECK(lengths == std::set<std::size_t>{3, 4, 5, 6});
  CHECK(starts == std::set<int>{0, 1, 2, 3, 4});
  // Fixed values draw nothing: episode_jobs 4 from offset 2 of the drawn window.
  const WorkloadConfig fixed = parse(dir, "{jobs: 10, use: train, episode_jobs: 4, start_jobs: 2}");
  const std::vector<JobSpec> jobs = run_jobs(fixed, 5);
  REQUIRE(jobs.size() == 4u);
  CHECK(first_index(jobs) % 10 == 2);
  CHECK(first_index(jobs) / 10 == first_index(run_jobs(parse(dir, "{jobs: 10, use: train}"), 5)) / 10);  // the same window as without
  const YAML::Node y = w.to_yaml()["trace"]["windows"];
  CHECK(y["episode_jobs"][0].as<int>() == 3);
  CHECK(y["start_jobs"][1].as<int>() == 4);
  CHECK_FALSE(parse(dir, "{jobs: 10}").to_yaml()["trace"]["windows"]["episode_jobs"].IsDefined());  // older resolved configs unchanged
}

TEST_CASE("Trace windows: bad episode_jobs, start_jobs and more_traces are refused naming the key", "[traces][windows][errors]") {
  TempDir dir;
  CHECK_THROWS_WITH(parse(dir, "{jobs: 10, episode_jobs: 11}"),
                    Catch::Contains("workload.trace.windows.episode_jobs") && Catch::Contains("must be at most jobs (10): a run replays part of one window, got 11"));
  CHECK_THROWS_WITH(parse(dir, "{jobs: 10, episode_jobs: [0, 5]}"), Catch::Contains("must be a number of jobs >= 1, got 0"));
  CHECK_THROWS_WITH(parse(dir, "{jobs: 10, episode_jobs: [6, 5]}"), Catch::Contains("the range [min, max] needs min <= max"));
  CHECK_THROWS_WITH(parse(dir, "{jobs: 10, episode_jobs: 6, start_jobs: [0, 5]}"),
                    Catch::Contains("workload.trace.windows.start_jobs") &&
                        Catch::Contains("start_jobs max (5) + episode_jobs max (6) must be at most jobs (10), so that a run stays inside its window"));
  CHECK_THROWS_WITH(parse(dir, "{jobs: 10, start_jobs: -1}"), Catch::Contains("must be a number of jobs >= 0, got -1"));
  CHECK_THROWS_WITH(parse(dir, "{jobs: 10, more_traces: []}"), Catch::Contains("must be a non-empty list of trace files"));
}

TEST_CASE("Trace windows: runs built in parallel read the trace once and agree with serial runs", "[traces][windows]") {
  TempDir dir;
  const WorkloadConfig w = parse(dir, "{jobs: 10, split: {train: 1.0, validation: 0.0}, use: train}");
  std::vector<int> parallel(8, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) threads.emplace_back([&, t] { parallel[static_cast<std::size_t>(t)] = first_index(run_jobs(w, static_cast<std::uint64_t>(t + 1))); });
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 8; ++t) CHECK(parallel[static_cast<std::size_t>(t)] == first_index(run_jobs(w, static_cast<std::uint64_t>(t + 1))));
}

}  // namespace schedsim

namespace schedsim {
using test::TempDir;

TEST_CASE("Trace windows: offered_load scales each run's arrivals to the drawn load on the scenario's cluster", "[traces][windows]") {
  TempDir dir;
  // Job k runs k+1 s on 1 GPU, one every 10 s: window 0 (jobs 0..9) demands 55 GPU-s over
  // a 90 s span, so on 4 devices its load at the trace's own rate is 55 / 360.
  dir.write("jobs.csv", hundred_jobs());
  const std::string path = dir.write("s.yaml",
                                     "cluster: {nodes: [{count: 1, type: V100, devices_per_node: 4}]}\n"
                                     "workload: {trace: {path: jobs.csv, windows: {jobs: 10, split: {train: 1.0, validation: 0.0}, use: train, offered_load: [0.5, 2]}}}\n");
  const ScenarioConfig s = load_scenario(path, {}, std::nullopt, builtin_policies());
  REQUIRE(s.workload.trace->windows->cluster_devices == 4);
  std::set<double> loads;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const std::vector<JobSpec> jobs = run_jobs(s.workload, seed);
    REQUIRE(jobs.size() == 10u);
    double gpu_s = 0.0;
    for (const JobSpec& j : jobs) gpu_s += j.num_gpus * j.duration_s;
    const double span_s = jobs.back().submit.seconds() - jobs.front().submit.seconds();
    const double load = gpu_s / (4.0 * span_s);
    CHECK(load >= 0.5 - 1e-3);  // submit times are whole microseconds
    CHECK(load <= 2.0 + 1e-3);
    loads.insert(std::round(load * 1000) / 1000);
    // The arrival pattern keeps its shape: equal gaps stay equal.
    for (std::size_t i = 1; i < jobs.size(); ++i) CHECK(jobs[i].submit.seconds() - jobs[i - 1].submit.seconds() == Approx(span_s / 9).margin(1e-5));
  }
  CHECK(loads.size() > 20u);  // drawn per seed
  // A fixed load: every window at exactly that load, whatever its own (windows differ 10x here).
  const ScenarioConfig fixed = load_scenario(path, {"workload.trace.windows.offered_load=1.5"}, std::nullopt, builtin_policies());
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const std::vector<JobSpec> jobs = run_jobs(fixed.workload, seed);
    double gpu_s = 0.0;
    for (const JobSpec& j : jobs) gpu_s += j.duration_s;
    CHECK(gpu_s / (4.0 * (jobs.back().submit.seconds() - jobs.front().submit.seconds())) == Approx(1.5).epsilon(1e-6));
  }
  CHECK(fixed.workload.to_yaml()["trace"]["windows"]["offered_load"].as<double>() == 1.5);
  CHECK_FALSE(parse(dir, "{jobs: 10}").to_yaml()["trace"]["windows"]["offered_load"].IsDefined());  // older resolved configs unchanged
  // Errors name the key.
  CHECK_THROWS_WITH(parse(dir, "{jobs: 10, offered_load: 1, load_scale: 2}"),
                    Catch::Contains("workload.trace.windows.offered_load") && Catch::Contains("and load_scale both set the arrival rate; keep one"));
  CHECK_THROWS_WITH(parse(dir, "{jobs: 10, offered_load: [2, 1]}"), Catch::Contains("the range [min, max] needs min <= max"));
  CHECK_THROWS_WITH(parse(dir, "{jobs: 10, offered_load: 0}"), Catch::Contains("workload.trace.windows.offered_load"));
}

}  // namespace schedsim
