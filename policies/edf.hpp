// EDF: earliest deadline first by JobSpec::deadline_s; jobs without a deadline last.
#pragma once

#include "policies/queue_order.hpp"
#include "policies/registry.hpp"

namespace schedsim {

OrderKind edf_order();
PolicyInfo edf_policy_info();

}  // namespace schedsim
