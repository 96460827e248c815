// The discrete-event kernel. One Simulator owns the clock, the event queue, the cluster
// state and the jobs in the system; nothing is global, so a process can run many
// simulations side by side (sweeps, vector environments).
//
// The loop is deliberately small: pop the next event, apply it, notify observers, and
// after the last event of an instant, if anything changed, ask the policy for a batch of
// actions and apply them after validation.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "sim/action.hpp"
#include "sim/cluster_state.hpp"
#include "sim/event_queue.hpp"
#include "sim/job.hpp"
#include "sim/job_source.hpp"
#include "sim/observer.hpp"
#include "sim/physics.hpp"
#include "sim/policy.hpp"
#include "sim/world_process.hpp"

// Hook lists and change observers are empty in most runs: marking their tests unlikely
// keeps the loops out of the hot code's cache lines (bench kernel's I-cache misses).
#define SCHEDSIM_RARELY(cond) __builtin_expect(static_cast<bool>(cond), 0)

namespace schedsim {

class Market;
class SnapshotArchive;

// What to do with a job that asks for more devices than the whole cluster has.
enum class OversizedMode : std::uint8_t { kError, kDrop };

struct SimulatorOptions {
  OversizedMode oversized = OversizedMode::kError;
  // Rates, memory limits and checkpoint costs; nullptr = rate 1, no limits, free
  // checkpoints. Must outlive the simulator.
  PhysicsModel* physics = nullptr;
  // Locality group (rack) of each node, for placement policies; nullptr = unknown.
  const std::vector<int>* node_group = nullptr;
  // Price and carbon signals policies see (SchedulerView::signals); nullptr = none.
  const GridSignals* signals = nullptr;
  // The compute market policies see (SchedulerView::market); nullptr = none. The kernel
  // itself does nothing with it: spot reclamation is a world process
  // (world/market/spot_process.hpp), as failures are (world/failures/failure_process.hpp).
  const Market* market_view = nullptr;
  // Thermal and cooling, datacenters, inference holds and power caps are world
  // processes (world/*/), registered with Simulator::add_process, not options.
};

// Deterministic counters of a run (no wall-clock values).
struct SimulatorStats {
  std::uint64_t events = 0;          // events processed (arrivals, completions, ...)
  std::uint64_t decision_points = 0; // calls to Policy::decide
  std::uint64_t actions = 0;         // actions applied
  std::uint64_t jobs_arrived = 0;
  std::uint64_t jobs_completed = 0;
  std::uint64_t jobs_dropped_oversized = 0;
  std::uint64_t preemptions = 0;
  std::uint64_t moves = 0;
  std::uint64_t rate_updates = 0;    // calls to PhysicsModel::update_rates
  std::uint64_t rate_changes = 0;    // running jobs whose rate changed (at an update or a move)
  std::uint64_t placement_changes = 0;  // a job took or gave back devices (start, stop, end, move, requeue)
  // Failures model (all 0 without one).
  std::uint64_t loss_spikes = 0;      // loss spikes (each a rollback and restart)
  std::uint64_t unit_failures = 0;    // device or node failures
  std::uint64_t job_failure_hits = 0; // jobs hit by a device or node failure
  std::uint64_t checkpoints = 0;      // periodic checkpoints started
  // Market (all 0 without spot offers).
  std::uint64_t spot_reclamations = 0;      // drops of a spot offer's availability
  std::uint64_t spot_devices_reclaimed = 0; // devices taken back, summed over the drops
  std::uint64_t jobs_hit_by_reclaim = 0;    // jobs preempted because a device of theirs was taken back
};
// Saves or restores the counters (sim/simulator_snapshot.cpp); the market meter saves a copy.
void snapshot_fields(SnapshotArchive& ar, SimulatorStats& s);

class Simulator {
 public:
  // The cluster spec, source, policy and observers must outlive the simulator.
  Simulator(const ClusterSpec& cluster, JobSource& source, Policy& policy, SimulatorOptions options = {});
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Meters are called before readers (Observer::stage), each group in the order added.
  void add_observer(Observer& observer) {
    std::size_t at = observers_.size();
    if (observer.stage() == ObserverStage::kMeter) {
      while (at > 0 && observers_[at - 1]->stage() == ObserverStage::kReader) --at;
    }
    observers_.insert(observers_.begin() + static_cast<std::ptrdiff_t>(at), &observer);
    if (observer.wants_job_changes()) change_observers_.push_back(&observer);
  }
  // Registers a world process (sim/world_process.hpp) before the run starts; the
  // registration order is the order its hooks run in. Must outlive the simulator.
  void add_process(WorldProcess& process);

