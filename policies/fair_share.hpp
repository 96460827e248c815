// Fair share (DRF with GPUs as the one resource): jobs of the owner (user or group) with
// the smallest weighted share of the cluster's GPUs go first.
#pragma once

#include "policies/queue_order.hpp"
#include "policies/registry.hpp"

namespace schedsim {

OrderKind fair_share_order();
PolicyInfo fair_share_policy_info();

}  // namespace schedsim
