#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "experiments/runner.hpp"
#include "experiments/scenario.hpp"
#include "experiments/sweep.hpp"
#include "sim/error.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::read_file;
using schedsim::test::TempDir;
namespace fs = std::filesystem;

namespace {

const std::string kBase = R"(
seed: 7
cluster:
  nodes:
    - {count: 1, type: V100, devices_per_node: 8}
workload:
  synthetic:
    num_jobs: 30
    arrival: {process: poisson, mean_interarrival_s: 60}
    duration_s: {dist: exponential, mean: 600}
    gpus: {1: 0.6, 2: 0.2, 4: 0.2}
information: oracle
policy: fifo
)";

// 2 values x 2 policies x 3 seeds = 12 runs.
const std::string kGrid = R"(
scenario: base.yaml
parameters:
  workload.synthetic.arrival.mean_interarrival_s: [30, 90]
policies: [fifo, sjf]
seeds: 3
)";

std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    rows.emplace_back();
    std::string cell;
    std::istringstream l(line);
    while (std::getline(l, cell, ',')) rows.back().push_back(cell);
    if (!line.empty() && line.back() == ',') rows.back().push_back("");
  }
  return rows;
}

std::size_t column(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  REQUIRE(it != header.end());
  return static_cast<std::size_t>(it - header.begin());
}

SweepOptions options(const std::string& out, int workers) {
  SweepOptions o;
  o.out_dir = out;
  o.workers = workers;
  o.executable = SCHEDSIM_EXE;
  o.progress = false;
  return o;
}

}  // namespace

TEST_CASE("student t quantiles match closed forms for df 1 and 2", "[experiments][sweep]") {
  const double p = 0.975;
  CHECK(student_t_quantile(p, 1) == Approx(std::tan(M_PI * (p - 0.5))).epsilon(1e-10));          // Cauchy: 12.7062
  CHECK(student_t_quantile(p, 2) == Approx((2 * p - 1) / std::sqrt(2 * p * (1 - p))).epsilon(1e-10));  // 4.30265
  CHECK(student_t_quantile(p, 30) == Approx(2.042272456).epsilon(1e-8));  // tables
  // Mean of {1, 2, 6}: sd = sqrt(7), half-width = t(0.975, 2) * sqrt(7) / sqrt(3).
  CHECK(ci95_half_width({1, 2, 6}) == Approx(4.302652729911275 * std::sqrt(7.0) / std::sqrt(3.0)).epsilon(1e-10));
}