  // Runs until no event is left. Throws InputError (bad workload), PolicyError (illegal
  // action, or jobs left waiting forever) and InvariantError (a kernel bug).
  void run();

  // Stepping interface (what run() is made of; the RL environment drives it directly).
  // advance() processes events until a decision point is due and returns true with the
  // simulator paused there, or returns false once no event is left. While paused,
  // apply() validates and applies actions (any number of batches, each seeing the
  // previous ones' effect); the next advance() ends the instant and goes on.
  bool advance();
  void apply(const ActionBatch& batch);
  bool paused() const { return paused_; }
  bool finished() const { return finished_; }
  // Whether any event (arrival, completion, end of a checkpoint save/restore) is still
  // scheduled: while paused, false means nothing will happen unless actions are applied.
  bool has_future_events() const { return queue_.live_count() > 0; }
  // Integral of (jobs pending + running) over simulated time, in job-seconds, up to now():
  // at the end of a run it equals the sum of all JCTs.
  double job_seconds_in_system() const { return job_seconds_in_system_; }

  Tick now() const { return now_; }
  const ClusterState& cluster_state() const { return cluster_; }
  const SchedulerView& view() const { return view_; }
  const SimulatorStats& stats() const { return stats_; }
  const JobState& job(JobSlot slot) const { return jobs_[static_cast<std::size_t>(slot)]; }
  // Whether `slot` holds a job now (slots are reused after a job ends).
  bool is_live(JobSlot slot) const { return slot >= 0 && static_cast<std::size_t>(slot) < live_.size() && live_[static_cast<std::size_t>(slot)]; }
  std::size_t num_pending() const { return num_pending_; }
  std::size_t num_running() const { return num_running_; }
  // Devices bound to pending jobs (ActionBatch::bind): not free, yet running nothing.
  int bound_devices_total() const { return bound_total_; }
  JobSlot first_running() const { return running_.head; }
  // Calls f(const JobState&) for every job in the system, pending or running, in slot order.
  template <typename F>
  void for_each_job(F&& f) const {
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      if (live_[i]) f(jobs_[i]);
    }
  }
  const std::string& source_name() const { return source_name_; }
  // Devices held by inference service `s` (ActionBatch::hold, applied by the inference
  // process); empty when it holds none or no such process is registered.
  const std::vector<DeviceId>& service_devices(int s) const;
  int num_services() const { return static_cast<int>(services().size()); }
  // ClusterState::owner() of a device held by service `s`.
  static std::int64_t service_owner(int s) { return -16 - static_cast<std::int64_t>(s); }

  // Snapshots (schedsim run --snapshot-every, sim/simulator_snapshot.cpp). `hook` is
  // called between instants (every event of the previous instant applied, rates updated,
  // observers told, no decision pending) when the next event lies at or after the next
  // multiple of `every`: at most once per period, never in the middle of an instant.
  void set_boundary_hook(Tick every, std::function<void()> hook);
  // Calls the boundary hook at the next instant boundary, whatever the period.
  void request_boundary() { next_boundary_ = Tick::from_us(std::numeric_limits<std::int64_t>::min()); }
  // Saves or restores the kernel's whole state; the source is repositioned by reading
  // the jobs already read again (JobSource has no other position). Only between instants
  // (from the boundary hook, or before run() on a simulator built the same way).
  void snapshot(SnapshotArchive& ar);

 private:
  friend class WorldContext;
  // The kernel's own event kinds (sim/world_process.hpp, event_kind, lists all).
  enum EventKind : std::uint32_t {
    kArrival = event_kind::kArrival,
    kCompletion = event_kind::kCompletion,
    kStallEnd = event_kind::kStallEnd,
    kWakeup = event_kind::kWakeup,  // a policy asked for a decision point (ActionBatch::wake_at)
  };

  struct JobList {  // intrusive list threaded through JobState::prev/next_in_list
    JobSlot head = kNoJob;
    JobSlot tail = kNoJob;
  };

