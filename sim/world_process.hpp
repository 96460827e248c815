// World processes: how world models (failures, spot market, thermal, power caps,
// datacenters, inference holds...) plug into the kernel (sim/simulator.hpp) without the
// kernel knowing them.
//
// A process is registered once, before the run starts (Simulator::add_process, called
// by the world builder). At registration the kernel reads hooks() and keeps, per hook, the
// list of processes that subscribe to it, in registration order: a run without a feature
// registers no process for it and pays nothing (no `if (feature)` in the hot path).
// Registration order is the order in which hooks run, so the world builder registers the
// processes in a fixed order (failures, market, thermal, ...) that keeps event sequence
// numbers, and so outputs and snapshots, what they were before processes existed.
//
// A process acts on the world only through WorldContext: the clock, its own events, the
// cluster state, read access to the jobs, and the kernel's core actions (stall, rollback
// to a checkpoint mark, evict a job back to the queue, rate changes, decision points,
// device availability reasons).
//
// Additions after the first published version are marked "(added: ...)" below; nothing
// that is here is renamed or removed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/action.hpp"
#include "sim/cluster_spec.hpp"
#include "sim/cluster_state.hpp"
#include "sim/event_queue.hpp"
#include "sim/job.hpp"
#include "base/span.hpp"
#include "base/tick.hpp"

namespace schedsim {

class SnapshotArchive;
class Simulator;
struct SimulatorStats;
class Geography;
class ThermalModel;

// Event kinds. The numbers are part of the snapshot format and of event order: a process
// keeps the kinds its feature used before it became a process. Kernel kinds are 1, 2, 3
// and 9; new processes take numbers from 32 up.
namespace event_kind {
inline constexpr std::uint32_t kArrival = 1;
inline constexpr std::uint32_t kCompletion = 2;
inline constexpr std::uint32_t kStallEnd = 3;
inline constexpr std::uint32_t kLossSpike = 4;          // failures; arg = job slot
inline constexpr std::uint32_t kCheckpointDue = 5;      // failures; arg = job slot
inline constexpr std::uint32_t kCheckpointCommit = 6;   // failures; arg = job slot
inline constexpr std::uint32_t kUnitFailure = 7;        // failures; arg = failure unit
inline constexpr std::uint32_t kUnitRepair = 8;         // failures; arg = failure unit
inline constexpr std::uint32_t kWakeup = 9;
inline constexpr std::uint32_t kSpotChange = 10;        // market; arg = spot offer index
inline constexpr std::uint32_t kThermalStep = 11;       // thermal; arg = 0
inline constexpr std::uint32_t kFirstFree = 32;
}  // namespace event_kind

// Why a device is out of service: DeviceReasons and device_reason::kUnderRepair,
// kTakenBack, ... are defined in sim/cluster_state.hpp (one reason-set per device in
// ClusterState).

// Who held a device at the moment it went out of service (WorldContext::take_device).
// Bound devices and an inference service's devices are taken by the kernel at once
// (the pending job or the service loses that one device); for a placed job the process
// decides what happens to it (a failure restarts it, a reclamation evicts it).
struct DeviceTaken {
  enum Holder : std::uint8_t {
    kNobody,       // it was free (now out of service) or already out of service
    kPlacedJob,    // held by the running or stopping job `job`
    kSharedJobs,   // shared by fractional jobs (ClusterState::shares lists them)
    kBoundJob,     // bound to the pending job `job`: the kernel took it from the job
    kService,      // held by an inference service: the kernel took it from the service
  };
  Holder holder = kNobody;
  JobSlot job = kNoJob;
};

// Why a job's progress stops (WorldProcess::on_progress_interrupted). Timers a process
// armed for the job's computation (loss spikes, periodic checkpoints) are disarmed here.
enum class Interruption : std::uint8_t {
  kPreempted,  // a preemption's save supersedes anything the process was doing
  kMoving,     // about to move (devices not yet changed); the job's progress is current
  kCompleted,  // completed normally (the process may still change its final status)
  kEvicted,    // a world process took it off its devices (WorldContext::evict)
};

// How an evicted job starts again (WorldContext::evict).
enum class EvictRestart : std::uint8_t {
  kRestore,  // reads its checkpoint back at its next start (one restore), if it made progress
  kRestart,  // pays a restart instead (WorldProcess::start_overhead decides how long)
};

// What a job's start costs beyond placing it (WorldProcess::start_overhead). The kernel
// starts from "restore the checkpoint if the job has one"; a process may replace the
// restore with a restart (booked as StallKind::kRestart) and add relocation time.
struct StartOverhead {
  bool restart = false;     // pay restart_s instead of the checkpoint restore
  double restart_s = 0.0;
  double extra_s = 0.0;     // added to either (e.g. a WAN checkpoint transfer)
};

// Where a process's state goes in the kernel's snapshot. The slots reproduce the byte
// layout snapshots had before processes existed: kernel state, then
// kBeforeDeviceTable processes (market), the device availability table, then
// kAfterDeviceTable processes (thermal), the physics model, then kAfterPhysics (failures).
// Without a kBeforeDeviceTable subscriber the kernel writes an empty spot-offer count.
// (added: worlds) kHeldDevices: inside the kernel's section, where its inference-service
// table was (after the failed-device table, before the stats); the kernel writes an empty
// table there when no process holds devices.
enum class SnapshotSlot : std::uint8_t { kBeforeDeviceTable, kAfterDeviceTable, kAfterPhysics, kHeldDevices };

// (added: worlds) What a process shows policies through SchedulerView (geography(),
// thermal(), service_devices()); filled at registration (WorldProcess::expose).
struct ExposedModels {
  const Geography* geography = nullptr;
  const ThermalModel* thermal = nullptr;
  const std::vector<std::vector<DeviceId>>* service_devices = nullptr;  // by service
  int num_sites = 0;  // datacenters (JobState::site < this), 0 for one cluster
};

// What a process may see and do. Only the kernel makes one (its methods are defined in
// sim/simulator*.cpp; the per-job accessors inline at the end of sim/simulator.hpp, which
// a process's .cpp includes); a process receives it in every hook.
class WorldContext {
 public:
  explicit WorldContext(Simulator& sim) : sim_(&sim) {}