TEST_CASE("sweep tables equal individual runs and are identical for 1 and 2 workers and after a resume", "[experiments][sweep]") {
  TempDir dir;
  dir.write("base.yaml", kBase);
  const SweepGrid grid = SweepGrid::load_file(dir.write("grid.yaml", kGrid));
  REQUIRE(grid.runs().size() == 12);
  const PolicyRegistry registry = builtin_policies();

  const SweepOutcome one = run_sweep(grid, registry, options(dir.path("w1"), 1));
  CHECK(one.runs_executed == 12);
  CHECK(one.runs_skipped == 0);
  const SweepOutcome two = run_sweep(grid, registry, options(dir.path("w2"), 2));
  CHECK(two.runs_executed == 12);
  for (const char* table : {"sweep.csv", "summary.csv"}) {
    INFO(table);
    CHECK(read_file(dir.path("w1/") + table) == read_file(dir.path("w2/") + table));
  }
  for (const auto& run : grid.runs()) {
    const std::string rel = "/runs/" + run.id + "/results.json";
    CHECK(read_file(dir.path("w1") + rel) == read_file(dir.path("w2") + rel));
  }

  // Every row equals a run_scenario call with the same overrides, policy and seed.
  const auto rows = csv_rows(read_file(dir.path("w1/sweep.csv")));
  REQUIRE(rows.size() == 13);
  const auto& h = rows[0];
  CHECK(h[1] == "workload.synthetic.arrival.mean_interarrival_s");
  CHECK(h[2] == "policy");
  CHECK(h[3] == "seed");
  std::map<std::string, std::vector<double>> mean_jct_by_group;
  const std::vector<std::string> gaps{"30", "90"}, policies{"fifo", "sjf"};
  std::size_t r = 1;
  for (const auto& gap : gaps) {
    for (const auto& policy : policies) {
      for (std::uint64_t seed = 1; seed <= 3; ++seed, ++r) {
        INFO("row " << r);
        CHECK(rows[r][1] == gap);
        CHECK(rows[r][2] == policy);
        CHECK(rows[r][3] == std::to_string(seed));
        const ScenarioConfig s = load_scenario(dir.path("base.yaml"),
                                               {"workload.synthetic.arrival.mean_interarrival_s=" + gap, "policy=" + policy}, seed, registry);
        const RunResult direct = run_scenario(s, registry, RunOptions{});
        CHECK(std::stod(rows[r][column(h, "jobs_completed")]) == 30);
        CHECK(std::stod(rows[r][column(h, "mean_jct_s")]) == Approx(*direct.summary.mean_jct_s).epsilon(1e-11));
        CHECK(std::stod(rows[r][column(h, "p95_jct_s")]) == Approx(*direct.summary.p95_jct_s).epsilon(1e-11));
        CHECK(std::stod(rows[r][column(h, "gpu_utilization")]) == Approx(*direct.summary.gpu_utilization).epsilon(1e-11));
        CHECK(std::stod(rows[r][column(h, "makespan_s")]) == Approx(direct.summary.makespan_s).epsilon(1e-11));
        // The measurement window's numbers as columns of their own.
        CHECK(std::stod(rows[r][column(h, "window.gpu_utilization")]) == Approx(*direct.summary.window.gpu_utilization).epsilon(1e-11));
        CHECK(std::stod(rows[r][column(h, "offered_load")]) == Approx(*direct.summary.offered_load).epsilon(1e-11));
        mean_jct_by_group[gap + "/" + policy].push_back(*direct.summary.mean_jct_s);
      }
    }
  }
  // Seeds give different workloads, so the CI is not trivially zero.
  CHECK(mean_jct_by_group["30/fifo"][0] != mean_jct_by_group["30/fifo"][1]);

  // summary.csv: per group the mean and the Student t 95% half-width, computed by hand.
  const auto sum = csv_rows(read_file(dir.path("w1/summary.csv")));
  REQUIRE(sum.size() == 5);
  const double t2 = 4.302652729911275;  // t(0.975, df = 2): (2p-1)/sqrt(2p(1-p))
  std::size_t g = 1;
  for (const auto& gap : gaps) {
    for (const auto& policy : policies) {
      INFO(gap << " " << policy);
      const auto& x = mean_jct_by_group[gap + "/" + policy];
      const double mean = (x[0] + x[1] + x[2]) / 3;
      const double var = ((x[0] - mean) * (x[0] - mean) + (x[1] - mean) * (x[1] - mean) + (x[2] - mean) * (x[2] - mean)) / 2;
      CHECK(sum[g][0] == gap);
      CHECK(sum[g][1] == policy);
      CHECK(sum[g][column(sum[0], "seeds")] == "3");
      CHECK(sum[g][column(sum[0], "seed_list")] == "1 2 3");  // which seeds the means are over
      CHECK(column(sum[0], "window.gpu_utilization_ci95") > column(sum[0], "window.gpu_utilization_mean"));
      CHECK(std::stod(sum[g][column(sum[0], "mean_jct_s_mean")]) == Approx(mean).epsilon(1e-11));
      CHECK(std::stod(sum[g][column(sum[0], "mean_jct_s_ci95")]) == Approx(t2 * std::sqrt(var / 3)).epsilon(1e-10));
      // Paired with fifo (the first policy) at the same gap, seed by seed.
      const auto& b = mean_jct_by_group[gap + "/fifo"];
      const double d[3] = {x[0] - b[0], x[1] - b[1], x[2] - b[2]};
      const double dm = (d[0] + d[1] + d[2]) / 3;
      const double dv = ((d[0] - dm) * (d[0] - dm) + (d[1] - dm) * (d[1] - dm) + (d[2] - dm) * (d[2] - dm)) / 2;
      CHECK(sum[g][column(sum[0], "baseline")] == "fifo");
      CHECK(std::stod(sum[g][column(sum[0], "mean_jct_s_diff_mean")]) == Approx(dm).margin(1e-9));
      CHECK(std::stod(sum[g][column(sum[0], "mean_jct_s_diff_ci95")]) == Approx(t2 * std::sqrt(dv / 3)).margin(1e-9));
      const double rm = (x[0] / b[0] + x[1] / b[1] + x[2] / b[2]) / 3;
      CHECK(std::stod(sum[g][column(sum[0], "mean_jct_s_ratio_mean")]) == Approx(rm).epsilon(1e-11));
      if (policy == "fifo") CHECK(sum[g][column(sum[0], "mean_jct_s_diff_ci95")] == "0");  // the baseline paired with itself
      ++g;
    }
  }

  // Resume: only the run whose results.json is gone is redone, and the tables do not change.
  const std::string before = read_file(dir.path("w1/sweep.csv"));
  const SweepRun victim = grid.runs()[4];
  fs::remove(dir.path("w1/runs/" + victim.id + "/results.json"));
  const SweepOutcome again = run_sweep(grid, registry, options(dir.path("w1"), 2));
  CHECK(again.runs_executed == 1);
  CHECK(again.runs_skipped == 11);
  CHECK(fs::exists(dir.path("w1/runs/" + victim.id + "/results.json")));
  CHECK(read_file(dir.path("w1/sweep.csv")) == before);
}