  void pull_next_arrival();
  void handle_arrival();
  void handle_completion(const Event& e);
  void handle_stall_end(const Event& e);
  void finish_instant(bool instant_over);
  void apply_start(const Action& a, Span<DeviceId> devices, std::size_t index);
  void apply_preempt(const Action& a, std::size_t index);
  void apply_move(const Action& a, Span<DeviceId> devices, std::size_t index);
  void apply_bind(const Action& a, Span<DeviceId> devices, std::size_t index);
  void apply_unbind(const Action& a, std::size_t index);
  void start_job(JobSlot slot, Span<DeviceId> devices);
  // Books the device-time the job's bound devices were held idle up to now.
  void account_bound(JobState& j);
  void lose_bound_device(JobSlot slot, DeviceId d);
  // "0-3, 8" (ids in the given order, runs of consecutive ids joined).
  static std::string device_list(Span<DeviceId> devices);
  void check_devices(const Action& a, Span<DeviceId> devices, std::size_t index, const JobState& j);
  void finish_stop(JobSlot slot);
  // A running job gives up its devices (device time accounted) and goes back to the
  // queue: the two halves of a preemption's end and of a failure's requeue.
  void unplace(JobSlot slot);
  void requeue(JobSlot slot);
  [[noreturn]] void reject(std::size_t index, const Action& a, const std::string& why) const;
  void advance(JobState& j);
  void account_devices(JobState& j);
  void stall(JobSlot slot, double seconds, StallKind kind = StallKind::kPreemption);
  // Core actions world processes call (sim/world_process.cpp is their WorldContext face).
  void cut_stall(JobState& j);
  void rollback(JobState& j, int checkpoints_back);
  void commit_checkpoint(JobState& j, const CheckpointMark& mark);
  void evict(JobSlot slot, EvictRestart how);
  DeviceTaken add_reason(DeviceId d, DeviceReasons reason);
  void clear_reason(DeviceId d, DeviceReasons reason);
  // The processes subscribed to on_compute_begins / on_progress_interrupted.
  void compute_begins(JobSlot slot);
  void progress_interrupted(JobSlot slot, Interruption why);
  // A device held by an inference service failed or was taken back by its provider: the
  // holder process gives it up at once (so the world's meter counts one replica device
  // fewer) and it becomes unusable.
  void take_from_service(DeviceId d);
  // The devices each inference service holds: the holder process's table, or none.
  const std::vector<std::vector<DeviceId>>& services() const { return exposed_.service_devices ? *exposed_.service_devices : no_services_; }
  // The holder process's table in the snapshot (SnapshotSlot::kHeldDevices), or an empty one.
  void snapshot_held(SnapshotArchive& ar);
  // The product of the processes' rate factors (stragglers, power caps, throttling).
  double rate_factor(const JobState& j) const;
  // Why an out-of-service device cannot be used: under repair, or taken back by its spot provider.
  std::string why_failed(DeviceId d) const;
  // Each job's record, with the side-table fields of the kJobSnapshot process (or their
  // defaults) where JobState had them (sim/simulator_snapshot.cpp).
  void snapshot_job(SnapshotArchive& ar, JobSlot slot);
  static std::int64_t& stall_account(JobState& j, StallKind kind);
  // Take / give back devices for a job: whole devices, or its share of one (fractional).
  void hold_devices(JobSlot slot, Span<DeviceId> devices);
  // Releasing also marks devices that failed while held (failures model) as failed.
  void release_devices(JobSlot slot, Span<DeviceId> devices);
  void set_rate(JobSlot slot, double rate);
  void schedule_completion(JobSlot slot);
  void placement_changed(JobSlot slot);
  void update_rates();
  JobSlot alloc_slot();
  void free_slot(JobSlot slot);
  void list_push(JobList& list, JobSlot slot);
  void list_remove(JobList& list, JobSlot slot);
  std::string where(const JobSpec& spec) const;
  // After loading a snapshot: refuses (ar.reject) a state this scenario could not have
  // reached: indices out of range, broken lists, events that name no job (sim/simulator_snapshot.cpp).
  void check_restored(SnapshotArchive& ar) const;

  const ClusterSpec& spec_;
  JobSource& source_;
  Policy& policy_;
  SimulatorOptions options_;
  std::string source_name_;

  Tick now_;
  EventQueue queue_;
  ClusterState cluster_;
  std::vector<JobState> jobs_;
  std::vector<char> live_;  // char, not bool: no proxy references in the hot path
  std::vector<JobSlot> free_slots_;
  JobList pending_;
  JobList running_;
  std::size_t num_pending_ = 0;
  std::size_t num_running_ = 0;
  int bound_total_ = 0;  // devices bound to pending jobs, summed
  std::uint64_t next_arrival_seq_ = 0;

  JobSpec next_job_;            // pulled from the source, arrival scheduled
  bool has_next_job_ = false;
  Tick last_submit_;

