#include "policies/las.hpp"

#include <algorithm>
#include <limits>

#include "policies/queue_policy.hpp"

namespace schedsim {
namespace {

struct LasOptions {
  bool discretized = true;
  // Queue boundaries in GPU-seconds of attained service, increasing: a job with less
  // service than thresholds[0] is in queue 0 (served first), and so on.
  std::vector<double> thresholds_gpu_s = {3600.0};
  // A queued job that has waited longer than this multiple of its executed time (since
  // its last promotion) goes back to the first queue; 0 turns the guard off.
  double starvation_multiple = 10.0;
};

class LasOrder : public QueueOrder {
 public:
  explicit LasOrder(LasOptions options) : options_(std::move(options)) {}

  double queued_key(const SchedulerView& view, JobSlot job) override {
    const auto index = static_cast<std::size_t>(job);
    if (offsets_gpu_s_.size() <= index) offsets_gpu_s_.resize(index + 1, 0.0);
    if (view.job(job).preemptions == 0) offsets_gpu_s_[index] = 0.0;  // a new job in a reused slot
    return key(service_gpu_s(view, job));
  }
  double running_key(const SchedulerView& view, JobSlot job) const override { return key(service_gpu_s(view, job)); }
  double promote_at_s(const SchedulerView& view, JobSlot job) const override {
    const double executed_s = service_gpu_s(view, job) / view.job(job).spec.num_gpus;
    if (options_.starvation_multiple <= 0 || executed_s <= 0) return std::numeric_limits<double>::infinity();
    return view.now().seconds() + options_.starvation_multiple * executed_s;
  }
  double promoted_key() const override { return 0.0; }
  void on_promoted(const SchedulerView& view, JobSlot job) override {
    offsets_gpu_s_[static_cast<std::size_t>(job)] = attained_service_gpu_s(view, view.job(job));
  }
  void write(YAML::Node& resolved) const override {
    resolved["discretized"] = options_.discretized;
    YAML::Node t(YAML::NodeType::Sequence);
    for (double v : options_.thresholds_gpu_s) t.push_back(v);
    resolved["thresholds_gpu_s"] = t;
    resolved["starvation_multiple"] = options_.starvation_multiple;
  }

  void snapshot(SnapshotArchive& ar) override { ar(offsets_gpu_s_); }
 private:
  // Attained service since the job's last promotion.
  double service_gpu_s(const SchedulerView& view, JobSlot job) const {
    const auto slot = static_cast<std::size_t>(job);
    const double offset = slot < offsets_gpu_s_.size() ? offsets_gpu_s_[slot] : 0.0;
    return std::max(0.0, attained_service_gpu_s(view, view.job(job)) - offset);
  }
  double key(double service_gpu_s) const {
    if (!options_.discretized) return service_gpu_s;
    const auto& t = options_.thresholds_gpu_s;
    return static_cast<double>(std::upper_bound(t.begin(), t.end(), service_gpu_s) - t.begin());
  }

  LasOptions options_;
  std::vector<double> offsets_gpu_s_;  // service before the last promotion, by slot
};

}  // namespace

OrderKind las_order() {
  const LasOptions d;
  return OrderKind{
      "las",
      {{"discretized", "true", "Tiresias' discretized 2D-LAS (queues by thresholds, FIFO inside a queue); false = continuous LAS"},
       {"thresholds_gpu_s", "[3600]", "increasing queue boundaries in GPU-seconds of attained service"},
       {"starvation_multiple", "10", "promote a queued job to the first queue after waiting this multiple of its executed time; 0 = off"}},
      true,
      [](const ConfigNode& config) {
        LasOptions o;
        if (auto v = config.maybe_child("discretized")) o.discretized = v->as_bool();
        if (auto v = config.maybe_child("thresholds_gpu_s")) {
          if (!v->is_sequence() || v->size() == 0) v->fail("expected a non-empty list of increasing GPU-second thresholds, e.g. [3600, 36000]");
          o.thresholds_gpu_s.clear();
          for (std::size_t i = 0; i < v->size(); ++i) {
            const double t = v->at(i).as_positive_double();
            if (!o.thresholds_gpu_s.empty() && t <= o.thresholds_gpu_s.back()) v->at(i).fail("thresholds must increase");
            o.thresholds_gpu_s.push_back(t);
          }
        }
        if (auto v = config.maybe_child("starvation_multiple")) o.starvation_multiple = v->as_nonnegative_double();
        return std::make_unique<LasOrder>(std::move(o));
      },
  };
}

PolicyInfo las_policy_info() {
  return queue_policy_info("las", "least attained service (GPUs x executed time) first, Tiresias-style discretized queues; preemptive", las_order());
}

}  // namespace schedsim
