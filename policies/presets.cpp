#include "policies/presets.hpp"

#include "policies/fifo.hpp"
#include "policies/las.hpp"
#include "policies/queue_policy.hpp"

namespace schedsim {

PolicyInfo slurm_easy_policy_info() {
  QueuePolicyOptions d;
  d.backfill = Backfill::kEasy;
  return queue_policy_info("slurm-easy", "Slurm-style FIFO with EASY backfilling: later jobs start when they do not delay the head's reservation", fifo_order(), d);
}

PolicyInfo tiresias_policy_info() {
  QueuePolicyOptions d;
  d.placement = Placement::kPacked;
  return queue_policy_info("tiresias", "Tiresias: discretized 2D-LAS (GPUs x time) with starvation guard, consolidated placement, preemptive", las_order(), d);
}

PolicyInfo volcano_binpack_policy_info() {
  QueuePolicyOptions d;
  d.placement = Placement::kPacked;
  return queue_policy_info("volcano-binpack", "Volcano-style gang scheduling in FIFO order with binpack placement (fullest nodes first)", fifo_order(), d);
}

PolicyInfo fgd_policy_info() {
  QueuePolicyOptions d;
  d.placement = Placement::kFgd;
  return queue_policy_info("fgd", "FIFO with fragmentation gradient descent placement for fractional GPU requests (Alibaba, ATC'23)", fifo_order(), d);
}

}  // namespace schedsim
