// The kernel against closed-form queueing theory. With rate-1 jobs, 1-GPU requests and
// FIFO/SJF, the simulator is exactly an M/G/c queue, so its long-run means must match.
//
// Tolerances and sample sizes: successive waiting times are strongly correlated at high
// load, so the standard error of a sample mean is far above sigma/sqrt(n). For M/M/1 at
// rho = 0.8 the asymptotic variance of the mean waiting time per customer is
// rho(2 + 5rho - 4rho^2 + rho^3) / (mu^2 (1 - rho)^4) ~ 1976 (Daley 1968), i.e. a 2%
// relative standard error on the mean JCT with 200,000 jobs. A single 200,000-job run
// would miss a 3% band one time in eight; we average 5 independent 200,000-job runs
// (0.9% standard error), so the 3% and 5% bands are more than three standard errors.
#include <catch2/catch.hpp>

#include <cmath>

#include "policies/registry.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "traces/synthetic.hpp"

using namespace schedsim;

namespace {

constexpr int kReplications = 5;
constexpr std::uint64_t kJobsPerRun = 200'000;

// Mean JCT and mean queue delay over kReplications seeds.
std::pair<double, double> simulate(const SyntheticConfig& w, int devices, const std::string& policy_name) {
  const ClusterSpec cluster({NodeGroup{1, "test", devices}});
  const PolicyRegistry registry = builtin_policies();
  double jct = 0, wait = 0;
  for (int seed = 1; seed <= kReplications; ++seed) {
    SyntheticJobSource source(w, static_cast<std::uint64_t>(seed));
    PolicyInstance policy = registry.create(policy_name);
    Simulator sim(cluster, source, *policy.policy);
    MetricsCollector metrics(devices);
    sim.add_observer(metrics);
    sim.run();
    const Summary s = metrics.summarize();
    REQUIRE(s.jobs_completed == w.num_jobs);
    jct += *s.mean_jct_s;
    wait += *s.mean_queue_delay_s;
  }
  return {jct / kReplications, wait / kReplications};
}

SyntheticConfig poisson_workload(double mean_interarrival_s, Distribution durations) {
  SyntheticConfig w;
  w.num_jobs = kJobsPerRun;
  w.mean_interarrival_s = mean_interarrival_s;
  w.duration_s = std::move(durations);
  w.gpus = {{1, 1.0}};
  return w;
}

// Erlang C: probability that an arrival waits in M/M/c with offered load a = lambda/mu.
double erlang_c(int c, double a) {
  double term = 1, sum = 1;  // k = 0
  for (int k = 1; k < c; ++k) {
    term *= a / k;
    sum += term;
  }
  const double top = term * a / c * (c / (c - a));  // a^c / c! * c / (c - a)
  return top / (sum + top);
}

}  // namespace

TEST_CASE("M/M/1 under FIFO: mean JCT = 1/(mu - lambda)", "[sim][queueing][slow]") {
  // lambda = 0.8/s (mean inter-arrival 1.25 s), mu = 1/s: 1/(mu - lambda) = 5 s.
  const auto [jct, wait] = simulate(poisson_workload(1.25, Distribution::exponential(1.0)), 1, "fifo");
  CHECK(jct == Approx(5.0).epsilon(0.03));
  CHECK(wait == Approx(4.0).epsilon(0.04));  // rho / (mu - lambda)
}

TEST_CASE("M/M/c under FIFO: mean wait matches Erlang C", "[sim][queueing][slow]") {
  // c = 8, mu = 1/s, utilization 0.85: lambda = 6.8/s.
  const int c = 8;
  const double lambda = 0.85 * c;
  const double expected_wait = erlang_c(c, lambda) / (c * 1.0 - lambda);
  const auto [jct, wait] = simulate(poisson_workload(1.0 / lambda, Distribution::exponential(1.0)), c, "fifo");
  CHECK(wait == Approx(expected_wait).epsilon(0.05));
  CHECK(jct == Approx(expected_wait + 1.0).epsilon(0.02));
}

TEST_CASE("M/G/1 non-preemptive SJF matches Kleinrock's formula and beats FIFO", "[sim][queueing][slow]") {
  // High-variance service: hyperexponential, 90% of jobs mean 0.5 s, 10% mean 5.5 s
  // (mean 1 s, E[S^2] = 6.5 s^2, squared coefficient of variation 5.5); lambda = 0.7/s.
  const double lambda = 0.7;
  const Distribution service = Distribution::hyperexponential({0.9, 0.1}, {0.5, 5.5});
  REQUIRE(service.mean() == Approx(1.0));
  REQUIRE(service.second_moment() == Approx(6.5));
  const double w0 = lambda * service.second_moment() / 2;  // mean residual work seen by an arrival

  // Kleinrock (Queueing Systems vol. 2, sec. 3.6): a job of size x waits
  // W(x) = W0 / ((1 - rho(x-)) (1 - rho(x))), rho(x) = lambda * int_0^x t dF(t). For a
  // continuous F the two loads coincide, so E[W] = W0 * int f(x) / (1 - rho(x))^2 dx.
  auto pdf = [](double x) { return 0.9 / 0.5 * std::exp(-x / 0.5) + 0.1 / 5.5 * std::exp(-x / 5.5); };
  auto partial_mean = [](double x) {  // int_0^x t f(t) dt for each exponential phase
    auto phase = [x](double m) { return m - (m + x) * std::exp(-x / m); };
    return 0.9 * phase(0.5) + 0.1 * phase(5.5);
  };
  double integral = 0;
  const double h = 1e-3;
  for (double x = 0; x < 200; x += h) {  // Simpson's rule; the tail beyond 200 s is < 1e-15
    auto g = [&](double t) { const double rho = lambda * partial_mean(t); return pdf(t) / ((1 - rho) * (1 - rho)); };
    integral += h / 6 * (g(x) + 4 * g(x + h / 2) + g(x + h));
  }
  const double sjf_wait = w0 * integral;
  const double fifo_wait = w0 / (1 - lambda);  // Pollaczek-Khinchine

  const SyntheticConfig w = poisson_workload(1 / lambda, service);
  const auto [sjf_jct, sjf_measured_wait] = simulate(w, 1, "sjf");
  const auto [fifo_jct, fifo_measured_wait] = simulate(w, 1, "fifo");
  CHECK(sjf_jct == Approx(sjf_wait + 1.0).epsilon(0.05));
  CHECK(fifo_jct == Approx(fifo_wait + 1.0).epsilon(0.05));
  CHECK(sjf_jct < fifo_jct);
  CHECK(sjf_measured_wait < 0.6 * fifo_measured_wait);  // theory: 3.19 s vs 7.58 s
}
