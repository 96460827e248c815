// spatial and spatio-temporal: routing to the cleanest datacenter with room (by hand),
// home routing, allowed regions, and on the four 2023 regions, spatio-temporal emits less
// than carbon-agnostic (every job at home).
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "policies/registry.hpp"
#include "world/geography/datacenters.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"
#include "world/geography/geography_process.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::read_file;
using schedsim::test::TempDir;
using schedsim::test::VectorSource;

namespace {

class SiteRecorder : public Observer {
 public:
  explicit SiteRecorder(const Geography& geo) : geo_(geo) {}
  void on_job_start(const JobState& j) override {
    site[j.spec.id] = geo_.site(geo_.site_of_device(j.devices[0])).name;
    start_s[j.spec.id] = j.start.seconds();
  }
  std::map<std::string, std::string> site;
  std::map<std::string, double> start_s;

 private:
  const Geography& geo_;
};

struct World {
  // Site X: 4 devices, 300 g/kWh; Y: 2 devices, 100 g/kWh; Z: 4 devices, 200 g/kWh.
  ClusterSpec cluster{{NodeGroup{1, "V100", 4}, NodeGroup{1, "V100", 2}, NodeGroup{1, "V100", 4}}};
  GridSignals x{0, std::nullopt, StepSeries::constant("carbon", 300.0)};
  GridSignals y{0, std::nullopt, StepSeries::constant("carbon", 100.0)};
  GridSignals z{0, std::nullopt, StepSeries::constant("carbon", 200.0)};
  Geography geo = make();

  Geography make() {
    std::vector<Datacenter> sites(3);
    const char* names[] = {"X", "Y", "Z"};
    const GridSignals* sig[] = {&x, &y, &z};
    for (int s = 0; s < 3; ++s) {
      sites[static_cast<std::size_t>(s)].name = names[s];
      sites[static_cast<std::size_t>(s)].first_node = s;
      sites[static_cast<std::size_t>(s)].num_nodes = 1;
      sites[static_cast<std::size_t>(s)].signals = sig[s];
    }
    return Geography(cluster, sites, std::vector<std::vector<WanLink>>(3, std::vector<WanLink>(3)), GeographyOptions{});
  }

  SiteRecorder run(const std::string& policy_yaml, std::vector<JobSpec> jobs) {
    PolicyInstance p = builtin_policies().create(ConfigNode(YAML::Load(policy_yaml), "test"));
    VectorSource source(std::move(jobs));
    GeographyProcess geography(geo);
    Simulator sim(cluster, source, *p.policy);
    sim.add_process(geography);
    SiteRecorder rec(geo);
    sim.add_observer(rec);
    sim.run();
    return rec;
  }
};

JobSpec at_home(JobSpec j, const std::string& home) {
  j.home_region = home;
  return j;
}

}  // namespace

TEST_CASE("spatial routes each job to the cleanest datacenter with room", "[policies][spatial]") {
  World w;
  // In arrival order: a (2) -> Y (100, room for 2); b (2) -> Z (200; Y is full);
  // c (4) -> X (Z has 2 left); d (2) -> Z's last two; e (1) waits for the first end and
  // then goes to the cleanest datacenter with room: Y when a ends at 100 s.
  const SiteRecorder r = w.run("{name: spatial}", {make_job("a", 0, 2, 100), make_job("b", 0, 2, 200), make_job("c", 0, 4, 300),
                                                  make_job("d", 0, 2, 300), make_job("e", 0, 1, 50)});
  CHECK(r.site.at("a") == "Y");
  CHECK(r.site.at("b") == "Z");
  CHECK(r.site.at("c") == "X");
  CHECK(r.site.at("d") == "Z");
  CHECK(r.site.at("e") == "Y");
  CHECK(r.start_s.at("e") == 100.0);
  // Allowed regions: a job allowed only in X goes there although Y is cleaner.
  JobSpec only_x = make_job("only-x", 0, 1, 10);
  only_x.allowed_regions = {"X"};
  CHECK(w.run("{name: spatial}", {only_x}).site.at("only-x") == "X");
  // route: home keeps every job at home (the carbon-agnostic baseline).
  const SiteRecorder home = w.run("{name: spatial, route: home}", {at_home(make_job("h1", 0, 2, 10), "X"), at_home(make_job("h2", 0, 2, 10), "Z")});
  CHECK(home.site.at("h1") == "X");
  CHECK(home.site.at("h2") == "Z");
}

TEST_CASE("spatio-temporal picks the (datacenter, start) with the lowest carbon over the run", "[policies][spatial]") {
  // Two datacenters: P is 300 then 50 from hour 2; Q is 150 all the time. A 1-hour job with
  // 3 hours of slack waits for P's clean hours; with no slack it goes to Q now.
  const ClusterSpec cluster({NodeGroup{1, "V100", 2}, NodeGroup{1, "V100", 2}});
  const std::int64_t h = 3'600'000'000LL;
  const GridSignals p(0, std::nullopt, StepSeries::finite("carbon", {0, 2 * h}, {300.0, 50.0}, 48 * h));
  const GridSignals q(0, std::nullopt, StepSeries::constant("carbon", 150.0));
  std::vector<Datacenter> sites(2);
  sites[0] = Datacenter{"P", 1.0, 0.0, &p, 0, 1};
  sites[1] = Datacenter{"Q", 1.0, 0.0, &q, 1, 1};
  const Geography geo(cluster, sites, std::vector<std::vector<WanLink>>(2, std::vector<WanLink>(2)), GeographyOptions{});
  for (const auto& [slack_s, site, start_s] : {std::tuple<double, std::string, double>{10800, "P", 7200}, {0, "Q", 0}}) {
    INFO("slack " << slack_s);
    PolicyInstance policy = builtin_policies().create(
        ConfigNode(YAML::Load("{name: spatio-temporal, slack_factor: 0, slack_s: " + std::to_string(slack_s) + "}"), "test"));
    VectorSource source({make_job("j", 0, 1, 3600)});
    GeographyProcess geography(geo);
    Simulator sim(cluster, source, *policy.policy);
    sim.add_process(geography);
    SiteRecorder rec(geo);
    sim.add_observer(rec);
    sim.run();
    CHECK(rec.site.at("j") == site);
    CHECK(rec.start_s.at("j") == start_s);
  }
}