  // Clock and events. A process schedules and cancels only events of its own kinds.
  Tick now() const;
  EventId schedule(Tick at, std::uint32_t kind, std::int64_t arg);
  void cancel(EventId id);
  bool queue_empty() const;
  Tick next_event_time() const;  // requires !queue_empty()
  // (added) Whether `id` is pending with this kind and argument (snapshot validation).
  bool holds_event(EventId id, std::uint32_t kind, std::int64_t arg) const;

  // Read access.
  const ClusterSpec& spec() const;
  const ClusterState& cluster() const;
  const JobState& job(JobSlot slot) const;
  bool is_live(JobSlot slot) const;
  JobSlot first_running() const;              // running and stopping jobs:
  JobSlot next_running(JobSlot slot) const;   // for (s = first_running(); s != kNoJob; s = next_running(s))
  std::size_t num_running() const;
  std::size_t num_pending() const;
  SimulatorStats& stats();
  // (added: job_record) The job's record, for the per-job counters a process books
  // (failure_restarts, loss_spike_restarts); the kernel's own fields change only through
  // the actions below.
  JobState& job_record(JobSlot slot);

  // The world's state as the "stop when nothing can change" rules need it.
  bool job_coming() const;        // a job is still to arrive
  bool decision_pending() const;  // something changed since the last decision point
  bool wakeup_pending() const;    // a policy asked for a wake-up not yet reached
  // No job coming, none running, no decision pending, no wake-up pending.
  bool world_idle() const;
  void mark_decision_point();     // the policy is asked at the end of this instant

