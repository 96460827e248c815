#include "policies/edf.hpp"

#include <cmath>
#include <limits>

#include "policies/queue_policy.hpp"

namespace schedsim {
namespace {

// The absolute deadline in seconds; jobs without one rank after every deadline.
class EdfOrder : public QueueOrder {
 public:
  double queued_key(const SchedulerView& view, JobSlot job) override { return deadline_s(view.job(job)); }
  double running_key(const SchedulerView& view, JobSlot job) const override { return deadline_s(view.job(job)); }
  bool running_keys_only_improve() const override { return true; }

 private:
  static double deadline_s(const JobView& job) {
    return std::isnan(job.deadline_s()) ? std::numeric_limits<double>::infinity() : job.deadline_s();
  }
};

}  // namespace

OrderKind edf_order() {
  return OrderKind{"edf", {}, false, [](const ConfigNode& /*config*/) { return std::make_unique<EdfOrder>(); }};
}

PolicyInfo edf_policy_info() {
  return queue_policy_info("edf", "earliest deadline first; jobs without a deadline last; non-preemptive by default", edf_order());
}

}  // namespace schedsim
