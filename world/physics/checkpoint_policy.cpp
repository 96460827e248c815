#include "world/physics/checkpoint_policy.hpp"

#include <algorithm>
#include <cmath>

namespace schedsim {

double young_daly_interval_s(double cost_s, double mtbf_s) { return std::sqrt(2.0 * cost_s * mtbf_s); }

double checkpoint_interval_s(const CheckpointConfig& config, double cost_s, double failure_rate_per_s) {
  switch (config.policy) {
    case CheckpointConfig::Policy::kNone: return 0.0;
    case CheckpointConfig::Policy::kFixed: return config.interval_s;
    case CheckpointConfig::Policy::kYoungDaly:
      // No failures: nothing to protect against. Free checkpoints: the formula gives 0,
      // which would mean checkpointing continuously; one per second is as good.
      if (!(failure_rate_per_s > 0.0)) return 0.0;
      return std::max(1.0, young_daly_interval_s(cost_s, 1.0 / failure_rate_per_s));
  }
  return 0.0;
}

}  // namespace schedsim
