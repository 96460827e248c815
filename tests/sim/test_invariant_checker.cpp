// The invariant checker catches broken states: each test hands it one violation (a
// double-booked device, time going backwards, work not conserved, a link over capacity or
// unfair, energy counted twice) and checks the message names it and lists the last events.
#include <catch2/catch.hpp>

#include "policies/registry.hpp"
#include "world/physics/comm_model.hpp"
#include "world/energy/energy.hpp"
#include "base/error.hpp"
#include "sim/invariant_checker.hpp"
#include "sim/simulator.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::make_job;
using schedsim::test::VectorSource;

namespace {

JobState running_job(const std::string& id, std::vector<DeviceId> devices, double duration_s) {
  JobState j;
  j.spec = make_job(id, 0, static_cast<int>(devices.size()), duration_s);
  j.status = JobStatus::kRunning;
  j.devices = std::move(devices);
  j.remaining_work_s = duration_s;
  j.physics_rate = 1.0;
  return j;
}

std::string violation(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvariantError& e) {
    return e.what();
  }
  return "";
}

// A physics model whose own state check reports a fixed problem.
class BrokenPhysics : public PhysicsModel {
 public:
  std::string placement_problem(const JobSpec&, Span<DeviceId>) const override { return ""; }
  void update_rates(const Simulator&, const std::vector<JobSlot>&, std::vector<std::pair<JobSlot, double>>&) override {}
  double estimated_rate(const JobSpec&, int, int) const override { return 1.0; }
  double checkpoint_save_s(const JobSpec&, int) const override { return 0.0; }
  double checkpoint_restore_s(const JobSpec&, int) const override { return 0.0; }
  std::string invariant_problem() const override { return "network: link 3 carries 2 B/s, over its capacity 1"; }
};

}  // namespace

TEST_CASE("the invariant checker reports a double-booked device", "[sim][invariants]") {
  const ClusterSpec cluster({NodeGroup{1, "V100", 4}});
  ClusterState state(cluster);
  state.allocate(std::vector<DeviceId>{0}, 0);
  const JobState a = running_job("a", {0}, 10), b = running_job("b", {0}, 10);
  InvariantChecker checker;
  CHECK_NOTHROW(checker.check_state(Tick::from_seconds(1), state, {&a}, 1, 0, nullptr));
  const std::string msg = violation([&] { checker.check_state(Tick::from_seconds(2), state, {&a, &b}, 2, 0, nullptr); });
  CHECK_THAT(msg, Catch::StartsWith("invariant violated for job 'b': shares device 0 with another job (double-booked)"));
  // A device the cluster marks allocated that no job holds.
  state.allocate(std::vector<DeviceId>{3}, 1);
  CHECK_THAT(violation([&] { checker.check_state(Tick::from_seconds(3), state, {&a}, 1, 0, nullptr); }),
             Catch::StartsWith("device accounting broken: 1 held + 2 free + 0 failed != 4 devices"));
}

TEST_CASE("the invariant checker reports time going backwards, lost work and wrong counts", "[sim][invariants]") {
  const ClusterSpec cluster({NodeGroup{1, "V100", 2}});
  const ClusterState state(cluster);
  InvariantChecker checker;
  checker.check_state(Tick::from_seconds(10), state, {}, 0, 0, nullptr);
  CHECK_THAT(violation([&] { checker.check_state(Tick::from_seconds(5), state, {}, 0, 0, nullptr); }),
             Catch::StartsWith("time went backwards from 10 s to 5 s"));

  JobState pending;
  pending.spec = make_job("p", 0, 1, 100);
  pending.remaining_work_s = 60;  // 0 done + 60 left != 100 asked
  CHECK_THAT(violation([&] { checker.check_state(Tick::from_seconds(20), state, {&pending}, 0, 1, nullptr); }),
             Catch::StartsWith("invariant violated for job 'p': progress + remaining work != duration (work not conserved)"));
  pending.remaining_work_s = 100;
  CHECK_THAT(violation([&] { checker.check_state(Tick::from_seconds(20), state, {&pending}, 0, 0, nullptr); }),
             Catch::StartsWith("job counts out of step with the job table: 0 running and 1 pending jobs in the table, the kernel counts 0 and 0"));
  const BrokenPhysics physics;
  CHECK_THAT(violation([&] { checker.check_state(Tick::from_seconds(20), state, {&pending}, 0, 1, &physics); }),
             Catch::StartsWith("physics model state broken: network: link 3 carries 2 B/s, over its capacity 1"));
}

