// Thermal and cooling: the cooling model and the throttle at chosen points by hand, a job
// on a hot device finishing exactly as much later as the throttle says, the energy integral
// under a PUE that changes with the outside temperature, set-point actions (validation,
// effect) and the thermal-aware heuristic's choice.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/compare.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "world/thermal/thermal_config.hpp"
#include "policies/registry.hpp"
#include "world/energy/energy.hpp"
#include "base/error.hpp"
#include "sim/simulator.hpp"
#include "world/thermal/thermal.hpp"
#include "world/thermal/thermal_meter.hpp"
#include "test_support.hpp"
#include "world/thermal/thermal_process.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::read_file;
using schedsim::test::TempDir;
using schedsim::test::VectorSource;

namespace {

constexpr std::int64_t kHourUs = 3'600'000'000LL;

// Outside temperature: `values` hour by hour from time 0, repeating.
std::shared_ptr<const StepSeries> hourly(std::vector<double> values) {
  return std::make_shared<const StepSeries>(StepSeries::periodic("outside", std::move(values), kHourUs, 0));
}

ThermalSiteSpec one_site(std::shared_ptr<const StepSeries> outside, double setpoint_c, int devices, double pue = 1.1) {
  ThermalSiteSpec s;
  s.name = "";
  s.num_devices = devices;
  s.outside_c = std::move(outside);
  s.cooling.other_fraction = pue - 1.0;
  s.setpoint_c = setpoint_c;
  return s;
}

// Starts pending jobs in order on the first free devices; at `at` sets site 0's set-point.
class ScriptPolicy : public Policy {
 public:
  ScriptPolicy(Tick at, double setpoint_c, int site = 0) : at_(at), setpoint_c_(setpoint_c), site_(site) {}
  std::string name() const override { return "script"; }
  void on_job_queued(const SchedulerView&, JobSlot) override {}
  void decide(const SchedulerView& view, ActionBatch& out) override {
    std::vector<DeviceId> free;
    for (DeviceId d = 0; d < view.cluster().num_devices(); ++d) {
      if (view.cluster_state().is_free(d)) free.push_back(d);
    }
    for (JobSlot s = view.first_pending(); s != kNoJob; s = view.next_pending(s)) {
      const int n = view.job(s).num_gpus();
      if (static_cast<int>(free.size()) < n) break;
      std::vector<DeviceId> use(free.begin(), free.begin() + n);
      free.erase(free.begin(), free.begin() + n);
      out.start(s, use);
    }
    if (done_) return;
    if (view.now() >= at_) {
      out.set_cooling_setpoint(site_, setpoint_c_);
      done_ = true;
    } else {
      out.wake_at(at_);
    }
  }

 private:
  Tick at_;
  double setpoint_c_;
  int site_;
  bool done_ = false;
};

// A simulator with `thermal` registered as its world process (its speeds replace the
// power caps'), as SimulationSetup registers it.
struct WithThermal {
  explicit WithThermal(ThermalModel& thermal) : process(thermal) {}
  ThermalProcess process;
};
class ThermalSimulator : private WithThermal, public Simulator {
 public:
  ThermalSimulator(const ClusterSpec& cluster, JobSource& source, Policy& policy, ThermalModel& thermal)
      : WithThermal(thermal), Simulator(cluster, source, policy) {
    add_process(process);
  }
};

class EndTimes : public Observer {
 public:
  void on_job_end(const JobState& j) override { end_s[j.spec.id] = j.end.seconds(); }
  std::map<std::string, double> end_s;
};

}  // namespace

