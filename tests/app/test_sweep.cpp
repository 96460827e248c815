#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/compare.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "app/sweep.hpp"
#include "base/error.hpp"
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

namespace {

// Closed-form energy: 2 V100s (300 W busy, 100 W idle here), PUE 1.5, price 200 USD/MWh,
// carbon 400 gCO2/kWh, two 1-GPU jobs at t = 0 of 3600 s and 1800 s. Device 0 is busy for
// 1 h, device 1 for 0.5 h then idle for 0.5 h: (300 + 150 + 50) Wh x 1.5 = 0.75 kWh, 0.375 kWh
// per job, 0.75 kWh x 0.2 USD/kWh = 0.15 USD, 0.75 kWh x 0.4 kg/kWh = 0.3 kg. Both policies
// start both jobs at once, so their results are identical (and, all submitted at t = 0,
// there is no measurement window).
const std::string kEnergyScenario = R"(
seed: 1
cluster:
  nodes:
    - {count: 1, type: V100, devices_per_node: 2}
accelerators: {V100: {idle_w: 100}}
workload: {trace: t.csv}
energy: {pue: 1.5}
signals: {price: 200, carbon: 400}
information: oracle
policy: fifo
)";
const std::string kEnergyTrace = "job_id,submit_time_s,num_gpus,duration_s\na,0,1,3600\nb,0,1,1800\n";

// The columns comparison.csv has had since the measurement window, before any world metric.
const std::string kComparisonHeader =
    "policy,jobs_completed,mean_jct_s,median_jct_s,p95_jct_s,p99_jct_s,mean_queue_delay_s,mean_bounded_slowdown,gpu_utilization,makespan_s,"
    "offered_load,mean_queue_length,mean_jobs_in_system,window_gpu_utilization,window_mean_queue_length,window_mean_jobs_in_system";

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

TEST_CASE("compare's tables carry energy, cost and emissions columns with the energy model and signals", "[experiments][compare][world-columns]") {
  TempDir dir;
  dir.write("t.csv", kEnergyTrace);
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig s = load_scenario(dir.write("s.yaml", kEnergyScenario), {}, std::nullopt, reg);
  const auto runs = compare_policies(s, reg, {"fifo", "sjf"}, RunOptions{dir.path("cmp")});
  REQUIRE(runs.size() == 2);

  const auto csv = csv_rows(read_file(dir.path("cmp/comparison.csv")));
  REQUIRE(csv.size() == 3);
  CHECK(first_line(read_file(dir.path("cmp/comparison.csv"))) == kComparisonHeader + ",energy_kwh,energy_kwh_per_job,electricity_usd,co2_kg");
  for (std::size_t r = 1; r <= 2; ++r) {
    CHECK(std::stod(csv[r][column(csv[0], "energy_kwh")]) == Approx(0.75).epsilon(1e-12));
    CHECK(std::stod(csv[r][column(csv[0], "energy_kwh_per_job")]) == Approx(0.375).epsilon(1e-12));
    CHECK(std::stod(csv[r][column(csv[0], "electricity_usd")]) == Approx(0.15).epsilon(1e-12));
    CHECK(std::stod(csv[r][column(csv[0], "co2_kg")]) == Approx(0.3).epsilon(1e-12));
  }
  // No failures model, services or market: no goodput, SLO or compute-cost column.
  CHECK(csv[0].size() == 20);

  CHECK(comparison_table(runs, false) ==
        "policy  jobs  mean JCT (h)  median JCT (h)  p95 JCT (h)  p99 JCT (h)  mean wait (h)  bounded slowdown  GPU util  window util  window queue  "
        "makespan (h)  energy (kWh)  kWh/job  electricity (USD)  CO2 (kg)\n"
        "------  ----  ------------  --------------  -----------  -----------  -------------  ----------------  --------  -----------  ------------  "
        "------------  ------------  -------  -----------------  --------\n"
        "fifo       2         0.750           0.750        0.975        0.995          0.000              1.00     0.750            -             -  "
        "        1.00          0.75    0.375               0.15      0.30\n"
        "sjf        2         0.750           0.750        0.975        0.995          0.000              1.00     0.750            -             -  "
        "        1.00          0.75    0.375               0.15      0.30  = fifo\n"
        "= NAME: 1 of 2 rows have results identical to NAME's (every summary metric and the sorted JCTs of all completed jobs): on this workload the policy acts as NAME\n");
  // Paired with the baseline: the ratios of the world metrics too.
  CHECK(paired_table(runs, 0, false) ==
        "paired with fifo (same seed and workload; one seed, so no interval: a sweep over seeds gives the paired 95% CI in summary.csv)\n"
        "policy  mean JCT - fifo (h)  mean JCT / fifo  energy / fifo  kWh/job / fifo  electricity / fifo  CO2 / fifo\n"
        "------  -------------------  ---------------  -------------  --------------  ------------------  ----------\n"
        "fifo                  0.000            1.000          1.000           1.000               1.000       1.000\n"
        "sjf                   0.000            1.000          1.000           1.000               1.000       1.000\n");
  const std::string md = read_file(dir.path("cmp/comparison.md"));
  CHECK(md.find("| energy (kWh) | kWh/job | electricity (USD) | CO2 (kg) | identical to |\n") != std::string::npos);
  CHECK(md.find("| CO2 / fifo |\n") != std::string::npos);
}

