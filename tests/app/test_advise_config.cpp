// The advisor from a job document: a constructed market in YAML (two regions, two device
// types, constant prices and carbon), the analytically cheapest plan, the deadline and
// cap checks, and job files with mistakes rejected naming the key.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "app/advise_command.hpp"
#include "app/advise_config.hpp"
#include "app/advise_output.hpp"
#include "parallelism/planner.hpp"
#include "base/error.hpp"
#include "test_support.hpp"

using namespace schedsim;

namespace {

// One device per plan, so the iteration time is the roofline alone (no all-reduce).
const char* const kJob = R"(
scenario:
  seed: 1
  datacenters:
    sites:
      - name: A
        provider: pa
        nodes: [{count: 1, type: A100-80GB, devices_per_node: 8}, {count: 1, type: H100-SXM, devices_per_node: 8}]
        signals: {origin_utc: 2023-01-01T00:00:00Z, price: 50, carbon: 100}
      - name: B
        provider: pb
        nodes: [{count: 1, type: A100-80GB, devices_per_node: 8}, {count: 1, type: H100-SXM, devices_per_node: 8}]
        signals: {origin_utc: 2023-01-01T00:00:00Z, price: 80, carbon: 400}
  market:
    offers:
      - {datacenter: A, type: A100-80GB, on_demand_usd_h: 1.0}
      - {datacenter: A, type: H100-SXM, on_demand_usd_h: 2.5}
      - {datacenter: B, type: A100-80GB, on_demand_usd_h: 1.2}
      - {datacenter: B, type: H100-SXM, on_demand_usd_h: 2.2}
  physics: {}
  workload: {synthetic: {num_jobs: 1}}
  policy: fifo
job:
  profile: ResNet-50
  steps: 1000000
  device_counts: [1]
  deadline_h: 1000
search: {start_step_h: 1, latest_start_h: 0}
)";

YAML::Node base() { return YAML::Load(kJob); }

ConfigNode node(const YAML::Node& n) { return ConfigNode(n, "job.yaml"); }

// The roofline time of one ResNet-50 iteration (batch 256) on one device, by hand from the
// profile's numbers (sim/data/workload_profiles.yaml) and the catalogue's peaks.
double resnet_iteration_s(const std::string& type) {
  const AcceleratorCatalogue catalogue = AcceleratorCatalogue::builtin();  // get() returns a reference into it
  const AcceleratorSpec& d = catalogue.get(type);
  return std::max(5.94432e12 / (d.peak_dense_bf16_flops * 0.35), 6.144e10 / (d.memory_bandwidth_bytes_per_s * 0.35));
}

