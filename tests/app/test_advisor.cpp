// The advisor on a constructed market: two regions with constant prices and carbon, two
// device types with hand-set speeds and power, so that every plan's cost, finish and
// emissions can be written down by hand.
#include <catch2/catch.hpp>

#include <cmath>

#include "app/advise_output.hpp"
#include "app/advisor.hpp"
#include "world/physics/checkpoint_policy.hpp"
#include "base/error.hpp"

using namespace schedsim;

namespace {

// Sites A (carbon 100 g/kWh, electricity 50 USD/MWh) and B (400 g/kWh, 80 USD/MWh), PUE 1.
// Type X: 1 s per step, 300 W busy per device; type Y: 0.5 s per step, 600 W busy.
// Offers (USD per device-hour, on-demand): A-X 1.0, A-Y 2.5, B-X 1.2, B-Y 2.2.
struct Fixture {
  ClusterSpec cluster{{NodeGroup{1, "X", 8}, NodeGroup{1, "X", 8}}};
  GridSignals signals_a{0, StepSeries::constant("price A", 50.0), StepSeries::constant("carbon A", 100.0)};
  GridSignals signals_b{0, StepSeries::constant("price B", 80.0), StepSeries::constant("carbon B", 400.0)};
  Geography geography;
  AdvisorWorld world;
  AdviseJob job;

  static std::vector<Datacenter> sites(const GridSignals* a, const GridSignals* b) {
    Datacenter da{"A", 1.0, 0.0, a, 0, 1};
    Datacenter db{"B", 1.0, 0.0, b, 1, 1};
    return {da, db};
  }
  static GeographyOptions geo_options() {
    GeographyOptions o;
    o.restart_s = 60.0;
    return o;
  }

  Fixture()
      : geography(cluster, sites(&signals_a, &signals_b), {{WanLink{}, WanLink{8e9, 0.5}}, {WanLink{8e9, 0.5}, WanLink{}}}, geo_options()) {
    world.geography = &geography;
    auto offer = [](int site, const std::string& type, PriceKind kind, double usd_h) {
      OfferTerms o;
      o.provider = site == 0 ? "pa" : "pb";
      o.site = site;
      o.device_type = type;
      o.kind = kind;
      o.price_usd_per_device_h = std::make_shared<StepSeries>(StepSeries::constant("price", usd_h));
      o.max_devices = 64;
      return o;
    };
    world.offers = {offer(0, "X", PriceKind::kOnDemand, 1.0), offer(0, "Y", PriceKind::kOnDemand, 2.5), offer(1, "X", PriceKind::kOnDemand, 1.2),
                    offer(1, "Y", PriceKind::kOnDemand, 2.2)};
    world.model_types = {"X", "Y"};
    world.model_counts = {8};
    RunModel x{1.0, 1.0, 60.0, 90.0, 300.0, 50.0};
    RunModel y{0.5, 1.0, 60.0, 90.0, 600.0, 100.0};
    world.models = {x, y};
    job.profile = "test";
    job.steps = 36000;  // X: 10 h, Y: 5 h
    job.device_types = {"X", "Y"};
    job.device_counts = {8};
    job.sites = {0, 1};
    job.kinds = {PriceKind::kOnDemand, PriceKind::kReserved, PriceKind::kSpot};
    job.earliest_start_s = 0;
    job.latest_start_s = 0;
    job.start_step_s = 3600;
    job.deadline_s = 100 * 3600.0;
  }
};

}  // namespace

TEST_CASE("advisor: the expected completion time is the closed form of docs/failures.md", "[advisor]") {
  // M = 10,000 s, tau = 1,000 s, delta = 100 s, R = 50 s, W = 10,500 s: 12,201.2 s.
  CHECK(expected_completion_s(10500, 1000, 100, 1e-4, 50) == Approx(12201.2).margin(0.05));
  // No failures: the work plus ten checkpoint writes; no checkpoints: the work.
  CHECK(expected_completion_s(10500, 1000, 100, 0.0, 50) == Approx(10500 + 10 * 100));
  CHECK(expected_completion_s(10500, 0, 100, 0.0, 50) == 10500);
  // Without checkpoints every failure loses everything: (e^{lambda W} - 1)(M + R).
  CHECK(expected_completion_s(10500, 0, 100, 1e-4, 50) == Approx(std::expm1(1.05) * 10050));
}