TEST_CASE("cooling model: COP, economizer and PUE at chosen points", "[sim][thermal]") {
  CoolingSpec c;  // defaults: carnot 0.5, approach 15, min lift 5, economizer below T_set - 5, fans 0.05
  c.other_fraction = 0.1;
  // 30 °C outside, set-point 20 °C: lift 30 - 20 + 15 = 25 K, COP = 0.5 x 293.15 / 25 = 5.863.
  CHECK_FALSE(economizer_on(c, 30, 20));
  CHECK(chiller_cop(c, 30, 20) == Approx(5.863).epsilon(1e-12));
  CHECK(cooling_fraction(c, 30, 20) == Approx(0.05 + 1 / 5.863).epsilon(1e-12));
  CHECK(facility_pue(c, 30, 20) == Approx(1.15 + 1 / 5.863).epsilon(1e-12));  // 1.32056
  // A higher set-point lifts less: 27 °C gives lift 18 K, COP = 0.5 x 300.15 / 18 = 8.3375.
  CHECK(chiller_cop(c, 30, 27) == Approx(8.3375).epsilon(1e-12));
  CHECK(facility_pue(c, 30, 27) < facility_pue(c, 30, 20));
  // Economizer: 15 °C outside <= 20 - 5 -> only the fans; 16 °C -> chiller with lift 11 K.
  CHECK(economizer_on(c, 15, 20));
  CHECK(cooling_fraction(c, 15, 20) == 0.05);
  CHECK(facility_pue(c, -10, 20) == Approx(1.15).epsilon(1e-15));
  CHECK_FALSE(economizer_on(c, 16, 20));
  CHECK(cooling_fraction(c, 16, 20) == Approx(0.05 + 11 / 146.575).epsilon(1e-12));
  // The lift never goes below min_lift_c: with no approach, 22 °C outside at 20 °C lifts 5 K, not 2.
  CoolingSpec tight = c;
  tight.approach_c = 0;
  tight.economizer_delta_c = 100;  // no free cooling
  CHECK(chiller_cop(tight, 22, 20) == Approx(146.575 / 5).epsilon(1e-12));
}

TEST_CASE("throttle: supply and device temperature, speed down to the floor", "[sim][thermal]") {
  CoolingSpec c;  // max_outside_c 45
  ThrottleSpec t;  // rise 55 °C at TDP, threshold 85 °C, 0.05 per °C, floor 0.5
  CHECK(supply_temperature_c(c, 30, 25) == 25);
  CHECK(supply_temperature_c(c, 50, 25) == 30);  // 5 °C above the chiller's design outside temperature
  CHECK(device_temperature_c(t, 25, 1.0) == 80);
  CHECK(device_temperature_c(t, 25, 0.8) == Approx(69).epsilon(1e-15));
  CHECK(throttle_speed(t, 85) == 1.0);
  CHECK(throttle_speed(t, 87) == Approx(0.9).epsilon(1e-12));
  CHECK(throttle_speed(t, 95) == Approx(0.5).epsilon(1e-12));
  CHECK(throttle_speed(t, 120) == 0.5);  // floor
}

TEST_CASE("a job on a throttled device runs exactly as much slower as the formula says", "[sim][thermal]") {
  const ClusterSpec cluster({NodeGroup{1, "V100", 1}});
  SECTION("the outside heats up for an hour") {
    // Hour 0: 20 °C outside -> supply 25, device 80 °C, speed 1. Hour 1: 60 °C -> supply
    // 25 + (60 - 45) = 40, device 95 °C, speed 0.5. A 5,000 s job does 3,600 s of work in
    // hour 0 and the other 1,400 s at half speed: it ends at 3,600 + 2,800 = 6,400 s.
    ThermalModel thermal({one_site(hourly({20, 60}), 25, 1)}, 0, {1.0}, {});
    VectorSource source({make_job("a", 0, 1, 5000)});
    PolicyInstance fifo = builtin_policies().create("fifo");
    ThermalSimulator sim(cluster, source, *fifo.policy, thermal);
    EndTimes ends;
    sim.add_observer(ends);
    ThermalMeter meter(thermal);
    sim.add_observer(meter);
    sim.run();
    CHECK(ends.end_s.at("a") == Approx(6400).epsilon(1e-12));
    CHECK(sim.now().seconds() == Approx(6400).epsilon(1e-12));  // no thermal step after the last job
    CHECK(sim.stats().decision_points == 3);                     // arrival, the step at 3,600 s, the completion
    const ThermalSiteTotals t = meter.totals().at(0);
    CHECK(t.throttled_device_hours == Approx(2800.0 / 3600).epsilon(1e-12));
    CHECK(t.mean_outside_c == Approx((20 * 3600 + 60 * 2800) / 6400.0).epsilon(1e-12));
    CHECK(t.mean_setpoint_c == 25);
  }
  SECTION("a set-point action slows a running job") {
    // 20 °C outside. Set-point 25 °C until 500 s (device 80 °C, speed 1), then 32 °C
    // (device 87 °C, speed 0.9): 1,000 s of work end at 500 + 500 / 0.9 s.
    ThermalModel thermal({one_site(hourly({20}), 25, 1)}, 0, {1.0}, {});
    VectorSource source({make_job("a", 0, 1, 1000)});
    ScriptPolicy policy(Tick::from_seconds(500), 32);
    ThermalSimulator sim(cluster, source, policy, thermal);
    EndTimes ends;
    sim.add_observer(ends);
    ThermalMeter meter(thermal);
    sim.add_observer(meter);
    sim.run();
    CHECK(ends.end_s.at("a") == Approx(500 + 500 / 0.9).epsilon(1e-9));
    CHECK(thermal.setpoint_c(0) == 32);
    CHECK(thermal.setpoint_changes(0) == 1);
    CHECK(meter.totals().at(0).throttled_device_hours == Approx(500 / 0.9 / 3600).epsilon(1e-9));
  }
}

