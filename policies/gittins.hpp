// Gittins index (Tiresias' scheduling for unknown durations): jobs with the highest
// Gittins index of their attained service (GPUs x executed time) under an empirical
// service distribution go first; preemptive by default.
#pragma once

#include "policies/queue_order.hpp"
#include "policies/registry.hpp"

namespace schedsim {

OrderKind gittins_order();
PolicyInfo gittins_policy_info();

}  // namespace schedsim
