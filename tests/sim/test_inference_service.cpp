// Inference services: replica counts against the M/M/c closed form, and the request-rate
// curve (diurnal in local time, bursts, drops).
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/inference_service.hpp"
#include "sim/queueing_latency.hpp"

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
