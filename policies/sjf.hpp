// SJF: shortest job first, non-preemptive, first-fit placement, head-of-line blocking.
// Orders by the job's runtime estimate when it has one (`by: auto`), by the true
// duration (`by: duration`, the clairvoyant bound), or by the estimate only
// (`by: estimate`, an error for jobs without one).
#pragma once

#include "policies/registry.hpp"

namespace schedsim {

PolicyInfo sjf_policy_info();

}  // namespace schedsim
