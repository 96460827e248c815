#include "policies/sjf.hpp"

#include "policies/ordered_queue.hpp"
#include "sim/error.hpp"

namespace schedsim {
namespace {

enum class SjfKey { kAuto, kDuration, kEstimate };

class SjfPolicy : public OrderedQueuePolicy {
 public:
  SjfPolicy(SjfKey by, const QueuePolicyOptions& options) : OrderedQueuePolicy(options), by_(by) {}
  std::string name() const override { return "sjf"; }

 protected:
  double key(const JobState& job) const override {
    switch (by_) {
      case SjfKey::kDuration: return job.spec.duration_s;
      case SjfKey::kAuto: return job.spec.has_estimate() ? job.spec.estimate_s : job.spec.duration_s;
      case SjfKey::kEstimate:
        if (!job.spec.has_estimate()) {
          throw InputError("job '" + job.spec.id + "'", "has no runtime estimate, which sjf with by: estimate needs (add an estimate_s column, or use by: auto)");
        }
        return job.spec.estimate_s;
    }
    return job.spec.duration_s;
  }

 private:
  SjfKey by_;
};

}  // namespace

PolicyInfo sjf_policy_info() {
  return PolicyInfo{
      "sjf",
      "shortest job first (by estimate when known, else duration); non-preemptive",
      {{"by", "auto", "what 'shortest' means: auto (the job's estimate when it has one, else its duration), duration, estimate"},
       {"placement", "first_fit", std::string("where a job goes: ") + kPlacementNames}},
      [](const ConfigNode& config, const PolicyContext& context) {
        config.expect_map({"name", "by", "placement"});
        const QueuePolicyOptions options = QueuePolicyOptions::parse(config, context);
        std::string by = "auto";
        if (auto b = config.maybe_child("by")) by = b->as_choice({"auto", "duration", "estimate"});
        const SjfKey key = by == "auto" ? SjfKey::kAuto : by == "duration" ? SjfKey::kDuration : SjfKey::kEstimate;
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = "sjf";
        resolved["by"] = by;
        options.write(resolved);
        return PolicyInstance{std::make_unique<SjfPolicy>(key, options), resolved};
      },
  };
}

}  // namespace schedsim