TEST_CASE("a violation lists the last events before it", "[sim][invariants]") {
  const ClusterSpec cluster({NodeGroup{1, "V100", 4}});
  VectorSource source({make_job("a", 0, 2, 10), make_job("b", 1, 4, 5), make_job("c", 2, 1, 3)});
  const PolicyRegistry registry = builtin_policies();
  PolicyInstance policy = registry.create("fifo");
  Simulator sim(cluster, source, *policy.policy);
  InvariantChecker checker(4);
  sim.add_observer(checker);
  sim.run();
  // fifo: a runs 0-10 on 2 devices, b waits for all 4 (10-15), c after it (15-18).
  CHECK(checker.recent_events() == std::vector<std::string>{"event 5 t=15 s: start of job 'c' on 1 devices", "event 5 t=15 s: state: 0 pending, 1 running",
                                                            "event 6 t=18 s: end of job 'c' (completed)", "event 6 t=18 s: state: 0 pending, 0 running"});
  const std::string msg = violation([&] { checker.check_state(Tick::from_seconds(17), sim.cluster_state(), {}, 0, 0, nullptr); });
  CHECK(msg ==
        "time went backwards from 18 s to 17 s\nthe last 4 events, oldest first:\n"
        "  event 5 t=15 s: start of job 'c' on 1 devices\n  event 5 t=15 s: state: 0 pending, 1 running\n"
        "  event 6 t=18 s: end of job 'c' (completed)\n  event 6 t=18 s: state: 0 pending, 0 running");
}

TEST_CASE("the invariant checker reports energy counted twice", "[sim][invariants][energy]") {
  const ClusterSpec cluster({NodeGroup{1, "V100", 4}});
  VectorSource source({make_job("a", 0, 2, 3600), make_job("b", 10, 1, 1800)});
  const PolicyRegistry registry = builtin_policies();
  PolicyInstance policy = registry.create("fifo");
  Simulator sim(cluster, source, *policy.policy);
  EnergyMeter meter(sim, {DevicePower{50.0, 300.0}}, 1.5, nullptr);
  InvariantChecker checker;
  checker.watch_energy(meter);
  sim.add_observer(meter);
  sim.add_observer(checker);
  sim.run();  // conserved: no violation
  // Job energy (IT): a = 2 x 300 W x 1 h, b = 300 W x 0.5 h; facility x 1.5 PUE.
  CHECK(meter.totals().jobs.energy_kwh == Approx(1.5 * (0.6 + 0.15)));
  // The kernel's record of the last ended job (a, in slot 0) reported ended again: the
  // checker pulls its use from the meter (EnergyMeter::use_of_ended), 0.9 kWh a second time.
  checker.on_job_end(sim.job(0));
  CHECK_THAT(violation([&] { checker.after_event(sim); }),
             Catch::StartsWith("energy not conserved: the ended jobs used 2.025000 kWh in total, but 1.125000 kWh were attributed to jobs"));
}

