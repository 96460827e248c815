#include "parallelism/planner.hpp"

#include <cstdio>
#include <limits>

#include "base/error.hpp"

namespace schedsim {

namespace {

std::string gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  return buf;
}

bool divides(int a, int b) { return a > 0 && b % a == 0; }

}  // namespace

PlanChoice plan_training(const ModelSpec& model, const AcceleratorSpec& device, const ClusterNetwork& network,
                         int num_devices, int global_batch, const PlannerOptions& options) {
  model.validate();
  const std::string where = "planner: " + model.name + " on " + std::to_string(num_devices) + " x " + device.name +
                            ", global batch " + std::to_string(global_batch);
  if (num_devices < 1) throw InputError(where, "the device count must be >= 1");
  if (global_batch < 1) throw InputError(where, "the global batch must be >= 1");

  PlanChoice best;
  double best_s = std::numeric_limits<double>::infinity();
  ParallelismPlan leanest;
  MemoryBreakdown leanest_memory;
  double leanest_bytes = std::numeric_limits<double>::infinity();

  auto consider = [&](const ParallelismPlan& plan) {
    ++best.plans_evaluated;
    const MemoryBreakdown mem = memory_per_device(model, plan, options.memory);
    if (mem.total_bytes() < leanest_bytes) {
      leanest_bytes = mem.total_bytes();
      leanest = plan;
      leanest_memory = mem;
    }
    if (mem.total_bytes() > device.memory_bytes) return;
    ++best.plans_fitting;
    const IterationBreakdown time = iteration_time(model, plan, device, network, options.time);
    if (time.iteration_s < best_s) {  // strict: the first of equal plans stays
      best_s = time.iteration_s;
      best.plan = plan;
      best.memory = mem;
      best.time = time;
    }
  };

  std::vector<int> tensors = options.tensors;
  if (tensors.empty())
    for (int tp = 1; tp <= network.devices_per_nvlink_domain && tp <= num_devices; tp *= 2) tensors.push_back(tp);
  std::vector<int> pipelines = options.pipelines;
  if (pipelines.empty())
    for (int pp = 1; pp <= model.num_layers; ++pp)
      if (divides(pp, model.num_layers)) pipelines.push_back(pp);

  ParallelismPlan plan;
  plan.global_batch = global_batch;
  plan.fused_attention = options.fused_attention;
  plan.sequence_parallel = options.sequence_parallel;
  for (int tp : tensors) {
    if (!divides(tp, model.num_heads) || !divides(tp, model.ffn_hidden_size)) continue;
    plan.tensor = tp;
    for (int cp : options.contexts) {
      if (!divides(cp, model.seq_length) || !divides(tp * cp, num_devices)) continue;
      plan.context = cp;
      for (int pp : pipelines) {
        if (pp < 1 || pp > model.num_layers || !divides(tp * cp * pp, num_devices)) continue;
        plan.pipeline = pp;
        plan.data = num_devices / (tp * cp * pp);
        for (int ep = 1; ep <= model.num_experts; ++ep) {
          if (!divides(ep, model.num_experts) || !divides(ep, plan.data)) continue;
          plan.expert = ep;
          for (int mb : options.micro_batches) {
            if (!divides(plan.data * mb, global_batch)) continue;
            plan.micro_batch = mb;
            const int micro_batches = global_batch / (plan.data * mb);
            for (int vp : options.virtual_stages) {
              const int stage_layers = (model.num_layers + pp - 1) / pp;
              if (vp > 1 && (pp == 1 || stage_layers % vp != 0 || micro_batches % pp != 0)) continue;
              plan.virtual_stages = vp;
              for (Sharding sharding : options.shardings) {
                if (plan.data == 1 && sharding != Sharding::kNone) continue;  // nothing to shard over
                plan.sharding = sharding;
                for (Recompute recompute : options.recomputes) {
                  plan.recompute = recompute;
                  consider(plan);
                }
              }
            }
          }
        }
      }
    }
  }
  if (best.plans_evaluated == 0)
    throw InputError(where, "no parallelism plan splits " + std::to_string(num_devices) +
                                " devices and the batch (TP a power of two up to the NVLink domain of " +
                                std::to_string(network.devices_per_nvlink_domain) +
                                " dividing the heads, PP dividing the layers, the global batch a multiple of DP x micro-batch)");
  if (best.plans_fitting == 0)
    throw InputError(where, "no plan fits " + gb(device.memory_bytes) + " per device; the leanest of " +
                                std::to_string(best.plans_evaluated) + " (" + leanest.describe() + ") needs " +
                                gb(leanest_bytes) + " (" + leanest_memory.describe() + "); use more devices or a larger device type");
  return best;
}

}  // namespace schedsim
