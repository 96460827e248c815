// The interface between the kernel and a scheduling policy. A policy sees the simulation
// through a read-only SchedulerView and answers each decision point with a batch of
// actions. It is told when jobs enter the queue and when they finish, so that it can keep
// its own ordered structures: no decision needs to rescan the whole queue.
#pragma once

#include <cstddef>
#include <string>

#include "sim/action.hpp"
#include "sim/cluster_state.hpp"
#include "sim/event_queue.hpp"
#include "sim/job.hpp"
#include "sim/job_view.hpp"
#include "sim/physics.hpp"
#include "base/signals.hpp"
#include "sim/snapshot_archive.hpp"

namespace schedsim {

class ClusterPhysics;
class Geography;
class Market;
class ThermalModel;
struct WorkloadProfile;

class SchedulerView {
 public:
  Tick now() const { return *now_; }
  const ClusterSpec& cluster() const { return state_->spec(); }
  const ClusterState& cluster_state() const { return *state_; }
  // What a policy sees of a job (sim/job_view.hpp): never the kernel's JobState.
  JobView job(JobSlot slot) const { return JobView(&state_of(slot)); }
  // Pending jobs in queue order (arrival, or return after preemption):
  // for (s = first_pending(); s != kNoJob; s = next_pending(s)).
  JobSlot first_pending() const { return *pending_head_; }
  JobSlot next_pending(JobSlot slot) const { return state_of(slot).next_in_list; }
  // Running (and stopping) jobs in the order they were placed.
  JobSlot first_running() const { return *running_head_; }
  JobSlot next_running(JobSlot slot) const { return state_of(slot).next_in_list; }
  // Devices bound to a pending job (ActionBatch::bind), in bind order; empty for others.
  // Bound devices are not free in cluster_state(): no other job can be given them.
  Span<DeviceId> bound_devices(JobSlot slot) const { return state_of(slot).bound_devices; }
  std::size_t num_pending() const { return *num_pending_; }
  std::size_t num_running() const { return *num_running_; }
  // True while anything is still to happen (an arrival, a completion, a wake-up...): a
  // policy that decides one action at a time may only wait when this is true (the RL
  // environment's wait-legal rule), and a wake-up between jobs keeps a run going.
  bool has_future_events() const { return events_->live_count() > 0; }
  // Devices the kernel holds for inference service `k` (ActionBatch::hold), empty for none.
  const std::vector<DeviceId>& service_devices(int k) const {
    static const std::vector<DeviceId> kNone;
    return k >= 0 && static_cast<std::size_t>(k) < service_devices_->size() ? (*service_devices_)[static_cast<std::size_t>(k)] : kNone;
  }
  // The hardware model, or null when the run has none (every job at rate 1 anywhere).
  // Its per-job queries take the JobView (PhysicsModel's JobView overloads).
  const PhysicsModel* physics() const { return physics_; }
  // The cluster physics' own per-job queries that the RL candidate rows read
  // (sim/scheduler_view.cpp): a policy cannot hand the model a JobSpec itself.
  static double uncontended_rate(const ClusterPhysics& physics, JobView job, Span<DeviceId> devices);
  static const WorkloadProfile* profile_of(const ClusterPhysics& physics, JobView job);
  // Rack (locality group) of each node when the scenario describes a topology, else null.
  const std::vector<int>* node_group() const { return node_group_; }
  // Electricity price and carbon intensity (now and forecast), or null without signals.
  const GridSignals* signals() const { return signals_; }
  // The datacenters (sites, WAN, per-site signals), or null for a single cluster. Its
  // per-job queries take the JobView (Geography's JobView overloads).
  const Geography* geography() const { return geography_; }
  // The compute market (offers, prices, which offer each device is sold under), or null
  // without `market:`. Spot devices the provider has taken back are failed in cluster_state().
  const Market* market() const { return market_; }
  // Outside temperatures, cooling set-points and PUE (sim/thermal.hpp), or null without.
  const ThermalModel* thermal() const { return thermal_; }

 private:
  friend class Simulator;
  // policies/rounds.cpp: the view a wrapped policy decides on at a re-allocation (every
  // running job queued again on a cluster without them).
  friend class HypotheticalView;
  const JobState& state_of(JobSlot slot) const { return (*jobs_)[static_cast<std::size_t>(slot)]; }
  const Tick* now_ = nullptr;
  const ClusterState* state_ = nullptr;
  const std::vector<JobState>* jobs_ = nullptr;
  const JobSlot* pending_head_ = nullptr;
  const JobSlot* running_head_ = nullptr;
  const std::size_t* num_pending_ = nullptr;
  const std::size_t* num_running_ = nullptr;
  const EventQueue* events_ = nullptr;
  const std::vector<std::vector<DeviceId>>* service_devices_ = nullptr;
  const std::vector<int>* node_group_ = nullptr;
  const PhysicsModel* physics_ = nullptr;
  const GridSignals* signals_ = nullptr;
  const Geography* geography_ = nullptr;
  const Market* market_ = nullptr;
  const ThermalModel* thermal_ = nullptr;
};

class Policy {
 public:
  virtual ~Policy() = default;
  // The registry name, used in messages ("policy 'sjf' at t=12 s: ...").
  virtual std::string name() const = 0;
  // A job entered the pending queue (on arrival, or back after a preemption).
  virtual void on_job_queued(const SchedulerView& view, JobSlot job) = 0;
  // A job left the system; its slot may be reused afterwards.
  virtual void on_job_finished(const SchedulerView& /*view*/, JobSlot /*job*/) {}
  // Called at each decision point (after all events of one instant). Append actions to
  // `out`. A job the policy starts is started by the kernel or the run stops with an
  // error, so the policy may drop it from its own queue when it emits the action.
  virtual void decide(const SchedulerView& view, ActionBatch& out) = 0;

  // Called once by the Simulator's constructor, before any other call: a new run begins.
  // `view` stays valid for the whole run (a policy that must read it outside the calls
  // that pass it, e.g. while a snapshot is loaded, may keep the pointer). A wrapper
  // passes it on to the policies it wraps.
  virtual void on_run_start(const SchedulerView& /*view*/) {}
  // For policies that decide one action at a time, as the RL environment's agent does
  // (rl/rl_policy.cpp); ordinary policies ignore it.
  // True: after a non-empty batch has been applied, decide() is called again at the same
  // instant (seeing the batch's effect) until it returns an empty batch.
  virtual bool decide_again_after_actions() const { return false; }
  // True for a policy that may bind devices to pending jobs (ActionBatch::bind): the run
  // then meters bound-idle device-time (results.json and jobs.csv, docs/metrics.md).
  virtual bool may_bind() const { return false; }

  // Saves or restores everything the policy remembers between decision points (queues,
  // counters, random streams) for schedsim run --snapshot-every / --resume; called
  // between instants, after the kernel's own state. The default refuses, naming the
  // policy: a policy is only resumable once its state is listed here.
  virtual void snapshot(SnapshotArchive& /*ar*/) { throw SnapshotUnsupported("policy '" + name() + "'"); }
};

}  // namespace schedsim