TEST_CASE("compare's tables carry the SLO violation minutes of inference services", "[experiments][compare][world-columns]") {
  TempDir dir;
  // One service with a 10-minute burst beyond what its 2 replicas serve (as in
  // tests/policies/test_inference_autoscale.cpp): 10.0 SLO violation minutes.
  dir.write("jobs.csv", "job_id,submit_time_s,num_gpus,duration_s,min_gpus,max_gpus\ntrain,0,2,20000,1,4\n");
  const std::string path = dir.write("s.yaml", R"(
seed: 1
cluster: {nodes: [{count: 1, type: V100, devices_per_node: 4}]}
physics: {}
workload: {trace: {path: jobs.csv, format: schedsim}}
inference:
  services:
    - name: chat
      rate: {diurnal: {mean_rps: 10, amplitude_rps: 0}}
      drops: [{start_s: 0, duration_s: 3600, factor: 0.1}]
      bursts: [{start_s: 5000, duration_s: 600, factor: 2.5}]
      capacity_rps: {V100: 10}
      slo_p99_s: 2
      min_replicas: 1
      max_replicas: 2
policy: {name: inference, lend: false}
)");
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig s = load_scenario(path, {}, std::nullopt, reg);
  const auto runs = compare_policies(s, reg, {"{name: inference, autoscaler: predictive, lend: false}", "{name: inference, autoscaler: reactive, lend: false}"},
                                     RunOptions{dir.path("cmp")});
  REQUIRE(runs.size() == 2);
  const std::string text = read_file(dir.path("cmp/comparison.csv"));
  CHECK(first_line(text) == kComparisonHeader + ",slo_violation_minutes");
  const auto csv = csv_rows(text);
  REQUIRE(csv.size() == 3);
  CHECK(std::stod(csv[1].back()) == Approx(10.0).epsilon(1e-9));
  CHECK(std::stod(csv[2].back()) == Approx(10.0).epsilon(1e-9));
  const std::string table = comparison_table(runs, false);
  CHECK(first_line(table).size() >= std::string("SLO viol (min)").size());
  CHECK(first_line(table).substr(first_line(table).size() - 16) == "  SLO viol (min)");
  CHECK(table.find("          10.0\n") != std::string::npos);
  // A row is "= NAME" only when its world columns agree too: the same summary with one
  // more SLO violation minute is another result.
  RunResult worse = runs[0];
  REQUIRE(worse.inference.size() == 1);
  worse.inference[0].slo_violation_s += 60;
  CHECK(identical_rows({runs[0], runs[0]}) == std::vector<std::optional<std::size_t>>{std::nullopt, 0});
  CHECK(identical_rows({runs[0], worse}) == std::vector<std::optional<std::size_t>>{std::nullopt, std::nullopt});
}