TEST_CASE("energy under a PUE that follows the outside temperature equals the hand integral", "[sim][thermal][energy]") {
  // One 300 W device (50 W idle), static PUE 1.1 (other overhead 0.1), set-point 25 °C.
  // Hour 0: 20 °C outside <= 25 - 5: economizer, cooling 0.05, PUE 1.15. Hour 1: 60 °C:
  // lift 60 - 25 + 15 = 50 K, COP 0.5 x 298.15 / 50 = 2.9815, cooling 0.05 + 1 / 2.9815.
  // The job runs 6,400 s (as above): 3,600 s in hour 0 and 2,800 s in hour 1 at 300 W.
  const ClusterSpec cluster({NodeGroup{1, "V100", 1}});
  ThermalModel thermal({one_site(hourly({20, 60}), 25, 1, 1.1)}, 0, {1.0}, {});
  VectorSource source({make_job("a", 0, 1, 5000)});
  PolicyInstance fifo = builtin_policies().create("fifo");
  ThermalSimulator sim(cluster, source, *fifo.policy, thermal);
  EnergyMeter meter(sim, {DevicePower{50.0, 300.0}}, {MeteredSite{"", 0, 1, 1.1, nullptr, &thermal, 0}});
  sim.add_observer(meter);
  sim.run();
  const double cool1 = 0.05 + 1 / 2.9815;
  const EnergyTotals t = meter.totals();
  REQUIRE(t.thermal);
  CHECK(t.it_energy_kwh == Approx(300.0 * 6400 / 3.6e6).epsilon(1e-12));
  CHECK(t.facility.energy_kwh == Approx(300.0 * (3600 * 1.15 + 2800 * (1.1 + cool1)) / 3.6e6).epsilon(1e-12));
  CHECK(t.cooling_energy_kwh == Approx(300.0 * (3600 * 0.05 + 2800 * cool1) / 3.6e6).epsilon(1e-12));
  CHECK(t.jobs.energy_kwh == Approx(t.facility.energy_kwh).epsilon(1e-12));  // the job held the only device throughout
  CHECK(t.idle.energy_kwh == Approx(0).margin(1e-12));
}

TEST_CASE("set-point actions: validation errors", "[sim][thermal]") {
  const ClusterSpec cluster({NodeGroup{1, "V100", 1}});
  SECTION("no thermal model") {
    VectorSource source({make_job("a", 0, 1, 100)});
    ScriptPolicy policy(Tick(), 25);
    Simulator sim(cluster, source, policy);
    CHECK_THROWS_WITH(sim.run(), Catch::Contains("policy 'script'") && Catch::Contains("set-cooling-setpoint datacenter 0") &&
                                     Catch::Contains("no thermal model"));
  }
  SECTION("outside the allowed range") {
    ThermalModel thermal({one_site(hourly({20}), 25, 1)}, 0, {1.0}, {});
    VectorSource source({make_job("a", 0, 1, 100)});
    ScriptPolicy policy(Tick(), 40);
    ThermalSimulator sim(cluster, source, policy, thermal);
    CHECK_THROWS_WITH(sim.run(), Catch::Contains("40.0") && Catch::Contains("outside the allowed range [18.0") && Catch::Contains("setpoint_range_c"));
  }
  SECTION("no such datacenter") {
    ThermalModel thermal({one_site(hourly({20}), 25, 1)}, 0, {1.0}, {});
    VectorSource source({make_job("a", 0, 1, 100)});
    ScriptPolicy policy(Tick(), 25, 3);
    ThermalSimulator sim(cluster, source, policy, thermal);
    CHECK_THROWS_WITH(sim.run(), Catch::Contains("no such datacenter (index 3"));
  }
}

