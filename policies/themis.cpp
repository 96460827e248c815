#include "policies/themis.hpp"

#include "policies/queue_policy.hpp"

namespace schedsim {
namespace {

// rho = T_shared / T_independent with T_independent = the job's duration (its run time
// alone on the GPUs it asked for) and T_shared = (now - submit) + remaining work: the
// finish time it gets if it ran from now on without further waiting. The key is -rho, so
// the largest rho goes first. Queued keys grow with time, so they are recomputed at each
// decision.
class ThemisOrder : public QueueOrder {
 public:
  double queued_key(const SchedulerView& view, JobSlot job) override { return -rho(view, view.job(job)); }
  double running_key(const SchedulerView& view, JobSlot job) const override { return -rho(view, view.job(job)); }
  bool keys_change_while_queued() const override { return true; }
  std::string needs_durations() const override { return "its finish-time fairness (a job's run time alone)"; }

 private:
  // Run time alone and remaining work from the information model (true under oracle).
  double rho(const SchedulerView& view, const JobView& job) const {
    const double total_s = info_.total_work_s(job);
    const double independent_s = total_s > 0 ? total_s : 1e-9;
    const double shared_s = (view.now() - job.submit()).seconds() + info_.remaining_work_s(view, job);
    return shared_s / independent_s;
  }
};

}  // namespace

OrderKind themis_order() {
  return OrderKind{"themis", {}, false, [](const ConfigNode& /*config*/) { return std::make_unique<ThemisOrder>(); }};
}

PolicyInfo themis_policy_info() {
  return queue_policy_info("themis", "finish-time fairness (Themis, simplified): the job with the largest (waited + remaining) / duration first", themis_order());
}

}  // namespace schedsim