std::string error_of(const YAML::Node& n) {
  try {
    const AdvisePlanner planner(node(n));
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("advise config: the cheapest feasible plan of a constructed market", "[advisor]") {
  const double t_a100 = resnet_iteration_s("A100-80GB"), t_h100 = resnet_iteration_s("H100-SXM");
  REQUIRE(t_h100 < t_a100);
  const double hours_a100 = 1e6 * t_a100 / 3600, hours_h100 = 1e6 * t_h100 / 3600;
  // Cost of each offer: price x hours on its type.
  const double cost[4] = {1.0 * hours_a100, 2.5 * hours_h100, 1.2 * hours_a100, 2.2 * hours_h100};
  const char* labels[4] = {"A A100-80GB x1 on_demand (pa)", "A H100-SXM x1 on_demand (pa)", "B A100-80GB x1 on_demand (pb)", "B H100-SXM x1 on_demand (pb)"};
  const int cheapest = static_cast<int>(std::min_element(cost, cost + 4) - cost);

  const AdvisePlanner planner(node(base()));
  CHECK(planner.world().run_model("A100-80GB", 1)->iteration_s == Approx(t_a100).epsilon(1e-12));
  CHECK(planner.world().run_model("H100-SXM", 1)->iteration_s == Approx(t_h100).epsilon(1e-12));
  AdviseOutcome out = planner.run(Objective::kCost);
  REQUIRE(out.plans.size() == 4);
  CHECK(plan_label(planner.world(), out.plans[0]) == labels[cheapest]);
  CHECK(out.plans[0].cost_usd == Approx(cost[cheapest]));
  // Energy: one device at TDP (a single device never waits for an all-reduce: u = 1).
  const AcceleratorCatalogue catalogue = AcceleratorCatalogue::builtin();
  const AcceleratorSpec& spec = catalogue.get(cheapest % 2 == 0 ? "A100-80GB" : "H100-SXM");
  const double hours = cheapest % 2 == 0 ? hours_a100 : hours_h100;
  CHECK(out.plans[0].energy_kwh == Approx(spec.tdp_w * hours / 1000));
  CHECK(out.plans[0].co2_kg == Approx(spec.tdp_w * hours / 1000 * (cheapest < 2 ? 0.1 : 0.4)));

  SECTION("a deadline only the faster type meets") {
    YAML::Node n = base();
    n["job"]["deadline_h"] = (hours_a100 + hours_h100) / 2;
    const AdvisePlanner tight(node(n));
    out = tight.run(Objective::kCost);
    REQUIRE(out.plans.size() == 2);
    const int best_h100 = cost[1] < cost[3] ? 1 : 3;
    CHECK(plan_label(tight.world(), out.plans[0]) == labels[best_h100]);
    CHECK(out.plans[0].cost_usd == Approx(cost[best_h100]));
  }
  SECTION("a budget below every plan: a message with the reasons") {
    YAML::Node n = base();
    n["job"]["budget_usd"] = *std::min_element(cost, cost + 4) * 0.99;
    const AdvisePlanner poor(node(n));
    out = poor.run(Objective::kCost);
    CHECK(out.plans.empty());
    CHECK(no_feasible_plan_message(out).find("no feasible plan among 4 candidates: 4 over the budget") == 0);
  }
  SECTION("a carbon cap that only region A meets") {
    YAML::Node n = base();
    n["job"]["carbon_cap_kg"] = spec.tdp_w * std::max(hours_a100, hours_h100) / 1000 * 0.1 * 1.01;
    const AdvisePlanner capped(node(n));
    out = capped.run(Objective::kCost);
    for (const Plan& p : out.plans) CHECK(capped.world().offers[static_cast<std::size_t>(p.segments[0].offer)].site == 0);
  }
}

TEST_CASE("advise config: LLaMA-2-7B runs on 80 GB GPUs with the planner's parallelism plan (issue 26)", "[advisor][parallelism]") {
  // The whole model (112 GB with Adam) fits no 80 GB device data-parallel: every candidate
  // was "memory or batch" before. Now the planner shards it; the run model is its plan's.
  YAML::Node n = base();
  n["job"]["profile"] = "LLaMA-2-7B";
  n["job"]["device_counts"] = YAML::Load("[8]");
  n["job"]["steps"] = 1000;
  const AdvisePlanner planner(node(n));
  const AdviseOutcome out = planner.run(Objective::kCost);
  CHECK(out.evaluated == 4);
  REQUIRE(out.plans.size() == 4);
  CHECK(out.rejected.empty());

  const AcceleratorCatalogue catalogue = AcceleratorCatalogue::builtin();
  const AcceleratorSpec& a100 = catalogue.get("A100-80GB");
  const PlanChoice expected = plan_training(find_model("LLaMA-2-7B"), a100, ClusterNetwork::from_topology(TopologyConfig{}, a100, 8), 8, 1024);
  CHECK(planner.world().parallelism_plan("A100-80GB", 8) == expected.plan.describe());
  CHECK(planner.world().run_model("A100-80GB", 8)->iteration_s == Approx(expected.time.iteration_s).epsilon(1e-12));
  CHECK(planner.world().parallelism_plan("H100-SXM", 8).rfind("tp=", 0) == 0);
  const std::string table = plans_table(planner.world(), out, Objective::kCost, 0);
  CHECK(table.find("\nparallelism plans (docs/parallelism.md):\n  ") != std::string::npos);
  CHECK(table.find("A100-80GB x8: " + expected.plan.describe() + "\n") != std::string::npos);

  // LLaMA-2-70B (1.1 TB of model states) fits no plan on 8 devices: the message says
  // what helps, not the deadline.
  n["job"]["profile"] = "LLaMA-2-70B";
  const AdvisePlanner big(node(n));
  const AdviseOutcome none = big.run(Objective::kCost);
  CHECK(none.plans.empty());
  CHECK(no_feasible_plan_message(none) ==
        "no feasible plan among 4 candidates: 4 the job does not run on that many devices of the type (memory or batch) (allow more "
        "devices in device_counts, within the global batch, or device types with more memory; LLM profiles of docs/parallelism.md are "
        "planned with model parallelism and sharding)");

  // A profile that fits data-parallel keeps the data-parallel model and prints no plan.
  const AdvisePlanner resnet(node(base()));
  CHECK(resnet.world().parallelism_plan("A100-80GB", 1).empty());
  CHECK(plans_table(resnet.world(), resnet.run(Objective::kCost), Objective::kCost, 0).find("parallelism plans") == std::string::npos);
}

TEST_CASE("advise config: the CLI writes plans.csv as the planner computes it, and nothing when no plan is feasible", "[advisor]") {
  const test::TempDir dir;
  const std::string job_path = dir.path() + "/job.yaml";
  YAML::Node n = base();
  {
    std::ofstream f(job_path);
    f << n;
  }
  AdviseCliOptions o;
  o.job = job_path;
  o.out = dir.path() + "/out";
  o.plot = true;
  std::ostringstream table;
  run_advise_cli(o, table);
  const AdvisePlanner planner(ConfigNode::load_file(job_path));
  CHECK(test::read_file(o.out + "/plans.csv") == plans_csv(planner.world(), planner.run(Objective::kCost)));
  CHECK(test::read_file(o.out + "/pareto.svg").find("<svg") == 0);
  CHECK(table.str().find("4 candidate plans, 4 feasible") == 0);

  n["job"]["budget_usd"] = 1.0;
  {
    std::ofstream f(job_path);
    f << n;
  }
  o.out = dir.path() + "/none";
  CHECK_THROWS_WITH(run_advise_cli(o, table), Catch::Contains("no feasible plan among 4 candidates: 4 over the budget"));
  CHECK_FALSE(std::filesystem::exists(o.out));
}

TEST_CASE("advise config: region and provider names are escaped in the table, kept in plans.csv", "[advisor][errors]") {
  // A right-to-left override (U+202E) in a region name would reorder the terminal line;
  // the table shows it as \u202e, plans.csv (data) keeps the name as given.
  const std::string rlo = "\xe2\x80\xae";
  YAML::Node n = base();
  n["scenario"]["datacenters"]["sites"][0]["name"] = "A" + rlo + "x";
  n["scenario"]["datacenters"]["sites"][0]["provider"] = "p" + rlo + "a";
  n["scenario"]["market"]["offers"][0]["datacenter"] = "A" + rlo + "x";
  n["scenario"]["market"]["offers"][1]["datacenter"] = "A" + rlo + "x";
  const AdvisePlanner planner(node(n));
  const AdviseOutcome out = planner.run(Objective::kCost);
  const std::string table = plans_table(planner.world(), out, Objective::kCost, 0);
  CHECK(table.find(rlo) == std::string::npos);
  CHECK(table.find("A\\u202ex A100-80GB x1 on_demand (p\\u202ea)") != std::string::npos);
  const std::string csv = plans_csv(planner.world(), out);
  CHECK(csv.find("A" + rlo + "x A100-80GB x1 on_demand (p" + rlo + "a)") != std::string::npos);
  CHECK(csv.find("\\u202e") == std::string::npos);
}

TEST_CASE("advise config: mistakes in a job file name the key", "[advisor]") {
  struct Case {
    const char* what;
    std::function<void(YAML::Node&)> change;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"unknown top-level key", [](YAML::Node& n) { n["jobs"] = 1; }, "unknown key 'jobs'"},
      {"unknown job key", [](YAML::Node& n) { n["job"]["dedline_h"] = 5; }, "job: unknown key 'dedline_h' (did you mean 'deadline_h'?)"},
      {"no deadline", [](YAML::Node& n) { n["job"].remove("deadline_h"); }, "deadline_h"},
      {"unknown profile", [](YAML::Node& n) { n["job"]["profile"] = "ResNet-5000"; }, "job.profile"},
      {"steps and reference", [](YAML::Node& n) { n["job"]["reference"] = YAML::Load("{device_type: A100-80GB, devices: 1, hours: 1}"); },
       "exactly one of steps (iterations) or reference"},
      {"negative steps", [](YAML::Node& n) { n["job"]["steps"] = -3; }, "job.steps"},
      {"zero devices", [](YAML::Node& n) { n["job"]["device_counts"] = YAML::Load("[0]"); }, "job.device_counts[0]"},
      {"repeated count", [](YAML::Node& n) { n["job"]["device_counts"] = YAML::Load("[1, 1]"); }, "device count 1 is listed twice"},
      {"unknown type", [](YAML::Node& n) { n["job"]["device_types"] = YAML::Load("[A100-80GB, Z900]"); }, "job.device_types[1]"},
      {"type nobody sells", [](YAML::Node& n) { n["job"]["device_types"] = YAML::Load("[V100]"); }, "no offer of the market sells V100"},
      {"unknown region", [](YAML::Node& n) { n["job"]["regions"] = YAML::Load("[A, C]"); }, "job.regions[1]: unknown datacenter 'C'; the scenario has A, B"},
      {"unknown kind", [](YAML::Node& n) { n["job"]["kinds"] = YAML::Load("[ondemand]"); }, "job.kinds[0]"},
      {"deadline before the start", [](YAML::Node& n) { n["job"]["earliest_start_h"] = 2000; }, "job.deadline_h: the deadline must be after earliest_start_h"},
      {"deadline beyond the clock", [](YAML::Node& n) { n["job"]["deadline_h"] = "1e20"; }, "job.deadline_h: '1e20' hours is out of range (over 10^12 seconds, about 31,700 years)"},
      {"three segments", [](YAML::Node& n) { n["search"]["segments"] = 3; }, "search.segments: at most 2 segments"},
      {"split outside (0, 1)", [](YAML::Node& n) { n["search"]["split_at"] = YAML::Load("[0.5, 1.0]"); }, "search.split_at[1]: a split fraction must lie in (0, 1)"},
      {"latest start after the deadline", [](YAML::Node& n) { n["search"]["latest_start_h"] = 1000; }, "search.latest_start_h: must lie in [earliest_start_h, deadline_h)"},
      {"unknown search key", [](YAML::Node& n) { n["search"]["start_step"] = 1; }, "search: unknown key 'start_step' (did you mean 'start_step_h'?)"},
      {"no market", [](YAML::Node& n) { n["scenario"].remove("market"); }, "the scenario has no market: map"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    YAML::Node n = base();
    c.change(n);
    const std::string e = error_of(n);
    CHECK(e.find("job.yaml") != std::string::npos);
    CHECK(e.find(c.message) != std::string::npos);
    if (e.find(c.message) == std::string::npos) WARN(e);
  }
  CHECK_THROWS_WITH(parse_objective("price", "--objective"), "--objective: objective must be one of cost, finish, emissions; got 'price'");
}

TEST_CASE("advise config: the 512-GPU two-week experiment on the four 2023 regions", "[advisor][data]") {
  if (test::shared_data_dir().empty()) {
    WARN("skipped: ../shared/data is absent (the experiment reads the 2023 carbon and price files)");
    return;
  }
  const AdvisePlanner planner(ConfigNode::load_file(std::string(SCHEDSIM_SOURCE_DIR) + "/experiments/configs/advise/advise_512gpu_2weeks.yaml"));
  const AdviseOutcome out = planner.run(Objective::kCost);
  REQUIRE_FALSE(out.plans.empty());
  // The reference: 512 A100-80GB for 336 h is the job's work, so that plan takes 336 h of
  // compute plus the expected checkpoint and failure overhead.
  const RunModel* ref = planner.world().run_model("A100-80GB", 512);
  REQUIRE(ref);
  CHECK(planner.job().steps * ref->iteration_s == Approx(336 * 3600.0));
  const Plan* fastest = &out.plans[0];
  const Plan* cleanest = &out.plans[0];
  std::size_t front = 0;
  for (const Plan& p : out.plans) {
    CHECK(p.finish_s <= planner.job().deadline_s);
    if (std::tie(p.finish_s, p.cost_usd, p.co2_kg) < std::tie(fastest->finish_s, fastest->cost_usd, fastest->co2_kg)) fastest = &p;
    if (std::tie(p.co2_kg, p.finish_s, p.cost_usd) < std::tie(cleanest->co2_kg, cleanest->finish_s, cleanest->cost_usd)) cleanest = &p;
    front += p.pareto ? 1 : 0;
  }
  // The cheapest, the fastest and the cleanest plan are each on the front, which is a
  // trade-off (more than one plan).
  CHECK(out.plans[0].pareto);
  CHECK(fastest->pareto);
  CHECK(cleanest->pareto);
  CHECK(front > 1);
  CHECK(front < out.plans.size());
}

TEST_CASE("advise config: a spot offer with an availability file becomes an empirical reclamation rate", "[advisor]") {
  const test::TempDir dir;
  // 8 spot devices for 10 h, none for 2 h, then 8 again (the last value holds).
  std::string csv = "Datetime (UTC),devices\n";
  for (int h = 0; h < 24; ++h) {
    char row[64];
    std::snprintf(row, sizeof row, "2023-01-01T%02d:00:00Z,%d\n", h, h >= 10 && h < 12 ? 0 : 8);
    csv += row;
  }
  const std::string file = dir.write("avail.csv", csv);
  YAML::Node n = base();
  n["scenario"]["market"]["offers"][0]["spot"] = YAML::Load("{devices: 8, usd_h: 0.3, availability: {file: " + file + "}}");
  const AdvisePlanner planner(node(n));
  const OfferTerms* spot = nullptr;
  for (const OfferTerms& o : planner.world().offers) {
    if (o.kind == PriceKind::kSpot) spot = &o;
  }
  REQUIRE(spot);
  CHECK(spot->spot.kind == OfferTerms::Spot::Kind::kTimeline);
  CHECK(spot->max_devices == 8);
  // Over the 1,000 h to the deadline: one drop, 998 h up, a 2 h wait.
  const auto rate = spot_rate(*spot, 1);
  REQUIRE(rate);
  CHECK(rate->reclaim_per_h == Approx(1.0 / 998));
  CHECK(rate->wait_s == Approx(2 * 3600.0));
  CHECK_FALSE(spot_rate(*spot, 9).has_value());
  // The spot plan is evaluated with that rate: its risk is 1 - e^{-E[reclaims]}.
  const AdviseOutcome out = planner.run(Objective::kCost);
  bool found = false;
  for (const Plan& p : out.plans) {
    if (planner.world().offers[static_cast<std::size_t>(p.segments[0].offer)].kind != PriceKind::kSpot) continue;
    found = true;
    CHECK(p.expected_reclaims > 0.0);
    CHECK(p.spot_loss_risk == Approx(1 - std::exp(-p.expected_reclaims)));
  }
  CHECK(found);
}
