#include "policies/ordered_queue.hpp"

namespace schedsim {

QueuePolicyOptions QueuePolicyOptions::parse(const ConfigNode& config, const PolicyContext& context) {
  QueuePolicyOptions o;
  o.seed = context.seed;
  if (auto p = config.maybe_child("placement")) o.placement = parse_placement(p->as_choice({"first_fit", "random", "packed", "spread", "fastest_type"}));
  return o;
}

void QueuePolicyOptions::write(YAML::Node& resolved) const { resolved["placement"] = to_string(placement); }

bool OrderedQueuePolicy::place(const SchedulerView& view, const JobSpec& job, std::vector<DeviceId>& out) {
  const int n = job.num_gpus;
  const PhysicsModel* physics = view.physics();
  if (physics && (options_.placement == Placement::kFastestType || view.cluster().device_types().size() > 1)) {
    // Device types ordered by the job's speed on them (fastest first, ties by index);
    // types where it cannot run (memory) are never used. The agnostic placements keep
    // type order; fastest_type sorts by speed.
    const int types = static_cast<int>(view.cluster().device_types().size());
    std::vector<std::pair<double, int>> order;
    for (int t = 0; t < types; ++t) {
      const double r = physics->estimated_rate(job, t, n);
      if (r > 0) order.emplace_back(options_.placement == Placement::kFastestType ? -r : 0.0, t);
    }
    std::stable_sort(order.begin(), order.end());
    if (options_.placement == Placement::kFastestType) {
      // Greedy: the fastest type that has room now, consolidated within it.
      for (const auto& [neg_rate, t] : order) {
        if (free_.packed(n, node_group_, out, t)) return true;
      }
      return false;
    }
    if (static_cast<int>(order.size()) < types) {  // some types cannot host the job
      for (const auto& [unused, t] : order) {
        if (free_.packed(n, node_group_, out, t)) return true;
      }
      return false;
    }
  }
  switch (options_.placement) {
    case Placement::kFirstFit: return free_.first_fit(n, out);
    case Placement::kRandom: return free_.random(n, rng_, out);
    case Placement::kFastestType:  // without physics every type is equally fast
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
    if (!place(view, view.job(slot).spec, devices_)) break;
    out.start(slot, devices_);
    queue_.erase(queue_.begin());
  }
}

}  // namespace schedsim
