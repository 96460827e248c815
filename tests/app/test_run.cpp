#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <sstream>
#include <cmath>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "app/compare.hpp"
#include "sim/interrupt.hpp"
#include "run/job_columns.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "test_support.hpp"
#include "world/energy/energy.hpp"
#include "world/market/market_meter.hpp"

using namespace schedsim;
using schedsim::test::read_file;
using schedsim::test::TempDir;

namespace {

const std::string kScenario = R"(
seed: 42
cluster:
  nodes:
    - {count: 4, type: V100, devices_per_node: 8}
workload:
  synthetic:
    num_jobs: 1000
    arrival: {process: poisson, mean_interarrival_s: 60}
    duration_s: {dist: exponential, mean: 3600}
    gpus: {1: 0.7, 2: 0.1, 4: 0.1, 8: 0.1}
information: oracle
policy: sjf
)";

ScenarioConfig load(const TempDir& dir, const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return load_scenario(dir.write("scenario.yaml", yaml), overrides, std::nullopt, builtin_policies());
}

}  // namespace

TEST_CASE("the documented example config runs and writes results.json and jobs.csv", "[experiments][run]") {
  TempDir dir;
  const ScenarioConfig s = load(dir, kScenario);
  const RunResult r = run_scenario(s, builtin_policies(), RunOptions{dir.path("out")});
  CHECK(dir.files() == std::vector<std::string>{"out/jobs.csv", "out/results.json", "scenario.yaml"});
  const auto j = nlohmann::json::parse(read_file(dir.path("out/results.json")));
  CHECK(j["seed"] == 42);
  CHECK(j["policy"] == "sjf");
  for (const char* key : {"jobs_completed", "mean_jct_s", "median_jct_s", "p95_jct_s", "p99_jct_s", "mean_queue_delay_s", "makespan_s",
                          "gpu_utilization", "mean_bounded_slowdown"}) {
    INFO(key);
    CHECK(j["summary"].contains(key));
  }
  CHECK(j["summary"]["jobs_completed"] == 1000);
  CHECK(j["config"]["policy"]["by"] == "auto");                       // defaults resolved
  CHECK(j["config"]["workload"]["synthetic"]["start_s"] == 0);
  CHECK(j["schedsim_version"] == SCHEDSIM_VERSION);
  // jobs.csv: header + one row per job; the summary agrees with the rows.
  const std::string csv = read_file(dir.path("out/jobs.csv"));
  CHECK(csv.rfind("job_id,submit_s,start_s,end_s,num_gpus,jct_s,queue_delay_s,status,gpu_s,checkpoint_gpu_s,preemptions,moves,"
                  "loss_spike_restarts,failure_restarts,periodic_checkpoint_gpu_s,restart_gpu_s,lost_gpu_s,energy_kwh,cost_usd,co2_kg\n", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1001);
  std::istringstream rows(csv);
  std::string line;
  std::getline(rows, line);
  double sum_jct = 0, gpu_s = 0, first_submit = 1e300, last_end = 0;
  while (std::getline(rows, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    REQUIRE(f.size() == 19);  // 20 columns; without `energy:` the last three are empty (getline drops the final one)
    CHECK(f[17].empty());
    CHECK(std::stod(f[8]) == Approx(std::stod(f[4]) * (std::stod(f[3]) - std::stod(f[2]))).margin(1e-5));
    CHECK(f[7] == "completed");
    const double submit = std::stod(f[1]), start = std::stod(f[2]), end = std::stod(f[3]);
    CHECK(std::stod(f[5]) == Approx(end - submit).margin(1e-6));
    CHECK(std::stod(f[6]) == Approx(start - submit).margin(1e-6));
    sum_jct += end - submit;
    gpu_s += std::stod(f[4]) * (end - start);
    first_submit = std::min(first_submit, submit);
    last_end = std::max(last_end, end);
  }
  CHECK(j["summary"]["mean_jct_s"].get<double>() == Approx(sum_jct / 1000).epsilon(1e-9));
  CHECK(j["summary"]["makespan_s"].get<double>() == Approx(last_end - first_submit).epsilon(1e-12));
  CHECK(j["summary"]["gpu_utilization"].get<double>() == Approx(gpu_s / (32 * (last_end - first_submit))).epsilon(1e-9));
  CHECK(r.summary.jobs_completed == 1000);
}

TEST_CASE("same config and seed give byte-identical outputs, another seed differs", "[experiments][determinism]") {
  TempDir dir;
  const PolicyRegistry reg = builtin_policies();
  for (const std::string policy : {"fifo", "sjf"}) {
    const ScenarioConfig s = load(dir, kScenario, {"policy=" + policy});
    run_scenario(s, reg, RunOptions{dir.path("a")});
    run_scenario(s, reg, RunOptions{dir.path("b")});
    const ScenarioConfig other = load_scenario(dir.path("scenario.yaml"), {"policy=" + policy}, 43, reg);
    run_scenario(other, reg, RunOptions{dir.path("c")});
    INFO(policy);
    CHECK(read_file(dir.path("a/results.json")) == read_file(dir.path("b/results.json")));
    CHECK(read_file(dir.path("a/jobs.csv")) == read_file(dir.path("b/jobs.csv")));
    CHECK(read_file(dir.path("a/jobs.csv")) != read_file(dir.path("c/jobs.csv")));
    CHECK(read_file(dir.path("a/results.json")) != read_file(dir.path("c/results.json")));
    CHECK(read_file(dir.path("c/results.json")).find("\"seed\": 43") != std::string::npos);
  }
}

TEST_CASE("the resolved config in results.json reproduces the run", "[experiments][determinism]") {
  TempDir dir;
  const PolicyRegistry reg = builtin_policies();
  run_scenario(load(dir, kScenario), reg, RunOptions{dir.path("first")});
  const auto j = nlohmann::json::parse(read_file(dir.path("first/results.json")));
  // JSON is YAML: feed the resolved config back in as a scenario.
  const ScenarioConfig again = load_scenario(dir.write("resolved.yaml", j["config"].dump()), {}, std::nullopt, reg);
  run_scenario(again, reg, RunOptions{dir.path("second")});
  CHECK(read_file(dir.path("first/results.json")) == read_file(dir.path("second/results.json")));
  CHECK(read_file(dir.path("first/jobs.csv")) == read_file(dir.path("second/jobs.csv")));
}

TEST_CASE("SJF beats FIFO on the default scenario, and compare writes its table", "[experiments][compare]") {
  TempDir dir;
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig s = load_scenario("", {}, std::nullopt, reg);
  CHECK(s.name == "default");
  const auto runs = compare_policies(s, reg, {"fifo", "sjf"}, RunOptions{dir.path("cmp")});
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].policy_name == "fifo");
  CHECK(runs[1].policy_name == "sjf");
  CHECK(*runs[1].summary.mean_jct_s < *runs[0].summary.mean_jct_s);
  CHECK(*runs[1].summary.mean_bounded_slowdown < *runs[0].summary.mean_bounded_slowdown);
  CHECK(dir.files() == std::vector<std::string>{"cmp/comparison.csv", "cmp/comparison.md", "cmp/fifo/jobs.csv", "cmp/fifo/results.json", "cmp/jct_cdf.svg",
                                                "cmp/sjf/jobs.csv", "cmp/sjf/results.json"});
  const std::string table = read_file(dir.path("cmp/comparison.csv"));
  CHECK(std::count(table.begin(), table.end(), '\n') == 3);
  CHECK(table.find("\nfifo,2000,") != std::string::npos);
  // A label with commas is one quoted CSV field.
  RunResult labelled = runs[0];
  labelled.policy_name = "compose(order=las,placement=packed)";
  const std::string csv = comparison_csv({labelled});
  CHECK(csv.find("\n\"compose(order=las,placement=packed)\",2000,") != std::string::npos);
}

