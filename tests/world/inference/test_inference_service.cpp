// Inference services: replica counts against the M/M/c closed form, and the request-rate
// curve (diurnal in local time, bursts, drops).
#include <catch2/catch.hpp>

#include <cmath>

#include "world/inference/inference_service.hpp"
#include "world/inference/queueing_latency.hpp"

using namespace schedsim;

TEST_CASE("replicas for a p99 SLO match the M/M/c closed form", "[sim][inference]") {
  // M/M/1, mu 4, lambda 2: p99 response = ln(100) / (mu - lambda) = 2.3026 s.
  CHECK(mmc_latency(2.0, 4.0, 1).p99_response_s == Approx(std::log(100.0) / 2.0).epsilon(1e-9));
  CHECK(replicas_for_slo(2.0, 4.0, 2.31, 10) == 1);
  CHECK(replicas_for_slo(2.0, 4.0, 2.30, 10) == 2);
  // In general: the smallest c whose p99 meets the SLO, i.e. c - 1 misses it.
  for (double lambda : {5.0, 17.0, 42.0}) {
    for (double slo : {1.2, 1.5, 2.5}) {  // above ln(100) / mu = 1.151 s, the p99 of the service time alone
      const int c = replicas_for_slo(lambda, 4.0, slo, 100);
      INFO("lambda " << lambda << " slo " << slo << " -> " << c);
      const MmcLatency at = mmc_latency(lambda, 4.0, c);
      CHECK(at.stable);
      CHECK(at.p99_response_s <= slo);
      if (c > 1) {
        const MmcLatency below = mmc_latency(lambda, 4.0, c - 1);
        CHECK((!below.stable || below.p99_response_s > slo));
      }
    }
  }
  CHECK(replicas_for_slo(1000.0, 4.0, 0.5, 8) == 8);  // capped
  // Reactive target: ceil(lambda / (mu x target)).
  CHECK(replicas_for_utilization(10.0, 4.0, 0.5) == 5);
  CHECK(replicas_for_utilization(10.0, 4.0, 0.6) == 5);  // 4.17 -> 5
  CHECK(replicas_for_utilization(0.0, 4.0, 0.6) == 1);
  CHECK(!meets_slo(8.0, 4.0, 2, 10.0));  // lambda = c mu: unstable
  CHECK(meets_slo(0.0, 4.0, 0, 0.1));     // no load, no replicas needed
}

TEST_CASE("request rate: diurnal in local time, bursts and drops", "[sim][inference]") {
  // Peak at 14:00 local in UTC+8 (06:00 UTC), hourly steps, time zero at midnight UTC.
  RequestRate r = RequestRate::diurnal(100.0, 50.0, 14.0, 8.0, 3600.0, 0);
  // Step 6 (06:00-07:00 UTC = 14:00-15:00 local) holds the value at 14:30 local.
  CHECK(r.at(Tick::from_seconds(6 * 3600 + 10)) == Approx(100 + 50 * std::cos(2 * M_PI * 0.5 / 24)).epsilon(1e-12));
  CHECK(r.at(Tick::from_seconds(18 * 3600)) == Approx(100 - 50 * std::cos(2 * M_PI * 0.5 / 24)).epsilon(1e-12));
  CHECK(r.at(Tick::from_seconds(86400 + 6 * 3600)) == r.at(Tick::from_seconds(6 * 3600)));  // repeats daily
  r.add_event(RateEvent{1000, 1600, 3.0});  // burst
  r.add_event(RateEvent{1500, 2000, 0.0});  // outage-like drop
  const double base = r.base_at(Tick::from_seconds(1200));
  CHECK(r.at(Tick::from_seconds(1200)) == Approx(3 * base));
  CHECK(r.at(Tick::from_seconds(1550)) == 0.0);
  CHECK(r.at(Tick::from_seconds(2000)) == Approx(base));
  CHECK(r.next_change(Tick()) == Tick::from_seconds(1000));
  CHECK(r.next_change(Tick::from_seconds(1000)) == Tick::from_seconds(1500));
  CHECK(r.next_change(Tick::from_seconds(2000)) == Tick::from_seconds(3600));
  // The forecast peak ignores bursts.
  CHECK(r.max_base(Tick(), Tick::from_seconds(7 * 3600)) == Approx(100 + 50 * std::cos(2 * M_PI * 0.5 / 24)));
}

