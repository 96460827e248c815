#include "policies/sjf.hpp"

#include "policies/queue_policy.hpp"
#include "base/error.hpp"

namespace schedsim {
namespace {

enum class SjfKey { kAuto, kDuration, kEstimate };

class SjfOrder : public QueueOrder {
 public:
  SjfOrder(SjfKey by, std::string by_name) : by_(by), by_name_(std::move(by_name)) {}
  double queued_key(const SchedulerView& view, JobSlot job) override { return size_s(view.job(job)); }
  double running_key(const SchedulerView& view, JobSlot job) const override { return size_s(view.job(job)); }
  bool running_keys_only_improve() const override { return true; }
  void write(YAML::Node& resolved) const override { resolved["by"] = by_name_; }

  std::string needs_durations() const override { return "by: " + by_name_ + " (ranks jobs by their size)"; }
  std::string needs_oracle() const override { return by_ == SjfKey::kDuration ? "by: duration" : ""; }

 private:
  // Sizes from the information model: by: duration is the true duration (oracle only);
  // by: auto the model's size; by: estimate the estimate column under oracle (as before
  // the model existed) and the model's estimate otherwise.
  double size_s(const JobView& job) const {
    switch (by_) {
      case SjfKey::kDuration: return info_.total_work_s(job);
      case SjfKey::kAuto: return info_.estimated_total_s(job);
      case SjfKey::kEstimate:
        if (!info_.is_oracle()) return info_.estimated_total_s(job);
        if (!job.has_estimate()) {
          throw InputError("job '" + job.id() + "'", "has no runtime estimate, which sjf with by: estimate needs (add an estimate_s column, or use by: auto)");
        }
        return job.estimate_s();
    }
    return info_.total_work_s(job);
  }

  SjfKey by_;
  std::string by_name_;
};

}  // namespace

OrderKind sjf_order() {
  return OrderKind{
      "sjf",
      {{"by", "auto", "what 'shortest' means: auto (the size the scenario's information: gives; under oracle the estimate when a job has one, else its duration), duration (the true duration: information: oracle only), estimate"}},
      false,
      [](const ConfigNode& config) {
        std::string by = "auto";
        if (auto b = config.maybe_child("by")) by = b->as_choice({"auto", "duration", "estimate"});
        const SjfKey key = by == "auto" ? SjfKey::kAuto : by == "duration" ? SjfKey::kDuration : SjfKey::kEstimate;
        return std::make_unique<SjfOrder>(key, by);
      },
  };
}

PolicyInfo sjf_policy_info() {
  return queue_policy_info("sjf", "shortest job first by the size the scenario's information: gives (under oracle the estimate when known, else the duration); non-preemptive", sjf_order());
}

}  // namespace schedsim
