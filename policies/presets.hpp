// Named compositions of a queue order, a placement and extras, after well-known
// schedulers (see docs/policies.md):
//   slurm-easy       fifo + EASY backfilling (Slurm's sched/backfill with one reservation)
//   slurm            multifactor priority + EASY backfilling + topology/tree placement
//   tiresias         discretized 2D-LAS + packed (consolidated) placement, preemptive
//   volcano-binpack  fifo gang scheduling + packed (binpack) placement
//   fgd              fifo + fragmentation gradient descent placement (fractional GPUs)
//   tiresias-dlas, tiresias-dlas-gpu, tiresias-fifo-yarn
//                    what Tiresias' own simulator runs for dlas, dlas-gpu and fifo with
//                    its yarn placement (docs/validation.md compares them per job)
// Each accepts the same keys as its order's own policy, with the preset's defaults.
#pragma once

#include "policies/registry.hpp"

namespace schedsim {

PolicyInfo slurm_easy_policy_info();
PolicyInfo slurm_policy_info();
PolicyInfo tiresias_policy_info();
PolicyInfo volcano_binpack_policy_info();
PolicyInfo fgd_policy_info();
PolicyInfo tiresias_dlas_policy_info();
PolicyInfo tiresias_dlas_gpu_policy_info();
PolicyInfo tiresias_fifo_yarn_policy_info();

}  // namespace schedsim