TEST_CASE("thermal-aware picks the highest set-point that keeps busy devices unthrottled", "[sim][thermal][policies]") {
  // Threshold 85 °C, rise 55 °C at TDP: a fully loaded device allows a supply of 30 °C.
  const ClusterSpec cluster({NodeGroup{1, "V100", 2}});
  auto run = [&](double outside_c, std::vector<double> load, const std::string& policy_yaml, std::vector<JobSpec> jobs) {
    ThermalModel thermal({one_site(hourly({outside_c}), 22, 2)}, 0, std::move(load), {});
    VectorSource source(std::move(jobs));
    PolicyInstance p = builtin_policies().create(ConfigNode(YAML::Load(policy_yaml), "test", "policy"));
    ThermalSimulator sim(cluster, source, *p.policy, thermal);
    REQUIRE(sim.advance());  // the first arrival's decision point
    ActionBatch batch;
    p.policy->decide(sim.view(), batch);
    sim.apply(batch);
    return thermal.setpoint_c(0);
  };
  const std::vector<JobSpec> one = {make_job("a", 0, 1, 100)};
  CHECK(run(20, {1.0, 1.0}, "{name: thermal-aware}", one) == 30);  // 18 + 12 steps of 1 °C
  CHECK(run(20, {1.0, 1.0}, "{name: thermal-aware, setpoints_c: [18, 22, 27, 32]}", one) == 27);
  CHECK(run(20, {1.0, 1.0}, "{name: thermal-aware, step_c: 5}", one) == 28);  // 18, 23, 28, 33
  // Above the chiller's design temperature (45 °C) the supply rises: 50 °C outside allows 25.
  CHECK(run(50, {1.0, 1.0}, "{name: thermal-aware}", one) == 25);
  // A capped device (busy power 0.8 x TDP) rises 44 °C: up to 41, so the top of the range.
  CHECK(run(20, {0.8, 0.8}, "{name: thermal-aware}", one) == 35);
  // Nothing runs (no job yet): the highest set-point, the least cooling.
  ThermalModel thermal({one_site(hourly({20}), 22, 2)}, 0, {1.0, 1.0}, {});
  VectorSource source(one);
  PolicyInstance p = builtin_policies().create("thermal-aware");
  ThermalSimulator sim(cluster, source, *p.policy, thermal);
  ActionBatch batch;
  p.policy->decide(sim.view(), batch);
  REQUIRE(batch.size() == 1);
  CHECK(batch[0].kind == ActionKind::kSetCooling);
  CHECK(batch[0].job == 0);
  CHECK(batch[0].value == 35);
}

