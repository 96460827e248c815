#include "parallelism/memory_model.hpp"

#include <algorithm>
#include <cstdio>

#include "base/error.hpp"

namespace schedsim {

namespace {

std::string gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  return buf;
}

// Parameters one device of a stage holds, split into the part sharded over all DP ranks
// (dense) and the expert part (sharded over data / expert ranks).
struct StageParams {
  double dense = 0;
  double expert = 0;
};

StageParams stage_params(const ModelSpec& model, const ParallelismPlan& plan, bool first, bool last) {
  const double t = plan.tensor;
  const double layers = first && last ? model.num_layers : plan.layers_per_stage(model);
  StageParams p;
  const double expert_per_layer = model.is_moe() ? model.num_experts * model.mlp_params_per_expert() : 0;
  p.dense = layers * (model.layer_params() - expert_per_layer) / t;
  if (model.is_moe())
    p.expert = layers * (static_cast<double>(model.num_experts) / plan.expert) * model.mlp_params_per_expert() / t;
  if (first) p.dense += model.embedding_params() / t;
  // The last stage holds the output layer; a tied one is a copy of the embedding there
  // when the embedding lives on another stage.
  if (last) p.dense += (model.tied_embeddings ? (first ? 0 : model.vocab_size * static_cast<double>(model.hidden_size))
                                              : model.output_params()) / t +
                 (model.biases ? 2.0 : 1.0) * model.hidden_size;  // the final norm
  return p;
}

MemoryBreakdown stage_memory(const ModelSpec& model, const ParallelismPlan& plan, const MemoryOptions& o, bool first,
                             bool last) {
  const StageParams sp = stage_params(model, plan, first, last);
  const double params = sp.dense + sp.expert;
  const double dense_dp = plan.data;
  const double expert_dp = static_cast<double>(plan.data) / plan.expert;
  auto sharded = [&](bool on) { return on ? sp.dense / dense_dp + sp.expert / expert_dp : params; };
  const bool zero3 = plan.sharding == Sharding::kZero3 || plan.sharding == Sharding::kFsdp;
  const bool zero2 = zero3 || plan.sharding == Sharding::kZero2;
  const bool zero1 = zero2 || plan.sharding == Sharding::kZero1;

  MemoryBreakdown m;
  m.stage = first ? "first" : "last";
  m.parameters_bytes = sharded(zero3) * o.weight_bytes_per_param;
  m.gradients_bytes = sharded(zero2) * o.gradient_bytes_per_param;
  m.optimizer_bytes = sharded(zero1) * o.optimizer_bytes_per_param;

  const double layers = first && last ? model.num_layers : plan.layers_per_stage(model);
  const double per_layer = activation_bytes_per_layer(model, plan);
  const double sbh = static_cast<double>(model.seq_length) / plan.context * plan.micro_batch * model.hidden_size;
  const bool sp_on = plan.sequence_parallel && plan.tensor > 1;
  // 1F1B: stage i keeps pp - i micro-batches of activations; the first stage the most.
  // Interleaving keeps (1 + (p-1)/(p v)) times more (Korthikanti et al. 2022, sec. 4.2.3).
  double in_flight = first ? std::min(plan.pipeline, plan.num_micro_batches()) : 1;
  if (first && plan.virtual_stages > 1)
    in_flight *= 1 + (plan.pipeline - 1.0) / (static_cast<double>(plan.pipeline) * plan.virtual_stages);
  double stored_per_layer = per_layer;
  double working_set = 0;
  if (plan.recompute == Recompute::kFull) {
    // Only the layer input (bf16) is kept; backward recomputes one layer at a time.
    stored_per_layer = 2 * sbh / (sp_on ? plan.tensor : 1);
    working_set = per_layer;
  }
  m.activations_bytes = layers * in_flight * stored_per_layer + working_set;
  if (last) m.activations_bytes += 4 * sbh / model.hidden_size * model.vocab_size / plan.tensor;  // fp32 logits

  double buffers = o.runtime_reserve_bytes;
  if (plan.data > 1) buffers += o.dp_bucket_bytes;
  if (zero3)  // two layers' parameters gathered at a time (the current one and the prefetched next)
    buffers += 2 * (model.layer_params() / plan.tensor) * o.weight_bytes_per_param;
  if (plan.tensor > 1) buffers += 2 * 2 * sbh;  // the gathered sequence of TP/SP collectives
  m.buffers_bytes = buffers;
  return m;
}

}  // namespace

std::string MemoryBreakdown::describe() const {
  return "parameters " + gb(parameters_bytes) + ", gradients " + gb(gradients_bytes) + ", optimizer states " +
         gb(optimizer_bytes) + ", activations " + gb(activations_bytes) + ", buffers " + gb(buffers_bytes);
}

double activation_bytes_per_layer(const ModelSpec& model, const ParallelismPlan& plan) {
  const double s = static_cast<double>(model.seq_length) / plan.context;  // tokens of the local sequence chunk
  const double b = plan.micro_batch;
  const double h = model.hidden_size;
  const double kv = model.kv_dim();
  const double f = model.ffn_hidden_size;
  const double t = plan.tensor;
  const bool sp_on = plan.sequence_parallel && plan.tensor > 1;
  const bool dropout = model.biases;  // GPT-style models train with dropout; LLaMA-style ones without
  const double mask = dropout ? 1 : 0;  // one byte per element

  // Bytes per token. Split by TP: Q, K, V, the output projection's input and the MLP's
  // inner activations. Not split by TP (only by SP): the layer-norm inputs, the inputs
  // of QKV and of the first MLP matrix, and the dropout masks.
  const double split = 2 * h + 2 * kv + 2 * kv + 2 * h + (model.gated_mlp ? 6 : 4) * f * model.top_k;
  const double unsplit = 2 * h + mask * h + 2 * h + mask * h + 4 * h;
  double bytes = s * b * (split / t + unsplit / (sp_on ? t : 1));
  if (plan.recompute == Recompute::kNone && !plan.fused_attention) {
    // Softmax output (2 bytes), its dropout mask (1) and the dropout output (2) per score.
    const double per_score = dropout ? 5 : 2;
    bytes += per_score * (model.num_heads / t) * s * static_cast<double>(model.seq_length) * b;
  }
  return bytes;
}

MemoryBreakdown memory_per_device(const ModelSpec& model, const ParallelismPlan& plan, const MemoryOptions& options) {
  if (plan.pipeline == 1) return stage_memory(model, plan, options, true, true);
  MemoryBreakdown first = stage_memory(model, plan, options, true, false);
  MemoryBreakdown last = stage_memory(model, plan, options, false, true);
  return last.total_bytes() > first.total_bytes() ? last : first;
}

void check_fits(const ModelSpec& model, const ParallelismPlan& plan, const AcceleratorSpec& device,
                const MemoryOptions& options) {
  const MemoryBreakdown m = memory_per_device(model, plan, options);
  if (m.total_bytes() <= device.memory_bytes) return;
  throw InputError("plan " + plan.describe() + " for " + model.name + " on " + std::to_string(plan.num_devices()) +
                       " x " + device.name,
                   "out of memory: needs " + gb(m.total_bytes()) + " per device (" + m.describe() +
                       (plan.pipeline > 1 ? std::string(", ") + m.stage + " pipeline stage" : std::string()) + ") but " + device.name + " has " + gb(device.memory_bytes) +
                       "; shard more (zero1..zero3), recompute activations, or raise tensor/pipeline");
}

}  // namespace schedsim