TEST_CASE("advisor: the top plan is the analytically cheapest feasible one", "[advisor]") {
  Fixture f;
  // 8 devices: A-X 8 x 1.0 x 10 h = 80 USD, A-Y 8 x 2.5 x 5 = 100, B-X 8 x 1.2 x 10 = 96, B-Y 8 x 2.2 x 5 = 88.
  AdviseOutcome out = advise(f.world, f.job, Objective::kCost);
  REQUIRE(out.plans.size() == 4);
  CHECK(out.evaluated == 4);
  CHECK(plan_label(f.world, out.plans[0]) == "A X x8 on_demand (pa)");
  CHECK(out.plans[0].cost_usd == Approx(80.0));
  CHECK(out.plans[1].cost_usd == Approx(88.0));
  CHECK(out.plans[2].cost_usd == Approx(96.0));
  CHECK(out.plans[3].cost_usd == Approx(100.0));
  const Plan& best = out.plans[0];
  CHECK(best.finish_s == Approx(36000.0));
  // Energy 8 x 300 W x 10 h = 24 kWh; 2.4 kg at 100 g/kWh; electricity 24 kWh x 50 USD/MWh = 1.2 USD.
  CHECK(best.energy_kwh == Approx(24.0));
  CHECK(best.co2_kg == Approx(2.4));
  CHECK(best.electricity_cost_usd == Approx(1.2));
  CHECK(best.spot_loss_risk == 0.0);

  // With electricity billed on top: A-X 81.2, B-Y 88 + 8 x 600 W x 5 h x 80 USD/MWh = 89.92.
  f.job.cost_includes_electricity = true;
  out = advise(f.world, f.job, Objective::kCost);
  CHECK(out.plans[0].cost_usd == Approx(81.2));
  CHECK(out.plans[1].cost_usd == Approx(89.92));
  f.job.cost_includes_electricity = false;

  SECTION("a tight deadline switches to the faster type") {
    f.job.deadline_s = 6 * 3600.0;  // only Y (5 h) makes it: B-Y (88) beats A-Y (100)
    out = advise(f.world, f.job, Objective::kCost);
    REQUIRE(out.plans.size() == 2);
    CHECK(plan_label(f.world, out.plans[0]) == "B Y x8 on_demand (pb)");
    CHECK(out.plans[0].cost_usd == Approx(88.0));
    REQUIRE(out.rejected.size() == 1);
    CHECK(out.rejected[0] == std::make_pair(std::string("misses the deadline"), std::size_t{2}));
  }
  SECTION("a carbon cap excludes the dirty region") {
    // B-Y emits 8 x 600 W x 5 h = 24 kWh x 400 g = 9.6 kg; A-Y 2.4 kg.
    f.job.deadline_s = 6 * 3600.0;
    f.job.carbon_cap_kg = 5.0;
    out = advise(f.world, f.job, Objective::kCost);
    REQUIRE(out.plans.size() == 1);
    CHECK(plan_label(f.world, out.plans[0]) == "A Y x8 on_demand (pa)");
    CHECK(out.plans[0].cost_usd == Approx(100.0));
  }
  SECTION("a budget below every feasible plan leaves none, with the reasons") {
    f.job.deadline_s = 6 * 3600.0;
    f.job.budget_usd = 85.0;
    out = advise(f.world, f.job, Objective::kCost);
    CHECK(out.plans.empty());
    CHECK(no_feasible_plan_message(out) ==
          "no feasible plan among 4 candidates: 2 misses the deadline; 2 over the budget (loosen the deadline, budget_usd or carbon_cap_kg, or "
          "allow more regions, device types or counts)");
  }
  SECTION("an offer with fewer devices than asked is not a candidate") {
    f.world.offers[0].max_devices = 4;
    out = advise(f.world, f.job, Objective::kCost);
    CHECK(out.plans.size() == 3);
    CHECK(out.plans[0].cost_usd == Approx(88.0));
  }
  SECTION("other objectives") {
    out = advise(f.world, f.job, Objective::kFinish);
    CHECK(out.plans[0].finish_s == Approx(18000.0));
    CHECK(out.plans[0].cost_usd == Approx(88.0));  // B-Y and A-Y tie on finish; B-Y is cheaper
    out = advise(f.world, f.job, Objective::kEmissions);
    CHECK(out.plans[0].co2_kg == Approx(2.4));
    CHECK(out.plans[0].cost_usd == Approx(100.0));  // A-X and A-Y tie on emissions; A-Y finishes first
  }
}