TEST_CASE("without world models compare and sweep tables have no world columns", "[experiments][compare][sweep][world-columns]") {
  TempDir dir;
  dir.write("t.csv", kEnergyTrace);
  std::string plain = kEnergyScenario;
  plain.erase(plain.find("energy: {pue: 1.5}\n"), std::string("energy: {pue: 1.5}\nsignals: {price: 200, carbon: 400}\n").size());
  REQUIRE(plain.find("energy") == std::string::npos);
  const PolicyRegistry reg = builtin_policies();
  const auto runs = compare_policies(load_scenario(dir.write("s.yaml", plain), {}, std::nullopt, reg), reg, {"fifo", "sjf"}, RunOptions{dir.path("cmp")});
  CHECK(first_line(read_file(dir.path("cmp/comparison.csv"))) == kComparisonHeader);
  CHECK(first_line(comparison_table(runs, false)) ==
        "policy  jobs  mean JCT (h)  median JCT (h)  p95 JCT (h)  p99 JCT (h)  mean wait (h)  bounded slowdown  GPU util  window util  window queue  makespan (h)");
  CHECK(paired_table(runs, 0, false).find("\npolicy  mean JCT - fifo (h)  mean JCT / fifo\n") != std::string::npos);

  const SweepGrid grid = SweepGrid::load_file(dir.write("grid.yaml", "scenario: s.yaml\npolicies: [fifo, sjf]\nseeds: [1, 2]\n"));
  run_sweep(grid, reg, options(dir.path("sweep"), 1));
  const std::string sweep = first_line(read_file(dir.path("sweep/sweep.csv")));
  CHECK(sweep.substr(sweep.find(",window.mean_jobs_in_system")) == ",window.mean_jobs_in_system");
  const std::string summary = first_line(read_file(dir.path("sweep/summary.csv")));
  CHECK(summary.substr(summary.find(",window.mean_jobs_in_system_ci95")) ==
        ",window.mean_jobs_in_system_ci95,baseline,mean_jct_s_diff_mean,mean_jct_s_diff_ci95,mean_jct_s_ratio_mean,mean_jct_s_ratio_ci95");
}

