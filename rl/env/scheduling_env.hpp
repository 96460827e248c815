// Scheduling as a Markov decision process on the full simulator (no LibTorch here: the
// Python extension links this library too).
//
// Decision points are the kernel's own (an arrival, completion, failure, or a signal
// change while the agent waits, after which a choice exists), not fixed ticks. At a decision point the agent
// sees up to K candidate (job, placement option) pairs as feature rows plus a global
// feature vector, and picks one candidate (action 0..K-1) or "wait" (action K). With the
// preemption family on (EnvConfig::preempt_rows), some rows offer running jobs to
// preempt instead. A candidate action is applied at once and the agent is asked again at the same instant
// (several starts per decision point); "wait", or no legal candidate left, lets the
// simulator run on to the next decision point. The mask marks illegal actions; wait is
// legal except while jobs are pending and nothing else can happen (no job running, no
// arrival left), where it would leave them waiting forever: then at least one candidate
// is legal (or step() throws a PolicyError naming the job that fits nowhere).
//
// Reward: -(jobs in system) x (elapsed simulated time) between two agent steps, in
// job-hours by default (EnvConfig::reward_scale), so the undiscounted episode return is
// -total JCT x reward_scale. Other weighted terms come from EnvConfig::reward.
//
// Every feature is documented in docs/rl.md (names from *_feature_names()).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "scenario/sections/env_section.hpp"
#include "base/config_node.hpp"
#include "base/error.hpp"
#include "sim/observer.hpp"
#include "sim/policy.hpp"

namespace schedsim {
class Simulator;
}

namespace schedsim::rl {

struct CandidateStats;


// When the agent waits with jobs pending and the scenario has price or carbon signals,
// the next signal change is a decision point as well (the env and the rl policy ask the
// kernel for a wake-up there); Tick::max() when there is none.
Tick signal_wake(const SchedulerView& view);

// Rejects env.cooling_setpoints without a thermal model or outside a datacenter's range.
void check_cooling(const ScenarioConfig& scenario, const EnvConfig& config);

// A masked or out-of-range action: the message names the action and the mask.
class InvalidAction : public PolicyError {
 public:
  using PolicyError::PolicyError;
};

// Fixed shapes of one environment's observation.
struct EnvShape {
  int num_candidates = 0;      // K
  int candidate_features = 0;  // F: columns of each candidate row
  int global_features = 0;     // G
  int num_actions() const { return num_candidates + 1; }
};

struct StepResult {
  double reward = 0.0;
  bool terminated = false;  // every job of the workload finished
  bool truncated = false;   // max_steps reached
};

class SchedulingEnv {
 public:
  // `scenario` supplies cluster, workload and physics; its policy is ignored.
  SchedulingEnv(std::shared_ptr<const ScenarioConfig> scenario, EnvConfig config);
  ~SchedulingEnv();
  SchedulingEnv(const SchedulingEnv&) = delete;
  SchedulingEnv& operator=(const SchedulingEnv&) = delete;

  const EnvShape& shape() const;
  static std::vector<std::string> candidate_feature_names();
  static std::vector<std::string> global_feature_names();
  // The names of this environment's columns (with the cooling columns when enabled).
  std::vector<std::string> candidate_columns() const;
  std::vector<std::string> global_columns() const;

  // Starts a new episode: the scenario's workload drawn with `seed`; runs to the first
  // decision point.
  void reset(std::uint64_t seed);
  // Attaches `observer` to the simulator of every episode from the next reset() on (e.g.
  // the runner's metrics, to write results.json for an evaluated agent). It must outlive
  // the environment's episodes; it sees each episode's events from its first arrival.
  void add_observer(Observer& observer);
  // Applies `action` (0..K-1 a candidate, K wait). Throws InvalidAction (a PolicyError)
  // for a masked action or an index out of range.
  StepResult step(int action);
  // Writes the current observation: candidates K x F row-major, global G, mask K+1
  // (1 = legal). Padding rows are zero and masked.
  void write_observation(float* candidates, float* global, std::uint8_t* mask) const;

  bool done() const;
  const Simulator& simulator() const;
  std::uint64_t episode_steps() const;

  // The episode so far: seed, undiscounted return, and (once done) total JCT in seconds
  // and completed jobs.
  std::uint64_t episode_seed() const;
  double episode_return() const;
  double total_jct_s() const;          // = simulator().job_seconds_in_system()
  std::uint64_t jobs_completed() const;
  const EnvConfig& config() const;

  // What candidate row i (0..K-1) stands for now: the job's slot and id, the placement
  // option and the devices it would start on (empty for padding and blocked rows).
  struct CandidateInfo {
    bool legal = false;
    JobSlot job = kNoJob;
    std::string job_id;
    PlacementOption option = PlacementOption::kPacked;
    std::vector<DeviceId> devices;
    bool cooling = false;     // a set-point row: job is kNoJob, setpoint_c the offered set-point
    double setpoint_c = 0.0;
  };
  CandidateInfo candidate(int i) const;

  // What building this episode's candidates cost so far (rl/env/candidates.hpp), and the
  // devices its placement queries claimed (0: they are read-only).
  const CandidateStats& candidate_stats() const;
  std::uint64_t placement_claims() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace schedsim::rl
