// Goodput-driven elastic scaling (the idea of Optimus, EuroSys'18, and Pollux, OSDI'21,
// much simplified): FIFO admission with head-of-line blocking; elastic jobs start on
// min_gpus, rigid ones on num_gpus. When nothing waits, spare devices go to running
// elastic jobs, one resize per job, to the job with the largest goodput gain per added
// device, and only when the resize pays for its checkpoint (save + restore) within the
// job's remaining time. When the head of the queue is blocked, elastic jobs shrink back
// toward min_gpus (smallest loss per device first) to admit it. At most `max_resizes`
// resizes per decision. See docs/policies.md.
#pragma once

#include "policies/registry.hpp"

namespace schedsim {

PolicyInfo elastic_goodput_policy_info();

}  // namespace schedsim
