#include "policies/srtf.hpp"

#include "policies/queue_policy.hpp"

namespace schedsim {
namespace {

// Remaining work in work-seconds: fixed while queued, shrinking while running.
class SrtfOrder : public QueueOrder {
 public:
  double queued_key(const SchedulerView& view, JobSlot job) override { return remaining_work_now_s(view, view.job(job)); }
  double running_key(const SchedulerView& view, JobSlot job) const override { return remaining_work_now_s(view, view.job(job)); }
  bool running_keys_only_improve() const override { return true; }
};

}  // namespace

OrderKind srtf_order() {
  return OrderKind{"srtf", {}, true, [](const ConfigNode& /*config*/) { return std::make_unique<SrtfOrder>(); }};
}

PolicyInfo srtf_policy_info() {
  return queue_policy_info("srtf", "shortest remaining time first; preempts the longest-remaining running jobs for a shorter queued one", srtf_order());
}

}  // namespace schedsim