  // Core actions on jobs.
  void advance_job(JobSlot slot);  // books progress up to now
  // No progress for `seconds` while holding its devices; device-time booked under `kind`.
  // Cuts a stall in progress first. Zero seconds: no stall event (job.stall_event == 0).
  void stall(JobSlot slot, double seconds, StallKind kind);
  // Ends the current stall now, booking only the part that elapsed.
  void cut_stall(JobSlot slot);
  // Checkpoint marks (core: any process may roll back). progress_mark: the job's progress
  // and net compute device-time now (call advance_job first).
  CheckpointMark progress_mark(JobSlot slot) const;
  void commit_checkpoint(JobSlot slot, const CheckpointMark& mark);
  // Moves the job's progress back `checkpoints_back` marks (the start at most); the work
  // and device-time since then are booked as lost.
  void rollback(JobSlot slot, int checkpoints_back);
  // Tells every process subscribed to on_progress_interrupted (kEvicted) that the job's
  // progress stops (call it before rolling back a job another process armed timers for).
  void interrupt_progress(JobSlot slot);
  // Cancels the completion, takes the job off its devices (device-time booked) and puts
  // it back at the end of the queue; `how` says what its next start pays.
  void evict(JobSlot slot, EvictRestart how);
  // The job's rate factor changed (a device's speed did): its rate is recomputed, at
  // once without physics or by the rate update at the end of the instant with it.
  void rate_factor_changed(JobSlot slot);
  // Tells every process subscribed to on_compute_begins that `slot` (re)starts making
  // progress (after a stall ends, a start, a move); processes may call it too.
  void compute_begins(JobSlot slot);

  // Device availability. add_reason: the device gets `reason` and is out of service. A
  // free device becomes failed; one already failed stays so (kNobody); a device bound to a
  // pending job or held by an inference service is taken from it at once; for a placed job
  // (or shared devices) the holder is returned and the process decides (today's rules:
  // a device still held is reported at every reason added, not only the first).
  // clear_reason: `reason` goes; when none is left a failed device is free again (a
  // device a job still holds stays with it; it becomes failed when released while a
  // reason remains).
  DeviceTaken add_reason(DeviceId d, DeviceReasons reason);
  void clear_reason(DeviceId d, DeviceReasons reason);
  DeviceReasons reasons(DeviceId d) const;
  // (added) The reasons any registered process uses (WorldProcess::device_reasons_used).
  DeviceReasons reasons_in_use() const;

  // (added: worlds) Devices held by a holder that is no job (an inference service, owner
  // code Simulator::service_owner(s)): hold_devices takes free devices, release_held
  // gives them back (a device out of service goes to the failed state, not free).
  void hold_devices(Span<DeviceId> devices, std::int64_t owner);
  void release_held(Span<DeviceId> devices, std::int64_t owner);

 private:
  Simulator* sim_;
};

class WorldProcess {
 public:
  // The hooks a process subscribes to (hooks() returns an OR of these).
  enum Hook : std::uint32_t {
    kStart = 1U << 0,
    kEvents = 1U << 1,             // handle(): events of the kinds event_kinds() lists
    kRateFactor = 1U << 2,
    kPlacementVeto = 1U << 3,
    kJobArrival = 1U << 4,
    kComputeBegins = 1U << 5,
    kProgressInterrupted = 1U << 6,
    kStartOverhead = 1U << 7,
    kCompletionStatus = 1U << 8,
    kActions = 1U << 9,            // apply_action(): actions of the kinds action_kinds() lists
    kEndOfInstant = 1U << 10,
    kSnapshot = 1U << 11,
    kCheckpointMarks = 1U << 12,   // checkpoint_marks_kept()
    kJobSnapshot = 1U << 13,       // (added) snapshot_job(): fields inside each job's record
    kHeldDevices = 1U << 16,       // (added: worlds) lose_held_device(): it holds devices as a non-job holder
  };

