// Communication cost of data-parallel training: the time of one ring all-reduce, the
// overlap of communication with compute, and max-min fair sharing of links between the
// jobs whose traffic crosses them. Formulas and assumptions: docs/physics.md
// ("Communication").
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "base/span.hpp"

namespace schedsim {

class SnapshotArchive;

// Time of one ring all-reduce of `bytes` over `num_devices` devices, each ring hop
// getting `bandwidth_Bps` (bytes/s) and costing `latency_s` per step:
//   t = 2(n-1)/n * bytes / bandwidth_Bps + 2(n-1) * latency_s,   t = 0 for n = 1.
// bandwidth_Bps may be +infinity (latency only). Throws InvariantError for n < 1,
// negative or non-finite bytes or latency, or a bandwidth that is not > 0 when n > 1.
double ring_allreduce_time_s(int num_devices, double bytes, double bandwidth_Bps, double latency_s);

// Time of one training iteration when communication overlaps compute:
//   t = compute_s + max(0, comm_s - overlap * compute_s).
// overlap in [0, 1] is the fraction of the compute time during which communication can
// proceed in the background: 0 = none (t = compute + comm), 1 = full (t = max(compute,
// comm)). Throws InvariantError for an overlap outside [0, 1] or negative times.
double iteration_time_s(double compute_s, double comm_s, double overlap);

// Max-min fair bandwidth sharing (progressive filling) of flows over shared links.
//
// Every flow crosses a set of links and wants as much bandwidth as it can get, up to an
// optional per-flow cap (its demand, e.g. a job's average traffic). All unfinished flows grow
// at the same rate; when a link is full, the flows crossing it stop at that rate (their
// bottleneck), and the others keep growing. The result: no flow can get more without
// taking from a flow that has no more than it.
//
// Usage: build it once with the link capacities; add a flow when a job starts (its
// CommPath's shared_links and private_bandwidth_Bps), remove it when the job ends,
// update it when the job moves; call solve() and read rate_Bps(). Flow ids are small
// integers, reused after removal (lowest free id first). A link is contended when an
// unbounded flow crosses it or its flows' caps add up to more than its capacity; only
// contended links can hold a flow below its cap. solve() re-solves only the flows joined
// to a change through contended links: a flow whose links all have room gets its cap at
// once, and its start or end leaves the other flows alone. It costs
// O((F + L + E) log(F + L)) for the F flows, L contended links and E flow-link pairs of
// that component, and allocates
// nothing once its buffers have grown to the largest problem seen. Equal bottlenecks are
// taken in link-index order, then flow-id order, so results are bit-for-bit deterministic.
class MaxMinFairShare {
 public:
  using FlowId = int;
  static constexpr double kUnlimited = std::numeric_limits<double>::infinity();

  MaxMinFairShare() = default;
  // Capacities in bytes/s, each finite and >= 0 (InvariantError otherwise).
  explicit MaxMinFairShare(std::vector<double> link_capacity_Bps);

  int num_links() const { return static_cast<int>(capacity_Bps_.size()); }
  double capacity_Bps(int link) const { return capacity_Bps_[static_cast<std::size_t>(link)]; }
  // Changes one link's capacity (e.g. a degraded link); marks the rates stale.
  void set_capacity_Bps(int link, double capacity_Bps);

  // A flow over `links` (distinct, valid link indices; may be empty) limited to
  // `cap_Bps` (> 0, may be kUnlimited). A flow with no links and no cap gets +infinity.
  FlowId add_flow(Span<int> links, double cap_Bps = kUnlimited);
  // Replaces a flow's links and cap, keeping its id.
  void update_flow(FlowId id, Span<int> links, double cap_Bps = kUnlimited);
  void remove_flow(FlowId id);
  void clear();  // removes every flow; keeps the links and the buffers
  int num_flows() const { return num_active_; }
  bool has_flow(FlowId id) const;

  // Recomputes every flow's rate.
  void solve();
  // The flows whose rates the last solve() recomputed (ascending); all others kept theirs.
  const std::vector<int>& last_solved_flows() const { return solved_flows_; }
  // The last solve()'s results. InvariantError for an unknown id, or when flows or
  // capacities changed since the last solve().
  double rate_Bps(FlowId id) const;
  double link_load_Bps(int link) const;  // the sum of the rates of the flows crossing it
  // Checks the last solve() independently of how it got there (for the invariant checker):
  // each link's membership matches its flows' paths, no link carries more than its
  // capacity, and the rates are max-min fair: every flow is at its cap or crosses a full
  // link on which no flow gets more than it. Returns the first problem, "" when none (and
  // when flows changed since the last solve(), i.e. the rates are not meant to hold yet).
  std::string solution_problem() const;

