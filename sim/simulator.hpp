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
#include "sim/market.hpp"
#include "sim/observer.hpp"
#include "sim/physics.hpp"
#include "sim/policy.hpp"

namespace schedsim {

class FailureModel;
class Geography;
class SnapshotArchive;
class ThermalModel;

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
  // Loss spikes, device/node failures, stragglers, periodic checkpoints and trace-recorded
  // outcomes; nullptr = none of these (jobs never fail). Must outlive the simulator.
  FailureModel* failures = nullptr;
  // Several datacenters: placements stay inside one allowed datacenter and relocations
  // pay a WAN checkpoint transfer plus a restart; nullptr = one cluster. Must outlive the simulator.
  const Geography* geography = nullptr;
  // Power caps (sim/power_cap.hpp): speed multiplier of each device; a job runs at its
  // slowest device's. nullptr = every device at full speed. Must outlive the simulator.
  const std::vector<double>* device_speed = nullptr;
  // The compute market (sim/market.hpp): spot offers' devices are taken back and returned
  // as their availability changes (sim/simulator_market.cpp); nullptr = none. Must
  // outlive the simulator. `market_seed` seeds the spot on/off model.
  const Market* market = nullptr;
  std::uint64_t market_seed = 0;
  // Thermal and cooling (sim/thermal.hpp): outside temperature steps become events and
  // decision points, set-point actions are accepted, and device_speed must point at the
  // model's device_speed() (power caps x throttle). nullptr = no thermal model.
  ThermalModel* thermal = nullptr;
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
  // Devices held by inference service `s` (ActionBatch::hold); empty when it holds none.
  const std::vector<DeviceId>& service_devices(int s) const;
  int num_services() const { return static_cast<int>(service_devices_.size()); }
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
  enum EventKind : std::uint32_t {
    kArrival = 1,
    kCompletion = 2,
    kStallEnd = 3,
    // Failures model (sim/simulator_failures.cpp); arg = job slot or failure unit.
    kLossSpike = 4,
    kCheckpointDue = 5,
    kCheckpointCommit = 6,
    kUnitFailure = 7,
    kUnitRepair = 8,
    kWakeup = 9,  // a policy asked for a decision point (ActionBatch::wake_at)
    kSpotChange = 10,  // a spot offer's availability changes (sim/simulator_market.cpp); arg = index into spot_
    kThermalStep = 11,  // an outside temperature steps (sim/thermal.hpp)
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
  void apply_hold(const Action& a, Span<DeviceId> devices, std::size_t index);
  void apply_set_cooling(const Action& a, std::size_t index);
  void apply_bind(const Action& a, Span<DeviceId> devices, std::size_t index);
  void apply_unbind(const Action& a, std::size_t index);
  void start_job(JobSlot slot, Span<DeviceId> devices);
  // Books the device-time the job's bound devices were held idle up to now.
  void account_bound(JobState& j);
  void lose_bound_device(JobSlot slot, DeviceId d);
  // "0-3, 8" (ids in the given order, runs of consecutive ids joined).
  static std::string device_list(Span<DeviceId> devices);
  // Thermal model: new rates for running jobs on devices whose speed changed, and the
  // next outside-temperature step scheduled while anything happens after it.
  void rerate_thermal();
  void schedule_thermal_step();
  void check_devices(const Action& a, Span<DeviceId> devices, std::size_t index, const JobState& j);
  double geo_relocation_s(JobState& j, Span<DeviceId> devices);
  void finish_stop(JobSlot slot);
  // A running job gives up its devices (device time accounted) and goes back to the
  // queue: the two halves of a preemption's end and of a failure's requeue.
  void unplace(JobSlot slot);
  void requeue(JobSlot slot);
  [[noreturn]] void reject(std::size_t index, const Action& a, const std::string& why) const;
  void advance(JobState& j);
  void account_devices(JobState& j);
  void stall(JobSlot slot, double seconds, StallKind kind = StallKind::kPreemption);
  // Failures model (sim/simulator_failures.cpp).
  void start_failures();
  void handle_loss_spike(const Event& e);
  void handle_checkpoint_due(const Event& e);
  void handle_checkpoint_commit(const Event& e);
  void handle_unit_failure(const Event& e);
  void handle_unit_repair(const Event& e);
  void begin_compute(JobSlot slot);
  void disarm_failure_timers(JobState& j);
  void cut_stall(JobState& j);
  void rollback(JobState& j, int checkpoints_back);
  void commit_checkpoint(JobState& j, const CheckpointMark& mark);
  void fail_job(JobSlot slot, Tick repair_at);
  // A device held by an inference service failed or was taken back by its provider: the
  // service loses it at once (so the world's meter counts one replica device fewer) and it
  // becomes unusable.
  void take_from_service(DeviceId d);
  void requeue_after_failure(JobSlot slot);
  double rate_factor(const JobState& j) const;
  // Market (sim/simulator_market.cpp).
  struct SpotOffer {  // one spot offer: where its availability stands and its next change
    int offer;
    SpotCursor cursor;
    int available;
    SpotChange next;
  };
  void start_market();
  void handle_spot_change(const Event& e);
  void set_spot_available(SpotOffer& s, int available);
  void reclaim_job(JobSlot slot);
  // A device that is down for repair or taken back by its provider: failed in cluster_.
  bool unavailable(DeviceId d) const;
  // Why a failed device cannot be used: under repair, or taken back by its spot provider.
  std::string why_failed(DeviceId d) const;
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
  std::vector<char> device_down_;   // failures model: device on a failed unit (until repaired)
  std::vector<JobSlot> hit_jobs_;   // reused: jobs on a failing unit
  std::vector<std::vector<DeviceId>> service_devices_;  // by inference service
  std::vector<SpotOffer> spot_;         // market: the spot offers' availability state
  std::vector<char> device_reclaimed_;  // market: device taken back by its provider
  bool thermal_step_pending_ = false;
  SchedulerView view_;
  SimulatorStats stats_;
  std::vector<Observer*> observers_;
  std::vector<Observer*> change_observers_;  // those that want on_job_changed
  // Pushes a job's change to the observers that want it (Observer::on_job_changed).
  void job_changed(JobSlot slot, JobChange what) {
    for (Observer* o : change_observers_) o->on_job_changed(slot, what);
  }
  std::uint64_t jobs_read_ = 0;  // successful JobSource::next calls (snapshots reposition the source)
  std::function<void()> boundary_hook_;
  Tick boundary_every_;
  Tick next_boundary_;
};

}  // namespace schedsim
