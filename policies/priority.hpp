// Priority: larger JobSpec::priority first, optionally preemptive.
#pragma once

#include "policies/queue_order.hpp"
#include "policies/registry.hpp"

namespace schedsim {

OrderKind priority_order();
PolicyInfo priority_policy_info();

}  // namespace schedsim
