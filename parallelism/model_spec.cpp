#include "parallelism/model_spec.hpp"

#include <cstddef>
#include <cstdint>

#include "world/physics/catalogue_names.hpp"
#include "base/config_node.hpp"
#include "base/error.hpp"

namespace schedsim {

double ModelSpec::attention_params_per_layer() const {
  const double h = hidden_size;
  // Q and output projections are h x h; K and V are h x kv_dim (GQA shares them).
  double params = 2 * h * h + 2 * h * kv_dim();
  if (biases) params += 2 * h + 2 * kv_dim();
  params += biases ? 2 * h : h;  // the layer norm in front of attention
  return params;
}

double ModelSpec::mlp_params_per_expert() const {
  const double h = hidden_size;
  const double f = ffn_hidden_size;
  double params = (gated_mlp ? 3 : 2) * h * f;
  if (biases) params += f + h;
  return params;
}

double ModelSpec::router_params_per_layer() const { return is_moe() ? static_cast<double>(hidden_size) * num_experts : 0; }

double ModelSpec::layer_params() const {
  const double norm = biases ? 2.0 * hidden_size : hidden_size;  // the norm in front of the MLP
  return attention_params_per_layer() + num_experts * mlp_params_per_expert() + router_params_per_layer() + norm;
}

double ModelSpec::embedding_params() const {
  double params = static_cast<double>(vocab_size) * hidden_size;
  if (learned_positions) params += static_cast<double>(seq_length) * hidden_size;
  return params;
}

double ModelSpec::output_params() const { return tied_embeddings ? 0 : static_cast<double>(vocab_size) * hidden_size; }

double ModelSpec::total_params() const {
  const double final_norm = biases ? 2.0 * hidden_size : hidden_size;
  return num_layers * layer_params() + embedding_params() + output_params() + final_norm;
}

double ModelSpec::active_params() const {
  const double inactive = static_cast<double>(num_experts - top_k) * mlp_params_per_expert();
  return total_params() - num_layers * inactive;
}

double ModelSpec::attention_score_flops_per_token_layer() const {
  // QK^T and (softmax) x V: 2 * s * h multiply-adds each per token.
  return 4.0 * seq_length * hidden_size;
}

double ModelSpec::forward_flops_per_token_layer() const {
  const double h = hidden_size;
  const double f = ffn_hidden_size;
  const double projections = 2 * (2 * h * h + 2 * h * kv_dim());
  const double mlp = 2 * (gated_mlp ? 3 : 2) * h * f * top_k;
  const double router = 2 * router_params_per_layer();
  return projections + mlp + router + attention_score_flops_per_token_layer();
}

double ModelSpec::forward_flops_per_token_logits() const { return 2.0 * hidden_size * vocab_size; }

double ModelSpec::model_training_flops_per_token() const {
  return 3 * (num_layers * forward_flops_per_token_layer() + forward_flops_per_token_logits());
}

void ModelSpec::validate() const {
  const std::string where = "model '" + name + "'";
  auto positive = [&](const char* field, int value) {
    if (value <= 0) throw InputError(where, std::string(field) + ": must be > 0, got " + std::to_string(value));
  };
  positive("num_layers", num_layers);
  positive("hidden_size", hidden_size);
  positive("num_heads", num_heads);
  positive("num_kv_heads", num_kv_heads);
  positive("ffn_hidden_size", ffn_hidden_size);
  positive("vocab_size", vocab_size);
  positive("seq_length", seq_length);
  positive("num_experts", num_experts);
  positive("top_k", top_k);
  if (hidden_size % num_heads != 0)
    throw InputError(where, "num_heads " + std::to_string(num_heads) + " must divide hidden_size " +
                                std::to_string(hidden_size));
  if (num_heads % num_kv_heads != 0)
    throw InputError(where, "num_kv_heads " + std::to_string(num_kv_heads) + " must divide num_heads " +
                                std::to_string(num_heads));
  if (top_k > num_experts)
    throw InputError(where, "top_k " + std::to_string(top_k) + " must be <= num_experts " +
                                std::to_string(num_experts));
}

ModelSpec gpt_model(std::string name, int num_layers, int hidden_size, int num_heads, int vocab_size,
                    int seq_length, std::string source) {
  ModelSpec m;
  m.name = std::move(name);
  m.num_layers = num_layers;
  m.hidden_size = hidden_size;
  m.num_heads = num_heads;
  m.num_kv_heads = num_heads;
  m.ffn_hidden_size = 4 * hidden_size;
  m.vocab_size = vocab_size;
  m.seq_length = seq_length;
  m.tied_embeddings = true;
  m.learned_positions = true;
  m.biases = true;
  m.source = std::move(source);
  return m;
}

namespace {

ModelSpec llama(std::string name, int layers, int hidden, int heads, int kv_heads, int ffn, int vocab, int seq,
                std::string source) {
  ModelSpec m;
  m.name = std::move(name);
  m.num_layers = layers;
  m.hidden_size = hidden;
  m.num_heads = heads;
  m.num_kv_heads = kv_heads;
  m.ffn_hidden_size = ffn;
  m.vocab_size = vocab;
  m.seq_length = seq;
  m.gated_mlp = true;  // SwiGLU, RMSNorm without bias, rotary positions, untied output
  m.source = std::move(source);
  return m;
}

std::vector<ModelSpec> make_catalogue() {
  const std::string llama2 = "Touvron et al. 2023, Llama 2, arXiv:2307.09288, Table 1; config.json of meta-llama/Llama-2-*-hf";
  const std::string llama3 = "Llama Team 2024, The Llama 3 Herd of Models, arXiv:2407.21783, Table 3; config.json of meta-llama/Meta-Llama-3*";
  std::vector<ModelSpec> models;
  models.push_back(llama("LLaMA-2-7B", 32, 4096, 32, 32, 11008, 32000, 4096, llama2));
  models.push_back(llama("LLaMA-2-13B", 40, 5120, 40, 40, 13824, 32000, 4096, llama2));
  models.push_back(llama("LLaMA-2-70B", 80, 8192, 64, 8, 28672, 32000, 4096, llama2));
  models.push_back(llama("LLaMA-3-8B", 32, 4096, 32, 8, 14336, 128256, 8192, llama3));
  models.push_back(llama("LLaMA-3-70B", 80, 8192, 64, 8, 28672, 128256, 8192, llama3));
  models.push_back(llama("LLaMA-3-405B", 126, 16384, 128, 8, 53248, 128256, 8192, llama3));
  models.push_back(gpt_model("GPT-3-175B", 96, 12288, 96, 50257, 2048,
                             "Brown et al. 2020, Language Models are Few-Shot Learners, arXiv:2005.14165, Table 2.1"));
  ModelSpec mixtral = llama("Mixtral-8x7B", 32, 4096, 32, 8, 14336, 32000, 32768,
                            "Jiang et al. 2024, Mixtral of Experts, arXiv:2401.04088, Table 1");
  mixtral.num_experts = 8;
  mixtral.top_k = 2;
  models.push_back(mixtral);
  return models;
}

}  // namespace

std::vector<ModelSpec> builtin_models() { return make_catalogue(); }

ModelSpec find_model(std::string_view name) {
  // Built per call (eight entries): no process-wide state.
  std::vector<ModelSpec> models = make_catalogue();
  CatalogueNameIndex index;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < models.size(); ++i) {
    index.add(models[i].name, i);
    names.push_back(models[i].name);
  }
  std::string key(name);
  for (char& ch : key)
    if (ch == '.') ch = '-';  // "llama-2.7b" style spellings
  if (auto i = index.find(key)) return models[*i];
  throw InputError("model", unknown_name_message("model", name, index, names));
}

