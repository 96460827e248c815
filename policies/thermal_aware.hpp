// thermal-aware: a cooling set-point heuristic in front of any other policy (the `base`,
// default fifo). At every decision point the base decides first; then, for each
// datacenter, the policy picks the highest set-point (from `setpoints_c`, or the allowed
// range in `step_c` steps) at which the hottest busy device (the largest busy power / TDP
// among the devices jobs hold or are being started on) stays at or below the throttle
// threshold at the current outside temperature (sim/thermal.hpp): the least cooling power
// that does not slow a job. With no busy device it picks the highest set-point. Outside
// temperature steps are decision points, so the choice follows the weather. Without a
// thermal model in the run it is its base alone.
#pragma once

#include "policies/registry.hpp"

namespace schedsim {

PolicyInfo thermal_aware_policy_info();

}  // namespace schedsim