TEST_CASE("advisor: later starts on the grid are evaluated with the signals of their window", "[advisor]") {
  Fixture f;
  // Site A's carbon is 100 g/kWh for the first 10 h, then 10.
  f.signals_a = GridSignals(0, StepSeries::constant("price A", 50.0),
                            StepSeries::finite("carbon A", {0, 36000LL * 1000000}, {100.0, 10.0}, 1000LL * 3600 * 1000000));
  f.job.device_types = {"X"};
  f.job.sites = {0};
  f.job.latest_start_s = 10 * 3600.0;
  f.job.start_step_s = 5 * 3600.0;
  const AdviseOutcome out = advise(f.world, f.job, Objective::kEmissions);
  REQUIRE(out.plans.size() == 3);  // starts at 0, 5 h, 10 h
  // 24 kWh over 10 h: from 10 h all at 10 g (0.24 kg); from 5 h half and half (1.32); from 0 (2.4).
  CHECK(out.plans[0].start_s == 36000.0);
  CHECK(out.plans[0].co2_kg == Approx(0.24));
  CHECK(out.plans[1].co2_kg == Approx(1.32));
  CHECK(out.plans[2].co2_kg == Approx(2.4));
  // The later start finishes later: all three are on the (finish, cost, emissions) front.
  for (const Plan& p : out.plans) CHECK(p.pareto);
}

TEST_CASE("advisor: a split plan costs its segments plus the move", "[advisor]") {
  Fixture f;
  f.job.max_segments = 2;
  f.job.split_fractions = {0.5};
  Plan split;
  split.segments.push_back(PlanSegment{0, 8, 18000});  // A-X, half the steps
  split.segments.push_back(PlanSegment{2, 8, 18000});  // B-X, the other half
  split.segments.front().start_s = 0;
  evaluate_plan(f.world, f.job, split);
  const PlanSegment& s1 = split.segments[0];
  const PlanSegment& s2 = split.segments[1];
  // Segment 1: 5 h of compute, then a 60 s checkpoint write before the move (no failures:
  // no periodic checkpoints).
  CHECK(s1.checkpoint_interval_s == 0.0);
  CHECK(s1.wall_s == Approx(18000 + 60));
  // The move: the kernel's relocation (the 10 GB checkpoint of datacenters.checkpoint_gb
  // over 8 Gbit/s + 0.5 s latency, the 60 s restart), then the 90 s restore.
  const double move_s = 0.5 + 10e9 * 8 / 8e9 + 60 + 90;
  CHECK(move_s == Approx(f.geography.relocation_s(0, 1) + 90));
  CHECK(s2.lead_in_s == Approx(move_s));
  CHECK(s2.start_s == Approx(s1.end_s));
  CHECK(s2.wall_s == Approx(move_s + 18000));
  CHECK(split.finish_s == Approx(18000 + 60 + move_s + 18000));
  // Cost: each segment's devices for its whole time, at its offer's price.
  CHECK(s1.compute_cost_usd == Approx(8 * 1.0 * (18000 + 60) / 3600));
  CHECK(s2.compute_cost_usd == Approx(8 * 1.2 * (move_s + 18000) / 3600));
  CHECK(split.cost_usd == Approx(s1.compute_cost_usd + s2.compute_cost_usd));
  // Energy: busy while computing, idle while writing and moving in.
  CHECK(s1.energy_kwh == Approx(8 * (300.0 * 18000 + 50.0 * 60) / 3.6e6));
  CHECK(s2.energy_kwh == Approx(8 * (300.0 * 18000 + 50.0 * move_s) / 3.6e6));
  CHECK(split.co2_kg == Approx(s1.energy_kwh * 0.1 + s2.energy_kwh * 0.4));

  // The search finds it too, with the same numbers.
  const AdviseOutcome out = advise(f.world, f.job, Objective::kCost);
  CHECK(out.evaluated == 4 + 4 * 1);  // four single plans, each with one move to the other region's same type
  bool found = false;
  for (const Plan& p : out.plans) {
    if (plan_label(f.world, p) == "A X x8 on_demand (pa) -> @50% B X x8 on_demand (pb)") {
      found = true;
      CHECK(p.cost_usd == Approx(split.cost_usd));
      CHECK(p.co2_kg == Approx(split.co2_kg));
      CHECK(p.finish_s == Approx(split.finish_s));
    }
  }
  CHECK(found);
}

