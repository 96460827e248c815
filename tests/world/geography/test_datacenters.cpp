// Several datacenters: the WAN relocation cost against its closed form (a migration and a
// restart in another datacenter), placements confined to one allowed datacenter, and the
// per-datacenter energy, PUE and signals.
#include <catch2/catch.hpp>

#include "world/geography/datacenters.hpp"
#include "world/energy/energy.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"
#include "world/geography/geography_process.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::VectorSource;

namespace {

// Two datacenters of one node with two devices each.
Geography two_sites(const ClusterSpec& cluster, const GridSignals* a, const GridSignals* b, double pue_b = 1.0) {
  std::vector<Datacenter> sites(2);
  sites[0].name = "A";
  sites[0].first_node = 0;
  sites[0].num_nodes = 1;
  sites[0].signals = a;
  sites[1].name = "B";
  sites[1].first_node = 1;
  sites[1].num_nodes = 1;
  sites[1].signals = b;
  sites[1].pue = pue_b;
  const WanLink link{10e9, 0.05};  // 10 Gbit/s, 50 ms
  GeographyOptions o;
  o.checkpoint_gb = 10.0;
  o.restart_s = 60.0;
  return Geography(cluster, sites, {{link, link}, {link, link}}, o);
}

// Starts every pending job on devices {0, 1} (datacenter A); at t = 100 s moves (or
// preempts, then restarts) the running job to devices {2, 3} (datacenter B).
class ScriptPolicy : public Policy {
 public:
  explicit ScriptPolicy(bool preempt) : preempt_(preempt) {}
  std::string name() const override { return "script"; }
  void on_job_queued(const SchedulerView&, JobSlot) override {}
  void decide(const SchedulerView& view, ActionBatch& out) override {
    const std::vector<DeviceId> a{0, 1}, b{2, 3};
    for (JobSlot s = view.first_pending(); s != kNoJob; s = view.next_pending(s)) out.start(s, a);
    if (view.now() >= Tick::from_seconds(100) && !done_) {
      done_ = true;
      const JobSlot s = view.first_running();
      if (preempt_) {  // free checkpoint: back in the queue at once, restarted in this batch
        out.preempt(s);
        out.start(s, b);
      } else {
        out.move(s, b);
      }
    }
    if (!done_) out.wake_at(Tick::from_seconds(100));
  }

 private:
  bool preempt_;
  bool done_ = false;
};

class EndRecorder : public Observer {
 public:
  void on_job_end(const JobState& j) override { jct_s = (j.end - j.spec.submit).seconds(); }
  double jct_s = 0;
};

}  // namespace

TEST_CASE("WAN relocation cost: latency + checkpoint bits / bandwidth + restart", "[sim][datacenters]") {
  const ClusterSpec cluster({NodeGroup{2, "V100", 2}});
  const Geography geo = two_sites(cluster, nullptr, nullptr);
  // 10 GB over 10 Gbit/s = 8 s, + 50 ms latency, + 60 s restart.
  CHECK(geo.transfer_s(0, 1, 10e9) == Approx(8.05).epsilon(1e-12));
  CHECK(geo.relocation_s(0, 1) == Approx(68.05).epsilon(1e-12));
  CHECK(geo.relocation_s(1, 1) == 0.0);
  CHECK(geo.relocation_s(-1, 1) == 0.0);  // never ran: nothing to move
  CHECK(geo.site_of_device(1) == 0);
  CHECK(geo.site_of_device(2) == 1);
  for (bool preempt : {false, true}) {
    INFO((preempt ? "preempt, then restart in B" : "move to B"));
    ScriptPolicy policy(preempt);
    VectorSource source({make_job("j", 0, 2, 1000)});
    GeographyProcess geography(geo);
    Simulator sim(cluster, source, policy);
    sim.add_process(geography);
    EndRecorder end;
    sim.add_observer(end);
    sim.run();
    // No physics: checkpoints are free, so the relocation is the whole delay (to the microsecond).
    CHECK(end.jct_s == Approx(1000 + 68.05).margin(2e-6));
  }
}

TEST_CASE("a placement across datacenters or outside the allowed regions is rejected", "[sim][datacenters]") {
  const ClusterSpec cluster({NodeGroup{2, "V100", 2}});
  const Geography geo = two_sites(cluster, nullptr, nullptr);
  JobSpec j = make_job("j", 0, 2, 10);
  CHECK_THAT(geo.placement_problem(j, std::vector<DeviceId>{1, 2}), Catch::Contains("different datacenters"));
  CHECK(geo.placement_problem(j, std::vector<DeviceId>{2, 3}).empty());
  j.allowed_regions = {"A"};
  CHECK_THAT(geo.placement_problem(j, std::vector<DeviceId>{2, 3}), Catch::Contains("may not run in datacenter 'B'"));
  j.home_region = "C";
  CHECK_THROWS_WITH(geo.home_site(j), Catch::Contains("region 'C' is not a datacenter of the scenario (A, B)"));
  // The kernel rejects it too, naming the policy and the action.
  class Spanning : public Policy {
   public:
    std::string name() const override { return "spanning"; }
    void on_job_queued(const SchedulerView&, JobSlot) override {}
    void decide(const SchedulerView& view, ActionBatch& out) override {
      if (view.first_pending() != kNoJob) out.start(view.first_pending(), std::vector<DeviceId>{1, 2});
    }
  } spanning;
  VectorSource source({make_job("j", 0, 2, 10)});
  GeographyProcess geography(geo);
  Simulator sim(cluster, source, spanning);
  sim.add_process(geography);
  CHECK_THROWS_WITH(sim.run(), Catch::Contains("policy 'spanning'") && Catch::Contains("different datacenters"));
}