namespace {

// 32 V100s, lognormal durations (mean 1800 x e^0.5 s), mean job size 2.1 GPUs.
const std::string kLoadScenario = R"(
seed: 7
cluster:
  nodes:
    - {count: 4, type: V100, devices_per_node: 8}
workload:
  synthetic:
    num_jobs: 20000
    load: 0.5
    duration_s: {dist: lognormal, median: 1800, sigma: 1.0}
    gpus: {1: 0.7, 2: 0.1, 4: 0.1, 8: 0.1}
policy: fifo
)";

}  // namespace

TEST_CASE("workload.synthetic.load sets the arrival rate from the cluster size and the job sizes", "[experiments][offered-load]") {
  TempDir dir;
  const double mean_gpus = 0.7 * 1 + 0.1 * 2 + 0.1 * 4 + 0.1 * 8;
  const double mean_duration_s = 1800 * std::exp(0.5);
  const ScenarioConfig s = load(dir, kLoadScenario);
  CHECK(s.workload.synthetic->mean_interarrival_s == Approx(mean_gpus * mean_duration_s / (0.5 * 32)).epsilon(1e-12));
  // The realised offered load of a long run: GPU-seconds asked / (devices x arrival span).
  const RunResult r = run_scenario(s, builtin_policies(), RunOptions{dir.path("out")});
  REQUIRE(r.summary.jobs_completed == 20000);
  std::istringstream jobs(read_file(dir.path("out/jobs.csv")));
  std::string line;
  std::getline(jobs, line);
  REQUIRE(line.rfind("job_id,submit_s,start_s,end_s,num_gpus,jct_s,queue_delay_s,status,gpu_s,", 0) == 0);
  double gpu_s = 0, last_submit_s = 0;
  while (std::getline(jobs, line)) {
    std::vector<std::string> f;
    std::istringstream l(line);
    for (std::string cell; std::getline(l, cell, ',');) f.push_back(cell);
    last_submit_s = std::max(last_submit_s, std::stod(f[1]));
    gpu_s += std::stod(f[8]);
  }
  const double realised = gpu_s / (32 * last_submit_s);
  INFO("realised offered load " << realised);
  CHECK(realised == Approx(0.5).epsilon(0.03));

  // A bursty process keeps its shape: its long-run gap is what the load asks for.
  const ScenarioConfig b = load(dir, kLoadScenario, {"workload.synthetic.arrival={process: bursty, burst_factor: 4, mean_calm_s: 3600, mean_burst_s: 600}"});
  CHECK(b.workload.synthetic->long_run_interarrival_s() == Approx(mean_gpus * mean_duration_s / (0.5 * 32)).epsilon(1e-12));
  // The resolved config records the derived gap, so that it reruns as written.
  CHECK(s.to_yaml(YAML::Node("fifo"))["workload"]["synthetic"]["arrival"]["mean_interarrival_s"].as<double>() == Approx(s.workload.synthetic->mean_interarrival_s));
}

