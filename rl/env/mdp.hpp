// The scheduling MDP's decision point, defined once: the candidate rows, which actions
// are legal (the wait-legal rule), the observation, and what an action index means as
// kernel actions. The environment (SchedulingEnv, which applies actions itself) and the
// `rl` policy (RlPolicy, which answers the kernel's decide()) both drive the simulator
// through this class, so what an agent sees and does cannot differ between training and
// a run. No LibTorch here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rl/env/candidates.hpp"
#include "rl/env/features.hpp"
#include "rl/env/scheduling_env.hpp"
#include "sim/action.hpp"
#include "sim/policy.hpp"

namespace schedsim::rl {

// Waiting is only legal when something will happen: otherwise the pending jobs would be
// left waiting forever. `future_events`: the kernel has an event queued (an arrival, a
// completion, a wake-up). Jobs started at this instant get their completion events only
// when it ends, so running jobs count as something that will happen.
inline bool wait_is_legal(bool future_events, std::size_t num_running, std::size_t num_pending) {
  return future_events || num_running > 0 || num_pending == 0;
}

class MdpStep {
 public:
  // `config` must outlive this object. Action indices: 0..K-1 a candidate row,
  // K = config.max_candidates the wait action.
  explicit MdpStep(const EnvConfig& config) : config_(config) {}

  // A new episode (or run): the candidate builder of its cluster; no decision point yet.
  void reset(std::unique_ptr<CandidateBuilder> builder);
  bool has_builder() const { return builder_ != nullptr; }
  const CandidateBuilder& builder() const { return *builder_; }
  // No candidate rows and wait legal (before the first decision point, after the last).
  void clear();

  // Builds the decision point at the view's instant; `future_events` as in
  // wait_is_legal (Simulator::has_future_events()). Returns whether a candidate row is
  // legal: when none is, the agent is not asked (the simulator runs on).
  bool build(const SchedulerView& view, const PendingQueue& queue, bool future_events);

  int num_actions() const { return config_.max_candidates + 1; }
  int wait_action() const { return config_.max_candidates; }
  int rows() const { return rows_; }
  bool wait_legal() const { return wait_legal_; }
  const std::vector<Candidate>& candidates() const { return candidates_; }
  bool legal(int action) const;
  // The mask as text, e.g. "0110 1" (the candidates, a space, wait), for messages.
  std::string mask_string() const;

  // Writes the observation of the current decision point: candidate rows K x F
  // (padding zero), mask K + 1 (1 = legal, the last one wait), global features G.
  void write_observation(const SchedulerView& view, const PendingQueue& queue, float* candidates, float* global, std::uint8_t* mask,
                         FeatureLogCache* cache) const;

  // Appends what `action` (legal, 0..K) means to `out`: a candidate row's start,
  // preemption or cooling set-point for every datacenter; wait asks for a wake-up at the
  // next signal change (none without signals or pending jobs).
  void decode(int action, const SchedulerView& view, ActionBatch& out) const;
  // The bookkeeping of `action` once decoded: a started job leaves `queue`, a chosen
  // set-point masks the other set-point rows for the rest of the instant. A preempted
  // job comes back to `queue` through on_job_queued once its save ends.
  void commit(int action, Tick now, PendingQueue& queue);
  // env.wake_every_s: while jobs are pending and others run, a decision point one quantum
  // from now (Tick::max() otherwise). Asked for by a wait and
  // when no row is legal (the simulator then runs on without asking the agent), so a
  // quantum passes at most between two looks at the running jobs.
  Tick quantum_wake(const SchedulerView& view) const;

 private:
  const EnvConfig& config_;
  std::unique_ptr<CandidateBuilder> builder_;
  std::vector<Candidate> candidates_;
  int rows_ = 0;
  bool wait_legal_ = true;
};

}  // namespace schedsim::rl
