// SJF: shortest job first by the job's estimate (or duration), non-preemptive.
#pragma once

#include "policies/queue_order.hpp"
#include "policies/registry.hpp"

namespace schedsim {

OrderKind sjf_order();
PolicyInfo sjf_policy_info();

}  // namespace schedsim
