#include "policies/srtf.hpp"

#include "policies/queue_policy.hpp"

namespace schedsim {
namespace {

// Remaining work in work-seconds, as the information model knows it (the truth under
// oracle, max(estimate - attained, floor) otherwise): fixed while queued, never growing
// while running.
class SrtfOrder : public QueueOrder {
 public:
  double queued_key(const SchedulerView& view, JobSlot job) override { return info_.remaining_work_s(view, view.job(job)); }
  double running_key(const SchedulerView& view, JobSlot job) const override { return info_.remaining_work_s(view, view.job(job)); }
  bool running_keys_only_improve() const override { return true; }
  std::string needs_durations() const override { return "its order (shortest remaining time)"; }
};

}  // namespace

OrderKind srtf_order() {
  return OrderKind{"srtf", {}, true, [](const ConfigNode& /*config*/) { return std::make_unique<SrtfOrder>(); }};
}

PolicyInfo srtf_policy_info() {
  return queue_policy_info("srtf", "shortest remaining time first; preempts the longest-remaining running jobs for a shorter queued one", srtf_order());
}

}  // namespace schedsim