// ---- The world's SLO meter (sim/service_meter.hpp), with no autoscaler at all. ----

#include <memory>

#include "base/error.hpp"
#include "world/inference/service_meter.hpp"
#include "sim/simulator.hpp"
#include "first_fit_policy.hpp"
#include "test_support.hpp"
#include "world/inference/inference_process.hpp"

namespace {

// First-fit FIFO that, at its first decision, holds `held` devices for service 0.
class HoldingFirstFit : public schedsim::test::FirstFit {
 public:
  explicit HoldingFirstFit(std::vector<DeviceId> held) : held_(std::move(held)) {}
  void decide(const SchedulerView& view, ActionBatch& out) override {
    if (!done_ && !held_.empty()) out.hold(0, held_);
    done_ = true;
    if (out.empty()) FirstFit::decide(view, out);
  }
  bool decide_again_after_actions() const override { return true; }

 private:
  std::vector<DeviceId> held_;
  bool done_ = false;
};

// A declared active count below the held devices (an autoscaler's idle reserve).
struct OneActive : ServiceReplicaSource {
  int replicas_in_service(int) const override { return 1; }
};

std::shared_ptr<std::vector<ServiceSpec>> chat_service(int gpus_per_replica) {
  ServiceSpec s;
  s.name = "chat";
  s.rate = RequestRate::diurnal(10.0, 0.0, 14.0, 0.0, 3600.0, 0);  // 10 req/s, hourly steps
  s.rate.add_event(RateEvent{300.0, 500.0, 0.0});                   // no requests over [300, 500)
  s.capacity_rps_by_type["V100"] = 10.0;
  s.slo_p99_s = 2.0;
  s.gpus_per_replica = gpus_per_replica;
  s.max_replicas = 2;
  return std::make_shared<std::vector<ServiceSpec>>(std::vector<ServiceSpec>{s});
}

std::vector<ServiceMetrics> meter_run(std::vector<DeviceId> held, int gpus_per_replica, const ServiceReplicaSource* source = nullptr) {
  const ClusterSpec cluster({NodeGroup{1, "V100", 4}});
  // One 1-GPU job on [100, 1100): the metered span.
  schedsim::test::VectorSource jobs({schedsim::test::make_job("j", 100, 1, 1000)});
  HoldingFirstFit policy(std::move(held));
  Simulator sim(cluster, jobs, policy);
  InferenceProcess holds;
  sim.add_process(holds);
  ServiceMeter meter(chat_service(gpus_per_replica), cluster, nullptr);
  meter.read_replicas_from(source);
  sim.add_observer(meter);
  sim.run();
  return meter.metrics();
}

}  // namespace

TEST_CASE("service meter: replicas are what the kernel holds, metered over the workload's span", "[sim][inference][world]") {
  // Two 1-GPU replicas from the first decision (t = 100) to the job's end (1100): M/M/2 at
  // 10 req/s with mu 10 meets p99 <= 2 s, so no violation.
  auto m = meter_run({2, 3}, 1);
  REQUIRE(m.size() == 1);
  CHECK(m[0].name == "chat");
  CHECK(m[0].replica_s == 2 * 1000.0);
  CHECK(m[0].slo_violation_s == 0.0);
  CHECK(m[0].peak_replicas == 2);
  CHECK(m[0].borrowed_device_s == 0.0);
  // Nobody holds replicas: the SLO is violated whenever requests arrive, i.e. the span
  // minus the 200 s without requests (a rate step no decision point marks).
  m = meter_run({}, 1);
  CHECK(m[0].replica_s == 0.0);
  CHECK(m[0].slo_violation_s == 1000.0 - 200.0);
  CHECK(m[0].peak_replicas == 0);
  // 3 devices of 2-GPU replicas: one whole replica (M/M/1 at 10 req/s, mu 10: unstable).
  m = meter_run({0, 1, 2}, 2);
  CHECK(m[0].replica_s == 1000.0);
  CHECK(m[0].slo_violation_s == 800.0);
  // An autoscaler that declares one of its two held replicas active.
  const OneActive one;
  m = meter_run({2, 3}, 1, &one);
  CHECK(m[0].replica_s == 1000.0);
  CHECK(m[0].peak_replicas == 1);
  CHECK(m[0].slo_violation_s == 800.0);
}

