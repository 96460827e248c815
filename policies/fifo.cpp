#include "policies/fifo.hpp"

#include "policies/queue_policy.hpp"

namespace schedsim {
namespace {

// Arrival order alone: the key ties and the arrival sequence decides.
class FifoOrder : public QueueOrder {
 public:
  double queued_key(const SchedulerView& /*view*/, JobSlot /*job*/) override { return 0.0; }
  double running_key(const SchedulerView& /*view*/, JobSlot /*job*/) const override { return 0.0; }
  bool running_keys_only_improve() const override { return true; }
};

}  // namespace

OrderKind fifo_order() {
  return OrderKind{"fifo", {}, false, [](const ConfigNode& /*config*/) { return std::make_unique<FifoOrder>(); }};
}

PolicyInfo fifo_policy_info() {
  return queue_policy_info("fifo", "first come, first served; non-preemptive; the head of the queue blocks until it fits", fifo_order());
}

}  // namespace schedsim
