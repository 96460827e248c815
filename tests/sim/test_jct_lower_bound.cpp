// The bound on mean JCT that rl-bench reports for runs without a physics model: closed
// forms of its relaxations and of their combination, and real runs of congested
// workloads that no policy may beat it on. tests/rl/test_rl_bench.cpp checks it against
// every heuristic and agent of rl-bench's episodes.
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>

#include "policies/registry.hpp"
#include "sim/jct_lower_bound.hpp"
#include "sim/metrics.hpp"
#include "sim/simulator.hpp"
#include "traces/synthetic.hpp"

using schedsim::BoundJob;
using schedsim::mean_jct_lower_bound_s;
using schedsim::pooled_srpt_completions_s;

namespace {

// The completed jobs of a run, as the bound takes them.
class Completed : public schedsim::Observer {
 public:
  void on_job_end(const schedsim::JobState& job) override {
    if (job.status == schedsim::JobStatus::kCompleted) jobs.push_back(BoundJob{job.spec.submit.seconds(), job.spec.duration_s, job.spec.num_gpus});
  }
  std::vector<BoundJob> jobs;
};

}  // namespace

TEST_CASE("the pooled machine serves GPU-seconds at the cluster's device count, shortest remaining first", "[sim][jct-bound]") {
  // One 2-GPU job alone on 4 devices: 2 x 5 GPU-seconds at 4 per second.
  CHECK(pooled_srpt_completions_s({{10.0, 5.0, 2}}, 4) == std::vector<double>{12.5});
  // X (2 GPUs, 10 s: 20 GPU-s) runs alone until Y (1 GPU, 2 s) arrives at 2 with 16 left;
  // Y is smaller, done at 3; X then at 3 + 16 / 2.
  CHECK(pooled_srpt_completions_s({{0.0, 10.0, 2}, {2.0, 2.0, 1}}, 2) == std::vector<double>{3.0, 11.0});
  // An idle gap: the machine waits for the next arrival.
  CHECK(pooled_srpt_completions_s({{0.0, 1.0, 1}, {5.0, 1.0, 1}}, 1) == std::vector<double>{1.0, 6.0});
  // Arrival order does not matter, nor does a job of no work.
  CHECK(pooled_srpt_completions_s({{5.0, 1.0, 1}, {0.0, 0.0, 3}, {0.0, 1.0, 1}}, 1) == std::vector<double>{0.0, 1.0, 6.0});
}

TEST_CASE("the bound takes, for the k-th completion, the later of no waiting and the pooled machine", "[sim][jct-bound]") {
  // Alone: the pooled machine finishes at 12.5, the job itself no earlier than 15: JCT 5.
  CHECK(mean_jct_lower_bound_s({{10.0, 5.0, 2}}, 4) == Approx(5.0));
  // Two 4 s jobs at 0 on one device: no waiting says 4 and 4, the pooled machine 4 and 8;
  // the bound 6 is what fifo reaches, so it is tight here.
  CHECK(mean_jct_lower_bound_s({{0.0, 4.0, 1}, {0.0, 4.0, 1}}, 1) == Approx(6.0));
  // A (0, 10 s) and B (1, 1 s) on one device: sorted no-wait completions 2 and 10, pooled
  // 2 and 11; the bound (2 + 11 - 0 - 1) / 2 = 6 is preemptive srtf's mean JCT.
  CHECK(mean_jct_lower_bound_s({{0.0, 10.0, 1}, {1.0, 1.0, 1}}, 1) == Approx(6.0));
  // Many devices: nothing waits on the pooled machine, the bound is the mean duration.
  CHECK(mean_jct_lower_bound_s({{0.0, 3.0, 1}, {0.0, 5.0, 2}, {1.0, 7.0, 1}}, 1000) == Approx(5.0));
  // Three 8-GPU jobs of 10 s at once on 8 devices: pooled 10, 20, 30; mean JCT 20.
  CHECK(mean_jct_lower_bound_s({{0.0, 10.0, 8}, {0.0, 10.0, 8}, {0.0, 10.0, 8}}, 8) == Approx(20.0));
}