TEST_CASE("workload.synthetic.load with an explicit gap, or without a finite mean duration, is an error", "[experiments][offered-load][bad_input]") {
  TempDir dir;
  const std::string path = dir.path("scenario.yaml");
  std::string both = kLoadScenario;
  both.replace(both.find("    load: 0.5\n"), 14, "    load: 0.5\n    arrival: {process: poisson, mean_interarrival_s: 60}\n");
  CHECK_THROWS_WITH(load(dir, both), path + ":9: workload.synthetic.load: sets the arrival rate, so it cannot be given with arrival.mean_interarrival_s; remove one of them");
  CHECK_THROWS_WITH(load(dir, kLoadScenario, {"workload.synthetic.arrival={process: fixed, interarrival_s: 60}"}),
                    path + ":9: workload.synthetic.load: sets the arrival rate, so it cannot be given with arrival.interarrival_s; remove one of them");
  CHECK_THROWS_WITH(load(dir, kLoadScenario, {"workload.synthetic.duration_s={dist: pareto, scale: 60, shape: 1}"}),
                    path + ":9: workload.synthetic.load: needs a duration distribution with a finite mean (pareto needs shape > 1)");
  CHECK_THROWS_WITH(load(dir, kLoadScenario, {"workload.synthetic.load=0"}), "--set workload.synthetic.load=0: must be > 0, got '0'");
}

TEST_CASE("a shipped config using $SCHEDSIM_DATA loads from the folder SCHEDSIM_DATA names", "[experiments][data-dir][shared-data]") {
  const std::string data = schedsim::test::shared_data_dir();
  if (data.empty()) {
    WARN("skipped: ../shared/data is absent (set SCHEDSIM_DATA to its path to run this test)");
    return;
  }
  // A data folder elsewhere, holding only the two files the scenario reads.
  TempDir moved;
  for (const std::string f : {"carbon/DE-LU_2023_hourly.csv", "prices/DE-LU_electricity_prices_2023.csv"}) {
    std::filesystem::create_directories(std::filesystem::path(moved.path(f)).parent_path());
    std::filesystem::copy_file(data + "/" + f, moved.path(f));
  }
  const char* old = std::getenv("SCHEDSIM_DATA");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  ::setenv("SCHEDSIM_DATA", moved.path().c_str(), 1);
  const PolicyRegistry reg = builtin_policies();
  const std::string cfg = std::string(SCHEDSIM_SOURCE_DIR) + "/experiments/configs/carbon_de_lu.yaml";
  const ScenarioConfig s = load_scenario(cfg, {"workload.synthetic.num_jobs=20"}, std::nullopt, reg);
  CHECK(s.signals.has_value());
  ::setenv("SCHEDSIM_DATA", (moved.path() + "/nowhere").c_str(), 1);
  CHECK_THROWS_WITH(load_scenario(cfg, {}, std::nullopt, reg),
                    cfg + ":23: signals.price.file: $SCHEDSIM_DATA/prices/DE-LU_electricity_prices_2023.csv: the data folder " + moved.path() +
                        "/nowhere (from SCHEDSIM_DATA or --data-dir) does not exist or is not a folder");
  saved ? ::setenv("SCHEDSIM_DATA", saved->c_str(), 1) : ::unsetenv("SCHEDSIM_DATA");
}

TEST_CASE("replaying ITP cluster10 on 64 GPUs completes all 260 jobs", "[experiments][shared-data]") {
  const std::string data = schedsim::test::shared_data_dir();
  if (data.empty()) {
    WARN("skipped: ../shared/data is absent (set SCHEDSIM_SHARED_DATA to its path to run this test)");
    return;
  }
  TempDir dir;
  const PolicyRegistry reg = builtin_policies();
  for (const std::string policy : {"fifo", "sjf"}) {
    const std::string yaml = "cluster: {nodes: [{count: 8, type: V100, devices_per_node: 8}]}\n"
                             "workload: {trace: {path: " + data + "/itp/cluster10.csv, format: itp}}\ninformation: oracle\npolicy: " + policy + "\n";
    const RunResult r = run_scenario(load(dir, yaml), reg, RunOptions{dir.path(policy)});
    INFO(policy);
    CHECK(r.summary.jobs_arrived == 260);
    CHECK(r.summary.jobs_completed == 260);
    CHECK(r.warnings.empty());
    CHECK(*r.summary.gpu_utilization > 0.0);
    CHECK(*r.summary.gpu_utilization <= 1.0);
  }
}

