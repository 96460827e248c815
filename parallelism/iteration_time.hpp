// Time of one training iteration under a parallelism plan: compute per pipeline stage
// from FLOPs (roofline with an efficiency), tensor-parallel collectives inside the
// NVLink domain, expert all-to-alls, context-parallel K/V exchange, pipeline
// point-to-point and the 1F1B bubble (p-1)/(m+p-1), data-parallel gradient
// reduce-scatter/all-gather over the network, the optimizer step, and overlap factors.
// One job alone on its devices: sharing links with other jobs is the kernel's (not
// modelled here). Formulas: docs/parallelism.md.
#pragma once

#include "parallelism/memory_model.hpp"
#include "parallelism/model_spec.hpp"
#include "parallelism/parallelism_plan.hpp"
#include "world/physics/accelerator_catalogue.hpp"
#include "world/physics/topology.hpp"

namespace schedsim {

// The bandwidths a job's collectives see, per device and direction.
struct ClusterNetwork {
  int devices_per_nvlink_domain = 8;
  int devices_per_rack = 256;
  double nvlink_Bps = 300e9;
  double network_Bps = 50e9;      // NIC bandwidth per device
  double oversubscription = 1.0;  // divides network_Bps for groups spanning racks
  double nvlink_latency_s = 1e-6;
  double network_latency_s = 5e-6;

  // From a cluster's `topology:` keys, the device type (NVLink bandwidth unless the
  // topology sets intra_node_bandwidth_gbps) and the devices per node.
  static ClusterNetwork from_topology(const TopologyConfig& topology, const AcceleratorSpec& device,
                                      int devices_per_node);
};

struct TimeOptions {
  // Achieved / peak dense bf16 FLOP/s of the GEMM-dominated compute (kernels, launch
  // gaps, non-matmul ops folded in). Calibrated once on Megatron-LM's table
  // (docs/parallelism.md), not per row.
  double compute_efficiency = 0.66;
  // Achieved bus bandwidth / link bandwidth of NCCL collectives.
  double comm_efficiency = 0.8;
  // Achieved / peak memory bandwidth of the element-wise kernels (layer norms, GeLU,
  // dropout, residual adds, and the softmax over the scores without FlashAttention).
  double memory_efficiency = 0.8;
  // Fractions of communication hidden behind compute, each in [0, 1].
  double tp_overlap = 0.0;  // Megatron's TP all-reduces block the next GEMM
  double dp_overlap = 0.5;  // gradient reduction during backward (bucketed)
  double pp_overlap = 0.0;
  double cp_overlap = 1.0;  // ring attention sends the next K/V chunk while computing
};

struct IterationBreakdown {
  // Per iteration on the slowest pipeline stage.
  double compute_s = 0;      // all micro-batches, forward + backward (+ recompute): matmuls
  double elementwise_s = 0;  // all micro-batches: memory-bound element-wise kernels
  double tp_comm_s = 0;      // exposed TP collectives
  double ep_comm_s = 0;      // MoE all-to-alls
  double cp_comm_s = 0;      // exposed context-parallel K/V exchange
  double pp_comm_s = 0;      // exposed stage-to-stage sends
  double bubble_s = 0;       // (p-1) micro-batch slots of idle pipeline
  double dp_comm_s = 0;      // gradient sync (before overlap)
  double dp_exposed_s = 0;   // the part not hidden behind compute
  // Bytes one device sends per iteration for the DP sync when its group leaves the NVLink
  // domain (0 inside one): what the kernel shares max-min with other jobs' traffic.
  double dp_network_bytes = 0;
  double optimizer_s = 0;    // Adam update, memory-bound
  double iteration_s = 0;
  double tokens_per_s = 0;
  double model_flops = 0;     // per iteration, 3 x forward (no recompute)
  double hardware_flops = 0;  // per iteration, with recomputation
  double mfu = 0;             // model FLOPs / (iteration time x devices x peak)
  double hfu = 0;
};

// Throws InputError when the plan is invalid for the model (ParallelismPlan::validate).
IterationBreakdown iteration_time(const ModelSpec& model, const ParallelismPlan& plan, const AcceleratorSpec& device,
                                  const ClusterNetwork& network, const TimeOptions& options = {});

}  // namespace schedsim