  virtual ~WorldProcess() = default;
  virtual const char* name() const = 0;
  virtual std::uint32_t hooks() const = 0;

  // kStart: at run start, after the first arrival is scheduled, in registration order.
  virtual void start(WorldContext&) {}
  // kEvents: the events of these kinds are handed to handle().
  virtual std::vector<std::uint32_t> event_kinds() const { return {}; }
  virtual void handle(WorldContext&, const Event&) {}
  // kRateFactor: the kernel multiplies the factors of all subscribers into the job's rate
  // (stragglers, power caps, throttling).
  virtual double rate_factor(const JobState&) const { return 1.0; }
  // kPlacementVeto: why `devices` is no place for `spec` ("" = fine); checked after the
  // physics model's own veto, in registration order, for starts, moves and full binds.
  virtual std::string placement_problem(const JobSpec&, Span<DeviceId>) const { return {}; }
  // kJobArrival: a job arrived in `slot` (side tables indexed by slot reset here).
  virtual void on_job_arrival(WorldContext&, JobSlot) {}
  // kComputeBegins: the running, unstalled job starts or resumes making progress.
  virtual void on_compute_begins(WorldContext&, JobSlot) {}
  // kProgressInterrupted: the job's progress stops (see Interruption).
  virtual void on_progress_interrupted(WorldContext&, JobSlot, Interruption) {}
  // kStartOverhead: what the start of `slot` on `devices` costs (called for starts and,
  // with `moving` = true, for moves, where only extra_s counts).
  virtual void start_overhead(WorldContext&, JobSlot, Span<DeviceId>, bool /*moving*/, StartOverhead&) {}
  // kCompletionStatus: the status the completed job ends with (recorded outcomes).
  virtual void completion_status(const JobState&, JobStatus&) const {}
  // kActions: policy actions of these kinds are handed to apply_action(), which applies
  // the action or returns why it is illegal (the kernel rejects it with that reason).
  virtual std::vector<ActionKind> action_kinds() const { return {}; }
  virtual std::string apply_action(WorldContext&, const Action&, Span<DeviceId>) { return {}; }
  // kEndOfInstant: after the last event of an instant and the rate update.
  virtual void end_of_instant(WorldContext&) {}
  // kCheckpointMarks: how many marks back this process may roll a job (>= 1). With any
  // subscriber the kernel commits a mark at each preemption save and keeps the start plus
  // the largest count of marks.
  virtual int checkpoint_marks_kept() const { return 1; }
  // kSnapshot: saves or restores the process's state at its slot; check_restored (after
  // the whole snapshot is loaded) refuses through ar.reject/ar.check a state this
  // scenario could not have reached, and check_event an event of one of its kinds.
  virtual SnapshotSlot snapshot_slot() const { return SnapshotSlot::kAfterPhysics; }
  virtual void snapshot(SnapshotArchive&) {}
  virtual void check_restored(const WorldContext&, SnapshotArchive&) const {}
  virtual void check_event(const WorldContext&, SnapshotArchive&, const Event&, const std::string& /*what*/) const {}
  // (added) kJobSnapshot: the process's per-job side-table entry, saved inside each job's
  // record where JobState had these fields (one subscriber at most: the failures
  // process). Without a subscriber the kernel writes the same bytes with default values.
  virtual void snapshot_job(SnapshotArchive&, JobSlot) {}
  // (added) The device_reason bits this process adds (the kernel sizes the reason table
  // at run start when any is used, and saves one table per bit).
  virtual DeviceReasons device_reasons_used() const { return device_reason::kNone; }
  // (added: worlds) kHeldDevices: device `d`, held under a non-job owner code (an
  // inference service), went out of service: the holder gives it up at once (release_held).
  virtual void lose_held_device(WorldContext&, DeviceId /*d*/) {}
  // (added: worlds) Called once at registration, whatever hooks(): the models it shows
  // policies (SchedulerView) and meters.
  virtual void expose(ExposedModels&) const {}
};

}  // namespace schedsim