// ---- What an output folder holds after each outcome (docs/reliability.md, issue 22) ----

namespace {

const std::string kTraceScenario = R"(
seed: 1
cluster:
  nodes:
    - {count: 1, type: V100, devices_per_node: 8}
workload: {trace: t.csv}
policy: fifo
)";

std::string trace_rows(int n, bool bad_last) {
  std::string s = "job_id,submit_time_s,num_gpus,duration_s\n";
  for (int i = 0; i < n; ++i) s += "j" + std::to_string(i) + "," + std::to_string(i) + ",1,10\n";
  if (bad_last) s += "bad,1,1,-5\n";
  return s;
}

// A process id that is no longer in use (a child that has exited and been reaped).
long dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("a rerun that fails leaves no results of the previous run in its folder", "[experiments][run][out-folder]") {
  TempDir dir;
  const PolicyRegistry reg = builtin_policies();
  const std::string out = dir.path("out");
  dir.write("t.csv", trace_rows(20, false));
  RunOptions options{out};
  options.timeline = true;
  run_scenario(load(dir, kTraceScenario), reg, options);
  CHECK(files_in(out) == std::vector<std::string>{"allocations.csv", "jobs.csv", "results.json", "timeline.csv"});
  dir.write("t.csv", trace_rows(20, true));  // the same run, now with a bad row at the end
  CHECK_THROWS_WITH(run_scenario(load(dir, kTraceScenario), reg, options), dir.path("t.csv") + ":22: duration_s: must be > 0 seconds, got '-5'");
  CHECK(files_in(out).empty());  // before: the previous run's complete-looking results stayed
  dir.write("t.csv", trace_rows(20, false));
  run_scenario(load(dir, kTraceScenario), reg, RunOptions{out});
  CHECK(files_in(out) == std::vector<std::string>{"jobs.csv", "results.json"});  // no timeline of the older run either
}

TEST_CASE("a run that fails removes the output folder it created while it is empty, and no other", "[experiments][run][out-folder]") {
  TempDir dir;
  const PolicyRegistry reg = builtin_policies();
  // A job larger than the cluster stops the run when it is pulled, after the folder was made.
  dir.write("t.csv", trace_rows(20, false) + "big,50,16,10\n");
  const std::string error = dir.path("t.csv") + ":22: job 'big': asks for 16 GPUs but the cluster has 8 in total; enlarge the cluster or set workload.oversized: drop to skip such jobs";
  SECTION("a folder the run created goes, with the parents it created") {
    CHECK_THROWS_WITH(run_scenario(load(dir, kTraceScenario), reg, RunOptions{dir.path("new/out")}), error);
    CHECK_FALSE(std::filesystem::exists(dir.path("new")));  // before: new/out/ stayed, empty
    CHECK(std::filesystem::exists(dir.path("t.csv")));
  }
  SECTION("a folder that existed stays") {
    std::filesystem::create_directories(dir.path("old/out"));
    CHECK_THROWS_WITH(run_scenario(load(dir, kTraceScenario), reg, RunOptions{dir.path("old/out")}), error);
    CHECK(files_in(dir.path("old/out")).empty());
    CHECK_THROWS_WITH(run_scenario(load(dir, kTraceScenario), reg, RunOptions{dir.path("old/a/b")}), error);
    CHECK(files_in(dir.path("old")) == std::vector<std::string>{"out"});  // only a/ and a/b/ were the run's
  }
  SECTION("a folder the run created that holds a file stays") {
    RunOptions options{dir.path("snap")};
    options.snapshot.every = Tick::from_seconds(5);  // snapshot.bin is written before the job at t = 50
    CHECK_THROWS_WITH(run_scenario(load(dir, kTraceScenario), reg, options), error);
    CHECK(files_in(dir.path("snap")) == std::vector<std::string>{"snapshot.bin"});
  }
}

TEST_CASE("rows of runs that never finished go with the next run, but a live process's and a snapshot's stay", "[experiments][run][out-folder]") {
  TempDir dir;
  const PolicyRegistry reg = builtin_policies();
  const std::string out = dir.path("out");
  std::filesystem::create_directories(out);
  const std::string dead = std::to_string(dead_pid());
  const auto leave = [&] {
    for (const std::string& f : std::vector<std::string>{"jobs.csv.partial-" + dead, "results.json.partial-" + dead, "jobs.csv.interrupted", "jobs.csv.partial-1", "notes.txt"}) {
      dir.write("out/" + f, "x");
    }
  };
  dir.write("t.csv", trace_rows(20, false));
  SECTION("a finished run removes them") {
    leave();
    run_scenario(load(dir, kTraceScenario), reg, RunOptions{out});
    // pid 1 is alive: its file may be another run's, writing now.
    CHECK(files_in(out) == std::vector<std::string>{"jobs.csv", "jobs.csv.partial-1", "notes.txt", "results.json"});
  }
  SECTION("a failed run removes them too") {
    leave();
    dir.write("t.csv", trace_rows(20, true));
    CHECK_THROWS(run_scenario(load(dir, kTraceScenario), reg, RunOptions{out}));
    CHECK(files_in(out) == std::vector<std::string>{"jobs.csv.partial-1", "notes.txt"});
  }
  SECTION("next to a snapshot, a failed run keeps the rows it continues") {
    leave();
    dir.write("out/snapshot.bin", "x");
    dir.write("t.csv", trace_rows(20, true));
    CHECK_THROWS(run_scenario(load(dir, kTraceScenario), reg, RunOptions{out}));
    std::vector<std::string> kept{"jobs.csv.interrupted", "jobs.csv.partial-" + dead, "jobs.csv.partial-1", "notes.txt", "results.json.partial-" + dead, "snapshot.bin"};
    std::sort(kept.begin(), kept.end());
    CHECK(files_in(out) == kept);
  }
}

