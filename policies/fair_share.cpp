#include "policies/fair_share.hpp"

#include <map>
#include <unordered_map>

#include "policies/queue_policy.hpp"

namespace schedsim {
namespace {

struct FairShareOptions {
  bool by_group = false;                 // owner = JobSpec.group, else JobSpec.user
  std::map<std::string, double> weights;  // owner -> weight (default 1)
};

// Key = the owner's dominant share: GPUs its running jobs hold / all GPUs / its weight.
// The GPUs each owner holds are counted from the running jobs at each decision (O(running))
// and advanced as the decision starts jobs.
class FairShareOrder : public QueueOrder {
 public:
  explicit FairShareOrder(FairShareOptions options) : options_(std::move(options)) {}

  double queued_key(const SchedulerView& view, JobSlot job) override { return share(view, view.job(job).spec); }
  double running_key(const SchedulerView& view, JobSlot job) const override { return share(view, view.job(job).spec); }
  bool keys_change_while_queued() const override { return true; }
  void on_decision(const SchedulerView& view) override {
    held_.clear();
    for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
      const JobState& r = view.job(s);
      held_[owner(r.spec)] += static_cast<double>(r.devices.size());
    }
  }
  void on_started(const SchedulerView& view, JobSlot job) override { held_[owner(view.job(job).spec)] += view.job(job).spec.num_gpus; }
  void write(YAML::Node& resolved) const override {
    resolved["by"] = options_.by_group ? "group" : "user";
    YAML::Node w(YAML::NodeType::Map);
    for (const auto& [name, weight] : options_.weights) w[name] = weight;
    resolved["weights"] = w;
  }

 private:
  const std::string& owner(const JobSpec& spec) const { return options_.by_group ? spec.group : spec.user; }
  double share(const SchedulerView& view, const JobSpec& spec) const {
    const std::string& o = owner(spec);
    const auto h = held_.find(o);
    const double held = h == held_.end() ? 0.0 : h->second;
    const auto w = options_.weights.find(o);
    const double weight = w == options_.weights.end() ? 1.0 : w->second;
    return held / view.cluster().num_devices() / weight;
  }

  FairShareOptions options_;
  std::unordered_map<std::string, double> held_;  // owner -> GPUs held now
};

}  // namespace

OrderKind fair_share_order() {
  return OrderKind{
      "fair-share",
      {{"by", "user", "owner whose share is balanced: user or group (JobSpec.user / JobSpec.group)"},
       {"weights", "{}", "owner -> positive weight, e.g. {alice: 2}: shares are divided by it (default 1)"}},
      false,
      [](const ConfigNode& config) {
        FairShareOptions o;
        if (auto v = config.maybe_child("by")) o.by_group = v->as_choice({"user", "group"}) == "group";
        if (auto v = config.maybe_child("weights")) {
          if (!v->is_map()) v->fail("expected a map from owner to weight, e.g. {alice: 2}");
          for (const auto& k : v->keys()) o.weights[k] = v->child(k).as_positive_double();
        }
        return std::make_unique<FairShareOrder>(std::move(o));
      },
  };
}

PolicyInfo fair_share_policy_info() {
  return queue_policy_info("fair-share", "DRF-style fair share: jobs of the user (or group) holding the smallest weighted share of GPUs first", fair_share_order());
}

}  // namespace schedsim