TEST_CASE("the mean-busy-time bound reaches the fluid optimum from below", "[sim][jct-bound]") {
  using schedsim::BusyTimeBoundOptions;
  using schedsim::mean_busy_time_bound_s;
  // The linear programme's optimum in closed form, approached from below: the dual ascent
  // never passes it (weak duality; the grid only lowers it), and gets within 0.5%.
  const auto near_below = [](double bound, double optimum) {
    CHECK(bound <= optimum * (1 + 1e-12));
    CHECK(bound >= optimum * 0.995);
  };
  // Four 1-GPU jobs of 10 s at 0 on 2 devices: two run 0-10, two 10-20, mean JCT 15, and
  // no fluid schedule does better. The pooled machine lets a 1-GPU job use both devices
  // (completions 5, 10, 15, 20; with no waiting 10, 10, 15, 20: 13.75).
  const std::vector<BoundJob> four{{0.0, 10.0, 1}, {0.0, 10.0, 1}, {0.0, 10.0, 1}, {0.0, 10.0, 1}};
  near_below(mean_busy_time_bound_s(four, 2), 15.0);
  CHECK(mean_jct_lower_bound_s(four, 2) > 13.75 + 1.0);
  // A (1 GPU, 5 s) and B (4 GPUs, 1 s) at 0 on 4 devices. Fluid optimum: A at rate 1 on one
  // device, B at rate 3/4 on the other three until 4/3: mean busy times 2.5 and 2/3, plus
  // halves of the durations, (2.5 + 2/3 + 3) / 2 = 37/12. The completion-order bound is 3
  // (pooled: B at 1, A at 2.25; no waiting: 1 and 5): here the busy-time bound decides.
  const std::vector<BoundJob> ab{{0.0, 5.0, 1}, {0.0, 1.0, 4}};
  near_below(mean_busy_time_bound_s(ab, 4), 37.0 / 12);
  CHECK(mean_jct_lower_bound_s(ab, 4) == mean_busy_time_bound_s(ab, 4));
  CHECK(mean_jct_lower_bound_s(ab, 4) > 3.05);
  // Two 2-GPU jobs of 10 s at 0 on 3 devices: sharing the three devices evenly (rate 3/4
  // each, both done at 40/3) is the fluid optimum, 35/3, which the completion-order bound
  // (10 + 40/3) / 2 also gives; a real schedule needs 15.
  near_below(mean_busy_time_bound_s({{0.0, 10.0, 2}, {0.0, 10.0, 2}}, 3), 35.0 / 3);
  CHECK(mean_jct_lower_bound_s({{0.0, 10.0, 2}, {0.0, 10.0, 2}}, 3) == Approx(35.0 / 3));
  // Alone, a job's mean busy time is half-way through it: the no-wait bound.
  near_below(mean_busy_time_bound_s({{7.0, 4.0, 3}}, 8), 4.0);
  // A job of no work completes on arrival.
  near_below(mean_busy_time_bound_s({{3.0, 0.0, 1}, {0.0, 2.0, 1}}, 1), 1.0);
  // Prices held at 0: every job buys its work from its arrival on, each second counted at
  // its slot's start. A grid of 4 slots over 0-20 (fluid makespan 10 + longest 10) counts
  // each job's first 5 s at 0 and the next 5 at 5: mean busy time 2.5, plus 5 (10 exactly).
  CHECK(mean_busy_time_bound_s({{0.0, 10.0, 1}, {0.0, 10.0, 1}}, 2, BusyTimeBoundOptions{4, 0}) == Approx(7.5));
  // The grid starts at the first arrival: a window of a trace far into its log (absolute
  // times) gets the same bound, not a grid spent on the hours before it.
  std::vector<BoundJob> late = ab;
  for (BoundJob& j : late) j.arrival_s += 1e7;
  CHECK(mean_busy_time_bound_s(late, 4) == Approx(mean_busy_time_bound_s(ab, 4)).epsilon(1e-6));
  // More price updates never lower it.
  CHECK(mean_busy_time_bound_s(four, 2, BusyTimeBoundOptions{4096, 300}) >= mean_busy_time_bound_s(four, 2, BusyTimeBoundOptions{4096, 30}));
}

TEST_CASE("the bound rejects what no cluster runs", "[sim][jct-bound]") {
  CHECK(std::isnan(mean_jct_lower_bound_s({}, 4)));
  CHECK(std::isnan(schedsim::mean_busy_time_bound_s({}, 4)));
  CHECK_THROWS_AS(schedsim::mean_busy_time_bound_s({{0.0, 1.0, 1}}, 0), std::invalid_argument);
  CHECK_THROWS_AS(schedsim::mean_busy_time_bound_s({{0.0, 1.0, 1}}, 1, schedsim::BusyTimeBoundOptions{0, 10}), std::invalid_argument);
  CHECK_THROWS_AS(mean_jct_lower_bound_s({}, 0), std::invalid_argument);
  CHECK_THROWS_AS(mean_jct_lower_bound_s({{0.0, -1.0, 1}}, 4), std::invalid_argument);
  CHECK_THROWS_AS(mean_jct_lower_bound_s({{NAN, 1.0, 1}}, 4), std::invalid_argument);
  CHECK_THROWS_AS(mean_jct_lower_bound_s({{0.0, 1.0, 0}}, 4), std::invalid_argument);
}

TEST_CASE("no policy's mean JCT beats the bound on congested mixed-size workloads", "[sim][jct-bound]") {
  using namespace schedsim;
  // 60 jobs of 1-8 GPUs on 8 devices at an offered load of 1.2: queues form, so the bound
  // must rise above the jobs' mean duration and still stay under every policy, the
  // clairvoyant ones (sjf, srtf: the simulator's default information is the truth) too.
  // It is far from tight here (about half the best policy's mean JCT on some seeds):
  // 8-GPU jobs take the whole cluster, which the fluid relaxation lets others share.
  SyntheticConfig w;
  w.num_jobs = 60;
  w.duration_s = Distribution::exponential(3600.0);
  w.gpus = {{1, 0.5}, {2, 0.2}, {4, 0.2}, {8, 0.1}};
  w.mean_interarrival_s = 2.5 * 3600.0 / (1.2 * 8);
  const ClusterSpec cluster({NodeGroup{1, "test", 8}});
  const PolicyRegistry registry = builtin_policies();
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    double bound = 0.0, no_wait = 0.0;
    for (const char* name : {"fifo", "sjf", "srtf", "las", "slurm-easy"}) {
      SyntheticJobSource source(w, seed);
      PolicyInstance policy = registry.create(name);
      Simulator sim(cluster, source, *policy.policy);
      MetricsCollector metrics(8);
      Completed completed;
      sim.add_observer(metrics);
      sim.add_observer(completed);
      sim.run();
      const Summary s = metrics.summarize();
      REQUIRE(s.jobs_completed == w.num_jobs);
      if (bound == 0.0) {
        bound = mean_jct_lower_bound_s(completed.jobs, 8);
        for (const BoundJob& j : completed.jobs) no_wait += j.duration_s / static_cast<double>(completed.jobs.size());
      }
      INFO("seed " << seed << ", " << name);
      CHECK(bound <= *s.mean_jct_s);
    }
    INFO("seed " << seed);
    CHECK(bound > no_wait * 1.05);
  }
}