TEST_CASE("compare removes its previous tables before it runs", "[experiments][compare][out-folder]") {
  TempDir dir;
  const PolicyRegistry reg = builtin_policies();
  for (const char* f : {"cmp/comparison.csv", "cmp/comparison.md", "cmp/jct_cdf.svg", "cmp/fifo/results.json"}) {
    std::filesystem::create_directories(std::filesystem::path(dir.path(f)).parent_path());
    dir.write(f, "an older comparison");
  }
  dir.write("t.csv", trace_rows(5, true));
  CHECK_THROWS(compare_policies(load(dir, kTraceScenario), reg, {"fifo", "sjf"}, RunOptions{dir.path("cmp")}));
  CHECK(files_in(dir.path("cmp")) == std::vector<std::string>{"fifo"});
  CHECK(files_in(dir.path("cmp/fifo")).empty());
}

TEST_CASE("an empty output path is an error", "[experiments][out-folder]") {
  CHECK_THROWS_WITH(check_output_path("", "--out"),
                    "--out: is empty; give an output folder or file (an unset shell variable, as in --out \"$OUT\", gives an empty path)");
  CHECK_NOTHROW(check_output_path("results", "--out"));
}

TEST_CASE("Ctrl-C while a trace is read stops the run before it simulates", "[experiments][interrupt]") {
  TempDir dir;
  const PolicyRegistry reg = builtin_policies();
  dir.write("t.csv", trace_rows(50000, false));
  const ScenarioConfig s = load(dir, kTraceScenario);
  {
    InterruptGuard guard;
    std::raise(SIGINT);  // recorded by the handler, as a Ctrl-C during a long validation pass would be
    try {
      run_scenario(s, reg, RunOptions{dir.path("out")});
      FAIL("not interrupted");
    } catch (const Interrupted& e) {
      CHECK(e.signal() == SIGINT);
      CHECK(std::string(e.what()) == "interrupted by SIGINT (Ctrl-C) while reading the trace " + dir.path("t.csv") +
                                         "; nothing was simulated and no results were written");
    }
  }
  { InterruptGuard reset; }  // clears the recorded signal for the tests that follow
  CHECK_FALSE(std::filesystem::exists(dir.path("out")));
}

TEST_CASE("RunOptions::job_columns holds the jobs.csv records of the same run, constant columns once", "[experiments][run][job-columns]") {
  TempDir dir;
  const ScenarioConfig s = load(dir, kScenario, {"policy=tiresias"});
  std::ostringstream csv;
  JobColumns columns;
  RunOptions options;
  options.jobs_csv = &csv;
  options.job_columns = &columns;
  run_scenario(s, builtin_policies(), options);
  std::istringstream lines(csv.str());
  std::string line;
  std::getline(lines, line);  // the header
  std::size_t row = 0;
  const auto& preemptions = columns.preemptions.values();
  // What simulate.py computes the float columns from, as it computes them.
  const auto seconds = [](std::int64_t us) { return static_cast<double>(us) / 1e6; };
  const auto read = [](const std::string& cell) { return std::strtod(cell.c_str(), nullptr); };  // the double a reader of the file gets
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::stringstream cells(line);
    for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
    REQUIRE(row < columns.rows());
    INFO("row " << row << ": " << line);
    CHECK(columns.job_id.at(row) == f[0]);
    CHECK(seconds(columns.submit_us.at(row)) == read(f[1]));
    CHECK(seconds(columns.start_us.at(row)) == read(f[2]));
    CHECK(seconds(columns.end_us.at(row)) == read(f[3]));
    CHECK(columns.num_gpus.at(row) == std::stoi(f[4]));
    CHECK(seconds(columns.end_us.at(row) - columns.submit_us.at(row)) == read(f[5]));
    CHECK(seconds(columns.end_us.at(row) - columns.submit_us.at(row) - columns.held_at(row)) == read(f[6]));
    const std::int64_t device_us = columns.device_us.derived() ? columns.num_gpus.at(row) * columns.held_at(row) : columns.device_us.values()[row];
    CHECK(seconds(device_us) == read(f[8]));
    CHECK(preemptions[row] == std::stoul(f[10]));
    ++row;
  }
  CHECK(row == columns.rows());
  CHECK(row == 1000);
  CHECK(columns.job_id.numbered());  // the synthetic ids "0", "1", ...: 4 bytes a row
  CHECK(columns.job_id.prefix().empty());
  CHECK_FALSE(columns.num_gpus.wide());  // 1 to 8 GPUs: a byte a row
  CHECK_FALSE(columns.preemptions.constant());  // tiresias preempts here
  // A preempted job held its devices for less than end - start: held time is stored;
  // device time is still num_gpus x held time (whole GPUs, rigid jobs).
  CHECK_FALSE(columns.held_us.derived());
  CHECK(columns.held_us.values().size() == 1000);
  CHECK(columns.device_us.derived());
  CHECK(columns.device_us.values().empty());
  // No failure model and no energy meter: those columns never left their first value.
  CHECK(columns.failure_restarts.constant());
  CHECK(columns.failure_restarts.first() == 0);
  CHECK(columns.failure_restarts.values().empty());
  CHECK_FALSE(columns.has_energy);
}

