#include "policies/priority.hpp"

#include "policies/queue_policy.hpp"

namespace schedsim {
namespace {

// Larger priority first: the key is the negated priority.
class PriorityOrder : public QueueOrder {
 public:
  double queued_key(const SchedulerView& view, JobSlot job) override { return -view.job(job).priority(); }
  double running_key(const SchedulerView& view, JobSlot job) const override { return -view.job(job).priority(); }
  bool running_keys_only_improve() const override { return true; }
};

}  // namespace

OrderKind priority_order() {
  return OrderKind{"priority", {}, false, [](const ConfigNode& /*config*/) { return std::make_unique<PriorityOrder>(); }};
}

PolicyInfo priority_policy_info() {
  return queue_policy_info("priority", "larger JobSpec priority first (ties in arrival order); preemptive with preemption: true", priority_order());
}

}  // namespace schedsim
