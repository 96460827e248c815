// The common shape of non-preemptive queue-order policies: pending jobs sorted by a key
// (smaller first, ties broken by arrival order), started head first with the configured
// placement until the head does not fit. The head blocks the queue (no backfilling):
// that is what FIFO and SJF mean without extras, and it keeps each decision O(jobs
// started + 1) however long the queue is.
#pragma once

#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

#include "policies/placement.hpp"
#include "policies/registry.hpp"
#include "sim/policy.hpp"
#include "sim/rng.hpp"

namespace schedsim {

// Options every queue-order policy shares.
struct QueuePolicyOptions {
  Placement placement = Placement::kFirstFit;
  std::uint64_t seed = 0;  // for random placement

  // Reads `placement` from `config` (other keys are the caller's to check).
  static QueuePolicyOptions parse(const ConfigNode& config, const PolicyContext& context);
  void write(YAML::Node& resolved) const;
};

class OrderedQueuePolicy : public Policy {
 public:
  explicit OrderedQueuePolicy(const QueuePolicyOptions& options) : options_(options), rng_(options.seed, "policy.placement") {}
  void on_job_queued(const SchedulerView& view, JobSlot job) override;
  void decide(const SchedulerView& view, ActionBatch& out) override;

 protected:
  // Smaller keys start first. Called once per job, when it is queued.
  virtual double key(const JobState& job) const = 0;

 private:
  // (key, arrival sequence, slot): a total order that never depends on slot reuse.
  std::set<std::tuple<double, std::uint64_t, JobSlot>> queue_;
  bool place(const SchedulerView& view, const JobSpec& job, std::vector<DeviceId>& out);

  QueuePolicyOptions options_;
  Rng rng_;
  FreeDevices free_;
  const std::vector<int>* node_group_ = nullptr;
  std::vector<DeviceId> devices_;
};

}  // namespace schedsim