  bool dirty_ = false;  // something changed since the last decision point
  bool started_ = false;
  bool paused_ = false;  // advance() returned at a decision point
  bool finished_ = false;
  double job_seconds_in_system_ = 0.0;
  ActionBatch batch_;
  Tick wakeup_ = Tick::max();  // the earliest wake-up requested and not yet reached
  std::vector<DeviceId> scratch_;  // reused buffer for validating device lists
  std::vector<JobSlot> changed_;   // placements changed since the last rate update
  std::vector<std::pair<JobSlot, double>> new_rates_;
  // World processes (sim/world_process.hpp): all of them, and per hook the subscribers,
  // in registration order; decided once in add_process.
  WorldContext world_;
  struct ProcessLists {
    std::vector<WorldProcess*> all, start, rate, veto, arrival, compute, interrupted, overhead, status, instant;
    std::vector<WorldProcess*> snapshot_before_devices, snapshot_after_devices, snapshot_after_physics;
    WorldProcess* job_snapshot = nullptr;
    std::vector<WorldProcess*> event_owner;   // by event kind
    std::vector<WorldProcess*> action_owner;  // by ActionKind
  } processes_;
  int marks_kept_ = 0;  // checkpoint marks a rollback may reach; 0 = no process rolls back
  DeviceReasons reasons_used_ = device_reason::kNone;
  bool rate_factors_ = false;  // a process has a rate factor
  ExposedModels exposed_;  // what the processes show policies (WorldProcess::expose)
  WorldProcess* held_proc_ = nullptr;  // kHeldDevices: holds devices under service owner codes
  std::vector<std::vector<DeviceId>> no_services_;  // services() without a holder process: always empty
  SchedulerView view_;
  SimulatorStats stats_;
  std::vector<Observer*> observers_;
  std::vector<Observer*> change_observers_;  // those that want on_job_changed
  // Pushes a job's change to the observers that want it (Observer::on_job_changed).
  void job_changed(JobSlot slot, JobChange what) {
    if (SCHEDSIM_RARELY(!change_observers_.empty())) push_job_change(slot, what);
  }
  // The loop itself, out of line: job_changed sits in every hot kernel function, and a
  // run without such an observer should not carry twelve copies of it in its code.
  void push_job_change(JobSlot slot, JobChange what);
  std::uint64_t jobs_read_ = 0;  // successful JobSource::next calls (snapshots reposition the source)
  std::function<void()> boundary_hook_;
  Tick boundary_every_;
  Tick next_boundary_;
};

// WorldContext's accessors that processes call per job and per event: inline, so that a
// feature moved into a process costs what its kernel branch cost.
inline Tick WorldContext::now() const { return sim_->now_; }
inline EventId WorldContext::schedule(Tick at, std::uint32_t kind, std::int64_t arg) { return sim_->queue_.schedule(at, kind, arg); }
inline void WorldContext::cancel(EventId id) { sim_->queue_.cancel(id); }
inline bool WorldContext::queue_empty() const { return sim_->queue_.empty(); }
inline Tick WorldContext::next_event_time() const { return sim_->queue_.next_time(); }
inline const ClusterState& WorldContext::cluster() const { return sim_->cluster_; }
inline const JobState& WorldContext::job(JobSlot slot) const { return sim_->jobs_[static_cast<std::size_t>(slot)]; }
inline JobState& WorldContext::job_record(JobSlot slot) { return sim_->jobs_[static_cast<std::size_t>(slot)]; }
inline bool WorldContext::is_live(JobSlot slot) const { return sim_->is_live(slot); }
inline JobSlot WorldContext::first_running() const { return sim_->running_.head; }
inline JobSlot WorldContext::next_running(JobSlot slot) const { return sim_->jobs_[static_cast<std::size_t>(slot)].next_in_list; }
inline std::size_t WorldContext::num_running() const { return sim_->num_running_; }
inline std::size_t WorldContext::num_pending() const { return sim_->num_pending_; }
inline SimulatorStats& WorldContext::stats() { return sim_->stats_; }
inline bool WorldContext::job_coming() const { return sim_->has_next_job_; }
inline bool WorldContext::decision_pending() const { return sim_->dirty_; }
inline bool WorldContext::wakeup_pending() const { return sim_->wakeup_ != Tick::max(); }
inline void WorldContext::advance_job(JobSlot slot) { sim_->advance(sim_->jobs_[static_cast<std::size_t>(slot)]); }

}  // namespace schedsim
