// Memory per device of a training job under a parallelism plan: parameters, gradients
// and Adam optimizer states (mixed precision, sharded by the ZeRO stage), activations
// (Korthikanti et al. 2022, by recomputation mode and the micro-batches in flight under
// 1F1B) and communication buffers. Formulas and defaults: docs/parallelism.md.
#pragma once

#include <string>

#include "parallelism/model_spec.hpp"
#include "parallelism/parallelism_plan.hpp"
#include "world/physics/accelerator_catalogue.hpp"

namespace schedsim {

struct MemoryOptions {
  // Mixed-precision Adam as counted by the ZeRO paper (Rajbhandari et al. 2020): bf16
  // weights and gradients, fp32 master weights + momentum + variance.
  double weight_bytes_per_param = 2;
  double gradient_bytes_per_param = 2;
  double optimizer_bytes_per_param = 12;
  // CUDA context, NCCL workspaces and allocator fragmentation, per device.
  double runtime_reserve_bytes = 2e9;
  // Data-parallel gradient buckets in flight (PyTorch DDP / Megatron default 25M
  // elements, fp32, two buckets).
  double dp_bucket_bytes = 2 * 25e6 * 4;
};

struct MemoryBreakdown {
  double parameters_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double buffers_bytes = 0;
  const char* stage = "";  // "first" or "last": the pipeline stage these numbers are for
  double total_bytes() const {
    return parameters_bytes + gradients_bytes + optimizer_bytes + activations_bytes + buffers_bytes;
  }
  // "parameters 13.5 GB, gradients 13.5 GB, optimizer states 81.0 GB, activations 5.2 GB, buffers 2.3 GB"
  std::string describe() const;
};

// Activation bytes one device stores for one layer and one micro-batch (no
// recomputation: Korthikanti et al. eq. 1-5 generalised to GQA and gated MLPs).
double activation_bytes_per_layer(const ModelSpec& model, const ParallelismPlan& plan);

// The memory of the heaviest pipeline stage (the first holds min(pp, micro-batches)
// micro-batches of activations; the last holds the output layer and the logits).
MemoryBreakdown memory_per_device(const ModelSpec& model, const ParallelismPlan& plan,
                                  const MemoryOptions& options = {});

// Throws InputError when the plan does not fit the device:
// "plan tp=1 pp=1 ... for LLaMA-2-7B on 8 x A100-80GB: out of memory: needs 118.4 GB per
// device (parameters ..., ...) but A100-80GB has 80.0 GB".
void check_fits(const ModelSpec& model, const ParallelismPlan& plan, const AcceleratorSpec& device,
                const MemoryOptions& options = {});

}  // namespace schedsim
