// Power capping: the speed/power curve at chosen points (by hand and on the measured V100
// sweep), and a capped run: the job takes work / speed and its devices draw the capped
// busy power.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "policies/registry.hpp"
#include "base/error.hpp"
#include "world/power_caps/power_cap.hpp"
#include "sim/simulator.hpp"
#include "first_fit_policy.hpp"
#include "test_support.hpp"
#include "traces/power_sweep_file.hpp"
#include "world/power_caps/power_cap_process.hpp"

using namespace schedsim;
using schedsim::test::read_file;
using schedsim::test::TempDir;

TEST_CASE("power curve: interpolation and the capped speed and power at chosen points", "[sim][power-cap]") {
  const PowerCurve c({{300, 8, 240}, {100, 12, 90}, {200, 9, 160}}, "test");
  CHECK(c.max_limit_w() == 300);
  CHECK(c.at(200).time_s == 9);
  CHECK(c.at(150).time_s == Approx(10.5));
  CHECK(c.at(150).power_w == Approx(125));
  CHECK(c.at(250).power_w == Approx(200));
  CHECK_THROWS_WITH(c.at(50), Catch::Contains("outside the measured range [100.000000, 300.000000]"));
  // A 400 W device capped at half its TDP: the curve at 150 W of 300 W.
  const CappedDevice half = c.capped(400, 0.5);
  CHECK(half.speed == Approx(8.0 / 10.5).epsilon(1e-12));
  CHECK(half.busy_power_w == Approx(400 * 125.0 / 240).epsilon(1e-12));
  const CappedDevice full = c.capped(400, 1.0);
  CHECK(full.speed == 1.0);
  CHECK(full.busy_power_w == 400.0);
  CHECK_THROWS_WITH(PowerCurve({{100, 1, 1}}, "one"), Catch::Contains("at least two power limits"));
  CHECK_THROWS_WITH(PowerCurve({{100, 1, 1}, {100, 2, 2}}, "dup"), Catch::Contains("listed twice"));
}

TEST_CASE("power curve from the measured V100 sweep (zeus)", "[sim][power-cap][real-data]") {
  const std::string data = schedsim::test::shared_data_dir();
  if (data.empty()) {
    WARN("skipped: ../shared/data is absent (set SCHEDSIM_SHARED_DATA to its path to run this test)");
    return;
  }
  const PowerCurve c = load_power_sweep_csv(data + "/gpu_specs/summary_power_v100.csv", {"cifar100", "shufflenetv2", "1024", "adam"});
  // The file's rows for this workload: 100 W -> 11.0867 s/epoch at 91.00 W ... 250 W -> 7.37 s at 194.92 W.
  CHECK(c.points().front().limit_w == 100);
  CHECK(c.max_limit_w() == 250);
  CHECK(c.at(100).time_s == Approx(11.086666666666668));
  CHECK(c.at(100).power_w == Approx(91.0042349567595));
  // A 300 W V100 capped at 60 %: the curve at 150 W of 250 W.
  const CappedDevice v = c.capped(300, 0.6);
  CHECK(v.speed == Approx(7.37 / 8.23).epsilon(1e-12));
  CHECK(v.busy_power_w == Approx(300 * 130.2852754123749 / 194.9245827266084).epsilon(1e-12));
  CHECK_THROWS_WITH(load_power_sweep_csv(data + "/gpu_specs/summary_power_v100.csv", {"", "nosuchnet", "", ""}),
                    Catch::Contains("no row matches") && Catch::Contains("nosuchnet"));
}