TEST_CASE("ConstantRunColumn stores nothing per row until a second value arrives", "[experiments][job-columns]") {
  ConstantRunColumn<double> c;
  c.reserve(10);
  for (int i = 0; i < 4; ++i) c.push(2.5);
  CHECK(c.constant());
  CHECK(c.values().capacity() == 0);
  c.push(3.0);
  CHECK_FALSE(c.constant());
  CHECK(c.values() == std::vector<double>{2.5, 2.5, 2.5, 2.5, 3.0});
  CHECK(c.values().capacity() >= 10);
  CHECK(c.rows() == 5);
  ConstantRunColumn<double> nan;  // empty cells (NaN) count as one value
  nan.push(std::nan(""));
  nan.push(std::nan(""));
  CHECK(nan.constant());
  CHECK(nan.rows() == 2);
}

TEST_CASE("JobIdColumn numbers ids of one prefix and a plain decimal, and falls back to bytes for others", "[experiments][job-columns]") {
  JobIdColumn ids;
  ids.reserve(8);
  for (const char* id : {"job-7", "job-12", "job-0", "job-4294967295"}) ids.push(id);
  CHECK(ids.numbered());
  CHECK(ids.prefix() == "job-");
  CHECK(ids.numbers() == std::vector<std::uint32_t>{7, 12, 0, 4294967295u});
  CHECK(ids.numbers().capacity() >= 8);
  ids.push("job-007");  // a leading zero would not come back from the number: bytes from here on, the earlier rows re-laid
  CHECK_FALSE(ids.numbered());
  CHECK(ids.numbers().empty());
  ids.push("x");
  CHECK(ids.rows() == 6);
  CHECK(ids.width() == 14);
  const std::vector<std::string> all{"job-7", "job-12", "job-0", "job-4294967295", "job-007", "x"};
  for (std::size_t i = 0; i < all.size(); ++i) CHECK(ids.at(i) == all[i]);
  CHECK(ids.ascii());
  // Not numbered: no digits, another prefix, over 2^32 - 1, a leading zero first, empty.
  for (const std::vector<std::string>& run : std::vector<std::vector<std::string>>{
           {"a"}, {"a1", "b2"}, {"4294967296"}, {"01"}, {""}, {"1", "", "2"}}) {
    JobIdColumn c;
    for (const std::string& id : run) c.push(id);
    INFO(run.front());
    CHECK_FALSE(c.numbered());
    for (std::size_t i = 0; i < run.size(); ++i) CHECK(c.at(i) == run[i]);
  }
  JobIdColumn plain;
  for (const char* id : {"0", "1", "10", "3"}) plain.push(id);
  CHECK(plain.numbered());
  CHECK(plain.prefix().empty());
  JobIdColumn utf8;
  utf8.push("j\xc3\xb6" "b-1");
  CHECK(utf8.numbered());
  CHECK(utf8.at(0) == "j\xc3\xb6" "b-1");
}

TEST_CASE("DerivedRunColumn stores nothing while rows equal the formula; SmallIntRunColumn widens past 255", "[experiments][job-columns]") {
  const std::vector<std::int64_t> formula{5, 6, 7, 8};
  DerivedRunColumn c;
  c.reserve(10);
  const auto at = [&](std::size_t i) { return formula[i]; };
  c.push(5, 5, at);
  c.push(6, 6, at);
  CHECK(c.derived());
  CHECK(c.values().capacity() == 0);
  c.push(9, 7, at);  // differs: the earlier rows are filled in by the formula
  CHECK_FALSE(c.derived());
  CHECK(c.values() == std::vector<std::int64_t>{5, 6, 9});
  CHECK(c.values().capacity() >= 10);
  DerivedRunColumn overflowed;  // a formula that cannot be computed counts as differing
  overflowed.push(1, std::nullopt, at);
  CHECK_FALSE(overflowed.derived());
  CHECK(overflowed.values() == std::vector<std::int64_t>{1});

  SmallIntRunColumn gpus;
  gpus.reserve(10);
  for (int v : {8, 8, 1, 255}) gpus.push(v);
  CHECK_FALSE(gpus.wide());
  CHECK(gpus.narrow().values() == std::vector<std::uint8_t>{8, 8, 1, 255});
  gpus.push(256);
  CHECK(gpus.wide());
  CHECK(gpus.narrow().values().empty());
  CHECK(gpus.wide_column().values() == std::vector<std::int32_t>{8, 8, 1, 255, 256});
  CHECK(gpus.at(4) == 256);
  SmallIntRunColumn constant;
  for (int i = 0; i < 3; ++i) constant.push(512);
  CHECK(constant.wide());
  CHECK(constant.wide_column().constant());
  CHECK(constant.at(2) == 512);
}

