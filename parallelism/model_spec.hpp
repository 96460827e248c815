// The shape of a GPT/LLaMA-style decoder-only transformer, dense or mixture-of-experts,
// and the counts derived from it: parameters and FLOPs per token. A built-in catalogue
// holds published models (each with its source). Formulas: docs/parallelism.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace schedsim {

class ConfigNode;

struct ModelSpec {
  std::string name;
  int num_layers = 0;
  int hidden_size = 0;
  int num_heads = 0;
  int num_kv_heads = 0;      // == num_heads for multi-head attention; fewer for GQA
  int ffn_hidden_size = 0;   // per expert for MoE
  int vocab_size = 0;
  int seq_length = 0;        // training sequence length (tokens)
  int num_experts = 1;       // 1: dense
  int top_k = 1;             // experts per token (MoE)
  bool gated_mlp = false;    // SwiGLU (three ffn matrices) instead of GeLU (two)
  bool tied_embeddings = false;      // output layer shares the input embedding
  bool learned_positions = false;    // GPT-style position embedding table (seq x hidden)
  bool biases = false;               // linear-layer and layer-norm biases (GPT)
  std::string source;        // where the shape comes from

  bool is_moe() const { return num_experts > 1; }
  int head_dim() const { return hidden_size / num_heads; }
  double kv_dim() const { return static_cast<double>(num_kv_heads) * head_dim(); }

  // Parameters of one layer's attention block (and its norm), of one expert's MLP, of
  // the router, and of one whole layer (every expert).
  double attention_params_per_layer() const;
  double mlp_params_per_expert() const;
  double router_params_per_layer() const;
  double layer_params() const;
  // Input embedding (+ position table); the output layer when it is not tied.
  double embedding_params() const;
  double output_params() const;
  // Everything: layers, embeddings, output layer, final norm.
  double total_params() const;
  // Parameters a token passes through (MoE: top_k experts of each layer).
  double active_params() const;

  // Forward FLOPs per token of one layer, matmuls and attention scores (QK^T and AV over
  // the full sequence, the convention of Megatron-LM's MFU formula), and of the logits.
  double forward_flops_per_token_layer() const;
  // The part of it that selective recomputation recomputes: QK^T, softmax and AV.
  double attention_score_flops_per_token_layer() const;
  double forward_flops_per_token_logits() const;
  // Model FLOPs per token of training (forward + backward = 3 x forward, no recompute).
  double model_training_flops_per_token() const;

  // Throws InputError naming the model and the field when a shape is not positive or
  // not consistent (heads dividing hidden, kv heads dividing heads, top_k <= experts).
  void validate() const;
};

// A GPT-3-style dense model (GeLU MLP of 4 x hidden, biases, tied embeddings, learned
// positions), as in the Megatron-LM papers' scaling tables.
ModelSpec gpt_model(std::string name, int num_layers, int hidden_size, int num_heads,
                    int vocab_size, int seq_length, std::string source);

// The built-in catalogue: LLaMA-2 7B/13B/70B, LLaMA-3 8B/70B/405B, GPT-3 175B,
// Mixtral 8x7B, with published shapes.
std::vector<ModelSpec> builtin_models();
// The catalogue entry called `name` (ignoring case, '-', '_', ' ' and '.'); InputError
// listing the known names otherwise.
ModelSpec find_model(std::string_view name);

// A model from YAML (docs/parallelism.md, "Models"): a map with an optional `base` (a
// catalogue name whose fields it starts from; without it every shape key is required)
// and the keys name, num_layers, hidden_size, num_heads, num_kv_heads, ffn_hidden_size,
// vocab_size, seq_length, num_experts, top_k, gated_mlp, tied_embeddings,
// learned_positions, biases, source. Unknown keys, missing ones and bad values throw
// InputError naming the file, line and key; the result is validate()d.
ModelSpec model_from_yaml(const ConfigNode& node);

}  // namespace schedsim