TEST_CASE("max-min fair solutions pass the independent check and broken ones fail it", "[sim][invariants][comm]") {
  // Two links of 10; flows: {0}, {0,1}, {1} capped at 2. Max-min: link 1 gives the cap 2
  // to flow 2, leaving 8; link 0 splits 10 between flows 0 and 1 -> 5 each.
  MaxMinFairShare share({10.0e9, 10.0e9});
  share.add_flow(std::vector<int>{0});
  share.add_flow(std::vector<int>{0, 1});
  share.add_flow(std::vector<int>{1}, 2.0e9);
  share.solve();
  CHECK(share.rate_Bps(0) == Approx(5e9));
  CHECK(share.solution_problem().empty());
  share.remove_flow(0);
  CHECK(share.solution_problem().empty());  // stale until solved: not checked
  share.solve();
  CHECK(share.rate_Bps(1) == Approx(8e9));
  CHECK(share.solution_problem().empty());

  const std::vector<double> caps{10.0e9, 10.0e9};
  const double inf = MaxMinFairShare::kUnlimited;
  // Over capacity.
  CHECK(max_min_fair_problem(caps, {{{0}, inf, 6e9}, {{0, 1}, inf, 6e9}}, {12e9, 6e9}) ==
        "link 0 carries 12000000000 B/s, over its capacity 10000000000");
  // A reported load that is not the sum of the flows.
  CHECK(max_min_fair_problem(caps, {{{0}, inf, 5e9}, {{0, 1}, inf, 5e9}}, {10e9, 4e9}) == "link 1 load 4000000000 B/s != the sum of its flows' rates 5000000000");
  // Feasible but not fair: flow 1 could grow on link 1, and on link 0 it gets less than flow 0.
  CHECK(max_min_fair_problem(caps, {{{0}, inf, 7e9}, {{0, 1}, inf, 3e9}}, {10e9, 3e9}) ==
        "flow 1 gets 3000000000 B/s, below its cap, and crosses no full link on which it is among the largest (not max-min fair)");
  // Over its cap.
  CHECK(max_min_fair_problem(caps, {{{1}, 2e9, 3e9}}, {0, 3e9}) == "flow 0 gets 3000000000 B/s, over its cap 2000000000");
}

TEST_CASE("the invariant checker holds bound devices to one pending job each", "[sim][invariants][bind]") {
  // 4 devices; pending job p (3 GPUs) has devices 0 and 1 bound (allocated to its slot 0).
  const ClusterSpec cluster({NodeGroup{1, "V100", 4}});
  ClusterState state(cluster);
  state.allocate(std::vector<DeviceId>{0, 1}, 0);
  JobState p;
  p.spec = make_job("p", 0, 3, 100);
  p.remaining_work_s = 100;
  p.bound_devices = {0, 1};
  InvariantChecker checker;
  CHECK_NOTHROW(checker.check_state(Tick::from_seconds(1), state, {&p}, 0, 1, nullptr));
  // Bound twice: by p and by q.
  JobState q = p;
  q.spec.id = "q";
  q.bound_devices = {1};
  CHECK_THAT(violation([&] { checker.check_state(Tick::from_seconds(2), state, {&p, &q}, 0, 2, nullptr); }),
             Catch::StartsWith("invariant violated for job 'q': has device 1 bound, which another job holds or has bound (double-booked)"));
  // Bound but free in the cluster.
  p.bound_devices = {0, 1, 2};
  p.spec.num_gpus = 4;
  CHECK_THAT(violation([&] { checker.check_state(Tick::from_seconds(3), state, {&p}, 0, 1, nullptr); }),
             Catch::StartsWith("invariant violated for job 'p': has device 2 bound, which the cluster does not mark held by a job"));
  // A full bound set would have started the job.
  p.bound_devices = {0, 1};
  p.spec.num_gpus = 2;
  CHECK_THAT(violation([&] { checker.check_state(Tick::from_seconds(4), state, {&p}, 0, 1, nullptr); }),
             Catch::StartsWith("invariant violated for job 'p': has 2 devices bound, which its request does not allow while it waits"));
  // A running job with devices still bound.
  JobState r = running_job("r", {3}, 10);
  state.allocate(std::vector<DeviceId>{3}, 1);
  r.bound_devices = {3};
  p.spec.num_gpus = 3;
  CHECK_THAT(violation([&] { checker.check_state(Tick::from_seconds(5), state, {&p, &r}, 1, 1, nullptr); }),
             Catch::StartsWith("invariant violated for job 'r': is placed but still has bound devices"));
}
