// Observers subscribe to the kernel's events (metrics, logs, invariant checks) without
// being part of the simulator. Callbacks see the job's state as of the event.
#pragma once

#include <cstdint>
#include <string>

#include "sim/job.hpp"
#include "sim/snapshot_archive.hpp"

namespace schedsim {

class Simulator;

// What changed about a job, as the kernel pushes it (Observer::on_job_changed).
enum class JobChange : std::uint8_t {
  kStarted,    // joined the running list (a start or a restart)
  kPlacement,  // its devices changed (move, release, bound devices won or lost)
  kRate,       // its physics rate changed, or was recomputed (its compute share may differ)
  kStall,      // a stall (checkpoint save or restore, restart) began or ended
  kRequeued,   // back in the queue
  kEnded,      // completed, failed or killed (pushed just before on_job_end)
};

// When, within one callback round, the kernel calls an observer. Meters keep state of
// their own; readers read other observers' state (the invariant checker reads the energy
// meter's totals in after_event). The kernel calls every meter before every reader, in
// whatever order they were added, so that no order of registration carries meaning. A
// value another observer settles in on_job_end is pulled from it rather than read
// after it (EnergyMeter::use_of_ended).
enum class ObserverStage : std::uint8_t { kMeter, kReader };

class Observer {
 public:
  virtual ~Observer() = default;
  virtual ObserverStage stage() const { return ObserverStage::kMeter; }
  virtual void on_job_arrival(const JobState& /*job*/) {}
  virtual void on_job_start(const JobState& /*job*/) {}
  virtual void on_job_end(const JobState& /*job*/) {}
  // A job the workload offered but the simulation did not admit (e.g. larger than the
  // cluster with `workload.oversized: drop`).
  virtual void on_job_dropped(const JobSpec& /*job*/, const std::string& /*reason*/) {}
  // Pushed by the kernel as the job's placement, rate, stall or status changes, for
  // observers that keep per-job state and update only the jobs that changed (the energy
  // meter): O(changed jobs) work per event. Repeats are possible; the job's record may be
  // mid-update, so read it in after_event. Only observers whose wants_job_changes() is
  // true when they are added receive these (the kernel skips the call for the others).
  virtual void on_job_changed(JobSlot /*slot*/, JobChange /*what*/) {}
  virtual bool wants_job_changes() const { return false; }
  // After every event, with the simulator in a consistent state.
  virtual void after_event(const Simulator& /*sim*/) {}
  // Saves or restores the observer's state for schedsim run --snapshot-every / --resume
  // (sim/snapshot_archive.hpp). The default refuses: an observer with state must say
  // what it is; one without any overrides this with an empty body.
  virtual void snapshot(SnapshotArchive& /*ar*/) { throw SnapshotUnsupported("an observer of this run"); }
};

}  // namespace schedsim