TEST_CASE("sweep grid errors name the file line and key before any run starts", "[experiments][sweep][bad_input]") {
  TempDir dir;
  dir.write("base.yaml", kBase);
  const PolicyRegistry registry = builtin_policies();
  SECTION("unknown grid key") {
    const std::string grid = dir.write("grid.yaml", "scenario: base.yaml\npolices: [fifo]\nseeds: 2\n");
    CHECK_THROWS_WITH(SweepGrid::load_file(grid), Catch::Contains("grid.yaml:2") && Catch::Contains("did you mean 'policies'"));
  }
  SECTION("bad parameter path") {
    const std::string grid = dir.write("grid.yaml", "scenario: base.yaml\nparameters:\n  workload.synthetic.num_job: [5]\nseeds: 2\n");
    CHECK_THROWS_WITH(run_sweep(SweepGrid::load_file(grid), registry, options(dir.path("out"), 1)),
                      Catch::Contains("grid.yaml:3") && Catch::Contains("did you mean 'num_jobs'"));
    CHECK_FALSE(fs::exists(dir.path("out/runs")));
  }
  SECTION("unknown policy") {
    const std::string grid = dir.write("grid.yaml", "scenario: base.yaml\npolicies: [fifo, fife]\nseeds: [1, 2]\n");
    CHECK_THROWS_WITH(run_sweep(SweepGrid::load_file(grid), registry, options(dir.path("out"), 1)),
                      Catch::Contains("grid.yaml:2") && Catch::Contains("fife"));
    CHECK_FALSE(fs::exists(dir.path("out/runs")));
  }
  SECTION("empty value list") {
    const std::string grid = dir.write("grid.yaml", "scenario: base.yaml\nparameters:\n  seed: []\nseeds: 2\n");
    CHECK_THROWS_WITH(SweepGrid::load_file(grid), Catch::Contains("grid.yaml:3") && Catch::Contains("non-empty list"));
  }
}

TEST_CASE("a sweep over workload.synthetic.load sets each run's arrival rate", "[experiments][sweep][offered-load]") {
  TempDir dir;
  std::string base = kBase;
  base.replace(base.find("    arrival: {process: poisson, mean_interarrival_s: 60}\n"), 57, "    load: 0.5\n");
  dir.write("base.yaml", base);
  const SweepGrid grid = SweepGrid::load_file(dir.write("grid.yaml", "scenario: base.yaml\nparameters:\n  workload.synthetic.load: [0.4, 1.6]\nseeds: [1]\n"));
  const SweepOutcome o = run_sweep(grid, builtin_policies(), options(dir.path("out"), 1));
  CHECK(o.runs_executed == 2);
  const auto rows = csv_rows(read_file(dir.path("out/sweep.csv")));
  REQUIRE(rows.size() == 3);
  const std::size_t load = column(rows[0], "workload.synthetic.load");
  const std::size_t delay = column(rows[0], "mean_queue_delay_s");
  CHECK(rows[1][load] == "0.4");
  CHECK(rows[2][load] == "1.6");
  // Four times the load on the same seed: the same jobs arrive four times as fast.
  CHECK(std::stod(rows[2][delay]) > std::stod(rows[1][delay]));
}

