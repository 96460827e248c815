#include "parallelism/iteration_time.hpp"

#include <algorithm>

#include "world/physics/comm_model.hpp"
#include "base/error.hpp"

namespace schedsim {

ClusterNetwork ClusterNetwork::from_topology(const TopologyConfig& topology, const AcceleratorSpec& device,
                                             int devices_per_node) {
  ClusterNetwork n;
  n.devices_per_nvlink_domain = devices_per_node * topology.nodes_per_nvlink_domain;
  n.devices_per_rack = devices_per_node * topology.nodes_per_rack;
  n.nvlink_Bps = topology.intra_node_bandwidth_gbps ? *topology.intra_node_bandwidth_gbps * 1e9
                                                    : device.intra_node_link_bytes_per_s;
  const int nics = topology.nics_per_node.value_or(devices_per_node);
  n.network_Bps = topology.nic_bandwidth_gbps * 1e9 / 8.0 * nics / devices_per_node;
  n.oversubscription = topology.oversubscription;
  n.nvlink_latency_s = topology.nvlink_latency_us * 1e-6;
  n.network_latency_s = topology.network_latency_us * 1e-6;
  return n;
}

namespace {

struct Channel {
  double bandwidth_Bps;
  double latency_s;
};

// A group of `span` consecutive devices (in Megatron's tp-cp-dp-pp order) talks over
// NVLink when it fits one domain, else over the network.
Channel channel(const ClusterNetwork& net, const TimeOptions& o, int span, int job_devices) {
  if (span <= net.devices_per_nvlink_domain) return {net.nvlink_Bps * o.comm_efficiency, net.nvlink_latency_s};
  const double oversub = job_devices > net.devices_per_rack ? net.oversubscription : 1.0;
  return {net.network_Bps * o.comm_efficiency / oversub, net.network_latency_s};
}

void check_fraction(const char* name, double v) {
  if (!(v >= 0 && v <= 1)) throw InputError(std::string("parallelism time option ") + name, "must be in [0, 1], got " + std::to_string(v));
}

// An efficiency divides a time: 0 would make it infinite.
void check_efficiency(const char* name, double v) {
  if (!(v > 0 && v <= 1)) throw InputError(std::string("parallelism time option ") + name, "must be in (0, 1], got " + std::to_string(v));
}

}  // namespace

IterationBreakdown iteration_time(const ModelSpec& model, const ParallelismPlan& plan, const AcceleratorSpec& device,
                                  const ClusterNetwork& net, const TimeOptions& o) {
  plan.validate(model);
  check_fraction("tp_overlap", o.tp_overlap);
  check_fraction("dp_overlap", o.dp_overlap);
  check_fraction("pp_overlap", o.pp_overlap);
  check_fraction("cp_overlap", o.cp_overlap);
  check_efficiency("compute_efficiency", o.compute_efficiency);
  check_efficiency("comm_efficiency", o.comm_efficiency);
  check_efficiency("memory_efficiency", o.memory_efficiency);

  const int devices = plan.num_devices();
  const double t = plan.tensor, p = plan.pipeline, cp = plan.context;
  const double m = plan.num_micro_batches();
  const double tokens_mb = static_cast<double>(plan.micro_batch) * model.seq_length;
  const double local_tokens_mb = tokens_mb / cp;
  const double h = model.hidden_size;
  const bool sp_on = plan.sequence_parallel && plan.tensor > 1;

  // FLOPs per layer per token: forward, backward (2 x forward), plus what is recomputed.
  const double fwd = model.forward_flops_per_token_layer();
  double layer_train = 3 * fwd;
  if (plan.recompute == Recompute::kFull) layer_train += fwd;
  if (plan.recompute == Recompute::kSelective || (plan.fused_attention && plan.recompute == Recompute::kNone))
    layer_train += model.attention_score_flops_per_token_layer();
  const double logits_train = 3 * model.forward_flops_per_token_logits();

  // The slowest stage: every stage has ceil(L/p) layers at most; the last also the logits.
  const double stage_layers = plan.layers_per_stage(model);
  const double stage_flops_mb = (stage_layers * layer_train + logits_train) * tokens_mb / (t * cp);
  const double flops_per_s = device.peak_dense_bf16_flops * o.compute_efficiency;
  const double compute_mb = stage_flops_mb / flops_per_s;

  // Element-wise kernels are memory-bound: bytes per token and layer, forward. Not split
  // by TP unless SP: two layer norms (read + write) and two bias-dropout-residual adds.
  // Split by TP: the MLP activation and the attention output. Without fused attention:
  // the score chain (scores, softmax, dropout), per local head and key.
  const double mask = model.biases ? 1 : 0;
  const double unsplit_bytes = (8 + 2 * (6 + mask)) * h;
  const double split_bytes = (model.gated_mlp ? 6 : 4) * static_cast<double>(model.ffn_hidden_size) * model.top_k + 4 * h;
  const double score_bytes =
      plan.fused_attention ? 0 : (model.num_heads / t) * static_cast<double>(model.seq_length) * (model.biases ? 11 : 6);
  const double layer_passes = plan.recompute == Recompute::kFull ? 4 : 3;  // forward, backward = 2 x forward
  const double score_passes = plan.recompute == Recompute::kNone ? 3 : 4;
  const double elem_bytes_token = layer_passes * (unsplit_bytes / (sp_on ? t : 1) + split_bytes / t) + score_passes * score_bytes;
  const double elem_mb = stage_layers * local_tokens_mb * elem_bytes_token /
                         (device.memory_bandwidth_bytes_per_s * o.memory_efficiency);

  const int collectives_per_layer = plan.recompute == Recompute::kFull ? 6 : 4;
  const double act_bytes = 2 * local_tokens_mb * h;  // bf16 hidden states of one micro-batch chunk

  double tp_mb = 0;
  if (plan.tensor > 1) {
    const Channel c = channel(net, o, plan.tensor, devices);
    tp_mb = stage_layers * collectives_per_layer * ring_allreduce_time_s(plan.tensor, act_bytes, c.bandwidth_Bps, c.latency_s);
    tp_mb *= 1 - o.tp_overlap;
  }
  double ep_mb = 0;
  if (model.is_moe() && plan.expert > 1) {
    // Dispatch and combine all-to-alls, forward and backward (and recompute).
    const Channel c = channel(net, o, plan.tensor * plan.context * plan.expert, devices);
    const double e = plan.expert;
    const double bytes = act_bytes * model.top_k / (sp_on ? t : 1);
    const double one = (e - 1) / e * bytes / c.bandwidth_Bps + (e - 1) * c.latency_s;
    ep_mb = stage_layers * collectives_per_layer * one;
  }
  double cp_mb = 0;
  if (plan.context > 1) {
    // Ring attention: cp-1 steps passing a chunk's K and V forward, twice that backward.
    const Channel c = channel(net, o, plan.tensor * plan.context, devices);
    const double kv_bytes = 2 * 2 * local_tokens_mb * model.kv_dim() / t;
    const double one_pass = (cp - 1) * (kv_bytes / c.bandwidth_Bps + c.latency_s);
    cp_mb = stage_layers * 3 * one_pass * (1 - o.cp_overlap);
  }
  double pp_mb = 0;
  if (plan.pipeline > 1) {
    const Channel c = channel(net, o, devices, devices);
    const double bytes = act_bytes / t;  // SP, or Megatron's scatter/gather optimisation: 1/t per link
    pp_mb = plan.virtual_stages * 2 * (bytes / c.bandwidth_Bps + c.latency_s) * (1 - o.pp_overlap);
  }
  const double slot = compute_mb + elem_mb + tp_mb + ep_mb + cp_mb + pp_mb;

  IterationBreakdown r;
  r.compute_s = m * compute_mb;
  r.elementwise_s = m * elem_mb;
  r.tp_comm_s = m * tp_mb;
  r.ep_comm_s = m * ep_mb;
  r.cp_comm_s = m * cp_mb;
  r.pp_comm_s = m * pp_mb;
  // 1F1B: (m + p - 1) slots, bubble fraction (p-1)/(m+p-1); interleaved over v chunks:
  // (p-1)/v slots of bubble.
  r.bubble_s = (p - 1) / plan.virtual_stages * slot;
  const double pipeline_s = m * slot + r.bubble_s;

  // Data-parallel traffic of the slowest stage's parameters (bf16 gradients / weights).
  const double dense_layer =
      model.layer_params() - (model.is_moe() ? model.num_experts * model.mlp_params_per_expert() : 0);
  // One stage holds everything; otherwise the last stage (output layer, or a tied copy).
  const double edge_params = plan.pipeline == 1 ? model.embedding_params() + model.output_params() : model.vocab_size * h;
  const double dense_params = (stage_layers * dense_layer + edge_params) / t;
  const double expert_params =
      model.is_moe() ? stage_layers * (static_cast<double>(model.num_experts) / plan.expert) * model.mlp_params_per_expert() / t : 0;
  const bool zero3 = plan.sharding == Sharding::kZero3 || plan.sharding == Sharding::kFsdp;
  // All-reduce (zero0/1) and reduce-scatter + all-gather (zero2) move 2(d-1)/d of the
  // bytes; zero3/FSDP gathers the weights twice (forward, backward) and reduce-scatters
  // the gradients: 3(d-1)/d.
  const double volume = zero3 ? 1.5 : 1.0;
  double dp_network_bytes = 0;
  auto dp_sync = [&](int group, double params) {
    if (group <= 1 || params <= 0) return 0.0;
    const int span = plan.tensor * plan.context * group;
    const Channel c = channel(net, o, span, devices);
    if (span > net.devices_per_nvlink_domain) dp_network_bytes += volume * 2.0 * (group - 1) / group * 2 * params;
    return volume * ring_allreduce_time_s(group, 2 * params, c.bandwidth_Bps, c.latency_s);
  };
  r.dp_comm_s = dp_sync(plan.data, dense_params) + dp_sync(plan.data / plan.expert, expert_params);
  const double with_dp = iteration_time_s(pipeline_s, r.dp_comm_s, o.dp_overlap);
  r.dp_exposed_s = with_dp - pipeline_s;
  r.dp_network_bytes = dp_network_bytes;

  // Adam reads and writes master weights, moments and the bf16 weights and gradients of
  // its shard.
  const bool sharded_opt = plan.sharding != Sharding::kNone;
  const double opt_params = sharded_opt ? dense_params / plan.data + expert_params / (plan.data / plan.expert)
                                        : dense_params + expert_params;
  r.optimizer_s = opt_params * (12 + 2 + 2) * 2 / device.memory_bandwidth_bytes_per_s;

  r.iteration_s = with_dp + r.optimizer_s;
  const double tokens = static_cast<double>(plan.global_batch) * model.seq_length;
  r.tokens_per_s = tokens / r.iteration_s;
  r.model_flops = tokens * model.model_training_flops_per_token();
  r.hardware_flops = tokens * (model.num_layers * layer_train + logits_train);
  const double peak = r.iteration_s * devices * device.peak_dense_bf16_flops;
  r.mfu = r.model_flops / peak;
  r.hfu = r.hardware_flops / peak;
  return r;
}

}  // namespace schedsim
