// SRTF: shortest remaining time first, preemptive (SRPT for one device).
#pragma once

#include "policies/queue_order.hpp"
#include "policies/registry.hpp"

namespace schedsim {

OrderKind srtf_order();
PolicyInfo srtf_policy_info();

}  // namespace schedsim
