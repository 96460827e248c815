// How one training job splits a model over its devices: tensor (TP), pipeline (PP), data
// (DP), expert (EP, MoE) and context/sequence (CP) parallel degrees, optimizer-state
// sharding (ZeRO stage or FSDP), activation recomputation and the batch sizes. Devices
// = TP x CP x PP x DP; EP divides DP (experts are spread over data-parallel ranks, as in
// Megatron-LM). docs/parallelism.md describes each field.
#pragma once

#include <string>

#include "parallelism/model_spec.hpp"

namespace schedsim {

// What of the training state is sharded over the data-parallel group.
enum class Sharding {
  kNone,   // ZeRO-0: every DP rank holds everything
  kZero1,  // optimizer states sharded
  kZero2,  // + gradients
  kZero3,  // + parameters (gathered layer by layer)
  kFsdp,   // PyTorch FSDP full sharding: the memory and traffic of ZeRO-3
};
const char* to_string(Sharding sharding);  // "zero0", "zero1", "zero2", "zero3", "fsdp"

enum class Recompute {
  kNone,       // every activation stored
  kSelective,  // attention scores recomputed (Korthikanti et al. 2022); also what FlashAttention stores
  kFull,       // only each layer's input stored; the layer's forward runs again in backward
};
const char* to_string(Recompute recompute);  // "none", "selective", "full"

struct ParallelismPlan {
  int tensor = 1;
  int pipeline = 1;
  int data = 1;
  int expert = 1;     // divides data and the model's num_experts
  int context = 1;    // splits the sequence (ring attention / context parallel)
  // Interleaved 1F1B (Narayanan et al. 2021): each device holds this many non-adjacent
  // chunks of layers; the bubble shrinks by it, stage-to-stage traffic grows by it.
  int virtual_stages = 1;
  bool sequence_parallel = true;
  // Fused attention (FlashAttention): the s x s scores never reach device memory, and
  // its backward recomputes them (the FLOPs of selective recomputation, always). Off:
  // the kernels of the Megatron-LM papers of 2021/2022, which predate it.
  bool fused_attention = true;  // Megatron sequence parallelism along with TP (only matters for tensor > 1)
  Sharding sharding = Sharding::kNone;
  Recompute recompute = Recompute::kNone;
  int micro_batch = 1;      // sequences per micro-batch
  int global_batch = 1;     // sequences per iteration, over all DP ranks

  int num_devices() const { return tensor * context * pipeline * data; }
  // Micro-batches per DP rank per iteration (global_batch / (data x micro_batch)).
  int num_micro_batches() const { return global_batch / (data * micro_batch); }
  // Layers per pipeline stage (the last stage takes the remainder when uneven).
  int layers_per_stage(const ModelSpec& model) const;

  // "tp=8 pp=4 vp=1 dp=2 ep=1 cp=1 sp=on zero1 recompute=selective mb=1 gb=512"
  std::string describe() const;

  // Throws InputError naming the plan and the field when a degree is < 1, when the
  // degrees do not fit the model (TP must divide heads and ffn; PP at most the layers;
  // EP must divide DP and the experts; CP must divide the sequence) or when the global
  // batch is not a multiple of data x micro_batch, or when interleaving (virtual_stages
  // > 1) has pipeline 1, more chunks than layers per stage, or micro-batches per DP rank
  // that are not a multiple of pipeline (Megatron-LM's requirement).
  void validate(const ModelSpec& model) const;
};

}  // namespace schedsim