  // Saves or restores the state (sim/snapshot_archive.hpp).
  void snapshot(SnapshotArchive& ar);

 private:
  struct Flow {
    std::vector<int> links;  // ascending
    std::vector<int> pos;    // pos[i]: this flow's index in members_[links[i]]
    double cap_Bps = kUnlimited;
    double demand_Bps = -1;  // the cap rounded up to a whole number, -1 = unbounded
    double rate_Bps = 0;
    bool active = false;
  };
  // A candidate bottleneck in the heap. A link's key may be out of date, but only ever
  // too low (fair levels grow as flows freeze): when it comes to the top it is
  // re-checked and pushed again with its current level if that is higher.
  struct Level {
    double level_Bps;
    int kind;   // 0: a link saturates, 1: a flow reaches its cap
    int index;  // link index or flow id
  };
  // Heap order (std heaps keep the largest first, so "larger" means "taken later"):
  // by level, then links before caps, then by index.
  struct Later {
    bool operator()(const Level& a, const Level& b) const {
      if (a.level_Bps != b.level_Bps) return a.level_Bps > b.level_Bps;
      if (a.kind != b.kind) return a.kind > b.kind;
      return a.index > b.index;
    }
  };
  void set_flow(Flow& flow, Span<int> links, double cap_Bps);
  void attach(FlowId id);  // registers the flow on its links and marks them changed
  void detach(FlowId id);
  void mark_link(int link);
  bool contended(int link) const;  // its flows' caps may not all fit
  void check_fresh() const;
  void freeze(int flow, double rate_Bps, int skip_link);
  void push(const Level& level);

  std::vector<double> capacity_Bps_;
  std::vector<Flow> flows_;
  std::vector<int> free_ids_;  // a min-heap of reusable ids
  int num_active_ = 0;
  bool stale_ = false;
  // solve() buffers, reused between calls.
  std::vector<int> link_start_;    // CSR: flows of link l are link_flows_[link_start_[l] .. link_start_[l+1])
  std::vector<int> link_flows_;
  std::vector<int> unfrozen_;      // per link: flows not yet frozen
  std::vector<double> remaining_Bps_;  // per link: capacity minus the frozen flows' rates
  std::vector<char> frozen_;       // per flow
  std::vector<Level> heap_;
  // Incremental solving: flows per link, and what changed since the last solve().
  std::vector<std::vector<int>> members_;
  std::vector<int> dirty_links_, dirty_flows_;
  std::vector<char> link_dirty_, link_seen_, flow_seen_;
  // Per link: the sum of its bounded flows' demand_Bps, the number of unbounded flows, and
  // whether it was contended at the last solve().
  std::vector<double> demand_sum_Bps_;
  std::vector<int> unbounded_;
  std::vector<char> was_contended_;
  std::vector<int> comp_links_, solved_flows_, member_scratch_;
};

// One flow of a max-min fair solution: its links, its cap (kUnlimited = none) and the
// rate it was given.
struct MaxMinFlowRate {
  std::vector<int> links;
  double cap_Bps = MaxMinFairShare::kUnlimited;
  double rate_Bps = 0.0;
};
// Checks a solution independently of the solver: every link's reported load equals the
// sum of its flows' rates and fits its capacity, and every flow is at its cap or crosses
// a full link on which no flow gets more (max-min fairness), within a relative 1e-9 plus
// 1 B/s (caps are rounded to whole bytes/s).
// Returns the first problem, "" when none.
std::string max_min_fair_problem(const std::vector<double>& link_capacity_Bps, const std::vector<MaxMinFlowRate>& flows,
                                 const std::vector<double>& link_load_Bps);

// One-shot max-min fair rates of `flows` (each a list of link indices) over links of
// `link_capacity_Bps`, in flow order.
std::vector<double> max_min_fair_rates(const std::vector<double>& link_capacity_Bps, const std::vector<std::vector<int>>& flows);

}  // namespace schedsim
