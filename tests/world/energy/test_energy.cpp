// Energy, cost and emissions against hand-computed integrals of a hand-built schedule.
#include <catch2/catch.hpp>

#include "policies/registry.hpp"
#include <random>

#include "world/failures/failure_process.hpp"
#include "world/physics/accelerator_catalogue.hpp"
#include "world/physics/cluster_physics.hpp"
#include "world/energy/energy.hpp"
#include "base/exact_sum.hpp"
#include "world/failures/failure_model.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::VectorSource;

namespace {

// Price and carbon per hour from 2023-01-01T00:00Z (hours 0, 1, 2, 3).
GridSignals hourly_signals(std::int64_t origin_utc_us) {
  const std::int64_t h0 = 1672531200LL * 1'000'000;  // 2023-01-01T00:00:00Z
  const std::int64_t hour = 3'600'000'000LL;
  std::vector<std::int64_t> t = {h0, h0 + hour, h0 + 2 * hour, h0 + 3 * hour};
  auto price = StepSeries::finite("price", t, {100.0, 40.0, -10.0, 80.0}, h0 + 4 * hour);
  auto carbon = StepSeries::finite("carbon", t, {200.0, 500.0, 300.0, 100.0}, h0 + 4 * hour);
  return GridSignals(origin_utc_us, price, carbon);
}

struct Run {
  std::map<std::string, EnergyUse> jobs;
  EnergyTotals totals;
};

class JobUse : public Observer {
 public:
  explicit JobUse(const EnergyMeter& m, Run& r) : meter_(m), run_(r) {}
  void on_job_end(const JobState& j) override { run_.jobs[j.spec.id] = meter_.last_job(); }

 private:
  const EnergyMeter& meter_;
  Run& run_;
};

Run run(const std::vector<JobSpec>& jobs, const GridSignals* signals, double pue, int devices = 2) {
  const ClusterSpec cluster({NodeGroup{1, "V100", devices}});
  VectorSource source(jobs);
  PolicyInstance fifo = builtin_policies().create("fifo");
  SimulatorOptions options;
  options.signals = signals;
  Simulator sim(cluster, source, *fifo.policy, options);
  Run r;
  EnergyMeter meter(sim, {DevicePower{50.0, 300.0}}, pue, signals);
  JobUse use(meter, r);
  sim.add_observer(meter);
  sim.add_observer(use);
  sim.run();
  r.totals = meter.totals();
  return r;
}

}  // namespace

TEST_CASE("energy of a hand-built schedule equals the hand-computed integral", "[energy]") {
  // Two 1-GPU jobs of 3600 s on 2 devices (idle 50 W, TDP 300 W, no physics: u = 1):
  // A on [0, 3600], B on [1800, 5400]. PUE 1.5.
  const Run r = run({make_job("A", 0, 1, 3600), make_job("B", 1800, 1, 3600)}, nullptr, 1.5);
  // IT power: 300 + 50 on [0,1800), 600 on [1800,3600), 300 + 50 on [3600,5400].
  const double it_j = 350.0 * 1800 + 600.0 * 1800 + 350.0 * 1800;
  CHECK(r.totals.it_energy_kwh == Approx(it_j / 3.6e6).epsilon(1e-14));
  CHECK(r.totals.facility.energy_kwh == Approx(1.5 * it_j / 3.6e6).epsilon(1e-14));
  CHECK(r.totals.facility.energy_kwh == Approx(0.975).epsilon(1e-14));
  CHECK(r.jobs.at("A").energy_kwh == Approx(1.5 * 300 * 3600 / 3.6e6).epsilon(1e-14));  // 0.45 kWh
  CHECK(r.jobs.at("B").energy_kwh == Approx(0.45).epsilon(1e-14));
  CHECK(r.totals.jobs.energy_kwh == Approx(0.9).epsilon(1e-14));
  CHECK(r.totals.idle.energy_kwh == Approx(1.5 * 50 * 3600 / 3.6e6).epsilon(1e-12));  // the free device, 3600 s
  CHECK(r.totals.duration_s == 5400.0);
  CHECK_FALSE(r.totals.facility.cost_usd.has_value());  // no price signal: no cost
}