TEST_CASE("the summary from the columns' samples is the collector's own, bit for bit", "[experiments][run][job-columns][metrics]") {
  // With job_columns the collector keeps no JCT or queue-delay samples and reads them
  // from the columns at the end; every results.json number must stay the same.
  TempDir dir;
  const std::string recorded = kScenario + "failures: {}\n";  // failed and killed jobs end as such and are not in the samples
  for (const std::vector<std::string>& overrides : std::vector<std::vector<std::string>>{
           {"policy=sjf"},
           {"policy=tiresias"},
           {"policy=fifo", "workload.synthetic.recorded_status={completed: 0.8, failed: 0.15, killed: 0.05}"},
           {"policy=tiresias", "workload.synthetic.recorded_status={completed: 0.7, failed: 0.2, killed: 0.1}"}}) {
    INFO(overrides.back());
    const ScenarioConfig s = load(dir, recorded, overrides);
    const RunResult own = run_scenario(s, builtin_policies(), RunOptions{});
    JobColumns columns;
    RunOptions with_columns;
    with_columns.job_columns = &columns;
    const RunResult from_columns = run_scenario(s, builtin_policies(), with_columns);
    CHECK(results_json(from_columns, s.seed).dump(2) == results_json(own, s.seed).dump(2));
    CHECK(from_columns.sorted_jct_s == own.sorted_jct_s);
    CHECK(columns.rows() == 1000);
    if (overrides.size() > 1) CHECK((own.summary.jobs_failed > 0 && own.summary.jobs_killed > 0));
  }
}

TEST_CASE("MetricsCollector::take_samples_from: a source that saw other jobs is an error, not another summary", "[experiments][job-columns][metrics]") {
  struct Short : CompletedJobSamples {
    void jct_s(std::vector<double>& out) const override { out.assign(1, 1.0); }
    void queue_delay_s(std::vector<double>& out) const override { out.assign(1, 0.0); }
  } source;
  MetricsCollector m(4);
  m.take_samples_from(source);
  JobState j;
  j.spec.id = "a";
  j.end = Tick::from_us(2'000'000);
  j.status = JobStatus::kCompleted;
  m.on_job_arrival(j);
  m.on_job_end(j);
  m.on_job_end(j);
  try {
    m.summarize();
    FAIL("no error");
  } catch (const std::logic_error& e) {
    CHECK(std::string(e.what()) == "MetricsCollector: the sample source holds 1 completed jobs, the collector counted 2");
  }
}

TEST_CASE("the run's observers added in any order give byte-identical outputs", "[experiments][run][observer]") {
  // Energy, datacenters, market (booking each job's energy), failures and physics; and a
  // thermal model (PUE per interval): every meter, the jobs.csv writer, the timeline and
  // the invariant checker (which reads the energy meter's totals), each added to the
  // kernel in the listed order (seed 0) and in three shuffled orders.
  const PolicyRegistry reg = builtin_policies();
  const std::string configs = std::string(SCHEDSIM_SOURCE_DIR) + "/experiments/configs/";
  const std::vector<std::pair<std::string, std::vector<std::string>>> scenarios = {
      {configs + "market_two_clouds.yaml", {"workload.synthetic.num_jobs=80"}},
      {configs + "thermal_diurnal.yaml", {"workload.synthetic.num_jobs=80", "policy=sjf"}},
  };
  for (const auto& [path, overrides] : scenarios) {
    INFO(path);
    TempDir dir;
    const ScenarioConfig s = load_scenario(path, overrides, std::nullopt, reg);
    std::vector<std::string> files;
    for (std::uint64_t seed : {0, 1, 2, 3}) {
      RunOptions options{dir.path("out" + std::to_string(seed))};
      options.timeline = true;
      options.check_invariants = true;
      options.observer_order_seed = seed;
      run_scenario(s, reg, options);
      std::string all;
      for (const char* f : {"results.json", "jobs.csv", "timeline.csv", "allocations.csv"}) all += read_file(dir.path("out" + std::to_string(seed) + "/" + f)) + "\n--\n";
      if (std::filesystem::exists(dir.path("out" + std::to_string(seed) + "/ledger.csv"))) all += read_file(dir.path("out" + std::to_string(seed) + "/ledger.csv"));
      files.push_back(all);
    }
    CHECK(files[0].find("\"energy_kwh\"") != std::string::npos);
    for (std::size_t i = 1; i < files.size(); ++i) {
      INFO("order seed " << i);
      CHECK(files[i] == files[0]);
    }
  }
  // The market scenario wrote its ledger and the energy columns are filled in.
  TempDir dir;
  run_scenario(load_scenario(configs + "market_two_clouds.yaml", {"workload.synthetic.num_jobs=5"}, std::nullopt, reg), reg, RunOptions{dir.path("m")});
  CHECK(std::filesystem::exists(dir.path("m/ledger.csv")));
  const std::string csv = read_file(dir.path("m/jobs.csv"));
  CHECK(csv.substr(0, csv.find('\n')) ==
        "job_id,submit_s,start_s,end_s,num_gpus,jct_s,queue_delay_s,status,gpu_s,checkpoint_gpu_s,preemptions,moves,loss_spike_restarts,"
        "failure_restarts,periodic_checkpoint_gpu_s,restart_gpu_s,lost_gpu_s,energy_kwh,cost_usd,co2_kg");
  CHECK(csv.find(",,\n") == std::string::npos);  // cost and emissions are there (both sites have both signals)
}

