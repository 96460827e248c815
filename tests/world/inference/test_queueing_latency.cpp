// The M/M/c latency model against closed forms and textbook values.
#include <catch2/catch.hpp>

#include <cmath>

#include "world/inference/queueing_latency.hpp"

using namespace schedsim;

TEST_CASE("M/M/1 latency equals the closed forms", "[inference][queueing]") {
  // lambda 0.5, mu 1: C = rho = 0.5, E[W] = rho / (mu - lambda) = 1, T ~ Exp(mu - lambda).
  const MmcLatency m = mmc_latency(0.5, 1.0, 1);
  CHECK(m.wait_probability == Approx(0.5).epsilon(1e-14));
  CHECK(m.mean_wait_s == Approx(1.0).epsilon(1e-14));
  CHECK(m.mean_response_s == Approx(2.0).epsilon(1e-14));
  CHECK(m.p99_wait_s == Approx(std::log(50.0) / 0.5).epsilon(1e-12));       // 0.5 e^{-0.5 t} = 0.01
  CHECK(m.p99_response_s == Approx(std::log(100.0) / 0.5).epsilon(1e-9));   // e^{-0.5 t} = 0.01: 9.2103 s
}

TEST_CASE("M/M/c Erlang C matches hand-computed values", "[inference][queueing]") {
  // c = 2, a = lambda / mu = 1: C = (a^2/2! x 2/(2-1)) / (1 + a + a^2/2! x 2) = 1/3; E[W] = C / (2 mu - lambda).
  const MmcLatency m = mmc_latency(1.0, 1.0, 2);
  CHECK(m.wait_probability == Approx(1.0 / 3.0).epsilon(1e-14));
  CHECK(m.mean_wait_s == Approx(1.0 / 3.0).epsilon(1e-14));
  CHECK(m.utilization == 0.5);
  // theta = 2 mu - lambda = mu: the hypoexponential tail degenerates to e^{-t}(1 + t).
  const double t = m.p99_response_s;
  CHECK((2.0 / 3.0) * std::exp(-t) + (1.0 / 3.0) * std::exp(-t) * (1 + t) == Approx(0.01).epsilon(1e-9));
  // c = 3, a = 2 (rho = 2/3): C = (8/6 x 3) / (1 + 2 + 2 + 4) = 4/9.
  CHECK(mmc_latency(2.0, 1.0, 3).wait_probability == Approx(4.0 / 9.0).epsilon(1e-14));
  CHECK_FALSE(mmc_latency(3.0, 1.0, 3).stable);
  CHECK(std::isinf(mmc_latency(3.0, 1.0, 3).p99_response_s));
}
