// Gavel (Narayanan et al., "Heterogeneity-Aware Cluster Scheduling Policies for Deep
// Learning Workloads", OSDI'20), its max-min fairness policy over heterogeneity-aware
// throughputs, realized in rounds:
//  1. Each job's throughput on each device type (PhysicsModel::estimated_rate; 1 on every
//     type without physics) is normalized by its best type, so a job's normalized
//     throughput is 1 when it spends all its time on its best type.
//  2. At a round boundary an LP computes the allocation X (job x type -> share of time):
//     maximize min_j sum_t X_jt a_jt subject to sum_t X_jt <= 1 per job and
//     sum_j n_j X_jt <= devices of type t. Jobs with equal (GPU count, normalized
//     throughputs) form one class with a common allocation (symmetric LP, same optimum),
//     so the LP has one row per class, not per job. A secondary objective of weight 1e-6
//     per class member adds total normalized throughput, which picks a work-conserving
//     vertex among the max-min optima (Gavel solves the bare max-min with cvxpy); a tie
//     factor of 1 + [2.5e-4, 1e-3] fixed per (class, type) makes that optimum unique, and
//     the shares are rounded to multiples of 2^-30, so the run does not depend on the
//     simplex's pivot path (docs/policies.md).
//  3. Gavel's round mechanism: priority_jt = X_jt / (share of the job's time in the system
//     it has received on t), jobs are granted types in priority order while devices last;
//     running jobs that lose their grant are preempted, those granted another type are
//     moved (the kernel charges checkpoint save + restore).
// Rounds end on time: the policy asks the kernel for a wake-up at each round boundary
// (ActionBatch::wake_at). Simplified: between rounds free devices
// are filled work-conservingly (granted jobs first, then others in arrival order on their
// fastest type with room), where Gavel would leave new jobs waiting for the next round;
// no space sharing, no priority weights or SLOs; within a type a job goes to the
// fullest node that holds it, else to the emptiest nodes.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "policies/registry.hpp"

namespace schedsim {

PolicyInfo gavel_policy_info();
// Preset `gavel-las`: Gavel's simulator running max_min_fairness_perf (normalize:
// equal_share, fill_between_rounds: false, reallocate_every_s: 1920).
PolicyInfo gavel_las_policy_info();

// What the policy computed, for tests of its algorithmic shape (not of wall time).
struct GavelCounters {
  std::uint64_t rounds = 0;        // round boundaries (allocation steps)
  std::uint64_t lp_solves = 0;     // LPs solved; a round whose LP equals the last one solved reuses its answer
  std::uint64_t rate_vectors = 0;  // jobs' normalized throughputs computed (device types x physics rate queries each)
  std::uint64_t lp_pivots = 0;     // simplex pivots of those solves (the same pivot path gives the same bits)
  std::uint64_t lp_warm_solves = 0;  // of lp_solves, those started from the last optimal basis (GavelOptions::warm_start)
};

// What simplex_maximize did, summed over calls (tests of its algorithmic shape).
struct SimplexStats {
  std::uint64_t solves = 0;
  std::uint64_t pivots = 0;
};

struct GavelOptions {
  double round_s = 360;
  // Reuse what does not change: a job's normalized throughputs (computed once per job)
  // and the last LP's solution while the LP is the same. false recomputes both every time
  // (the reference that tests compare the cached answers with); outputs are the same.
  bool reuse = true;
  // Start each LP from the last optimal basis (with reuse). false solves every LP from the
  // slack basis (the reference that tests compare the warm answers with); the shares
  // are snapped to a grid of 2^-30, so both give the same run.
  bool warm_start = true;
  GavelCounters* counters = nullptr;  // may be null; must outlive the policy
};

// The policy the registry's "gavel" creates, with options tests need.
std::unique_ptr<Policy> make_gavel_policy(const GavelOptions& options);

// The max-min allocation of the LP above. `normalized[c][t]` is class c's normalized
// throughput on type t (in [0, 1], max 1), `gpus[c]` its GPU count, `members[c]` its
// number of jobs, `capacity[t]` the devices of type t. Returns X[c][t]; `level` (if not
// null) gets the max-min normalized throughput.
std::vector<std::vector<double>> gavel_max_min_allocation(const std::vector<std::vector<double>>& normalized, const std::vector<int>& gpus,
                                                          const std::vector<int>& members, const std::vector<int>& capacity,
                                                          double* level = nullptr, SimplexStats* stats = nullptr);

// The LP's secondary objective coefficient of a class's share of type `type`: 1e-6 x
// members x normalized[type] x the tie factor of (the class, type), a hash of the class's
// GPU count, its normalized throughputs and the type.
double gavel_secondary_weight(int members, int gpus, const std::vector<double>& normalized, std::size_t type);

// Maximizes c.x subject to A x <= b, x >= 0, with b >= 0 (dense simplex tableau, Bland's
// rule: deterministic, no cycling). Returns x. `stats` (if not null) counts the solve and
// its pivots.
std::vector<double> simplex_maximize(const std::vector<std::vector<double>>& A, const std::vector<double>& b, const std::vector<double>& c,
                                     SimplexStats* stats = nullptr);

}  // namespace schedsim