TEST_CASE("cost and emissions equal the hourly sums with a job crossing an hour boundary", "[energy][signals]") {
  // Time zero at 00:30 UTC: simulated [0, 1800) is hour 0, [1800, 5400) hour 1, [5400, 9000) hour 2.
  const GridSignals signals = hourly_signals(1672531200LL * 1'000'000 + 1'800'000'000LL);
  // A (1 GPU) on [0, 3600] crosses the 01:00 boundary at t = 1800; B (2 GPUs) on [3600, 7200]
  // crosses 02:00 at t = 5400.
  const Run r = run({make_job("A", 0, 1, 3600), make_job("B", 3600, 2, 3600)}, &signals, 1.2);
  const double k = 1.2 / 3.6e9;  // W x s x (USD/MWh or g/kWh) -> USD or kg, with the PUE
  // A draws 300 W: 1800 s in hour 0 and 1800 s in hour 1.
  CHECK(*r.jobs.at("A").cost_usd == Approx(k * (300 * 1800 * 100.0 + 300 * 1800 * 40.0)).epsilon(1e-14));
  CHECK(*r.jobs.at("A").co2_kg == Approx(k * (300 * 1800 * 200.0 + 300 * 1800 * 500.0)).epsilon(1e-14));
  // B draws 600 W: 1800 s in hour 1, 1800 s in hour 2 (negative price: it is paid).
  CHECK(*r.jobs.at("B").cost_usd == Approx(k * (600 * 1800 * 40.0 + 600 * 1800 * -10.0)).epsilon(1e-14));
  CHECK(*r.jobs.at("B").co2_kg == Approx(k * (600 * 1800 * 500.0 + 600 * 1800 * 300.0)).epsilon(1e-14));
  // The whole facility: A's idle partner device on [0, 3600], then both devices busy.
  const double cost = k * (350.0 * 1800 * 100 + 350.0 * 1800 * 40 + 600.0 * 1800 * 40 + 600.0 * 1800 * -10);
  const double co2 = k * (350.0 * 1800 * 200 + 350.0 * 1800 * 500 + 600.0 * 1800 * 500 + 600.0 * 1800 * 300);
  CHECK(*r.totals.facility.cost_usd == Approx(cost).epsilon(1e-13));
  CHECK(*r.totals.facility.co2_kg == Approx(co2).epsilon(1e-13));
  CHECK(*r.totals.idle.co2_kg == Approx(k * (50.0 * 1800 * 200 + 50.0 * 1800 * 500)).epsilon(1e-12));
}

TEST_CASE("a run past the end of the signal data is an error naming the instant", "[energy][signals]") {
  const GridSignals signals = hourly_signals(1672531200LL * 1'000'000);
  // The data cover 4 hours; a job ending at 5 h leaves them.
  CHECK_THROWS_WITH(run({make_job("long", 0, 1, 5 * 3600)}, &signals, 1.0),
                    Catch::Contains("no value at 2023-01-01T04:00:00Z") && Catch::Contains("signals.origin_utc"));
}

TEST_CASE("a job's energy, cost and emissions do not depend on other jobs' events", "[energy]") {
  // Job A holds one device at 300 W for 3600.123457 s across an hourly price and carbon
  // step; alone, and with 300 short jobs starting and ending on the other devices
  // meanwhile (600 more events in its life). Its sums are power x its duration and power x
  // the signals' integral over it, whatever else happens: the same bits in both runs.
  // (Adding 300 W x each of the 601 intervals between those events instead gives
  // 1080037.0371000026 J, not 1080037.0371.)
  const GridSignals signals = hourly_signals(1672531200LL * 1'000'000);
  const JobSpec a = make_job("A", 0.0, 1, 3600.123457);
  std::vector<JobSpec> busy = {a};
  for (int i = 0; i < 300; ++i) busy.push_back(make_job("b" + std::to_string(i), 0.5 + 10.7 * i + (i * i % 7) * 0.013, 1, 5.3 + (i % 5) * 0.0371));
  const Run alone = run({a}, &signals, 1.3, 8);
  const Run shared = run(busy, &signals, 1.3, 8);
  REQUIRE(shared.jobs.size() == 301);
  const EnergyUse& x = alone.jobs.at("A");
  const EnergyUse& y = shared.jobs.at("A");
  CHECK(x.energy_kwh == y.energy_kwh);
  CHECK(*x.cost_usd == *y.cost_usd);
  CHECK(*x.co2_kg == *y.co2_kg);
  CHECK(x.energy_kwh == 300.0 * 3600.123457 * 1.3 / 3.6e6);
  // 3600 s at 100 USD/MWh and 0.123457 s at 40; 200 and 500 g/kWh.
  CHECK(*x.cost_usd == Approx(300.0 * (3600 * 100.0 + 0.123457 * 40.0) * 1.3 / 3.6e9).epsilon(1e-14));
  CHECK(*x.co2_kg == Approx(300.0 * (3600 * 200.0 + 0.123457 * 500.0) * 1.3 / 3.6e9).epsilon(1e-14));
}

TEST_CASE("the meter recomputes job powers only after events that can change them", "[energy][bench]") {
  // 400 one-GPU jobs of 1 h arriving every 15 min on 8 devices: never a queue, so each
  // arrival starts its job (one power evaluation) and each completion ends one (no other
  // job changes: the powers are reused).
  std::vector<JobSpec> jobs;
  for (int i = 0; i < 400; ++i) jobs.push_back(make_job(std::to_string(i), 900.0 * i, 1, 3600.0));
  const ClusterSpec cluster({NodeGroup{1, "V100", 8}});
  VectorSource source(jobs);
  PolicyInstance fifo = builtin_policies().create("fifo");
  Simulator sim(cluster, source, *fifo.policy, {});
  EnergyMeter meter(sim, {DevicePower{50.0, 300.0}}, 1.0, nullptr);
  sim.add_observer(meter);
  sim.run();
  CHECK(sim.stats().events == 800);
  CHECK(sim.stats().actions == 400);
  // One evaluation per start, none for the completions.
  CHECK(meter.power_evaluations() == 400);
  // Four jobs run at once after the first hour: 4 x 300 W plus 4 idle devices x 50 W.
  CHECK(meter.totals().it_energy_kwh == Approx((400 * 3600.0 * 300.0 + (400 * 900.0 + 2700.0) * 8 * 50.0 - 400 * 3600.0 * 50.0) / 3.6e6));
}

TEST_CASE("the meter's work per event follows the jobs that changed, not the jobs running", "[energy][bench]") {
  // 256 one-GPU jobs of 10 h arriving 7 s apart on 256 devices, writing a checkpoint
  // (a 60 s stall at idle power) every 30 min of compute: 19 per job, all at distinct
  // instants. Each start is one power evaluation and each checkpoint two (stall, resume);
  // the other ~255 running jobs are left alone (a pass over the running jobs per event
  // would be about 2.5 million evaluations).
  FailureConfig c;
  c.checkpoint.policy = CheckpointConfig::Policy::kFixed;
  c.checkpoint.interval_s = 1800;
  c.checkpoint.cost_s = 60;
  const ClusterSpec cluster({NodeGroup{32, "V100", 8}});
  std::vector<JobSpec> jobs;
  for (int i = 0; i < 256; ++i) jobs.push_back(make_job(std::to_string(i), 7.0 * i, 1, 36000.0));
  VectorSource source(jobs);
  PolicyInstance fifo = builtin_policies().create("fifo");
  FailureModel model(c, cluster, 1, nullptr);
  SimulatorOptions options;
  Simulator sim(cluster, source, *fifo.policy, options);
  FailureProcess failure_process(model);  // the failures model as a world process
  sim.add_process(failure_process);
  EnergyMeter meter(sim, {DevicePower{50.0, 300.0}}, 1.0, nullptr);
  sim.add_observer(meter);
  sim.run();
  REQUIRE(sim.stats().checkpoints == 256 * 19);
  CHECK(meter.power_evaluations() == 256 + 2 * 256 * 19);
  // A job's sums are integrated once per stretch of constant power: up to each
  // checkpoint's stall, up to its end, and up to its completion.
  CHECK(meter.job_integrations() == 256 * (2 * 19 + 1));
  // Each job: 36,000 s at 300 W and 19 x 60 s at 50 W; devices idle outside the jobs
  // until the last one ends at 7 x 255 + 37,140 s.
  const double job_j = 36000.0 * 300.0 + 19 * 60.0 * 50.0;
  const double end_s = 7.0 * 255 + 37140.0;
  const EnergyTotals t = meter.totals();
  CHECK(t.jobs.energy_kwh == Approx(256 * job_j / 3.6e6).epsilon(1e-12));
  CHECK(t.it_energy_kwh == Approx((256 * job_j + 50.0 * 256 * (end_s - 37140.0)) / 3.6e6).epsilon(1e-12));
}

namespace {
// At the end of every instant, every running job's power recomputed from the simulator's
// state (a pass over the running jobs, summed exactly), against the meter's facility
// power, bit for bit: the meter updates only the jobs the simulator
// reports as changed, and must miss none. (Between two events of one instant a job whose
// stall ends at that instant, before its own event, may still show its old power; no
// time passes there, so nothing is integrated at it.)
class PowerReference : public Observer {
 public:
  PowerReference(const EnergyMeter& meter, std::vector<DevicePower> power, double pue) : meter_(meter), power_(std::move(power)), pue_(pue) {}
  void after_event(const Simulator& sim) override {
    if (pending_ && sim.now() > pending_time_) settle();
    const ClusterSpec& cluster = sim.view().cluster();
    auto device_power = [&](DeviceId d) { return power_[static_cast<std::size_t>(cluster.node(cluster.node_of(d)).type_index)]; };
    double all_idle = 0.0;
    for (DeviceId d = 0; d < cluster.num_devices(); ++d) all_idle += device_power(d).idle_w;
    ExactSum jobs, jobs_idle;
    for (JobSlot s = sim.first_running(); s != kNoJob; s = sim.job(s).next_in_list) {
      const JobState& j = sim.job(s);
      double idle = 0.0, dynamic = 0.0;
      for (DeviceId d : j.devices) {
        idle += device_power(d).idle_w;
        dynamic += device_power(d).tdp_w - device_power(d).idle_w;
      }
      double u = 0.0;
      if (j.status == JobStatus::kRunning && j.rate(sim.now()) > 0.0) u = sim.view().physics() ? sim.view().physics()->compute_utilization(s) : 1.0;
      jobs.add(idle + u * dynamic);
      jobs_idle.add(idle);
    }
    pending_ = true;
    pending_time_ = sim.now();
    expected_w_ = ExactSum::to_double(ExactSum::to_fixed(all_idle) - jobs_idle.fixed() + jobs.fixed()) * pue_;
    metered_w_ = meter_.facility_power_w();
  }
  // Checks the last instant's values (call after the run).
  void settle() {
    if (!pending_) return;
    pending_ = false;
    ++checked;
    if (metered_w_ != expected_w_) ++mismatches;
  }
  std::uint64_t checked = 0, mismatches = 0;

 private:
  const EnergyMeter& meter_;
  std::vector<DevicePower> power_;
  double pue_;
  bool pending_ = false;
  Tick pending_time_;
  double expected_w_ = 0.0, metered_w_ = 0.0;
};
}  // namespace

TEST_CASE("the meter's job powers equal a recomputation of every running job after every event", "[energy]") {
  // Two device types with physics (contention changes rates), preemptions and migrations
  // (gavel) or preemptions alone (las), loss spikes, node failures that requeue jobs and
  // periodic checkpoints: every way a job's power changes.
  const std::string policy = GENERATE(std::string("gavel"), std::string("las"));
  const AcceleratorCatalogue accelerators = AcceleratorCatalogue::builtin();
  const WorkloadProfileCatalogue profiles = WorkloadProfileCatalogue::builtin();
  const ClusterSpec cluster({NodeGroup{3, "H100-SXM", 8}, NodeGroup{2, "V100", 8}});
  TopologyConfig topology_config;
  topology_config.nodes_per_rack = 2;
  topology_config.oversubscription = 2.0;
  const TopologySpec topology(cluster, topology_config, [&](const std::string& t) { return accelerators.get(t).intra_node_link_bytes_per_s; });
  ClusterPhysics physics(cluster, topology, accelerators, profiles, PhysicsConfig{});
  FailureConfig c;
  c.devices.mtbf_h = 300;
  c.devices.repair_h = 2;
  c.devices.restart_s = 60;
  c.loss_spikes.rate_per_gpu_hour = 2e-3;
  c.loss_spikes.restart_s = 60;
  c.checkpoint.policy = CheckpointConfig::Policy::kFixed;
  c.checkpoint.interval_s = 1800;
  c.checkpoint.cost_s = 60;
  FailureModel failures(c, cluster, 5, nullptr);
  std::mt19937 gen(11);  // raw draws only: the same jobs on every platform
  const char* models[] = {"ResNet-50", "BERT-large", "GPT-2-1.5B"};
  const int sizes[] = {1, 1, 2, 4, 8};
  std::vector<JobSpec> jobs;
  for (int i = 0; i < 300; ++i) {
    JobSpec j = make_job(std::to_string(i), 150.0 * i, sizes[gen() % 5], 600.0 + static_cast<double>(gen() % 14400));
    j.model = models[gen() % 3];
    jobs.push_back(j);
  }
  VectorSource source(jobs);
  PolicyInstance instance = builtin_policies().create(policy);
  SimulatorOptions options;
  options.physics = &physics;
  Simulator sim(cluster, source, *instance.policy, options);
  FailureProcess failure_process(failures);  // the failures model as a world process
  sim.add_process(failure_process);
  const std::vector<DevicePower> power = {DevicePower{75.0, 700.0}, DevicePower{50.0, 300.0}};
  EnergyMeter meter(sim, power, 1.2, nullptr);
  PowerReference reference(meter, power, 1.2);
  sim.add_observer(meter);
  sim.add_observer(reference);
  sim.run();
  reference.settle();
  const SimulatorStats& st = sim.stats();
  INFO(policy << ": preemptions " << st.preemptions << ", moves " << st.moves << ", failure hits " << st.job_failure_hits
              << ", loss spikes " << st.loss_spikes << ", checkpoints " << st.checkpoints << ", rate changes " << st.rate_changes);
  CHECK(st.preemptions > 0);
  CHECK((policy != "gavel" || st.moves > 0));
  CHECK(st.job_failure_hits > 0);
  CHECK(st.loss_spikes > 0);
  CHECK(st.checkpoints > 0);
  CHECK(reference.checked > 1000);  // instants checked
  CHECK(reference.mismatches == 0);
}

namespace {
// Counts the changes the kernel pushes (Observer::on_job_changed), by kind.
class ChangeLog : public Observer {
 public:
  bool wants_job_changes() const override { return true; }
  void on_job_changed(JobSlot /*slot*/, JobChange what) override { ++counts[static_cast<int>(what)]; }
  int count(JobChange what) const { return counts[static_cast<int>(what)]; }
  int counts[6] = {0, 0, 0, 0, 0, 0};
};
class Uninterested : public Observer {
 public:
  void on_job_changed(JobSlot /*slot*/, JobChange /*what*/) override { ++calls; }
  int calls = 0;
};
// Pulls each ending job's use from the meter (EnergyMeter::use_of_ended), as the jobs.csv
// writer and the market meter do, whether it is called before or after the meter.
class PulledUse : public Observer {
 public:
  PulledUse(EnergyMeter& m, std::map<std::string, EnergyUse>& out) : meter_(m), out_(out) {}
  void on_job_end(const JobState& j) override { out_[j.spec.id] = meter_.use_of_ended(j); }

 private:
  EnergyMeter& meter_;
  std::map<std::string, EnergyUse>& out_;
};
}  // namespace

TEST_CASE("the kernel pushes job changes to the observers that want them", "[energy][observer]") {
  const ClusterSpec cluster({NodeGroup{1, "V100", 2}});
  VectorSource source({make_job("A", 0, 1, 3600), make_job("B", 10, 1, 60), make_job("C", 20, 2, 60)});
  PolicyInstance fifo = builtin_policies().create("fifo");
  Simulator sim(cluster, source, *fifo.policy, SimulatorOptions{});
  ChangeLog log;
  Uninterested other;
  sim.add_observer(log);
  sim.add_observer(other);
  sim.run();
  CHECK(log.count(JobChange::kStarted) == 3);
  CHECK(log.count(JobChange::kEnded) == 3);
  CHECK(log.count(JobChange::kRequeued) == 0);
  CHECK(other.calls == 0);  // wants_job_changes() is false: the kernel never calls it
}

TEST_CASE("an ending job's use is the same pulled before or after the meter's on_job_end", "[energy][observer]") {
  const GridSignals signals = hourly_signals(1672531200LL * 1'000'000);
  const std::vector<JobSpec> jobs = {make_job("A", 0, 1, 3600.5), make_job("B", 1800, 1, 1234.25), make_job("C", 1900, 2, 77.125)};
  const ClusterSpec cluster({NodeGroup{1, "V100", 2}});
  std::map<std::string, EnergyUse> before, after;
  Run reference = run(jobs, &signals, 1.25);
  {
    VectorSource source(jobs);
    PolicyInstance fifo = builtin_policies().create("fifo");
    SimulatorOptions options;
    options.signals = &signals;
    Simulator sim(cluster, source, *fifo.policy, options);
    EnergyMeter meter(sim, {DevicePower{50.0, 300.0}}, 1.25, &signals);
    PulledUse early(meter, before), late(meter, after);
    sim.add_observer(early);  // before the meter: it settles each job's use first
    sim.add_observer(meter);
    sim.add_observer(late);
    sim.run();
    CHECK(meter.totals().facility.energy_kwh == reference.totals.facility.energy_kwh);
    CHECK(*meter.totals().jobs.cost_usd == *reference.totals.jobs.cost_usd);
  }
  REQUIRE(before.size() == 3);
  for (const auto& [id, use] : reference.jobs) {
    INFO(id);
    CHECK(before.at(id).energy_kwh == use.energy_kwh);  // bit for bit
    CHECK(*before.at(id).cost_usd == *use.cost_usd);
    CHECK(*before.at(id).co2_kg == *use.co2_kg);
    CHECK(after.at(id).energy_kwh == use.energy_kwh);
  }
  CHECK(reference.jobs.at("A").energy_kwh == 300.0 * 3600.5 * 1.25 / 3.6e6);
}
