// Candidate generation for the scheduling environment: the pending queue in the
// configured pre-order (kept by a Policy the kernel notifies, whose decide() is never
// called), and the top-K (job, placement option) rows built from it with the placement
// helpers of policies/placement.hpp.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "policies/placement.hpp"
#include "policies/queue_order.hpp"
#include "rl/env/scheduling_env.hpp"
#include "world/physics/cluster_physics.hpp"
#include "sim/policy.hpp"

namespace schedsim {
class Geography;
}

namespace schedsim::rl {

// Tracks the pending jobs in candidate order. The environment starts jobs itself (it
// calls started() as it applies each start); the kernel tells it about arrivals and ends.
class PendingQueue : public Policy {
 public:
  PendingQueue(CandidateOrder order, InformationModel information) : order_(order), info_(std::move(information)) {}
  std::string name() const override { return "rl-env"; }
  void on_job_queued(const SchedulerView& view, JobSlot job) override;
  void on_job_finished(const SchedulerView& view, JobSlot job) override;
  // The environment drives the kernel with apply(); run() is never used with this policy.
  void decide(const SchedulerView& view, ActionBatch& out) override;

  void started(JobSlot job);
  void clear();
  void snapshot(SnapshotArchive& ar) override {
    ar(queue_, queued_gpus_, queued_gpu_s_);
    ar.io_each(by_slot_, [&](Queued& q) { ar(q.key, q.seq, q.in_queue, q.gpus, q.gpu_s); });
  }

  using Entry = std::tuple<double, std::uint64_t, JobSlot>;  // (order key, arrival seq, slot)
  const std::set<Entry>& jobs() const { return queue_; }
  // Sums over the queue, kept as jobs enter and leave: GPUs asked, and estimated GPU-seconds.
  std::int64_t queued_gpus() const { return queued_gpus_; }
  double queued_gpu_s() const { return queued_gpu_s_; }

 private:
  struct Queued {
    double key = 0;
    std::uint64_t seq = 0;
    bool in_queue = false;
    int gpus = 0;
    double gpu_s = 0;
  };
  void remove(JobSlot job);

  CandidateOrder order_;
  InformationModel info_;
  std::set<Entry> queue_;
  std::vector<Queued> by_slot_;
  std::int64_t queued_gpus_ = 0;
  double queued_gpu_s_ = 0;
};

// The job's size and its work left (work-seconds at rate 1) as the observation shows
// them: from the scenario's information model (policies/information.hpp; under oracle
// the estimate, or the duration without one, scaled by the true fraction left), and 0
// under `none`, where the observation carries no duration information.
// Inline: they run per row and per running job in every observation.
inline double observed_total_s(const InformationModel& info, const JobView& s) { return info.knows_durations() ? info.estimated_total_s(s) : 0.0; }
inline double observed_remaining_s(const InformationModel& info, const SchedulerView& view, const JobView& j) {
  return info.knows_durations() ? info.estimated_remaining_s(view, j) : 0.0;
}

// One candidate row: a start of a pending job on a placement or, with the preemption
// action family (EnvConfig::preempt_rows), the preemption of a running job.
struct Candidate {
  bool legal = false;    // a startable placement (false: the job fits nowhere now); a preemptible job
  bool preempt = false;  // a preemption row: `devices` are the job's current ones, `rate` its rate now
  bool cooling = false;  // a set-point row (EnvConfig::cooling_setpoints_c): no job, every datacenter to setpoint_c
  bool migrate = false;  // a migration row: `devices` are the free ones the running job would move to, `rate` its rate there
  double gain = 0.0;     // migration rows: rate on `devices` / uncontended rate on its current devices
  double setpoint_c = 0.0;
  JobSlot job = kNoJob;
  int rank = 0;          // position of the job in the candidate order (0 = first)
  PlacementOption option = PlacementOption::kPacked;
  std::vector<DeviceId> devices;  // sorted; empty when not legal
  int nodes = 0;         // distinct nodes spanned
  int racks = 0;         // distinct racks spanned (1 without a topology)
  bool shares_node = false;  // a node of the placement (already) runs another job
  double rate = 0.0;     // uncontended rate on this placement (1 without physics)
  double best_rate = 0.0;  // the job's best consolidated rate over device types
  double memory_use = 0.0;  // memory per device / the placement's smallest device memory
};

// What building candidates cost, counted since construction (tests guard the shape of
// the work with it).
struct CandidateStats {
  std::uint64_t builds = 0;
  std::uint64_t start_rows = 0;          // legal start rows built
  std::uint64_t placement_lookups = 0;   // (option, job) placements asked for
  std::uint64_t placement_queries = 0;   // of those, computed on the placement index (the rest reused)
  std::uint64_t physics_evaluations = 0; // placement_problem + uncontended_rate pairs computed
  std::uint64_t physics_reused = 0;      // start rows whose physics answers were reused
};

// Builds the candidate rows of one observation.
class CandidateBuilder {
 public:
  // `physics` may be null (no physics: every placement at rate 1). `accelerators`
  // gives device memory for the memory feature.
  CandidateBuilder(const EnvConfig& config, const ClusterSpec& cluster, const ClusterPhysics* physics, const std::vector<int>* node_rack,
                   const AcceleratorCatalogue& accelerators);

