// Test helpers shared by kernel tests: a first-fit FIFO policy and an observer that keeps
// every ended job's state.
#pragma once

#include <string>
#include <vector>

#include "policies/placement.hpp"
#include "sim/observer.hpp"
#include "sim/policy.hpp"

namespace schedsim::test {

// First-fit FIFO (head-of-line blocking).
class FirstFit : public Policy {
 public:
  std::string name() const override { return "first-fit"; }
  void on_job_queued(const SchedulerView&, JobSlot) override {}
  void decide(const SchedulerView& view, ActionBatch& out) override {
    free_.reset(view.cluster_state());
    for (JobSlot s = view.first_pending(); s != kNoJob; s = view.next_pending(s)) {
      devices_.clear();
      if (!free_.first_fit(view.job(s).num_gpus(), devices_)) break;
      out.start(s, devices_);
    }
  }

 private:
  FreeDevices free_;
  std::vector<DeviceId> devices_;
};

// Records each ended job's state.
class Ends : public Observer {
 public:
  void on_job_end(const JobState& j) override { jobs.push_back(j); }
  std::vector<JobState> jobs;
};

}  // namespace schedsim::test