TEST_CASE("sweep.csv and summary.csv carry the world metrics, paired with the baseline", "[experiments][sweep][world-columns]") {
  TempDir dir;
  dir.write("t.csv", kEnergyTrace);
  dir.write("s.yaml", kEnergyScenario);
  // PUE 1 and 1.5: 0.5 and 0.75 kWh. A trace ignores the seed, so the CI over seeds is 0.
  const SweepGrid grid = SweepGrid::load_file(dir.write("grid.yaml", "scenario: s.yaml\nparameters:\n  energy.pue: [1, 1.5]\npolicies: [fifo, sjf]\nseeds: [1, 2]\n"));
  const PolicyRegistry reg = builtin_policies();
  run_sweep(grid, reg, options(dir.path("out"), 2));
  const std::string sweep_text = read_file(dir.path("out/sweep.csv"));
  const std::string header = first_line(sweep_text);
  CHECK(header.substr(header.find(",window.mean_jobs_in_system")) == ",window.mean_jobs_in_system,energy_kwh,energy_kwh_per_job,electricity_usd,co2_kg");
  const auto rows = csv_rows(sweep_text);
  REQUIRE(rows.size() == 9);
  for (std::size_t r = 1; r < rows.size(); ++r) {
    INFO("row " << r);
    const double pue = r <= 4 ? 1.0 : 1.5;
    CHECK(rows[r][column(rows[0], "energy_kwh")] == (pue == 1.0 ? "0.5" : "0.75"));
    CHECK(rows[r][column(rows[0], "energy_kwh_per_job")] == (pue == 1.0 ? "0.25" : "0.375"));
    CHECK(rows[r][column(rows[0], "electricity_usd")] == (pue == 1.0 ? "0.1" : "0.15"));
    CHECK(rows[r][column(rows[0], "co2_kg")] == (pue == 1.0 ? "0.2" : "0.3"));
  }
  const std::string summary_text = read_file(dir.path("out/summary.csv"));
  const std::string sh = first_line(summary_text);
  CHECK(sh.substr(sh.find(",window.mean_jobs_in_system_ci95")) ==
        ",window.mean_jobs_in_system_ci95,energy_kwh_mean,energy_kwh_ci95,energy_kwh_per_job_mean,energy_kwh_per_job_ci95,electricity_usd_mean,electricity_usd_ci95,"
        "co2_kg_mean,co2_kg_ci95,baseline,mean_jct_s_diff_mean,mean_jct_s_diff_ci95,mean_jct_s_ratio_mean,mean_jct_s_ratio_ci95,"
        "energy_kwh_diff_mean,energy_kwh_diff_ci95,energy_kwh_ratio_mean,energy_kwh_ratio_ci95,"
        "energy_kwh_per_job_diff_mean,energy_kwh_per_job_diff_ci95,energy_kwh_per_job_ratio_mean,energy_kwh_per_job_ratio_ci95,"
        "electricity_usd_diff_mean,electricity_usd_diff_ci95,electricity_usd_ratio_mean,electricity_usd_ratio_ci95,"
        "co2_kg_diff_mean,co2_kg_diff_ci95,co2_kg_ratio_mean,co2_kg_ratio_ci95");
  const auto sum = csv_rows(summary_text);
  REQUIRE(sum.size() == 5);
  for (std::size_t g = 1; g < sum.size(); ++g) {
    INFO("group " << g);
    const bool low = g <= 2;  // PUE 1
    CHECK(sum[g][column(sum[0], "co2_kg_mean")] == (low ? "0.2" : "0.3"));
    CHECK(sum[g][column(sum[0], "co2_kg_ci95")] == "0");
    CHECK(sum[g][column(sum[0], "energy_kwh_mean")] == (low ? "0.5" : "0.75"));
    // sjf makes fifo's decisions: the same emissions, seed by seed.
    CHECK(sum[g][column(sum[0], "co2_kg_diff_mean")] == "0");
    CHECK(sum[g][column(sum[0], "co2_kg_ratio_mean")] == "1");
    CHECK(sum[g][column(sum[0], "co2_kg_ratio_ci95")] == "0");
  }
}

TEST_CASE("compare's tables carry the compute cost of the market model", "[experiments][compare][world-columns]") {
  TempDir dir;
  dir.write("t.csv", kEnergyTrace);
  // 1.5 device-hours on demand at 2 USD/h: 3 USD; no energy map, so no energy columns.
  const std::string path = dir.write("s.yaml", R"(
seed: 1
datacenters:
  sites:
    - name: A
      provider: cloud
      nodes: [{count: 1, type: V100, devices_per_node: 2}]
market:
  offers:
    - {datacenter: A, type: V100, on_demand_usd_h: 2.0}
workload: {trace: t.csv}
policy: fifo
)");
  const PolicyRegistry reg = builtin_policies();
  const auto runs = compare_policies(load_scenario(path, {}, std::nullopt, reg), reg, {"fifo"}, RunOptions{dir.path("cmp")});
  const std::string text = read_file(dir.path("cmp/comparison.csv"));
  CHECK(first_line(text) == kComparisonHeader + ",compute_usd");
  CHECK(csv_rows(text)[1].back() == "3");
  const std::string table = comparison_table(runs, false);
  CHECK(first_line(table).substr(first_line(table).size() - 15) == "  compute (USD)");
  CHECK(table.substr(table.find('\n', table.find('\n') + 1) + 1).find("           3.00\n") != std::string::npos);
}