  // Fills the first rows of `out` (K entries, reused across calls) from the queue's first
  // jobs in order: each job's startable placement options (duplicate device sets dropped),
  // or one illegal row when it fits nowhere now (at most max_blocked_rows of those). With
  // preempt_rows = P > 0, start rows stop at K - P and up to P preemption rows follow: the
  // running jobs on their devices for at least preempt_min_run_s, the longest estimated
  // remaining run time first (under information none: the most attained service first;
  // ties: earlier arrival). Returns the number of rows filled.
  // With cooling_setpoints_c (C values), start rows stop at K - P - C and the last rows
  // offer the set-points: legal when the run has a thermal model, the set-point differs
  // from a datacenter's current one, and no set-point was chosen at this instant yet.
  // With migrate_rows = M > 0 (physics on), start rows stop at K - P - M - C and up to M
  // migration rows follow the preemption rows: running jobs that have held their devices
  // for at least preempt_min_run_s and would run at least 1 + migrate_min_gain times as
  // fast (uncontended) on the best free placement (packed or fastest type), the largest
  // gain first (ties: earlier arrival).
  int build(const SchedulerView& view, const PendingQueue& queue, std::vector<Candidate>& out);
  // A set-point row was applied now: the others are masked until the next instant (no
  // endless changes at one decision point).
  void cooling_chosen(Tick now) { cooling_at_ = now; }
  const CandidateStats& stats() const { return stats_; }
  // Devices the placement index claimed: 0, its queries are read-only.
  std::uint64_t index_claims() const { return free_.claims(); }

 private:
  int build_starts(const SchedulerView& view, const PendingQueue& queue, std::vector<Candidate>& out, int k);
  int add_preempt_rows(const SchedulerView& view, std::vector<Candidate>& out, int rows);
  int add_migrate_rows(const SchedulerView& view, std::vector<Candidate>& out, int rows);
  int add_cooling_rows(const SchedulerView& view, std::vector<Candidate>& out, int rows);
  // The devices (sorted) of `option` for the job, or -1 when it does not fit: an index
  // into queries_.
  int place(PlacementOption option, JobSlot slot, const JobView& job);
  // A placement query of this build: packed (only_type >= 0: of that device type) or
  // first fit, for n devices. The answer depends only on these and the cluster state, which
  // does not change during a build, so jobs of the same size share it.
  int query(bool packed, int n, int only_type);
  void describe(const SchedulerView& view, JobSlot slot, const JobView& job, Candidate& c);
  // The types of `rates` (the first `types` entries) with a positive rate, in `out`:
  // fastest or slowest first, ties by type index.
  void type_order(const std::vector<double>& rates, int types, bool fastest, std::vector<int>& out);

  const EnvConfig& config_;
  const ClusterSpec& cluster_;
  const ClusterPhysics* physics_;
  const std::vector<int>* node_rack_;
  bool typed_options_;  // physics on and more than one device type
  std::vector<double> type_memory_bytes_;
  FreeDevices free_;  // read-only queries (claiming off): reset once per build
  struct Query {
    bool packed = false;
    int n = 0;
    int only_type = -1;
    bool fits = false;
    std::vector<DeviceId> devices;  // sorted
  };
  // This build's queries: the first query_count_ entries (storage kept between builds).
  std::vector<Query> queries_;
  std::size_t query_count_ = 0;
  // Queries behind the current job's rows (duplicate device sets are dropped).
  std::vector<int> seen_;
  // Several datacenters: an option's set that spans two (or lies where the job may not
  // run) is replaced by first fit inside one datacenter the job may use, its home first.
  bool first_fit_in_one_datacenter(const Geography& geo, const JobView& job, std::vector<DeviceId>& out);
  std::vector<DeviceId> site_devices_, site_scratch_;
  bool site_row_seen_ = false;
  std::vector<std::pair<double, int>> type_order_;
  // A start row's physics answers for one job and option, kept while the option's
  // devices stay the same (they are functions of the job and the devices only).
  struct RowEstimate {
    bool valid = false;
    std::vector<DeviceId> devices;
    bool problem = false;  // ClusterPhysics::placement_problem is not empty
    bool rate_known = false;
    double rate = 0.0;  // ClusterPhysics::uncontended_rate
  };
  struct Rates {
    std::uint64_t arrival_seq = ~0ULL;
    // The consolidated, uncontended rate per device type (ClusterPhysics::estimated_rate),
    // then the best; computed once per job: it does not change while the job waits.
    std::vector<double> by_type;
    double best = 0.0;
    double memory_per_device_bytes = 0.0;  // of the job's workload profile, 0 without
    // Device types with a positive rate, fastest (slowest) first, ties by type index: the
    // typed placement options' order of trial (only with typed options).
    std::vector<int> fastest_first, slowest_first;
    RowEstimate rows[kNumPlacementOptions];
  };
  std::vector<Rates> rates_;  // by job slot
  Rates& rates_of(JobSlot slot, const JobView& job);
  std::vector<std::tuple<double, std::uint64_t, JobSlot>> victims_;  // (-remaining run time, arrival seq, slot)
  struct Move {
    double neg_gain = 0.0;
    std::uint64_t seq = 0;
    JobSlot job = kNoJob;
    int query = -1;  // index into queries_: the free devices it would move to
    double rate = 0.0;
  };
  std::vector<Move> moves_;
  Tick cooling_at_ = Tick::max();  // the instant a set-point row was last applied
  CandidateStats stats_;
};

}  // namespace schedsim::rl