TEST_CASE("a capped device runs work / speed and draws the capped busy power", "[sim][power-cap][energy]") {
  TempDir dir;
  dir.write("jobs.csv", "job_id,submit_time_s,num_gpus,duration_s\nj,0,1,1000\n");
  // V100 (TDP 300 W, idle 40 W) capped at half: speed 8 / 10.5, busy power 300 x 125 / 240 = 156.25 W.
  const std::string path = dir.write("s.yaml", R"(
cluster: {nodes: [{count: 1, type: V100, devices_per_node: 1}]}
workload: {trace: {path: jobs.csv, format: schedsim}}
energy:
  power_caps:
    V100: {fraction: 0.5, curve: {points: [{limit_w: 100, time_s: 12, power_w: 90}, {limit_w: 200, time_s: 9, power_w: 160}, {limit_w: 300, time_s: 8, power_w: 240}]}}
policy: fifo
)");
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig s = load_scenario(path, {}, std::nullopt, reg);
  run_scenario(s, reg, RunOptions{dir.path("out")});
  const auto r = nlohmann::json::parse(read_file(dir.path("out/results.json")));
  const double run_s = 1000 * 10.5 / 8;
  CHECK(double(r["summary"]["mean_jct_s"]) == Approx(run_s).margin(1e-6));
  CHECK(double(r["energy"]["jobs"]["energy_kwh"]) == Approx(156.25 * run_s / 3.6e6).epsilon(1e-9));
  CHECK(double(r["config"]["energy"]["power_caps"]["V100"]["speed"]) == Approx(8 / 10.5));
  // Bad input.
  auto error = [&](const std::string& caps) {
    const std::string p = dir.write("bad.yaml", "cluster: {nodes: [{count: 1, type: V100, devices_per_node: 1}]}\nworkload: {trace: {path: jobs.csv, format: schedsim}}\nenergy:\n  power_caps: " + caps + "\n");
    try {
      load_scenario(p, {}, std::nullopt, reg);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string pts = "curve: {points: [{limit_w: 100, time_s: 12, power_w: 90}, {limit_w: 300, time_s: 8, power_w: 240}]}";
  CHECK_THAT(error("{V100: {fraction: 0.2, " + pts + "}}"), Catch::Contains("must be in [0.333333, 1]"));
  CHECK_THAT(error("{A100-80GB: {fraction: 0.5, " + pts + "}}"), Catch::Contains("no node group of the cluster has device type 'A100-80GB'"));
  CHECK_THAT(error("{V100: {fraction: 0.5, curve: {}}}"), Catch::Contains("give exactly one of file"));
}

TEST_CASE("power-cap process: its rate factor is the slowest device's speed, and a job runs work / that speed", "[sim][power-cap][world]") {
  PowerCapProcess caps({0.5, 0.8, 1.0, 0.8});
  CHECK(caps.hooks() == WorldProcess::kRateFactor);
  JobState j;
  j.devices = {2};
  CHECK(caps.rate_factor(j) == 1.0);
  j.devices = {1, 2};
  CHECK(caps.rate_factor(j) == 0.8);
  j.devices = {3, 0, 2};
  CHECK(caps.rate_factor(j) == 0.5);
  // Registered with a kernel without physics: a 1,000 s job on devices {1, 2} (first fit
  // after a 1-GPU job on device 0) runs at 0.8, so it ends at 1,000 / 0.8 = 1,250 s; the
  // 1-GPU job on device 0 at 0.5 ends at 2,000 s. Without the process both run at full speed.
  for (bool with : {true, false}) {
    INFO((with ? "with the process" : "without it"));
    const ClusterSpec cluster({NodeGroup{1, "V100", 4}});
    schedsim::test::VectorSource source({schedsim::test::make_job("a", 0, 1, 1000), schedsim::test::make_job("b", 0, 2, 1000)});
    schedsim::test::FirstFit first_fit;
    Simulator sim(cluster, source, first_fit);
    if (with) sim.add_process(caps);
    struct Ends : Observer {
      void on_job_end(const JobState& job) override { end_s[job.spec.id] = job.end.seconds(); }
      std::map<std::string, double> end_s;
    } ends;
    sim.add_observer(ends);
    sim.run();
    CHECK(ends.end_s.at("a") == Approx(with ? 2000 : 1000).epsilon(1e-12));
    CHECK(ends.end_s.at("b") == Approx(with ? 1250 : 1000).epsilon(1e-12));
  }
}