TEST_CASE("thermal config: synthetic curve in local time, CSV file, results.json and errors", "[sim][thermal][config]") {
  TempDir dir;
  // Synthetic: peak at 13:30 local, UTC+2 -> UTC hour 11 holds the cosine at its middle,
  // 11:30 UTC = 13:30 local: the peak; UTC hour 23 is 12 h away: the trough.
  const ThermalConfig syn = ThermalConfig::parse(
      ConfigNode(YAML::Load("{outside_c: {synthetic: {mean_c: 20, amplitude_c: 10, peak_hour_local: 13.5}}}"), "test", "thermal"), 2.0, false);
  CHECK(syn.outside_c->value_at(11 * kHourUs) == Approx(30).epsilon(1e-12));
  CHECK(syn.outside_c->value_at(23 * kHourUs) == Approx(10).epsilon(1e-12));
  CHECK(syn.outside_c->value_at((24 + 11) * kHourUs + 5) == Approx(30).epsilon(1e-12));  // repeats daily
  // A CSV of hourly temperatures (timestamp,temp_c).
  const std::string csv = dir.write("temp.csv", "timestamp,temp_c\n2023-01-01 00:00:00,5.5\n2023-01-01 01:00:00,7\n2023-01-01 02:00:00,9\n");
  const ThermalConfig file = ThermalConfig::parse(ConfigNode(YAML::Load("{outside_c: {file: " + csv + "}}"), "test", "thermal"), 0.0, false);
  CHECK(file.outside_c->value_at(1672531200LL * 1'000'000 + kHourUs + 1) == 7);
  dir.write("gap.csv", "timestamp,temp_c\n2023-01-01 00:00:00,5.5\n2023-01-01 01:00:00,7\n2023-01-01 03:00:00,9\n");
  CHECK_THROWS_WITH(ThermalConfig::parse(ConfigNode(YAML::Load("{outside_c: {file: " + dir.path("gap.csv") + "}}"), "test", "thermal"), 0.0, false),
                    Catch::Contains("gap.csv") && Catch::Contains("gap in the series"));

  // A run: one V100 (300 W busy), 30 °C outside, static PUE 1.1, thermal-aware raises the
  // set-point from 20 to 30 °C at t = 0 (device 30 + 55 = 85 °C: not throttled), and to
  // the top of the range, 35 °C, at the job's end (the last event). PUE meanwhile
  // 1.15 + 1 / COP with lift 30 - 30 + 15 = 15 K, COP 0.5 x 303.15 / 15.
  dir.write("jobs.csv", "job_id,submit_time_s,num_gpus,duration_s\nj,0,1,1000\n");
  const std::string path = dir.write("s.yaml", R"(
cluster: {nodes: [{count: 1, type: V100, devices_per_node: 1}]}
workload: {trace: {path: jobs.csv, format: schedsim}}
energy: {pue: 1.1, thermal: {outside_c: 30, setpoint_c: 20}}
policy: thermal-aware
)");
  const PolicyRegistry reg = builtin_policies();
  const ScenarioConfig s = load_scenario(path, {}, std::nullopt, reg);
  run_scenario(s, reg, RunOptions{dir.path("out")});
  const auto r = nlohmann::json::parse(read_file(dir.path("out/results.json")));
  const double pue = 1.15 + 15 / (0.5 * 303.15);
  CHECK(double(r["summary"]["mean_jct_s"]) == Approx(1000).margin(1e-9));
  CHECK(double(r["energy"]["energy_kwh"]) == Approx(300.0 * 1000 * pue / 3.6e6).epsilon(1e-12));
  CHECK(double(r["energy"]["it_energy_kwh"]) == Approx(300.0 * 1000 / 3.6e6).epsilon(1e-12));
  const auto& th = r["energy"]["thermal"];
  CHECK(double(th["cooling_energy_kwh"]) == Approx(300.0 * 1000 * (pue - 1.1) / 3.6e6).epsilon(1e-12));
  CHECK(double(th["mean_pue"]) == Approx(pue).epsilon(1e-12));
  REQUIRE(th["by_datacenter"].size() == 1);
  CHECK(double(th["by_datacenter"][0]["max_pue"]) == Approx(pue).epsilon(1e-12));
  CHECK(double(th["by_datacenter"][0]["mean_setpoint_c"]) == 30);
  CHECK(int(th["by_datacenter"][0]["setpoint_changes"]) == 2);  // and to 35 °C when the job ends (nothing busy)
  CHECK(double(th["by_datacenter"][0]["throttled_device_hours"]) == 0);
  CHECK(double(r["config"]["energy"]["thermal"]["outside_c"]["constant"]) == 30);
  CHECK(r["config"]["policy"]["name"] == "thermal-aware");
  // `compare` (all policies) runs thermal-aware only where it can act.
  auto names = [&](const ScenarioConfig& sc) {
    std::vector<std::string> out;
    for (const RunResult& run : compare_policies(sc, reg, {"all"}, RunOptions{})) out.push_back(run.policy_name);
    return out;
  };
  const std::vector<std::string> with = names(s);
  CHECK(std::count(with.begin(), with.end(), "thermal-aware") == 1);
  const std::string plain = dir.write("plain.yaml", "cluster: {nodes: [{count: 1, type: V100, devices_per_node: 1}]}\n"
                                                    "workload: {trace: {path: jobs.csv, format: schedsim}}\n");
  const std::vector<std::string> without = names(load_scenario(plain, {}, std::nullopt, reg));
  CHECK(std::count(without.begin(), without.end(), "thermal-aware") == 0);
  CHECK(std::count(without.begin(), without.end(), "fifo") == 1);

  // Errors name the key.
  auto error = [&](const std::string& yaml) {
    const std::string p = dir.write("bad.yaml", yaml);
    try {
      load_scenario(p, {}, std::nullopt, reg);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string base = "cluster: {nodes: [{count: 1, type: V100, devices_per_node: 1}]}\nworkload: {trace: {path: jobs.csv, format: schedsim}}\n";
  CHECK_THAT(error(base + "energy: {thermal: {outside_c: 30, setpoint_c: 40}}\n"), Catch::Contains("setpoint_c") && Catch::Contains("outside setpoint_range_c"));
  CHECK_THAT(error(base + "energy: {thermal: {outside_c: 30, cooling: {cop: 3}}}\n"), Catch::Contains("cop") && Catch::Contains("carnot_fraction"));
  CHECK_THAT(error(base + "energy: {thermal: {setpoint_c: 22}}\n"), Catch::Contains("outside_c"));
  CHECK_THAT(error(base + "energy: {thermal: {outside_c: 30, throttle: {floor: 0}}}\n"), Catch::Contains("floor") && Catch::Contains("(0, 1]"));
  const std::string dcs = "workload: {trace: {path: jobs.csv, format: schedsim}}\nenergy: {}\ndatacenters:\n  sites:\n"
                          "    - {name: A, nodes: [{count: 1, type: V100, devices_per_node: 1}], thermal: {outside_c: 10}}\n";
  CHECK_THAT(error(dcs + "    - {name: B, nodes: [{count: 1, type: V100, devices_per_node: 1}]}\n"), Catch::Contains("needs thermal like the first datacenter"));
  CHECK_THAT(error("workload: {trace: {path: jobs.csv, format: schedsim}}\nenergy: {thermal: {outside_c: 3}}\ndatacenters:\n  sites:\n"
                   "    - {name: A, nodes: [{count: 1, type: V100, devices_per_node: 1}]}\n"),
             Catch::Contains("with `datacenters:` the thermal model goes under each datacenter"));
  CHECK_THAT(error("workload: {trace: {path: jobs.csv, format: schedsim}}\ndatacenters:\n  sites:\n"
                   "    - {name: A, nodes: [{count: 1, type: V100, devices_per_node: 1}], thermal: {outside_c: 10}}\n"),
             Catch::Contains("needs an `energy:` map"));
}

TEST_CASE("thermal process: a set-point without it is refused with the kernel's message; its rate factor is the slowest device", "[sim][thermal][world]") {
  const ClusterSpec cluster({NodeGroup{1, "V100", 2}});
  SECTION("no thermal process registered: the action is refused, naming the policy, time and action") {
    VectorSource source({make_job("a", 0, 1, 100)});
    ScriptPolicy policy(Tick(), 25);
    Simulator sim(cluster, source, policy);
    CHECK_THROWS_WITH(sim.run(), "policy 'script' at t=0 s: action #1 (set-cooling-setpoint datacenter 0): the scenario has no thermal model "
                                 "(add `thermal:` under `energy:` or under each datacenter)");
  }
  SECTION("a set-point action naming devices is refused by the process") {
    ThermalModel thermal({one_site(hourly({20}), 25, 2)}, 0, {1.0, 1.0}, {});
    ThermalProcess process(thermal);
    const ClusterSpec one({NodeGroup{1, "V100", 1}});
    VectorSource source({make_job("a", 0, 1, 100)});
    ScriptPolicy policy(Tick(), 25);
    Simulator sim(one, source, policy);
    sim.add_process(process);
    Action a;
    a.kind = ActionKind::kSetCooling;
    a.num_devices = 1;
    const DeviceId d[] = {0};
    // Called the way the kernel calls it: the reason comes back, nothing is changed.
    WorldContext ctx(sim);
    CHECK(process.apply_action(ctx, a, Span<DeviceId>(d, 1)) == "a set-point action names no devices");
    CHECK(thermal.setpoint_changes(0) == 0);
  }
  SECTION("rate factor: the slowest of the job's devices, power caps included") {
    // Device 0 capped at 0.8, device 1 uncapped; 60 °C outside throttles both (supply 40,
    // device 95 °C: throttle 0.5, times the cap: 0.4 and 0.5).
    ThermalModel thermal({one_site(hourly({20, 60}), 25, 2)}, 0, {1.0, 1.0}, {0.8, 1.0});
    ThermalProcess process(thermal);
    CHECK(process.hooks() == (WorldProcess::kStart | WorldProcess::kEvents | WorldProcess::kRateFactor | WorldProcess::kActions |
                              WorldProcess::kEndOfInstant | WorldProcess::kSnapshot));
    CHECK(process.event_kinds() == std::vector<std::uint32_t>{11});
    thermal.update(Tick());
    JobState j;
    j.devices = {1};
    CHECK(process.rate_factor(j) == 1.0);
    j.devices = {0, 1};
    CHECK(process.rate_factor(j) == 0.8);
    thermal.update(Tick::from_seconds(3600));
    CHECK(process.rate_factor(j) == Approx(0.4).epsilon(1e-12));
    CHECK(process.rate_factor(j) == std::min(thermal.device_speed()[0], thermal.device_speed()[1]));
  }
}
