// An observer that verifies the kernel's invariants after every event: no device held
// by two jobs or by a job that is not running, fractional shares within each device's
// 1000 milli and equal to the cluster's count, free counts that match the device map,
// time that never goes backwards, jobs that start after they arrive and end after they
// start, and work conserved (a job's run time equals its work at its rate). O(devices +
// jobs) per event: for tests and `--check-invariants`, not for production sweeps.
#pragma once

#include <vector>

#include "sim/observer.hpp"
#include "sim/tick.hpp"

namespace schedsim {

class InvariantChecker : public Observer {
 public:
  void on_job_start(const JobState& job) override;
  void on_job_end(const JobState& job) override;
  void after_event(const Simulator& sim) override;
  std::uint64_t checks() const { return checks_; }

 private:
  Tick last_time_;
  std::uint64_t checks_ = 0;
  std::vector<std::int64_t> seen_owner_;
  std::vector<int> seen_milli_;  // shares held by running jobs, by device
};

}  // namespace schedsim
