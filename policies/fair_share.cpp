#include "policies/fair_share.hpp"

#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "policies/queue_policy.hpp"

namespace schedsim {
namespace {

struct FairShareOptions {
  bool by_group = false;                 // owner = JobSpec.group, else JobSpec.user
  std::map<std::string, double> weights;  // owner -> weight (default 1)
};

// Key = the owner's dominant share: GPUs its running jobs hold / all GPUs / its weight.
// The GPUs each owner holds are kept up to date as jobs start and stop (a job holds the
// GPUs it was started on until it finishes or its preemption completes), so a key costs
// O(1). Every job of an owner has the same key, so the order is grouped: the queue
// engine keeps one FIFO per owner and the owners ordered by share (O(log owners) per
// start).
class FairShareOrder : public QueueOrder {
 public:
  explicit FairShareOrder(FairShareOptions options) : options_(std::move(options)) {}

  double queued_key(const SchedulerView& view, JobSlot job) override { return group_key(group_of(view, job)); }
  double running_key(const SchedulerView& view, JobSlot job) const override { return group_key(owner_id(view.job(job))); }
  bool keys_change_while_queued() const override { return true; }
  bool grouped() const override { return true; }
  int group_of(const SchedulerView& view, JobSlot job) override {
    num_devices_ = view.cluster().num_devices();
    const std::string& o = owner(view.job(job));
    auto it = ids_.find(o);
    if (it != ids_.end()) return it->second;
    const int id = static_cast<int>(held_.size());
    ids_.emplace(o, id);
    held_.push_back(0.0);
    const auto w = options_.weights.find(o);
    weight_.push_back(w == options_.weights.end() ? 1.0 : w->second);
    return id;
  }
  double group_key(int group) const override {
    const auto g = static_cast<std::size_t>(group);
    return held_[g] / num_devices_ / weight_[g];
  }
  void on_started(const SchedulerView& view, JobSlot job) override {
    const auto s = static_cast<std::size_t>(job);
    if (counted_.size() <= s) counted_.resize(s + 1, {-1, 0.0});
    const int g = group_of(view, job);
    const double gpus = view.job(job).num_gpus();
    held_[static_cast<std::size_t>(g)] += gpus;
    counted_[s] = {g, gpus};
  }
  void on_stopped(const SchedulerView& /*view*/, JobSlot job) override {
    const auto s = static_cast<std::size_t>(job);
    if (s >= counted_.size() || counted_[s].first < 0) return;
    held_[static_cast<std::size_t>(counted_[s].first)] -= counted_[s].second;
    counted_[s] = {-1, 0.0};
  }
  void write(YAML::Node& resolved) const override {
    resolved["by"] = options_.by_group ? "group" : "user";
    YAML::Node w(YAML::NodeType::Map);
    for (const auto& [name, weight] : options_.weights) w[name] = weight;
    resolved["weights"] = w;
  }

  void snapshot(SnapshotArchive& ar) override { ar(num_devices_, ids_, held_, weight_, counted_); }
 private:
  const std::string& owner(const JobView& spec) const { return options_.by_group ? spec.group() : spec.user(); }
  // A running job's owner was seen when it was queued.
  int owner_id(const JobView& spec) const { return ids_.at(owner(spec)); }

  FairShareOptions options_;
  double num_devices_ = 1;
  std::unordered_map<std::string, int> ids_;  // owner -> id
  std::vector<double> held_;                  // by owner id: GPUs its running jobs hold (whole numbers: exact)
  std::vector<double> weight_;                // by owner id
  std::vector<std::pair<int, double>> counted_;  // by slot: (owner id, GPUs) while running, (-1, 0) otherwise
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
