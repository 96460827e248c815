// Observers subscribe to the kernel's events (metrics, logs, invariant checks) without
// being part of the simulator. Callbacks see the job's state as of the event.
#pragma once

#include <string>

#include "sim/job.hpp"

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
};

}  // namespace schedsim
