// The planner: the fastest parallelism plan that fits, for a model, a device type, a
// device count and a global batch; what Megatron-LM users search by hand. It enumerates
// TP in powers of two within the NVLink domain, PP dividing the layers, DP the rest (EP
// dividing DP for MoE models), micro-batch sizes, sharding stages and recomputation
// modes, drops the plans that do not fit the device's memory and keeps the one with the
// shortest iteration time (ties: the first in enumeration order, so the result is
// deterministic).
#pragma once

#include <string>
#include <vector>

#include "parallelism/iteration_time.hpp"
#include "parallelism/memory_model.hpp"

namespace schedsim {

struct PlannerOptions {
  std::vector<int> micro_batches{1, 2, 4, 8};
  std::vector<Sharding> shardings{Sharding::kNone, Sharding::kZero1, Sharding::kZero2, Sharding::kZero3};
  std::vector<Recompute> recomputes{Recompute::kNone, Recompute::kSelective, Recompute::kFull};
  // Degrees to try. Empty tensors: the powers of two up to the NVLink domain. Empty
  // pipelines: the divisors of the layer count (a degree given here need not divide it:
  // the last stage then has fewer layers).
  std::vector<int> tensors;
  std::vector<int> pipelines;
  std::vector<int> contexts{1};  // context-parallel degrees (long sequences: add 2, 4, ...)
  std::vector<int> virtual_stages{1, 2, 3, 4};  // interleaving, when it divides the layers per stage
  bool fused_attention = true;   // ParallelismPlan::fused_attention of every plan
  bool sequence_parallel = true; // ParallelismPlan::sequence_parallel of every plan
  MemoryOptions memory;
  TimeOptions time;
};

struct PlanChoice {
  ParallelismPlan plan;
  MemoryBreakdown memory;
  IterationBreakdown time;
  int plans_evaluated = 0;  // valid plans whose memory was computed
  int plans_fitting = 0;
};

// Throws InputError when no plan exists (the device count has no valid split, or the
// global batch is not divisible) or none fits, saying how much the leanest plan needs.
PlanChoice plan_training(const ModelSpec& model, const AcceleratorSpec& device, const ClusterNetwork& network,
                         int num_devices, int global_batch, const PlannerOptions& options = {});

}  // namespace schedsim