TEST_CASE("four regions 2023: spatio-temporal and spatial emit less than carbon-agnostic", "[policies][spatial][real-data]") {
  // The experiment's config (experiments/configs/geo_four_regions.yaml, which names the
  // data as ../shared/data beside the checkout) with 300 jobs.
  const std::filesystem::path data = std::filesystem::path(SCHEDSIM_SOURCE_DIR) / ".." / "shared" / "data" / "carbon";
  if (!std::filesystem::is_directory(data)) {
    WARN("skipped: " << data.string() << " is absent (the four-region config reads ../shared/data beside the checkout)");
    return;
  }
  const std::string config = std::string(SCHEDSIM_SOURCE_DIR) + "/experiments/configs/geo_four_regions.yaml";
  const PolicyRegistry reg = builtin_policies();
  TempDir dir;
  // The config's inference services run under every policy; their default autoscaler
  // here lends no devices, so that no job is resized (the energy check below).
  auto run = [&](const std::string& policy, const std::string& out) {
    const ScenarioConfig s = load_scenario(
        config, {"workload.synthetic.num_jobs=300", "policy=" + policy, "inference.autoscaler={name: predictive, lend: false}"}, std::nullopt, reg);
    run_scenario(s, reg, RunOptions{dir.path(out)});
    return nlohmann::json::parse(read_file(dir.path(out + "/results.json")));
  };
  const auto agnostic = run("{name: spatial, route: home}", "agnostic");
  const auto spatial = run("{name: spatial}", "spatial");
  const auto st = run("{name: spatio-temporal, slack_s: 43200, slack_factor: 0}", "st");
  const double co2_agnostic = agnostic["energy"]["jobs"]["co2_kg"], co2_spatial = spatial["energy"]["jobs"]["co2_kg"],
               co2_st = st["energy"]["jobs"]["co2_kg"];
  WARN("four regions, 300 jobs: jobs' emissions " << co2_agnostic << " kg (agnostic), " << co2_spatial << " kg (spatial), " << co2_st
                                                   << " kg (spatio-temporal); mean JCT " << agnostic["summary"]["mean_jct_s"] << ", "
                                                   << spatial["summary"]["mean_jct_s"] << ", " << st["summary"]["mean_jct_s"] << " s");
  CHECK(co2_st < co2_agnostic);
  CHECK(co2_spatial < co2_agnostic);
  CHECK(st["summary"]["jobs_completed"] == 300);
  // Deterministic: the same config and seed give the same bytes.
  run("{name: spatio-temporal, slack_s: 43200, slack_factor: 0}", "st-again");
  CHECK(read_file(dir.path("st/jobs.csv")) == read_file(dir.path("st-again/jobs.csv")));
  // Same work on the same device type (no policy here migrates or resizes): only where and when it runs changes.
  CHECK(double(st["energy"]["jobs"]["energy_kwh"]) == Approx(double(agnostic["energy"]["jobs"]["energy_kwh"])).epsilon(1e-9));
}

TEST_CASE("queue policies keep every job inside one datacenter it may run in: its home first", "[policies][spatial][geography]") {
  // Before, the queue engine's placements ignored the geography: first fit handed job b
  // devices 6, 7 (datacenter A) and 8, 9 (B), and the kernel stopped the run ("devices 6
  // and 8 are in different datacenters"). Now: a fills A (0..5); b's home A has 2 free, so
  // b goes to B (8..11); c, at home in B, takes 12, 13.
  TempDir dir;
  const PolicyRegistry reg = builtin_policies();
  dir.write("t.csv", "job_id,submit_time_s,num_gpus,duration_s,estimate_s,region\na,0,6,100,100,A\nb,0,4,100,100,A\nc,0,2,100,100,B\n");
  for (const std::string policy : {"fifo", "sjf", "srtf", "las", "slurm-easy", "tiresias", "themis", "{name: fifo, placement: packed}",
                                   "{name: fifo, placement: spread}", "{name: fifo, placement: random}"}) {
    INFO("policy " << policy);
    const std::string yaml = R"(
seed: 3
datacenters:
  sites:
    - {name: A, nodes: [{count: 2, type: V100, devices_per_node: 4}]}
    - {name: B, nodes: [{count: 2, type: V100, devices_per_node: 4}]}
workload: {trace: {path: t.csv, format: schedsim}}
information: oracle
policy: )" + policy + "\n";
    const ScenarioConfig s = load_scenario(dir.write("geo.yaml", yaml), {}, std::nullopt, reg);
    RunOptions options{dir.path("out")};
    options.timeline = true;
    const RunResult r = run_scenario(s, reg, options);
    CHECK(r.summary.jobs_completed == 3);
    std::map<std::string, std::vector<int>> devices;
    for (const auto& [job, d] : schedsim::test::read_allocations(dir.path("out/allocations.csv"))) devices[job] = d;
    CHECK(devices["a"] == std::vector<int>{0, 1, 2, 3, 4, 5});
    CHECK(devices["b"] == std::vector<int>{8, 9, 10, 11});
    CHECK(devices["c"] == std::vector<int>{12, 13});
  }
}
