// The market: which offer each device is sold under, price lookups and integrals, the
// spot availability cursors, and in the kernel spot reclamation and compute cost.
#include <catch2/catch.hpp>

#include <map>

#include "first_fit_policy.hpp"
#include "policies/registry.hpp"
#include "world/market/spot_process.hpp"
#include "world/failures/failure_process.hpp"
#include "base/error.hpp"
#include "world/failures/failure_model.hpp"
#include "sim/invariant_checker.hpp"
#include "world/market/market.hpp"
#include "world/market/market_meter.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::Ends;
using schedsim::test::FirstFit;
using schedsim::test::make_job;
using schedsim::test::VectorSource;

namespace {

constexpr std::int64_t kOrigin = 1'672'531'200'000'000LL;  // 2023-01-01T00:00:00Z
constexpr std::int64_t kHourUs = 3'600'000'000LL;

std::shared_ptr<const StepSeries> constant(double v) { return std::make_shared<const StepSeries>(StepSeries::constant("price", v)); }

Offer offer(int site, const std::string& type, PriceKind kind, std::shared_ptr<const StepSeries> price, int devices = 0) {
  Offer o;
  o.site = site;
  o.device_type = type;
  o.kind = kind;
  o.usd_per_device_h = std::move(price);
  o.devices = devices;
  return o;
}

// Two sites of one provider: site 0 = devices 0..7 (A100), site 1 = devices 8..11 (V100).
ClusterSpec two_sites() { return ClusterSpec({{1, "A100", 8}, {1, "V100", 4}}); }
std::vector<MarketSite> sites() { return {{"west", 0, 0, 8}, {"east", 0, 8, 4}}; }

}  // namespace

TEST_CASE("market: devices go to reserved, then spot, then on-demand, by ascending id", "[sim][market]") {
  const Market m(two_sites(), sites(), {Provider{"cloud", {0, 1}}},
                 {offer(0, "A100", PriceKind::kOnDemand, constant(3.0)), offer(0, "A100", PriceKind::kSpot, constant(1.0), 3),
                  offer(0, "A100", PriceKind::kReserved, constant(2.0), 2)},
                 kOrigin);
  CHECK(m.offer(0).devices == 3);  // on-demand: the 8 - 2 - 3 left
  CHECK(m.offer_devices(2) == std::vector<DeviceId>{0, 1});
  CHECK(m.offer_devices(1) == std::vector<DeviceId>{2, 3, 4});
  CHECK(m.offer_devices(0) == std::vector<DeviceId>{5, 6, 7});
  for (DeviceId d = 8; d < 12; ++d) CHECK(m.device_offer(d) == -1);  // no offer: owned
  CHECK(m.is_spot(3));
  CHECK_FALSE(m.is_spot(5));
  CHECK(m.offers_at(0, "A100") == std::vector<int>{2, 1, 0});
  CHECK(m.offers_at(1, "V100").empty());
}

TEST_CASE("market: offers that do not fit the site are errors", "[sim][market]") {
  const Provider p{"cloud", {0, 1}};
  CHECK_THROWS_WITH(Market(two_sites(), sites(), {p}, {offer(1, "A100", PriceKind::kOnDemand, constant(3.0))}, kOrigin),
                    Catch::Contains("datacenter 'east' has no device of type A100"));
  CHECK_THROWS_WITH(Market(two_sites(), sites(), {p},
                           {offer(1, "V100", PriceKind::kReserved, constant(1.0), 3), offer(1, "V100", PriceKind::kSpot, constant(1.0), 2)}, kOrigin),
                    Catch::Contains("sells 2 devices but only 1 of the 4 V100 devices of east are left"));
  CHECK_THROWS_WITH(Market(two_sites(), sites(), {p},
                           {offer(1, "V100", PriceKind::kSpot, constant(1.0), 1), offer(1, "V100", PriceKind::kSpot, constant(1.0), 1)}, kOrigin),
                    Catch::Contains("is listed twice"));
}

