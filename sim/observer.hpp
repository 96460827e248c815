// Observers subscribe to the kernel's events (metrics, logs, invariant checks) without
// being part of the simulator. Callbacks see the job's state as of the event.
#pragma once

#include <string>

#include "sim/job.hpp"
#include "sim/snapshot_archive.hpp"

namespace schedsim {

class Simulator;

class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_job_arrival(const JobState& /*job*/) {}
  virtual void on_job_start(const JobState& /*job*/) {}
  virtual void on_job_end(const JobState& /*job*/) {}
  // A job the workload offered but the simulation did not admit (e.g. larger than the
  // cluster with `workload.oversized: drop`).
  virtual void on_job_dropped(const JobSpec& /*job*/, const std::string& /*reason*/) {}
  // After every event, with the simulator in a consistent state.
  virtual void after_event(const Simulator& /*sim*/) {}
  // Saves or restores the observer's state for schedsim run --snapshot-every / --resume
  // (sim/snapshot_archive.hpp). The default refuses: an observer with state must say
  // what it is; one without any overrides this with an empty body.
  virtual void snapshot(SnapshotArchive& /*ar*/) { throw SnapshotUnsupported("an observer of this run"); }
};

}  // namespace schedsim