TEST_CASE("sweep accepts an inline base scenario", "[experiments][sweep]") {
  TempDir dir;
  std::string inline_base = kBase;
  std::string indented;
  std::istringstream in(inline_base);
  for (std::string line; std::getline(in, line);) indented += "  " + line + "\n";
  const SweepGrid grid = SweepGrid::load_file(dir.write("grid.yaml", "scenario:\n" + indented + "seeds: [5]\n"));
  const SweepOutcome o = run_sweep(grid, builtin_policies(), options(dir.path("out"), 1));
  CHECK(o.runs_executed == 1);
  const auto rows = csv_rows(read_file(dir.path("out/sweep.csv")));
  REQUIRE(rows.size() == 2);
  CHECK(rows[1][1] == "fifo");  // the scenario's own policy, by its resolved name
}

namespace {

// Four runs: 2 policies x 2 seeds.
const std::string kSmallGrid = "scenario: base.yaml\npolicies: [fifo, sjf]\nseeds: 2\n";

SweepOptions ray_options(const std::string& out, const std::string& driver) {
  SweepOptions o = options(out, 2);
  o.backend = "ray";
  o.ray_script = driver;
  return o;
}

// A stand-in for experiments/ray_sweep.py that speaks its protocol without Ray: it runs
// each command here, `first` of them, then ends as `then` says.
std::string fake_driver(const TempDir& dir, const std::string& name, int first, const std::string& then) {
  return dir.write(name, R"(import json, os, signal, subprocess, sys
req = json.load(open(sys.argv[1]))
for run in req["runs"][:)" + std::to_string(first) + R"(]:
    with open(run["log"], "wb") as log:
        rc = subprocess.run(run["argv"] + ["--out", run["out"]], stderr=log, stdout=subprocess.DEVNULL).returncode
    print(json.dumps({"id": run["id"], "ok": rc == 0, "reason": "" if rc == 0 else "exit status %d" % rc}), flush=True)
)" + then + "\n");
}

}  // namespace

TEST_CASE("the Ray backend gives its driver the local backend's run commands and aggregates what it reports", "[experiments][sweep][ray]") {
  TempDir dir;
  dir.write("base.yaml", kBase);
  const SweepGrid grid = SweepGrid::load_file(dir.write("grid.yaml", kSmallGrid));
  const PolicyRegistry registry = builtin_policies();
  run_sweep(grid, registry, options(dir.path("local"), 2));

  const SweepOutcome o = run_sweep(grid, registry, ray_options(dir.path("ray"), fake_driver(dir, "all.py", 4, "")));
  CHECK(o.runs_executed == 4);
  for (const char* table : {"sweep.csv", "summary.csv"}) {
    INFO(table);
    CHECK(read_file(dir.path("ray/") + table) == read_file(dir.path("local/") + table));
  }
  // What the driver was given: per run, the local backend's command without --out.
  const auto request = nlohmann::json::parse(read_file(dir.path("ray/logs/ray_pending.json")));
  CHECK(request["address"] == "");
  CHECK(request["workers"] == 2);
  REQUIRE(request["runs"].size() == 4);
  const SweepRun first = grid.runs().front();
  CHECK(request["runs"][0]["id"] == first.id);
  CHECK(request["runs"][0]["argv"] ==
        nlohmann::json({SCHEDSIM_EXE, "run", dir.path("base.yaml"), "--set", "policy=fifo", "--seed", "1", "--quiet"}));
  CHECK(request["runs"][0]["out"] == fs::absolute(dir.path("ray/runs/" + first.id)).string());
  CHECK(request["runs"][0]["log"] == fs::absolute(dir.path("ray/logs/" + first.id + ".stderr")).string());
}

