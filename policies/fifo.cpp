#include "policies/fifo.hpp"

#include "policies/ordered_queue.hpp"

namespace schedsim {
namespace {

class FifoPolicy : public OrderedQueuePolicy {
 public:
  std::string name() const override { return "fifo"; }

 protected:
  // Arrival order alone: the key ties and the arrival sequence decides.
  double key(const JobState& /*job*/) const override { return 0.0; }
};

}  // namespace

PolicyInfo fifo_policy_info() {
  return PolicyInfo{
      "fifo",
      "first come, first served; first-fit placement; the head of the queue blocks until it fits",
      {},
      [](const ConfigNode& config) {
        config.expect_map({"name"});
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = "fifo";
        return PolicyInstance{std::make_unique<FifoPolicy>(), resolved};
      },
  };
}

}  // namespace schedsim
