// LAS: least attained service first (Tiresias' 2D-LAS when discretized): attained
// service is GPUs x executed time; discretized queues with thresholds and a starvation
// guard.
#pragma once

#include "policies/queue_order.hpp"
#include "policies/registry.hpp"

namespace schedsim {

OrderKind las_order();
PolicyInfo las_policy_info();

}  // namespace schedsim