TEST_CASE("the Ray backend fails with a clear message when its driver cannot run or dies", "[experiments][sweep][ray][bad_input]") {
  TempDir dir;
  dir.write("base.yaml", kBase);
  const SweepGrid grid = SweepGrid::load_file(dir.write("grid.yaml", kSmallGrid));
  const PolicyRegistry registry = builtin_policies();

  SECTION("without Ray the real driver's message says how to get it") {
    // The real driver, with `import ray` failing as it does where Ray is not installed.
    const std::string blocked = dir.write("no_ray.py", std::string("import runpy, sys\nsys.modules['ray'] = None\nrunpy.run_path('") +
                                                           SCHEDSIM_SOURCE_DIR + "/experiments/ray_sweep.py', run_name='__main__')\n");
    CHECK_THROWS_WITH(run_sweep(grid, registry, ray_options(dir.path("out"), blocked)),
                      Catch::Contains("sweep --backend ray: the Ray backend needs Ray") && Catch::Contains("pip install 'schedsim[ray]'"));
    CHECK_FALSE(fs::exists(dir.path("out/sweep.csv")));
    CHECK(fs::is_empty(dir.path("out/runs")));
  }
  SECTION("a driver killed after one run: the others are named as unreported, the finished run is kept") {
    CHECK_THROWS_WITH(run_sweep(grid, registry, ray_options(dir.path("out"), fake_driver(dir, "dies.py", 1, "os.kill(os.getpid(), signal.SIGKILL)"))),
                      Catch::Contains("ended (killed by signal 9") && Catch::Contains("with 3 of 4 run(s) unreported"));
    CHECK(fs::exists(dir.path("out/runs/" + grid.runs().front().id + "/results.json")));
    CHECK_FALSE(fs::exists(dir.path("out/sweep.csv")));
    // Resuming with the local backend finishes the other three.
    const SweepOutcome o = run_sweep(grid, registry, options(dir.path("out"), 2));
    CHECK(o.runs_skipped == 1);
    CHECK(o.runs_executed == 3);
  }
  SECTION("a run the driver reports as failed is named with its log") {
    const std::string bad = dir.write("bad.py", R"(import json, sys
req = json.load(open(sys.argv[1]))
for run in req["runs"]:
    open(run["log"], "w").write("worker lost\n")
    print(json.dumps({"id": run["id"], "ok": False, "reason": "the Ray worker running it died: WorkerCrashedError"}), flush=True)
)");
    CHECK_THROWS_WITH(run_sweep(grid, registry, ray_options(dir.path("out"), bad)),
                      Catch::Contains("4 run(s) failed") && Catch::Contains(dir.path("out/logs/") + grid.runs().front().id + ".stderr"));
  }
  SECTION("an unknown backend and --address without ray are refused") {
    SweepOptions o = options(dir.path("out"), 1);
    o.backend = "dask";
    CHECK_THROWS_WITH(run_sweep(grid, registry, o), Catch::Contains("unknown backend 'dask' (allowed: local, ray)"));
    o.backend = "local";
    o.ray_address = "10.0.0.1:6379";
    CHECK_THROWS_WITH(run_sweep(grid, registry, o), Catch::Contains("--address is for --backend ray"));
  }
}

TEST_CASE("sweep shards split the runs, and the last shard writes the same tables as one sweep", "[experiments][sweep]") {
  TempDir dir;
  dir.write("base.yaml", kBase);
  const SweepGrid grid = SweepGrid::load_file(dir.write("grid.yaml", kSmallGrid));
  const PolicyRegistry registry = builtin_policies();
  run_sweep(grid, registry, options(dir.path("all"), 1));

  // Runs 0..3 in grid order; shard i/3 takes positions i, i+3: sizes 2, 1, 1.
  const std::vector<std::size_t> sizes{2, 1, 1};
  for (std::size_t i : {2, 0, 1}) {  // in any order, as array tasks finish
    INFO("shard " << i);
    SweepOptions o = options(dir.path("sharded"), 1);
    o.shard = std::to_string(i) + "/3";
    const SweepOutcome out = run_sweep(grid, registry, o);
    CHECK(out.runs_executed == sizes[i]);
    CHECK(out.runs_other_shards == 4 - sizes[i]);
    CHECK(fs::exists(dir.path("sharded/runs/" + grid.runs()[i].id + "/results.json")));
    CHECK(out.tables_written == (i == 1));
    CHECK(fs::exists(dir.path("sharded/sweep.csv")) == (i == 1));
  }
  for (const char* table : {"sweep.csv", "summary.csv"}) {
    INFO(table);
    CHECK(read_file(dir.path("sharded/") + table) == read_file(dir.path("all/") + table));
  }
  for (const char* bad : {"3/3", "1", "/3", "a/3", "0/0", "-1/3", "1/3/4"}) {
    INFO(bad);
    SweepOptions o = options(dir.path("bad"), 1);
    o.shard = bad;
    CHECK_THROWS_WITH(run_sweep(grid, registry, o), Catch::Contains("sweep --shard: '" + std::string(bad) + "' is not I/N with 0 <= I < N"));
    CHECK_FALSE(fs::exists(dir.path("bad")));
  }
}
