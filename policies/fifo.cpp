#include "policies/fifo.hpp"

#include "policies/ordered_queue.hpp"

namespace schedsim {
namespace {

class FifoPolicy : public OrderedQueuePolicy {
 public:
  using OrderedQueuePolicy::OrderedQueuePolicy;
  std::string name() const override { return "fifo"; }

 protected:
  // Arrival order alone: the key ties and the arrival sequence decides.
  double key(const JobState& /*job*/) const override { return 0.0; }
};

}  // namespace

PolicyInfo fifo_policy_info() {
  return PolicyInfo{
      "fifo",
      "first come, first served; non-preemptive; the head of the queue blocks until it fits",
      {{"placement", "first_fit", std::string("where a job goes: ") + kPlacementNames}},
      [](const ConfigNode& config, const PolicyContext& context) {
        config.expect_map({"name", "placement"});
        const QueuePolicyOptions options = QueuePolicyOptions::parse(config, context);
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = "fifo";
        options.write(resolved);
        return PolicyInstance{std::make_unique<FifoPolicy>(options), resolved};
      },
  };
}

}  // namespace schedsim