namespace {
template <typename Record>
std::vector<std::string> field_names(const std::vector<ValueField<Record>>& fields) {
  std::vector<std::string> out;
  for (const auto& f : fields) out.push_back(f.name);
  return out;
}
std::vector<std::string> keys_of(const nlohmann::ordered_json& j) {
  std::vector<std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) out.push_back(it.key());
  return out;
}
std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
}  // namespace

TEST_CASE("results.json's energy and market objects have the meters' field tables' names, in order", "[experiments][run][fields][shared-data]") {
  const PolicyRegistry reg = builtin_policies();
  const std::string configs = std::string(SCHEDSIM_SOURCE_DIR) + "/experiments/configs/";
  {  // market_two_clouds: energy of two datacenters, and the market
    TempDir dir;
    const RunResult r = run_scenario(load_scenario(configs + "market_two_clouds.yaml", {"workload.synthetic.num_jobs=20"}, std::nullopt, reg), reg,
                                     RunOptions{dir.path("m")});
    const auto j = nlohmann::ordered_json::parse(read_file(dir.path("m/results.json")));
    CHECK(keys_of(j["market"]) == concat(field_names(market_fields()), {"by_kind", "by_provider", "by_tenant", "ledger"}));
    CHECK(field_names(market_fields()) ==
          std::vector<std::string>{"device_hours", "compute_usd", "spot_reclamations", "spot_devices_reclaimed", "jobs_hit_by_reclaim"});
    CHECK(keys_of(j["market"]["by_kind"]["spot"]) == field_names(market_use_fields()));
    CHECK(keys_of(j["market"]["by_provider"][0]) == concat({"name"}, field_names(market_use_fields())));
    CHECK(keys_of(j["energy"]) == concat(field_names(energy_fields()), {"jobs", "idle_devices", "by_datacenter"}));
    CHECK(keys_of(j["energy"]["by_datacenter"][1]) == concat({"name"}, field_names(energy_use_fields())));
    REQUIRE(r.market.has_value());
    CHECK(j["market"]["compute_usd"].get<double>() == r.market->total.compute_usd);
    CHECK(j["market"]["spot_reclamations"].is_number_integer());
  }
  const std::string data = schedsim::test::shared_data_dir();
  if (data.empty()) {
    WARN("skipped carbon_de_lu.yaml: ../shared/data is absent (set SCHEDSIM_DATA to its path to run this test)");
    return;
  }
  const char* old = std::getenv("SCHEDSIM_DATA");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  ::setenv("SCHEDSIM_DATA", data.c_str(), 1);
  TempDir dir;
  const RunResult r = run_scenario(load_scenario(configs + "carbon_de_lu.yaml", {"workload.synthetic.num_jobs=20"}, std::nullopt, reg), reg,
                                   RunOptions{dir.path("c")});
  saved ? ::setenv("SCHEDSIM_DATA", saved->c_str(), 1) : ::unsetenv("SCHEDSIM_DATA");
  const auto j = nlohmann::ordered_json::parse(read_file(dir.path("c/results.json")));
  // One datacenter: no by_datacenter; no thermal model: no thermal.
  CHECK(keys_of(j["energy"]) == concat(field_names(energy_fields()), {"jobs", "idle_devices"}));
  CHECK(field_names(energy_fields()) == std::vector<std::string>{"energy_kwh", "cost_usd", "co2_kg", "it_energy_kwh", "metered_s"});
  CHECK(keys_of(j["energy"]["jobs"]) == field_names(energy_use_fields()));
  CHECK(keys_of(j["energy"]["idle_devices"]) == field_names(energy_use_fields()));
  REQUIRE(r.energy.has_value());
  CHECK(j["energy"]["energy_kwh"].get<double>() == r.energy->facility.energy_kwh);
  CHECK(j["energy"]["co2_kg"].get<double>() == *r.energy->facility.co2_kg);
}