TEST_CASE("a world column appears when its model is on in some run of a sweep, empty in the others", "[experiments][sweep][world-columns]") {
  TempDir dir;
  dir.write("t.csv", kEnergyTrace);
  std::string base = kEnergyScenario;
  base.erase(base.find("signals: {price: 200, carbon: 400}\n"), std::string("signals: {price: 200, carbon: 400}\n").size());
  dir.write("s.yaml", base);
  // A price signal in one run, a carbon signal in the other.
  const SweepGrid grid = SweepGrid::load_file(dir.write("grid.yaml", "scenario: s.yaml\nparameters:\n  signals: [{price: 200}, {carbon: 400}]\nseeds: [1]\n"));
  run_sweep(grid, builtin_policies(), options(dir.path("out"), 1));
  const auto rows = csv_rows(read_file(dir.path("out/sweep.csv")));
  REQUIRE(rows.size() == 3);
  const std::vector<std::string> tail(rows[0].end() - 4, rows[0].end());
  CHECK(tail == std::vector<std::string>{"energy_kwh", "energy_kwh_per_job", "electricity_usd", "co2_kg"});
  CHECK(std::vector<std::string>(rows[1].end() - 4, rows[1].end()) == std::vector<std::string>{"0.75", "0.375", "0.15", ""});
  CHECK(std::vector<std::string>(rows[2].end() - 4, rows[2].end()) == std::vector<std::string>{"0.75", "0.375", "", "0.3"});
  const auto sum = csv_rows(read_file(dir.path("out/summary.csv")));
  REQUIRE(sum.size() == 3);
  CHECK(sum[1][column(sum[0], "electricity_usd_mean")] == "0.15");
  CHECK(sum[1][column(sum[0], "co2_kg_mean")] == "");
  CHECK(sum[2][column(sum[0], "co2_kg_mean")] == "0.3");
  CHECK(sum[2][column(sum[0], "co2_kg_ci95")] == "");  // one seed: no interval
}

TEST_CASE("compare and sweep tables carry goodput with the failures model", "[experiments][compare][sweep][world-columns]") {
  TempDir dir;
  // One 1-GPU job of 3600 s with a 100 s checkpoint after every 1000 s of compute: three
  // stalls, 3900 device-seconds allocated, goodput 3600 / 3900.
  dir.write("one.csv", "job_id,submit_time_s,num_gpus,duration_s\na,0,1,3600\n");
  const std::string path = dir.write("s.yaml", R"(
seed: 1
cluster:
  nodes:
    - {count: 1, type: V100, devices_per_node: 2}
workload: {trace: one.csv}
failures: {checkpoint: {interval_s: 1000, cost_s: 100}}
information: oracle
policy: fifo
)");
  const PolicyRegistry reg = builtin_policies();
  const auto runs = compare_policies(load_scenario(path, {}, std::nullopt, reg), reg, {"fifo", "sjf"}, RunOptions{dir.path("cmp")});
  const std::string text = read_file(dir.path("cmp/comparison.csv"));
  CHECK(first_line(text) == kComparisonHeader + ",goodput");
  CHECK(std::stod(csv_rows(text)[1].back()) == Approx(3600.0 / 3900).epsilon(1e-12));
  const std::string table = comparison_table(runs, false);
  CHECK(first_line(table).substr(first_line(table).size() - 9) == "  goodput");
  CHECK(table.find("          1.08    0.923\n") != std::string::npos);
  CHECK(paired_table(runs, 0, false).find("  goodput / fifo\n") != std::string::npos);

  // The sweep: goodput stays the summary column it was; summary.csv pairs it with the baseline.
  const SweepGrid grid = SweepGrid::load_file(dir.write("grid.yaml", "scenario: s.yaml\npolicies: [fifo, sjf]\nseeds: [1]\n"));
  run_sweep(grid, reg, options(dir.path("out"), 1));
  const auto rows = csv_rows(read_file(dir.path("out/sweep.csv")));
  CHECK(std::count(rows[0].begin(), rows[0].end(), "goodput") == 1);
  CHECK(rows[0].back() == "window.mean_jobs_in_system");
  const auto sum = csv_rows(read_file(dir.path("out/summary.csv")));
  const std::vector<std::string> tail(sum[0].end() - 4, sum[0].end());
  CHECK(tail == std::vector<std::string>{"goodput_diff_mean", "goodput_diff_ci95", "goodput_ratio_mean", "goodput_ratio_ci95"});
  CHECK(sum[2][column(sum[0], "goodput_ratio_mean")] == "1");
  CHECK(sum[2][column(sum[0], "goodput_mean")] == "0.923076923077");
}
