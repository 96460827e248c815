// FIFO: first come, first served, non-preemptive, first-fit placement, head-of-line
// blocking. The baseline every cluster scheduler is compared with.
#pragma once

#include "policies/registry.hpp"

namespace schedsim {

PolicyInfo fifo_policy_info();

}  // namespace schedsim
