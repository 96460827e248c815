// Preemptive queue orders against queueing theory on one device (M/G/1), with the same
// high-variance service as tests/sim/test_queueing.cpp: hyperexponential, 90% of jobs
// mean 0.5 s and 10% mean 5.5 s (mean 1 s, E[S^2] = 6.5 s^2), Poisson arrivals at
// lambda = 0.7/s. Without physics, preemption is free, so the kernel is exactly the
// preemptive M/G/1 queue the formulas describe.
#include <catch2/catch.hpp>

#include <cmath>

#include "policies/registry.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "traces/synthetic.hpp"

using namespace schedsim;

namespace {

constexpr double kLambda = 0.7;
const std::vector<double> kWeights = {0.9, 0.1};
const std::vector<double> kMeans = {0.5, 5.5};

// Hyperexponential pieces in closed form, each a weighted sum over the phases.
double pdf(double x) {
  double f = 0;
  for (std::size_t i = 0; i < kMeans.size(); ++i) f += kWeights[i] / kMeans[i] * std::exp(-x / kMeans[i]);
  return f;
}
double survival(double x) {  // 1 - F(x)
  double s = 0;
  for (std::size_t i = 0; i < kMeans.size(); ++i) s += kWeights[i] * std::exp(-x / kMeans[i]);
  return s;
}
double partial_first(double x) {  // int_0^x t f(t) dt
  double s = 0;
  for (std::size_t i = 0; i < kMeans.size(); ++i) {
    const double m = kMeans[i];
    s += kWeights[i] * (m - (m + x) * std::exp(-x / m));
  }
  return s;
}
double partial_second(double x) {  // int_0^x t^2 f(t) dt
  double s = 0;
  for (std::size_t i = 0; i < kMeans.size(); ++i) {
    const double m = kMeans[i];
    s += kWeights[i] * (2 * m * m - std::exp(-x / m) * (x * x + 2 * m * x + 2 * m * m));
  }
  return s;
}

// SRPT mean response time, Schrage & Miller (1966), "The queue M/G/1 with the shortest
// remaining processing time discipline", Operations Research 14(4). A job of size x:
//  - waits until it first runs: only work from jobs that are (or become) shorter than x
//    delays it, i.e. jobs of size < x in full plus, of larger jobs, x each (their
//    remaining time drops below x only once they ran down to x). That is a busy period
//    started by  W(x) = lambda * m2(x) / (2 (1 - rho(x))^2),  with
//    m2(x) = int_0^x t^2 f(t) dt + x^2 (1 - F(x)) and rho(x) = lambda int_0^x t f(t) dt;
//  - then, with remaining time t going from x down to 0, is preempted only by arrivals
//    shorter than t, so each dt of its own work takes dt / (1 - rho(t)) of time:
//    R(x) = int_0^x dt / (1 - rho(t)).
// E[T] = int_0^inf (W(x) + R(x)) f(x) dx, integrated here with the trapezoid rule for
// R (accumulated along x) and Simpson's rule for the outer integral.
double srpt_mean_response_s() {
  auto rho = [](double x) { return kLambda * partial_first(x); };
  auto waiting = [&](double x) {
    const double m2 = partial_second(x) + x * x * survival(x);
    const double one_minus = 1 - rho(x);
    return kLambda * m2 / (2 * one_minus * one_minus);
  };
  const double h = 1e-3;
  double total = 0, residence = 0;  // residence = R(x) at the current x
  for (double x = 0; x < 200; x += h) {  // the tail beyond 200 s weighs < 1e-15
    const double mid_residence = residence + h / 4 * (1 / (1 - rho(x)) + 1 / (1 - rho(x + h / 2)));
    const double end_residence = residence + h / 2 * (1 / (1 - rho(x)) + 1 / (1 - rho(x + h)));
    auto g = [&](double t, double r) { return (waiting(t) + r) * pdf(t); };
    total += h / 6 * (g(x, residence) + 4 * g(x + h / 2, mid_residence) + g(x + h, end_residence));
    residence = end_residence;
  }
  return total;
}

// Mean JCT over `replications` independent runs of `jobs` jobs on one device.
double mean_jct_s(const std::string& policy_yaml, int replications, std::uint64_t jobs) {
  SyntheticConfig w;
  w.num_jobs = jobs;
  w.mean_interarrival_s = 1 / kLambda;
  w.duration_s = Distribution::hyperexponential(kWeights, kMeans);
  w.gpus = {{1, 1.0}};
  const ClusterSpec cluster({NodeGroup{1, "test", 1}});
  const PolicyRegistry registry = builtin_policies();
  double jct = 0;
  for (int seed = 1; seed <= replications; ++seed) {
    SyntheticJobSource source(w, static_cast<std::uint64_t>(seed));
    PolicyInstance policy = registry.create(ConfigNode::load_string(policy_yaml, "policy.yaml"));
    Simulator sim(cluster, source, *policy.policy);
    MetricsCollector metrics(1);
    sim.add_observer(metrics);
    sim.run();
    const Summary s = metrics.summarize();
    REQUIRE(s.jobs_completed == jobs);
    jct += *s.mean_jct_s;
  }
  return jct / replications;
}

}  // namespace

TEST_CASE("SRTF on M/G/1 matches the SRPT mean response time of Schrage and Miller", "[policies][queueing][slow]") {
  const double theory_s = srpt_mean_response_s();
  // Sanity of the numerics: SRPT beats non-preemptive SJF (Kleinrock: 3.19 s wait + 1 s)
  // and P-K FIFO (7.58 s + 1 s), and cannot go below the mean service time.
  CHECK(theory_s > 1.0);
  CHECK(theory_s < 4.04);
  const double measured_s = mean_jct_s("{name: srtf}", 5, 200'000);
  CHECK(measured_s == Approx(theory_s).epsilon(0.05));
}

TEST_CASE("LAS and SJF beat FIFO on high-variance service as theory ranks them", "[policies][queueing][slow]") {
  // For service with decreasing failure rate (the hyperexponential), attained service
  // predicts a short remainder, so LAS (foreground-background) beats FIFO; SJF knows
  // sizes and beats both. FIFO is the Pollaczek-Khinchine value 1 + lambda E[S^2] /
  // (2 (1 - rho)) = 1 + 0.7 * 6.5 / 0.6 = 8.583 s.
  const int runs = 3;
  const std::uint64_t jobs = 100'000;
  const double fifo_s = mean_jct_s("{name: fifo}", runs, jobs);
  const double sjf_s = mean_jct_s("{name: sjf}", runs, jobs);
  const double las_s = mean_jct_s("{name: las, discretized: false}", runs, jobs);
  const double srtf_s = mean_jct_s("{name: srtf}", runs, jobs);
  CHECK(fifo_s == Approx(1 + kLambda * 6.5 / (2 * (1 - kLambda))).epsilon(0.08));
  CHECK(sjf_s < 0.6 * fifo_s);
  CHECK(las_s < 0.6 * fifo_s);
  CHECK(srtf_s < sjf_s);  // SRPT is optimal for mean response time
  CHECK(srtf_s < las_s);
  WARN("mean JCT s: fifo " << fifo_s << " sjf " << sjf_s << " las " << las_s << " srtf " << srtf_s);
}