TEST_CASE("home regions: named, or drawn from the weights by job id, the same in every run", "[sim][datacenters]") {
  const ClusterSpec cluster({NodeGroup{2, "V100", 2}});
  const Geography geo = two_sites(cluster, nullptr, nullptr);
  int in_b = 0;
  for (int i = 0; i < 1000; ++i) {
    const JobSpec j = make_job("job" + std::to_string(i), 0, 1, 10);
    const int home = geo.home_site(j);
    CHECK(home == geo.home_site(j));
    in_b += home;
  }
  CHECK(in_b > 430);  // equal weights: about half (binomial sd 16)
  CHECK(in_b < 570);
  JobSpec named = make_job("x", 0, 1, 10);
  named.home_region = "B";
  CHECK(geo.home_site(named) == 1);
}

TEST_CASE("energy per datacenter: each site's PUE and carbon, a job charged where it runs", "[sim][datacenters][energy]") {
  const ClusterSpec cluster({NodeGroup{2, "V100", 2}});
  const GridSignals a(0, StepSeries::constant("price", 100.0), StepSeries::constant("carbon", 400.0));
  const GridSignals b(0, StepSeries::constant("price", 50.0), StepSeries::constant("carbon", 100.0));
  const Geography geo = two_sites(cluster, &a, &b, 1.5);
  ScriptPolicy policy(false);  // 100 s in A, 68.05 s relocating in B (idle power), then 900 s in B
  VectorSource source({make_job("j", 0, 2, 1000)});
  GeographyProcess geography(geo);
  Simulator sim(cluster, source, policy);
  sim.add_process(geography);
  const std::vector<DevicePower> power{{50.0, 300.0}};
  EnergyMeter meter(sim, power, {MeteredSite{"A", 0, 2, 1.0, &a}, MeteredSite{"B", 2, 2, 1.5, &b}});
  sim.add_observer(meter);
  sim.run();
  const double t_end = 1068.05;
  // Job: 2 devices x 300 W x 100 s in A (PUE 1), 2 x 50 W x 68.05 s + 2 x 300 W x 900 s in B (PUE 1.5).
  const double ja_ws = 600.0 * 100, jb_ws = 100.0 * 68.05 + 600.0 * 900;
  const EnergyTotals t = meter.totals();
  CHECK(meter.last_job().energy_kwh == Approx((ja_ws + 1.5 * jb_ws) / 3.6e6).epsilon(1e-9));
  CHECK(*meter.last_job().co2_kg == Approx((ja_ws * 400 + 1.5 * jb_ws * 100) / 3.6e9).epsilon(1e-9));
  // Facility: idle devices too (A idle after 100 s, B idle before it).
  const double a_ws = ja_ws + 100.0 * (t_end - 100), b_ws = jb_ws + 100.0 * 100;
  REQUIRE(t.by_site.size() == 2);
  CHECK(t.site_names[1] == "B");
  CHECK(t.by_site[0].energy_kwh == Approx(a_ws / 3.6e6).epsilon(1e-9));
  CHECK(t.by_site[1].energy_kwh == Approx(1.5 * b_ws / 3.6e6).epsilon(1e-9));
  CHECK(*t.by_site[1].cost_usd == Approx(1.5 * b_ws * 50 / 3.6e9).epsilon(1e-9));
  CHECK(t.facility.energy_kwh == Approx((a_ws + 1.5 * b_ws) / 3.6e6).epsilon(1e-9));
  CHECK(*t.facility.co2_kg == Approx((a_ws * 400 + 1.5 * b_ws * 100) / 3.6e9).epsilon(1e-9));
  CHECK(t.it_energy_kwh == Approx((a_ws + b_ws) / 3.6e6).epsilon(1e-9));
}

TEST_CASE("datacenters process: its veto is the geography's, the relocation is its start overhead, policies see the model", "[sim][datacenters][world]") {
  const ClusterSpec cluster({NodeGroup{2, "V100", 2}});
  const Geography geo = two_sites(cluster, nullptr, nullptr);
  GeographyProcess process(geo);
  CHECK(process.hooks() == (WorldProcess::kPlacementVeto | WorldProcess::kStartOverhead));
  const JobSpec j = make_job("j", 0, 2, 10);
  CHECK(process.placement_problem(j, std::vector<DeviceId>{1, 2}) == geo.placement_problem(j, std::vector<DeviceId>{1, 2}));
  CHECK_THAT(process.placement_problem(j, std::vector<DeviceId>{1, 2}), Catch::Contains("different datacenters"));
  CHECK(process.placement_problem(j, std::vector<DeviceId>{2, 3}).empty());
  ExposedModels m;
  process.expose(m);
  CHECK(m.geography == &geo);
  CHECK(m.num_sites == 2);
  // Registered, the process moves the job (state in A) to B at the move's relocation cost,
  // and the view shows its model; without it the kernel knows no datacenters: the same
  // move is free and the view shows none.
  for (bool with : {true, false}) {
    INFO((with ? "with the process" : "without it"));
    ScriptPolicy policy(false);
    VectorSource source({make_job("j", 0, 2, 1000)});
    Simulator sim(cluster, source, policy);
    if (with) sim.add_process(process);
    CHECK(sim.view().geography() == (with ? &geo : nullptr));
    EndRecorder end;
    sim.add_observer(end);
    sim.run();
    CHECK(end.jct_s == Approx(with ? 1000 + 68.05 : 1000).margin(2e-6));
  }
}