ModelSpec model_from_yaml(const ConfigNode& node) {
  if (!node.is_map()) node.fail("expected a map of model fields (num_layers, hidden_size, ...) or a base: catalogue name");
  node.expect_map({"base", "name", "num_layers", "hidden_size", "num_heads", "num_kv_heads", "ffn_hidden_size", "vocab_size",
                   "seq_length", "num_experts", "top_k", "gated_mlp", "tied_embeddings", "learned_positions", "biases", "source"});
  ModelSpec m;
  const bool based = node.has("base");
  if (based) {
    const ConfigNode base = node.child("base");
    try {
      m = find_model(base.as_string());
    } catch (const InputError& e) {
      // Located at the key, with the catalogue's list.
      const std::string what = e.what();
      base.fail(what.substr(what.find(": ") + 2));
    }
  } else {
    std::string missing;
    for (const char* key : {"name", "num_layers", "hidden_size", "num_heads", "ffn_hidden_size", "vocab_size", "seq_length"})
      if (!node.has(key)) missing += (missing.empty() ? "" : ", ") + std::string(key);
    if (!missing.empty()) node.fail("missing " + missing + "; a model without base: needs all of name, num_layers, hidden_size, num_heads, ffn_hidden_size, vocab_size, seq_length");
  }
  if (auto v = node.maybe_child("name")) m.name = v->as_string();
  auto integer = [&](const char* key, int& field) {
    if (auto v = node.maybe_child(key)) {
      const std::int64_t x = v->as_positive_int();
      if (x > (1 << 30)) v->fail("must be at most 1073741824, got " + std::to_string(x));
      field = static_cast<int>(x);
    }
  };
  integer("num_layers", m.num_layers);
  integer("hidden_size", m.hidden_size);
  integer("num_heads", m.num_heads);
  if (!based && !node.has("num_kv_heads")) m.num_kv_heads = m.num_heads;
  integer("num_kv_heads", m.num_kv_heads);
  integer("ffn_hidden_size", m.ffn_hidden_size);
  integer("vocab_size", m.vocab_size);
  integer("seq_length", m.seq_length);
  integer("num_experts", m.num_experts);
  integer("top_k", m.top_k);
  auto flag = [&](const char* key, bool& field) {
    if (auto v = node.maybe_child(key)) field = v->as_bool();
  };
  flag("gated_mlp", m.gated_mlp);
  flag("tied_embeddings", m.tied_embeddings);
  flag("learned_positions", m.learned_positions);
  flag("biases", m.biases);
  if (auto v = node.maybe_child("source")) m.source = v->as_string();
  try {
    m.validate();
  } catch (const InputError& e) {
    node.fail(e.what());
  }
  return m;
}

}  // namespace schedsim
