#include "policies/ordered_queue.hpp"

namespace schedsim {

void OrderedQueuePolicy::on_job_queued(const SchedulerView& view, JobSlot job) {
  const JobState& j = view.job(job);
  queue_.emplace(key(j), j.arrival_seq, job);
}

void OrderedQueuePolicy::decide(const SchedulerView& view, ActionBatch& out) {
  if (queue_.empty()) return;
  free_.reset(view.cluster_state());
  while (!queue_.empty()) {
    const JobSlot slot = std::get<2>(*queue_.begin());
    devices_.clear();
    if (!free_.first_fit(view.job(slot).spec.num_gpus, devices_)) break;
    out.start(slot, devices_);
    queue_.erase(queue_.begin());
  }
}

}  // namespace schedsim
