// carbon-aware / price-aware temporal shifting: the chosen window by hand, the kernel's
// wake-up at the release instant, and the DE-LU 2023 comparison with carbon-agnostic FIFO.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "policies/registry.hpp"
#include "policies/temporal_shift.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::read_file;
using schedsim::test::TempDir;
using schedsim::test::VectorSource;

namespace {
constexpr std::int64_t kHourUs = 3'600'000'000LL;

GridSignals carbon_hours(std::vector<double> values) {
  std::vector<std::int64_t> t;
  for (std::size_t i = 0; i < values.size(); ++i) t.push_back(static_cast<std::int64_t>(i) * kHourUs);
  const std::int64_t end = static_cast<std::int64_t>(values.size()) * kHourUs;
  return GridSignals(0, StepSeries::constant("price", 50.0), StepSeries::finite("carbon", t, std::move(values), end));
}

class StartRecorder : public Observer {
 public:
  void on_job_start(const JobState& j) override { start_s[j.spec.id] = j.start.seconds(); }
  std::map<std::string, double> start_s;
};
}  // namespace

TEST_CASE("best_start picks the window with the lowest mean signal within the slack", "[policies][shift]") {
  const GridSignals g = carbon_hours({300, 100, 200, 50, 400, 400});
  const Tick now;
  auto best = [&](double latest_s, double est_s, double min_saving = 0.0) {
    return best_start(g, SignalKind::kCarbon, now, Tick::from_seconds(latest_s), est_s, 1e9, min_saving).seconds();
  };
  CHECK(best(7200, 1800) == 3600);     // candidates 0 (300), 3600 (100), 7200 (200)
  CHECK(best(10800, 1800) == 10800);   // hour 3 (50) is reachable
  CHECK(best(3599, 1800) == 0);        // no step boundary within the slack
  // A 2-hour job: mean over [t, t + 2 h]: 0 -> 200, 1 h -> 150, 2 h -> 125, 3 h -> 225.
  CHECK(best(10800, 7200) == 7200);
  // min_saving 0.7: 100 is not below 300 x 0.3 = 90, so start now.
  CHECK(best(7200, 1800, 0.7) == 0);
  CHECK(best(7200, 1800, 0.6) == 3600);
}

TEST_CASE("a deferred job starts exactly at its release instant through a kernel wake-up", "[policies][shift][kernel]") {
  const GridSignals g = carbon_hours({300, 100, 200, 50, 400, 400});
  const ClusterSpec cluster({NodeGroup{1, "V100", 2}});
  const std::string yaml = "{name: carbon-aware, slack_factor: 4}";  // latest start 4 x 1800 s = 7200 s
  PolicyInstance p = builtin_policies().create(ConfigNode(YAML::Load(yaml), "test"));
  JobSpec deadline_job = make_job("d", 0, 1, 1800);
  deadline_job.deadline_s = 1800 + 12000;  // latest start 12000 s: hour 3 (50) is within reach
  VectorSource source({make_job("a", 0, 1, 1800), deadline_job});
  SimulatorOptions options;
  options.signals = &g;
  Simulator sim(cluster, source, *p.policy, options);
  StartRecorder rec;
  sim.add_observer(rec);
  sim.run();
  CHECK(rec.start_s.at("a") == 3600.0);
  CHECK(rec.start_s.at("d") == 10800.0);
  CHECK(sim.stats().jobs_completed == 2);
  // Only the listed groups are deferrable: a job of another group starts at once.
  PolicyInstance g_only = builtin_policies().create(ConfigNode(YAML::Load("{name: carbon-aware, slack_factor: 4, groups: [batch]}"), "test"));
  JobSpec batch = make_job("batch", 0, 1, 1800), interactive = make_job("interactive", 0, 1, 1800);
  batch.group = "batch";
  interactive.group = "dev";
  VectorSource source3({batch, interactive});
  Simulator sim3(cluster, source3, *g_only.policy, options);
  StartRecorder rec3;
  sim3.add_observer(rec3);
  sim3.run();
  CHECK(rec3.start_s.at("batch") == 3600.0);
  CHECK(rec3.start_s.at("interactive") == 0.0);
  // Without signals the policy says what it needs.
  PolicyInstance q = builtin_policies().create(ConfigNode(YAML::Load(yaml), "test"));
  VectorSource source2({make_job("a", 0, 1, 1800)});
  Simulator bare(cluster, source2, *q.policy);
  CHECK_THROWS_WITH(bare.run(), Catch::Contains("policy 'carbon-aware' needs a carbon signal"));
}