TEST_CASE("market: a time-varying price is integrated step by step", "[sim][market]") {
  // 2 USD/h for the first hour, 5 USD/h for the second, 1 USD/h for the third.
  auto price = std::make_shared<const StepSeries>(
      StepSeries::finite("spot.csv", {kOrigin, kOrigin + kHourUs, kOrigin + 2 * kHourUs}, {2.0, 5.0, 1.0}, kOrigin + 3 * kHourUs));
  const Market m(two_sites(), sites(), {Provider{"cloud", {0, 1}}}, {offer(0, "A100", PriceKind::kOnDemand, price)}, kOrigin);
  CHECK(m.price_usd_per_device_h(0, Tick::from_seconds(1800)) == 2.0);
  CHECK(m.price_usd_per_device_h(0, Tick::from_seconds(3600)) == 5.0);
  // 30 min at 2 + 60 min at 5 + 15 min at 1 = 1 + 5 + 0.25.
  CHECK(m.cost_usd_per_device(0, Tick::from_seconds(1800), Tick::from_seconds(2 * 3600 + 900)) == Approx(6.25).epsilon(1e-12));
  CHECK_THROWS_AS(m.price_usd_per_device_h(0, Tick::from_seconds(4 * 3600)), InputError);
}

TEST_CASE("market: spot availability from a series and from the on/off model", "[sim][market]") {
  // Series: 3 devices, then 1, 1 (no change), 3.
  auto avail = std::make_shared<const StepSeries>(
      StepSeries::finite("avail.csv", {kOrigin, kOrigin + kHourUs, kOrigin + 2 * kHourUs, kOrigin + 3 * kHourUs}, {3, 1, 1, 3}, kOrigin + 4 * kHourUs));
  Offer spot = offer(0, "A100", PriceKind::kSpot, constant(1.0), 3);
  spot.availability.kind = SpotAvailability::Kind::kSeries;
  spot.availability.devices = avail;
  Offer onoff = offer(1, "V100", PriceKind::kSpot, constant(0.5), 4);
  onoff.availability.kind = SpotAvailability::Kind::kOnOff;
  onoff.availability.mean_up_h = 10;
  onoff.availability.mean_down_h = 1;
  onoff.availability.fraction_reclaimed = 0.5;
  const Market m(two_sites(), sites(), {Provider{"cloud", {0, 1}}}, {spot, onoff}, kOrigin);

  const auto series = m.spot_timeline(0, Tick::from_seconds(1e6), 1);
  REQUIRE(series.size() == 3);
  CHECK(series[0].time == Tick() );
  CHECK(series[0].available == 3);
  CHECK(series[1].time == Tick::from_seconds(3600));
  CHECK(series[1].available == 1);
  CHECK(series[2].time == Tick::from_seconds(3 * 3600));
  CHECK(series[2].available == 3);

  const Tick horizon = Tick::from_seconds(1000 * 3600.0);
  const auto a = m.spot_timeline(1, horizon, 7);
  CHECK(a == m.spot_timeline(1, horizon, 7));  // deterministic in the seed
  CHECK_FALSE(a == m.spot_timeline(1, horizon, 8));
  REQUIRE(a.size() > 20);
  double up_s = 0, down_s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].available == (i % 2 == 0 ? 4 : 2));  // half of 4 reclaimed when down
    const Tick end = i + 1 < a.size() ? a[i + 1].time : horizon;
    (i % 2 == 0 ? up_s : down_s) += (end - a[i].time).seconds();
    if (i > 0) CHECK(a[i - 1].time < a[i].time);
  }
  // Long-run share of down time is mean_down / (mean_up + mean_down) = 1/11; loosely.
  CHECK(down_s / (up_s + down_s) == Approx(1.0 / 11).margin(0.05));
}

// ---- the kernel: spot reclamation and what jobs pay ----

