// Singularity-style scheduling (Shukla et al., "Singularity: Planet-Scale, Preemptive and
// Elastic Scheduling of AI Workloads", arXiv:2202.07848, Microsoft): every job is
// preemptible, migratable and resizable, transparently to the user. Composed from the
// kernel's mechanisms, in this order at each decision (docs/policies.md#singularity):
//  1. admission in priority order (larger JobSpec::priority first, then arrival),
//     work-conserving, compact placement (compact_pick); an elastic job that does not
//     fit at num_gpus starts on as many as fit, down to min_gpus;
//  2. for the first job that does not fit: shrink running elastic jobs of no higher priority toward
//     min_gpus (kMove; lower priority, then latest arrival first), then preempt running jobs of
//     strictly lower priority (kPreempt; lowest priority, then latest arrival first);
//     while their checkpoints are saved, later jobs take only free devices it will not need;
//  3. when no job is blocked: migrate running jobs onto fewer nodes (kMove) when the
//     consolidated rate (PhysicsModel::estimated_rate) beats the current one and the time
//     saved pays for the move's checkpoint save + restore;
//  4. when nothing waits: grow running elastic jobs toward max_gpus, under the same rule.
// At most max_moves resizes and migrations per decision. "Transparent" is not free: the
// kernel charges each preemption the checkpoint save and the next start its restore, and
// each move save + restore (the scenario's physics: checkpoint size / storage bandwidth).
#pragma once

#include "policies/registry.hpp"

namespace schedsim {

struct SingularityOptions {
  bool preemption = true;
  bool migrate = true;
  bool elastic = true;
  int max_moves = 4;
  int depth = 200;
};

PolicyInfo singularity_policy_info();

}  // namespace schedsim