TEST_CASE("DE-LU 2023: carbon-aware shifting emits less than carbon-agnostic FIFO and costs JCT", "[policies][shift][real-data]") {
  const std::string data = schedsim::test::shared_data_dir();
  if (data.empty()) {
    WARN("skipped: ../shared/data is absent (set SCHEDSIM_SHARED_DATA to its path to run this test)");
    return;
  }
  TempDir dir;
  // 300 jobs over ~6 days of March 2023 on 32 A100s, each deferrable by up to 12 h.
  const std::string yaml = R"(
seed: 3
cluster:
  nodes:
    - {count: 4, type: A100-80GB, devices_per_node: 8}
workload:
  synthetic:
    num_jobs: 300
    arrival: {process: poisson, mean_interarrival_s: 1800}
    duration_s: {dist: lognormal, median: 7200, sigma: 1.0}
    gpus: {1: 0.5, 2: 0.2, 4: 0.2, 8: 0.1}
energy: {pue: 1.2}
signals:
  origin_utc: 2023-03-01T00:00:00Z
  carbon: {file: )" + data + R"(/carbon/DE-LU_2023_hourly.csv}
  price: {file: )" + data + R"(/prices/DE-LU_electricity_prices_2023.csv}
information: oracle
policy: fifo
)";
  const std::string path = dir.write("de.yaml", yaml);
  const PolicyRegistry reg = builtin_policies();
  auto run = [&](const std::string& policy, const std::string& out) {
    const ScenarioConfig s = load_scenario(path, {"policy=" + policy}, std::nullopt, reg);
    run_scenario(s, reg, RunOptions{dir.path(out)});
    return nlohmann::json::parse(read_file(dir.path(out + "/results.json")));
  };
  const auto agnostic = run("fifo", "agnostic");
  const auto aware = run("{name: carbon-aware, slack_s: 43200, slack_factor: 0}", "aware");
  const auto price_aware = run("{name: price-aware, slack_s: 43200, slack_factor: 0}", "price");
  const double cost_agnostic = agnostic["energy"]["jobs"]["cost_usd"], cost_price_aware = price_aware["energy"]["jobs"]["cost_usd"];
  WARN("DE-LU 2023-03: jobs' electricity cost " << cost_agnostic << " USD (fifo) -> " << cost_price_aware << " USD (price-aware)");
  CHECK(cost_price_aware < cost_agnostic);
  const double co2_agnostic = agnostic["energy"]["jobs"]["co2_kg"], co2_aware = aware["energy"]["jobs"]["co2_kg"];
  const double jct_agnostic = agnostic["summary"]["mean_jct_s"], jct_aware = aware["summary"]["mean_jct_s"];
  const double kwh_agnostic = agnostic["energy"]["jobs"]["energy_kwh"], kwh_aware = aware["energy"]["jobs"]["energy_kwh"];
  WARN("DE-LU 2023-03: jobs' emissions " << co2_agnostic << " -> " << co2_aware << " kgCO2, mean JCT " << jct_agnostic << " -> " << jct_aware
                                         << " s, jobs' energy " << kwh_agnostic << " -> " << kwh_aware << " kWh; facility emissions "
                                         << agnostic["energy"]["co2_kg"] << " -> " << aware["energy"]["co2_kg"]);
  CHECK(co2_aware < co2_agnostic);
  CHECK(jct_aware > jct_agnostic);
  CHECK(kwh_aware == Approx(kwh_agnostic).epsilon(1e-9));  // same work, same energy: only when it runs changes
  CHECK(aware["summary"]["jobs_completed"] == 300);
}
