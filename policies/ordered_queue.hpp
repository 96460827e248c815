// The common shape of non-preemptive queue-order policies: pending jobs sorted by a key
// (smaller first, ties broken by arrival order), started head first with first-fit
// placement until the head does not fit. The head blocks the queue (no backfilling):
// that is what FIFO and SJF mean without extras, and it keeps each decision O(jobs
// started + 1) however long the queue is.
#pragma once

#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

#include "policies/placement.hpp"
#include "sim/policy.hpp"

namespace schedsim {

class OrderedQueuePolicy : public Policy {
 public:
  void on_job_queued(const SchedulerView& view, JobSlot job) override;
  void decide(const SchedulerView& view, ActionBatch& out) override;

 protected:
  // Smaller keys start first. Called once per job, when it is queued.
  virtual double key(const JobState& job) const = 0;

 private:
  // (key, arrival sequence, slot): a total order that never depends on slot reuse.
  std::set<std::tuple<double, std::uint64_t, JobSlot>> queue_;
  FreeDevices free_;
  std::vector<DeviceId> devices_;
};

}  // namespace schedsim
