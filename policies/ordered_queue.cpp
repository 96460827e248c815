#include "policies/ordered_queue.hpp"

namespace schedsim {

QueuePolicyOptions QueuePolicyOptions::parse(const ConfigNode& config, const PolicyContext& context) {
  QueuePolicyOptions o;
  o.seed = context.seed;
  if (auto p = config.maybe_child("placement")) o.placement = parse_placement(p->as_choice({"first_fit", "random", "packed", "spread"}));
  return o;
}

void QueuePolicyOptions::write(YAML::Node& resolved) const { resolved["placement"] = to_string(placement); }

bool OrderedQueuePolicy::place(int n, std::vector<DeviceId>& out) {
  switch (options_.placement) {
    case Placement::kFirstFit: return free_.first_fit(n, out);
    case Placement::kRandom: return free_.random(n, rng_, out);
    case Placement::kPacked: return free_.packed(n, node_group_, out);
    case Placement::kSpread: return free_.spread(n, out);
  }
  return false;
}

void OrderedQueuePolicy::on_job_queued(const SchedulerView& view, JobSlot job) {
  const JobState& j = view.job(job);
  queue_.emplace(key(j), j.arrival_seq, job);
}

void OrderedQueuePolicy::decide(const SchedulerView& view, ActionBatch& out) {
  if (queue_.empty()) return;
  free_.reset(view.cluster_state());
  node_group_ = view.node_group();
  while (!queue_.empty()) {
    const JobSlot slot = std::get<2>(*queue_.begin());
    devices_.clear();
    if (!place(view.job(slot).spec.num_gpus, devices_)) break;
    out.start(slot, devices_);
    queue_.erase(queue_.begin());
  }
}

}  // namespace schedsim
