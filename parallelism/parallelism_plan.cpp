#include "parallelism/parallelism_plan.hpp"

#include "base/error.hpp"

namespace schedsim {

const char* to_string(Sharding sharding) {
  switch (sharding) {
    case Sharding::kNone: return "zero0";
    case Sharding::kZero1: return "zero1";
    case Sharding::kZero2: return "zero2";
    case Sharding::kZero3: return "zero3";
    case Sharding::kFsdp: return "fsdp";
  }
  return "?";
}

const char* to_string(Recompute recompute) {
  switch (recompute) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "?";
}

int ParallelismPlan::layers_per_stage(const ModelSpec& model) const {
  return (model.num_layers + pipeline - 1) / pipeline;
}

std::string ParallelismPlan::describe() const {
  return "tp=" + std::to_string(tensor) + " pp=" + std::to_string(pipeline) +
         (virtual_stages > 1 ? " vp=" + std::to_string(virtual_stages) : std::string()) + " dp=" + std::to_string(data) +
         " ep=" + std::to_string(expert) + " cp=" + std::to_string(context) +
         " sp=" + (sequence_parallel && tensor > 1 ? "on" : "off") + " " + to_string(sharding) +
         (fused_attention ? "" : " attention=unfused") + " recompute=" + to_string(recompute) + " mb=" + std::to_string(micro_batch) +
         " gb=" + std::to_string(global_batch);
}

void ParallelismPlan::validate(const ModelSpec& model) const {
  const std::string where = "plan " + describe() + " for " + model.name;
  auto at_least_one = [&](const char* field, int value) {
    if (value < 1) throw InputError(where, std::string(field) + ": must be >= 1, got " + std::to_string(value));
  };
  at_least_one("tensor", tensor);
  at_least_one("pipeline", pipeline);
  at_least_one("data", data);
  at_least_one("expert", expert);
  at_least_one("context", context);
  at_least_one("micro_batch", micro_batch);
  at_least_one("virtual_stages", virtual_stages);
  at_least_one("global_batch", global_batch);
  auto must_divide = [&](const char* field, int value, const char* what, int of) {
    if (of % value != 0)
      throw InputError(where, std::string(field) + " " + std::to_string(value) + " must divide the " + what + " (" +
                                  std::to_string(of) + ")");
  };
  must_divide("tensor", tensor, "attention heads", model.num_heads);
  must_divide("tensor", tensor, "ffn hidden size", model.ffn_hidden_size);
  if (pipeline > model.num_layers)
    throw InputError(where, "pipeline " + std::to_string(pipeline) + " is more than the model's " +
                                std::to_string(model.num_layers) + " layers");
  must_divide("expert", expert, "data-parallel degree", data);
  must_divide("expert", expert, "experts", model.num_experts);
  must_divide("context", context, "sequence length", model.seq_length);
  if (global_batch % (data * micro_batch) != 0)
    throw InputError(where, "global_batch " + std::to_string(global_batch) + " must be a multiple of data x micro_batch (" +
                                std::to_string(data) + " x " + std::to_string(micro_batch) + " = " +
                                std::to_string(data * micro_batch) + ")");
  if (virtual_stages > 1) {
    if (pipeline == 1) throw InputError(where, "virtual_stages " + std::to_string(virtual_stages) + " needs pipeline > 1");
    if (virtual_stages > layers_per_stage(model))
      throw InputError(where, "virtual_stages " + std::to_string(virtual_stages) + " is more than the " +
                                  std::to_string(layers_per_stage(model)) + " layers per pipeline stage");
    if (num_micro_batches() % pipeline != 0)
      throw InputError(where, "interleaving needs the micro-batches per data-parallel rank (" +
                                  std::to_string(num_micro_batches()) + ") to be a multiple of pipeline (" +
                                  std::to_string(pipeline) + ")");
  }
}

}  // namespace schedsim