TEST_CASE("advisor: spot reclamations are priced as failures with a wait for capacity", "[advisor]") {
  Fixture f;
  // A spot copy of A-X at 0.4 USD/device-hour, reclaimed on average every 5 h, down for 1 h.
  OfferTerms spot = f.world.offers[0];
  spot.kind = PriceKind::kSpot;
  spot.price_usd_per_device_h = std::make_shared<StepSeries>(StepSeries::constant("spot", 0.4));
  spot.spot.kind = OfferTerms::Spot::Kind::kOnOff;
  spot.spot.mean_up_h = 5;
  spot.spot.mean_down_h = 1;
  spot.spot.available_when_down = 0;
  f.world.offers.push_back(spot);
  REQUIRE(spot_rate(spot, 8)->reclaim_per_h == Approx(0.2));
  REQUIRE(spot_rate(spot, 8)->wait_s == Approx(3600.0));
  // Down periods that leave 8 devices do not touch an 8-device plan.
  OfferTerms mild = spot;
  mild.spot.available_when_down = 8;
  CHECK(spot_rate(mild, 8)->reclaim_per_h == 0.0);

  Plan p;
  p.segments.push_back(PlanSegment{4, 8, 36000});
  evaluate_plan(f.world, f.job, p);
  const PlanSegment& s = p.segments[0];
  // lambda = 0.2/h; Young-Daly with delta = 60 s: tau = sqrt(2 x 60 x 18000) = 1469.7 s.
  const double lambda = 0.2 / 3600, delta = 60, tau = std::sqrt(2 * 60 * 18000.0);
  CHECK(s.checkpoint_interval_s == Approx(tau));
  const double restart = 3600 + 90;  // the wait for capacity and the restore (no restart_s)
  CHECK(s.wall_s == Approx(expected_completion_s(36000, tau, delta, lambda, restart)));
  const double n = std::floor(36000 / tau), r = 36000 - n * tau;
  const double reclaims = n * std::expm1(lambda * (tau + delta)) + std::expm1(lambda * r);
  CHECK(s.expected_reclaims == Approx(reclaims));
  CHECK(reclaims == Approx(2.2).epsilon(0.1));  // about 0.2/h over 11 h
  CHECK(p.spot_loss_risk == Approx(1 - std::exp(-reclaims)));
  // Billed only while holding the devices (not during the waits).
  CHECK(s.reclaim_wait_s == Approx(reclaims * 3600));
  CHECK(s.compute_cost_usd == Approx(8 * 0.4 * (s.wall_s - s.reclaim_wait_s) / 3600));

  // In the ranking the spot plan is the cheapest, and its risk is reported.
  const AdviseOutcome out = advise(f.world, f.job, Objective::kCost);
  REQUIRE(out.plans.size() == 5);
  CHECK(out.plans[0].segments[0].offer == 4);
  CHECK(out.plans[0].spot_loss_risk > 0.85);
  f.job.kinds = {PriceKind::kOnDemand};
  CHECK(advise(f.world, f.job, Objective::kCost).plans.size() == 4);
}

