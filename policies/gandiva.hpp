// Gandiva-style time slicing (Xiao et al., OSDI'18), simplified: a FIFO queue with
// head-of-line blocking; when the head does not fit, running jobs that have used a full
// quantum are preempted, oldest slice first, and go to the back of the queue (round robin).
// Simplified: no suspend/resume in GPU memory (a slice ends with the checkpoint save the
// kernel charges, and the next start pays the restore), no migration or packing, no
// introspective profiling. The kernel calls policies only at events, so a slice ends at
// the first decision point (arrival, completion or checkpoint end) after its quantum.
#pragma once

#include "policies/registry.hpp"

namespace schedsim {

PolicyInfo gandiva_policy_info();

}  // namespace schedsim
