// Latency of an inference service modelled as an M/M/c queue: Poisson requests at rate
// lambda (req/s), c replicas each serving exponentially distributed requests at rate mu
// (req/s). Closed forms (Erlang C); used for SLO checks and autoscaling decisions.
#pragma once

namespace schedsim {

struct MmcLatency {
  double utilization = 0.0;     // rho = lambda / (c mu)
  double wait_probability = 0.0;  // Erlang C: P(a request waits)
  double mean_wait_s = 0.0;     // E[W] = C / (c mu - lambda)
  double mean_response_s = 0.0; // E[W] + 1 / mu
  double p99_wait_s = 0.0;      // P(W > t) = C e^{-(c mu - lambda) t}
  double p99_response_s = 0.0;  // 99th percentile of W + S (S ~ Exp(mu))
  bool stable = false;          // lambda < c mu; otherwise every latency is +infinity
};

// P(response time > t) for an M/M/c queue: (1 - C) e^{-mu t} + C P(Exp(theta) + Exp(mu) > t)
// with theta = c mu - lambda.
double mmc_response_tail(double lambda, double mu, int c, double t);

// Throws std::invalid_argument for lambda < 0, mu <= 0 or c < 1.
MmcLatency mmc_latency(double lambda_per_s, double mu_per_s, int replicas);

}  // namespace schedsim