namespace {

// Rate 1 everywhere; a checkpoint restore takes kRestoreS.
constexpr double kRestoreS = 120.0;
class RestorePhysics : public PhysicsModel {
 public:
  std::string placement_problem(const JobSpec&, Span<DeviceId>) const override { return ""; }
  void update_rates(const Simulator& sim, const std::vector<JobSlot>&, std::vector<std::pair<JobSlot, double>>& rates) override {
    for (JobSlot s = sim.first_running(); s != kNoJob; s = sim.job(s).next_in_list) rates.emplace_back(s, 1.0);
  }
  double estimated_rate(const JobSpec&, int, int) const override { return 1.0; }
  double checkpoint_save_s(const JobSpec&, int) const override { return 0.0; }
  double checkpoint_restore_s(const JobSpec&, int) const override { return kRestoreS; }
};

// One node of 4 devices, all sold as spot at 1 USD/h: every device available, then none
// over [3500 s, 5000 s), then every device again.
Market spot_market() {
  auto avail = std::make_shared<const StepSeries>(
      StepSeries::finite("avail", {kOrigin, kOrigin + 3'500'000'000LL, kOrigin + 5'000'000'000LL}, {4, 0, 4}, kOrigin + 6'000'000'000LL));
  Offer spot = offer(0, "test", PriceKind::kSpot, constant(1.0), 4);
  spot.availability.kind = SpotAvailability::Kind::kSeries;
  spot.availability.devices = avail;
  return Market(ClusterSpec({NodeGroup{1, "test", 4}}), {{"cluster", 0, 0, 4}}, {Provider{"cloud", {0}}}, {spot}, kOrigin);
}

struct SpotRun {
  JobState job;
  SimulatorStats stats;
  MarketTotals totals;
};

SpotRun run_spot(bool checkpoints) {
  const ClusterSpec cluster({NodeGroup{1, "test", 4}});
  const Market market = spot_market();
  VectorSource source({make_job("train", 0, 4, 10000)});
  FirstFit policy;
  RestorePhysics physics;
  FailureConfig fc;  // no failures; checkpoints every 1000 s of compute, written instantly
  fc.checkpoint.policy = CheckpointConfig::Policy::kFixed;
  fc.checkpoint.interval_s = 1000;
  fc.checkpoint.cost_s = 0;
  FailureModel failures(fc, cluster, 1, &physics);
  SimulatorOptions options;
  options.physics = &physics;
  options.market_view = &market;
  Simulator sim(cluster, source, policy, options);
  FailureProcess failure_process(failures);  // world processes: failures first, then the market
  SpotProcess spot(market, 0);
  if (checkpoints) sim.add_process(failure_process);
  sim.add_process(spot);
  Ends ends;
  InvariantChecker checker;
  MarketMeter meter(sim, market, nullptr);
  sim.add_observer(ends);
  sim.add_observer(checker);
  sim.add_observer(meter);
  sim.run();
  REQUIRE(ends.jobs.size() == 1);
  return {ends.jobs[0], sim.stats(), meter.totals()};
}

}  // namespace

TEST_CASE("spot reclamation rolls back to the last checkpoint and costs exactly one restore", "[sim][market][spot]") {
  // Checkpoints commit at 1000, 2000, 3000 s; the reclamation at 3500 s loses 500 s of
  // work; the capacity returns at 5000 s; the restart restores once (120 s) and computes
  // the 7000 s left: 5000 + 120 + 7000.
  const SpotRun r = run_spot(true);
  CHECK(r.job.end == Tick::from_seconds(5000 + kRestoreS + 7000));
  CHECK(r.job.lost_work_s == Approx(500).margin(1e-9));
  CHECK(r.stats.spot_reclamations == 1);
  CHECK(r.stats.spot_devices_reclaimed == 4);
  CHECK(r.stats.jobs_hit_by_reclaim == 1);
  CHECK(r.stats.unit_failures == 0);
  // One restore stall on 4 devices, booked as preemption overhead.
  CHECK(r.job.overhead_device_us == Tick::from_seconds(4 * kRestoreS).us());
  // It paid 1 USD per device-hour for what it held: [0, 3500) and [5000, 12120) on 4 devices.
  const double device_h = 4 * (3500.0 + 7120.0) / 3600.0;
  CHECK(r.totals.total.device_h == Approx(device_h).epsilon(1e-12));
  CHECK(r.totals.total.compute_usd == Approx(device_h).epsilon(1e-12));
  CHECK(r.totals.by_kind[static_cast<int>(PriceKind::kSpot)].compute_usd == r.totals.total.compute_usd);
  REQUIRE(r.totals.settlement.size() == 1);
  CHECK(r.totals.settlement[0].provider == "cloud");
  CHECK(r.totals.settlement[0].compute_usd == r.totals.total.compute_usd);
}

TEST_CASE("a job that never checkpointed restarts from scratch with nothing to restore", "[sim][market][spot]") {
  const SpotRun r = run_spot(false);
  CHECK(r.job.end == Tick::from_seconds(5000 + 10000));
  CHECK(r.job.overhead_device_us == 0);
  CHECK(r.stats.jobs_hit_by_reclaim == 1);
}

TEST_CASE("a job's compute cost integrates a time-varying price exactly", "[sim][market]") {
  // 2 USD/h in the first hour, 5 in the second, 1 after; a 2-device job runs 0 .. 2.5 h
  // on on-demand devices, another 1-device job 1 h on devices no offer covers.
  auto price = std::make_shared<const StepSeries>(
      StepSeries::finite("price", {kOrigin, kOrigin + kHourUs, kOrigin + 2 * kHourUs}, {2.0, 5.0, 1.0}, kOrigin + 10 * kHourUs));
  const ClusterSpec cluster({NodeGroup{1, "A100", 2}, NodeGroup{1, "V100", 1}});
  const Market market(cluster, {{"cluster", 0, 0, 3}}, {Provider{"cloud", {0}}}, {offer(0, "A100", PriceKind::kOnDemand, price)}, kOrigin);
  JobSpec a = make_job("a", 0, 2, 2.5 * 3600);
  a.user = "alice";
  JobSpec b = make_job("b", 0, 1, 3600);
  b.user = "bob";
  VectorSource source({a, b});
  FirstFit policy;
  SimulatorOptions options;
  options.market_view = &market;
  Simulator sim(cluster, source, policy, options);
  SpotProcess spot(market, 0);
  sim.add_process(spot);
  MarketMeter meter(sim, market, nullptr);
  sim.add_observer(meter);
  sim.run();
  const MarketTotals t = meter.totals();
  CHECK(t.total.compute_usd == Approx(2 * (2.0 + 5.0 + 0.5 * 1.0)).epsilon(1e-12));
  CHECK(t.total.device_h == Approx(2 * 2.5 + 1).epsilon(1e-12));
  CHECK(t.by_kind[static_cast<int>(PriceKind::kOnDemand)].device_h == Approx(5).epsilon(1e-12));
  REQUIRE(t.tenants == std::vector<std::string>{"alice", "bob"});
  CHECK(t.by_tenant[0].compute_usd == t.total.compute_usd);
  CHECK(t.by_tenant[1].compute_usd == 0.0);
  CHECK(t.by_tenant[1].device_h == Approx(1).epsilon(1e-12));
}

namespace {

class Placements : public Observer {
 public:
  void on_job_start(const JobState& j) override { devices[j.spec.id] = j.devices; }
  std::map<std::string, std::vector<DeviceId>> devices;
};

// 8 devices: 0..3 spot, 4..7 on demand; one 2-device job with the given estimate.
std::vector<DeviceId> placed_with(const std::string& policy_yaml, double estimate_s) {
  const ClusterSpec cluster({NodeGroup{2, "test", 4}});
  const Market market(cluster, {{"cluster", 0, 0, 8}}, {Provider{"cloud", {0}}},
                      {offer(0, "test", PriceKind::kSpot, constant(1.0), 4), offer(0, "test", PriceKind::kOnDemand, constant(3.0))}, kOrigin);
  const PolicyRegistry registry = builtin_policies();
  PolicyInstance policy = registry.create(ConfigNode::load_string(policy_yaml, "policy.yaml"));
  VectorSource source({make_job("j", 0, 2, 100, estimate_s)});
  SimulatorOptions options;
  options.market_view = &market;
  Simulator sim(cluster, source, *policy.policy, options);
  SpotProcess spot(market, 0);
  sim.add_process(spot);
  Placements p;
  sim.add_observer(p);
  sim.run();
  return p.devices.at("j");
}

}  // namespace

TEST_CASE("queue policies can prefer or avoid spot devices", "[sim][market][policies]") {
  using V = std::vector<DeviceId>;
  CHECK(placed_with("fifo", 600) == V{0, 1});  // any: first fit, spot or not
  CHECK(placed_with("{name: fifo, spot: avoid}", 600) == V{4, 5});
  CHECK(placed_with("{name: sjf, spot: prefer, placement: spread}", 600) == V{0, 1});
  CHECK(placed_with("{name: fifo, spot: short}", 600) == V{0, 1});
  CHECK(placed_with("{name: fifo, spot: short}", 7200) == V{4, 5});
  CHECK(placed_with("{name: fifo, spot: short, spot_short_s: 10000}", 7200) == V{0, 1});
  const PolicyRegistry registry = builtin_policies();
  CHECK(registry.create(ConfigNode::load_string("{name: fifo, spot: short}", "p")).resolved["spot_short_s"].as<double>() == 3600.0);
  CHECK_THROWS_WITH(registry.create(ConfigNode::load_string("{name: fifo, spot: always}", "p")),
                    Catch::Contains("'always' is not allowed; choose one of: any, prefer, avoid, short"));
}
