// A queue order: how a queue policy ranks jobs. Smaller keys go first; ties are broken by
// arrival sequence, so an order never depends on slot numbers. Orders are small objects
// that the queue engine (queue_policy.hpp) combines with placement, preemption and
// backfilling, so every order composes with every extra.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "policies/information.hpp"
#include "policies/registry.hpp"
#include "sim/policy.hpp"

namespace schedsim {

class QueueOrder {
 public:
  virtual ~QueueOrder() = default;
  // Key of a job entering the queue (arrival or return after a preemption). A queued
  // job makes no progress, so its key does not change while it waits, except through
  // promote_at().
  virtual double queued_key(const SchedulerView& view, JobSlot job) = 0;
  // Key of a running job now, on the same scale as queued_key(): preemption replaces a
  // running job only by a queued one with a strictly smaller key.
  virtual double running_key(const SchedulerView& view, JobSlot job) const = 0;
  // True when a running job's key can only decrease (improve) while it runs, as for
  // static keys and remaining work. The engine then skips scanning running jobs when the
  // keys they started with are all no worse than the blocked head's.
  virtual bool running_keys_only_improve() const { return false; }
  // Starvation guard: the instant at which a queued job's key drops to promoted_key(),
  // or +infinity (in seconds) for never. Called when the job is queued.
  virtual double promote_at_s(const SchedulerView& /*view*/, JobSlot /*job*/) const { return std::numeric_limits<double>::infinity(); }
  virtual double promoted_key() const { return -std::numeric_limits<double>::infinity(); }
  // The engine promoted `job` (the order may reset what it counts for it).
  virtual void on_promoted(const SchedulerView& /*view*/, JobSlot /*job*/) {}
  // True when a queued job's key changes while it waits (with time, or with other jobs'
  // starts and ends). The engine then recomputes every queued key with queued_key() at
  // the start of each decision (O(n log n) in the queue), calls on_decision() first and
  // on_started() after each start, and within a decision re-checks the head's key before
  // starting it (keys may only grow within a decision: a stale head is re-inserted, a lazy
  // heap update). queued_key() must then have no side effects.
  virtual bool keys_change_while_queued() const { return false; }
  // Policy timers: true when running jobs' keys cross steps at instants the order can
  // predict (LAS demotion at a threshold). The engine then asks, at the end of every
  // decision, next_key_change_s() of each running job and requests a decision point at
  // the earliest (ActionBatch::wake_at), so a crossing is acted on when it happens rather
  // than at the next arrival or completion.
  virtual bool has_timers() const { return false; }
  // The instant (seconds) at which running `job`'s key next changes, or +infinity.
  virtual double next_key_change_s(const SchedulerView& /*view*/, JobSlot /*job*/) const { return std::numeric_limits<double>::infinity(); }
  // running_key() and next_key_change_s() of running `job` in one call (the repack pass
  // asks both of every running job at every decision; an order can share the work).
  // Must return exactly what the two calls return.
  virtual double running_key_and_next_change(const SchedulerView& view, JobSlot job, double& next_change_s) const {
    next_change_s = next_key_change_s(view, job);
    return running_key(view, job);
  }
  // running_key_and_next_change() of running `job`, and how long the answer holds, so
  // that the repack pass may reuse it at later decisions instead of asking every running
  // job again. While the kernel's progress record of the job (JobState::remaining_work_s,
  // last_update, physics_rate, stall_end) stays the same, running_key() returns `key` at
  // every instant up to `stable_until` (inclusive), and next_key_change_s() returns a value
  // within `next_change_err_s` of `next_change_s` (the same instant computed from another
  // reading; +infinity stays +infinity). The default holds for this instant only.
  struct RunningKeyInfo {
    double key = 0.0;
    double next_change_s = std::numeric_limits<double>::infinity();
    double next_change_err_s = 0.0;
    Tick stable_until;
  };
  virtual RunningKeyInfo running_key_info(const SchedulerView& view, JobSlot job) const {
    RunningKeyInfo info;
    info.key = running_key_and_next_change(view, job, info.next_change_s);
    info.stable_until = view.now();
    return info;
  }
  virtual void on_decision(const SchedulerView& /*view*/) {}
  virtual void on_started(const SchedulerView& /*view*/, JobSlot /*job*/) {}
  // A job stopped holding devices: it finished, or came back to the queue after a
  // preemption (called for every order, before on_job_queued's queued_key()).
  virtual void on_stopped(const SchedulerView& /*view*/, JobSlot /*job*/) {}
  // Orders whose key is shared by groups of jobs (fair share: every job of an owner has
  // its owner's share) return true here, a job's group (>= 0) from group_of() and the
  // group's key now from group_key(). Such an order keeps group_key() current itself
  // (through on_started and on_stopped, which the engine then always calls) and never
  // promotes. Without backfilling, the engine then keeps one arrival-ordered queue per
  // group and the groups in a set ordered by (key, arrival of their first job): the same
  // order as keying every job, at O(log groups + log jobs) per start and per change of a
  // group's key, instead of re-keying the whole queue at each decision.
  virtual bool grouped() const { return false; }
  virtual int group_of(const SchedulerView& /*view*/, JobSlot /*job*/) { return -1; }
  virtual double group_key(int /*group*/) const { return 0.0; }
  // The order's own resolved options.
  virtual void write(YAML::Node& /*resolved*/) const {}
  // Saves or restores what the order remembers between decisions (schedsim run
  // --snapshot-every). Orders whose keys are a function of the job and the view keep
  // nothing; an order with counters or per-job memory must override this.
  virtual void snapshot(SnapshotArchive& /*ar*/) {}
  // The scenario's information model, given by the engine before the first key: orders
  // that rank by size or remaining time ask it (never the job's true duration).
  void inform(const InformationModel& information) { info_ = information; }
  // What of the order needs duration information (refused under `information: none`),
  // e.g. "order sjf (by: auto)"; "" = nothing.
  virtual std::string needs_durations() const { return ""; }
  // What of the order needs the true durations (refused unless `information: oracle`).
  virtual std::string needs_oracle() const { return ""; }

 protected:
  InformationModel info_;
};

// A queue order by config name: its options (documented), whether it preempts by
// default, and how to build it from a config map that holds those options.
struct OrderKind {
  std::string name;
  std::vector<PolicyOptionDoc> options;  // the order's own keys
  bool preemptive_by_default = false;
  std::function<std::unique_ptr<QueueOrder>(const ConfigNode& config)> make;

  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& o : options) out.push_back(o.name);
    return out;
  }
};

// The kernel's remaining work of a job now (policies/information.hpp): for the engine's
// bookkeeping (timers, Python's view); decisions take sizes through InformationModel.
inline double remaining_work_now_s(const SchedulerView& view, const JobView& job) { return kernel_remaining_work_s(view, job); }

// Attained service in GPU-seconds: devices requested times work executed so far
// (observable at every information level).
inline double attained_service_gpu_s(const SchedulerView& view, const JobView& job) { return job.num_gpus() * attained_work_s(view, job); }

}  // namespace schedsim