TEST_CASE("advisor: spot availability from a timeline", "[advisor]") {
  OfferTerms o;
  o.kind = PriceKind::kSpot;
  o.spot.kind = OfferTerms::Spot::Kind::kTimeline;
  // 16 devices for 10 h, 4 for 2 h, 16 for 8 h, 0 for 4 h, 16 until 30 h.
  o.spot.timeline = {{0, 16}, {36000, 4}, {43200, 16}, {72000, 0}, {86400, 16}};
  o.spot.horizon_s = 30 * 3600;
  // 8 devices: up 24 h with 2 drops; down 6 h in all.
  CHECK(spot_rate(o, 8)->reclaim_per_h == Approx(2.0 / 24));
  CHECK(spot_rate(o, 8)->wait_s == Approx(3 * 3600));
  // 4 devices: up 26 h, one drop (to 0) lasting 4 h.
  CHECK(spot_rate(o, 4)->reclaim_per_h == Approx(1.0 / 26));
  CHECK(spot_rate(o, 4)->wait_s == Approx(4 * 3600));
  CHECK_FALSE(spot_rate(o, 17).has_value());
}

TEST_CASE("advisor: Pareto marking on a hand-made set", "[advisor]") {
  auto plan = [](double finish, double cost, double co2) {
    Plan p;
    p.finish_s = finish;
    p.cost_usd = cost;
    p.co2_kg = co2;
    return p;
  };
  std::vector<Plan> plans = {plan(10, 100, 5), plan(20, 50, 5),  plan(20, 60, 5),   // dominated by (20, 50, 5)
                             plan(30, 50, 1),  plan(30, 50, 1),                       // equal: neither dominates
                             plan(5, 200, 9),  plan(40, 60, 2),                       // dominated by (30, 50, 1)
                             plan(10, 100, 6)};                                       // dominated by (10, 100, 5)
  mark_pareto(plans);
  const std::vector<bool> expected = {true, true, false, true, true, true, false, false};
  for (std::size_t i = 0; i < plans.size(); ++i) {
    INFO("plan " << i);
    CHECK(plans[i].pareto == expected[i]);
  }
}

TEST_CASE("advisor: output is deterministic and the CSV carries every plan", "[advisor]") {
  Fixture f;
  f.job.max_segments = 2;
  f.job.split_fractions = {0.25, 0.5};
  f.job.latest_start_s = 3 * 3600.0;
  const AdviseOutcome a = advise(f.world, f.job, Objective::kCost);
  const AdviseOutcome b = advise(f.world, f.job, Objective::kCost);
  const std::string csv = plans_csv(f.world, a);
  CHECK(csv == plans_csv(f.world, b));
  CHECK(pareto_svg(a) == pareto_svg(b));
  std::size_t lines = 0;
  for (char c : csv) lines += c == '\n';
  CHECK(lines == a.plans.size() + 1);
  CHECK(a.evaluated == 4 * 4 * (1 + 2));  // 4 offers x 4 starts x (single + 2 splits)
  CHECK(csv.rfind("rank,plan,pareto,segments,start_utc,finish_utc,start_h,finish_h,devices,cost_usd,", 0) == 0);
  CHECK(csv.find("\n1,A X x8 on_demand (pa),1,1,1970-01-01T00:00:00Z,1970-01-01T10:00:00Z,0,10,8,80,80,1.2,24,2.4,0,0,A,X,on_demand,pa,36000,0,10,0,0,0,0,,,,,,,,,,,\n") !=
        std::string::npos);
}
