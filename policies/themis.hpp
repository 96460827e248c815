// Themis (finish-time fairness, NSDI'20), simplified: jobs with the largest ratio of
// shared to independent finish time go first.
#pragma once

#include "policies/queue_order.hpp"
#include "policies/registry.hpp"

namespace schedsim {

OrderKind themis_order();
PolicyInfo themis_policy_info();

}  // namespace schedsim
