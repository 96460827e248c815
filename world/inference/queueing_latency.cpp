#include "world/inference/queueing_latency.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace schedsim {

namespace {

// Erlang C via the numerically stable Erlang B recursion: B(0) = 1,
// B(k) = a B(k-1) / (k + a B(k-1)); C = B / (1 - rho (1 - B)).
double erlang_c(double a, int c) {
  double b = 1.0;
  for (int k = 1; k <= c; ++k) b = a * b / (k + a * b);
  const double rho = a / c;
  return b / (1.0 - rho * (1.0 - b));
}

// The tail for a known Erlang C value: the p99 search evaluates it at many t for one queue.
double response_tail(double lambda, double mu, int c, double C, double t) {
  const double theta = c * mu - lambda;
  double hypo;  // P(Exp(theta) + Exp(mu) > t)
  if (std::fabs(theta - mu) < 1e-12 * mu) {
    hypo = std::exp(-mu * t) * (1.0 + mu * t);
  } else {
    hypo = (theta * std::exp(-mu * t) - mu * std::exp(-theta * t)) / (theta - mu);
  }
  return (1.0 - C) * std::exp(-mu * t) + C * hypo;
}

}  // namespace

double mmc_response_tail(double lambda, double mu, int c, double t) { return response_tail(lambda, mu, c, erlang_c(lambda / mu, c), t); }

MmcLatency mmc_latency(double lambda, double mu, int c) {
  if (!(lambda >= 0) || !(mu > 0) || c < 1) throw std::invalid_argument("mmc_latency: need lambda >= 0, mu > 0, c >= 1");
  MmcLatency r;
  r.utilization = lambda / (c * mu);
  const double inf = std::numeric_limits<double>::infinity();
  if (lambda >= c * mu) {
    r.wait_probability = 1.0;
    r.mean_wait_s = r.mean_response_s = r.p99_wait_s = r.p99_response_s = inf;
    return r;
  }
  r.stable = true;
  const double theta = c * mu - lambda;
  r.wait_probability = lambda > 0 ? erlang_c(lambda / mu, c) : 0.0;
  r.mean_wait_s = r.wait_probability / theta;
  r.mean_response_s = r.mean_wait_s + 1.0 / mu;
  r.p99_wait_s = r.wait_probability > 0.01 ? std::log(r.wait_probability / 0.01) / theta : 0.0;
  // The response tail is decreasing in t: bisect P(T > t) = 0.01.
  const double C = erlang_c(lambda / mu, c);
  double lo = 0.0, hi = 1.0 / mu;
  while (response_tail(lambda, mu, c, C, hi) > 0.01) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (response_tail(lambda, mu, c, C, mid) > 0.01 ? lo : hi) = mid;
  }
  r.p99_response_s = 0.5 * (lo + hi);
  return r;
}

}  // namespace schedsim
