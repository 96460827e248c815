// A lower bound on the mean job completion time (JCT) that no scheduler, clairvoyant or
// not, can beat on a cluster where every job runs at rate 1 once it holds its devices
// (no physics model: every device alike, free checkpoints). rl-bench reports it beside
// its physics-off results so that a target can be set against what is possible at all.
#pragma once

#include <vector>

namespace schedsim {

struct BoundJob {
  double arrival_s = 0.0;
  double duration_s = 0.0;  // run time once started, never shorter on any device
  int num_gpus = 1;
};

// The larger of two bounds, each valid on its own:
// 1. Completion order. No waiting: job j completes no earlier than arrival_j +
//    duration_j. One pooled machine: the cluster as one machine serving num_devices
//    GPU-seconds per second, job j as num_gpus_j x duration_j GPU-seconds that may be split
//    and preempted freely; shortest remaining work first completes, by every instant, at
//    least as many jobs as any schedule of that machine (Schrage 1968), so its k-th
//    completion bounds any real schedule's k-th completion. The k-th smallest completion
//    time of any schedule is at least the larger of the two relaxations' k-th smallest.
// 2. Mean busy time (the LP bound of Goemans et al., with each job's rate capped): a job
//    that runs at rate at most 1 completes at least duration_j / 2 after its mean busy
//    time M_j (the work-weighted mean instant of its progress), so sum of C_j >= sum of
//    M_j + duration_j / 2, and sum of M_j is at least the minimum over fluid schedules
//    (devices shared fractionally, each job at rate <= 1 on its GPUs, none before its
//    arrival). That minimum is a linear programme; a Lagrangian dual of it on a grid of
//    slots (prices on each slot's capacity, raised where jobs ask for more than it holds)
//    gives a value no higher at any prices, so the bound holds however far the ascent
//    gets. It sees congestion the pooled machine (where a 1-GPU job may use every device)
//    does not.
// Returns the bound on the mean JCT in seconds; NaN for no jobs. Throws
// std::invalid_argument for num_devices < 1 or a job with a negative or non-finite
// arrival or duration or fewer than one GPU.
struct BusyTimeBoundOptions {
  int slots = 4096;       // grid of bound 2: slots from the first arrival to the end of a fluid schedule plus the longest job
  int iterations = 300;   // price updates of the dual ascent (0: prices stay 0)
};
double mean_jct_lower_bound_s(const std::vector<BoundJob>& jobs, int num_devices, const BusyTimeBoundOptions& options = {});

// Bound 2 alone (seconds of mean JCT; NaN for no jobs), exposed for tests.
double mean_busy_time_bound_s(const std::vector<BoundJob>& jobs, int num_devices, const BusyTimeBoundOptions& options = {});

// The completion times (seconds, ascending) of shortest-remaining-work-first on the pooled
// machine of bound 1, exposed for tests.
std::vector<double> pooled_srpt_completions_s(const std::vector<BoundJob>& jobs, int num_devices);

}  // namespace schedsim