TEST_CASE("service meter: a datacenter type without capacity is refused naming the key", "[sim][inference][world]") {
  const ClusterSpec cluster({NodeGroup{1, "K80", 4}});
  CHECK_THROWS_MATCHES(ServiceMeter(chat_service(1), cluster, nullptr), InputError,
                       Catch::Message("inference.services[0].capacity_rps: service 'chat' has no capacity for device type 'K80', where its "
                                      "replicas run (the first device type of its datacenter); it lists V100"));
}

TEST_CASE("inference process: holds are its action; without it a hold is refused; the view shows its table", "[sim][inference][world]") {
  const ClusterSpec cluster({NodeGroup{1, "V100", 4}});
  SECTION("no inference process registered") {
    schedsim::test::VectorSource jobs({schedsim::test::make_job("j", 100, 1, 1000)});
    HoldingFirstFit policy({2, 3});
    Simulator sim(cluster, jobs, policy);
    // (The action names slot 0 as the kernel names any non-cooling action's index.)
    CHECK_THROWS_WITH(sim.run(), Catch::StartsWith("policy 'first-fit' at t=100 s: action #0 (hold ") &&
                                     Catch::EndsWith("): no inference process holds devices for services in this simulation (world/inference/inference_process.hpp)"));
  }
  SECTION("registered: the service holds its devices, policies and the kernel see them, bad holds are refused with today's messages") {
    InferenceProcess holds;
    CHECK(holds.hooks() == (WorldProcess::kActions | WorldProcess::kHeldDevices | WorldProcess::kSnapshot));
    CHECK(holds.action_kinds() == std::vector<ActionKind>{ActionKind::kHold});
    schedsim::test::VectorSource jobs({schedsim::test::make_job("j", 100, 1, 1000)});
    HoldingFirstFit policy({3, 2});
    Simulator sim(cluster, jobs, policy);
    sim.add_process(holds);
    REQUIRE(sim.advance());
    ActionBatch batch;
    policy.decide(sim.view(), batch);
    sim.apply(batch);
    CHECK(holds.held().at(0) == std::vector<DeviceId>{2, 3});
    CHECK(&sim.view().service_devices(0) == &holds.held()[0]);
    CHECK(sim.service_devices(0) == std::vector<DeviceId>{2, 3});
    CHECK(sim.num_services() == 1);
    CHECK(sim.cluster_state().owner(2) == Simulator::service_owner(0));
    WorldContext ctx(sim);
    Action a;
    a.kind = ActionKind::kHold;
    a.job = 1;
    const DeviceId taken[] = {2}, twice[] = {1, 1}, none[] = {9};
    CHECK(holds.apply_action(ctx, a, Span<DeviceId>(taken, 1)) == "device 2 is not free");
    CHECK(holds.apply_action(ctx, a, Span<DeviceId>(twice, 2)) == "a device is listed twice");
    CHECK(holds.apply_action(ctx, a, Span<DeviceId>(none, 1)) == "device 9 does not exist");
    a.job = -1;
    CHECK(holds.apply_action(ctx, a, {}) == "no such inference service (index -1)");
  }
}
