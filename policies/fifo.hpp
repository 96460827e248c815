// FIFO: first come, first served, non-preemptive, first-fit placement, head-of-line
// blocking. The baseline every cluster scheduler is compared with.
#pragma once

#include "policies/queue_order.hpp"
#include "policies/registry.hpp"

namespace schedsim {

OrderKind fifo_order();
PolicyInfo fifo_policy_info();

}  // namespace schedsim
