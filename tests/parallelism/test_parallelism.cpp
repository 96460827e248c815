// Issue 26 (training half): the parallelism module against closed forms. Model shapes
// against published parameter counts; FLOPs against Megatron-LM's formula; activations
// against Korthikanti et al. 2022's equations; optimizer-state sharding against the ZeRO
// paper; the 1F1B bubble; the planner against a brute-force search; the errors' text.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "parallelism/planner.hpp"
#include "world/physics/comm_model.hpp"
#include "base/config_node.hpp"
#include "base/error.hpp"

namespace schedsim {
namespace {

const AcceleratorSpec& device(const char* name) {
  static const AcceleratorCatalogue catalogue = AcceleratorCatalogue::builtin();
  return catalogue.get(name);
}

ClusterNetwork dgx_a100() {
  ClusterNetwork n;
  n.devices_per_nvlink_domain = 8;
  n.nvlink_Bps = 300e9;
  n.network_Bps = 25e9;
  return n;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("catalogue models have their published parameter counts", "[parallelism][model]") {
  struct Expected {
    const char* name;
    double params_b;
  };
  // Published totals (model cards / papers): LLaMA-2 6.74B / 13.0B / 69.0B, LLaMA-3
  // 8.03B / 70.6B / 405.9B, GPT-3 175B, Mixtral 46.7B (12.9B active).
  const Expected expected[] = {{"LLaMA-2-7B", 6.74},  {"LLaMA-2-13B", 13.02}, {"LLaMA-2-70B", 68.98},
                               {"LLaMA-3-8B", 8.03},  {"LLaMA-3-70B", 70.55}, {"LLaMA-3-405B", 405.85},
                               {"GPT-3-175B", 175.0}, {"Mixtral-8x7B", 46.70}};
  REQUIRE(builtin_models().size() == 8);
  for (const Expected& e : expected) {
    const ModelSpec m = find_model(e.name);
    INFO(e.name << ": " << m.total_params() / 1e9 << "B");
    CHECK(m.total_params() / 1e9 == Approx(e.params_b).epsilon(0.005));
    CHECK_FALSE(m.source.empty());
    m.validate();
  }
  CHECK(find_model("Mixtral-8x7B").active_params() / 1e9 == Approx(12.88).epsilon(0.005));
  CHECK(find_model("llama2_7b").name == "LLaMA-2-7B");  // case, '-', '_' ignored
  CHECK(error_of([] { find_model("LLaMA-2-7"); }) ==
        "model: unknown model 'LLaMA-2-7' (did you mean 'LLaMA-2-7B'?); known models: LLaMA-2-7B, LLaMA-2-13B, "
        "LLaMA-2-70B, LLaMA-3-8B, LLaMA-3-70B, LLaMA-3-405B, GPT-3-175B, Mixtral-8x7B; names match ignoring case, '-', "
        "'_' and spaces, and aliases work too");
}

TEST_CASE("a model from YAML: a base with changes, or a whole shape; mistakes name the key", "[parallelism][model]") {
  auto load = [](const std::string& text) { return model_from_yaml(ConfigNode::load_string(text, "model.yaml")); };
  const ModelSpec long_ctx = load("base: LLaMA-3-8B\nname: LLaMA-3-8B-128k\nseq_length: 131072\n");
  CHECK(long_ctx.name == "LLaMA-3-8B-128k");
  CHECK(long_ctx.seq_length == 131072);
  CHECK(long_ctx.total_params() == find_model("LLaMA-3-8B").total_params());
  const ModelSpec own = load("{name: tiny, num_layers: 2, hidden_size: 256, num_heads: 4, ffn_hidden_size: 1024, vocab_size: 1000, seq_length: 128}");
  CHECK(own.num_kv_heads == 4);
  CHECK_FALSE(own.gated_mlp);
  CHECK(error_of([&] { load("{name: tiny, num_layers: 2}"); }) ==
        "model.yaml:1: missing hidden_size, num_heads, ffn_hidden_size, vocab_size, seq_length; a model without base: needs all of "
        "name, num_layers, hidden_size, num_heads, ffn_hidden_size, vocab_size, seq_length");
  CHECK(error_of([&] { load("base: LLaMA-3-8B\nnum_layer: 3\n"); }).find("model.yaml:2: unknown key 'num_layer' (did you mean 'num_layers'?); valid keys here: base, name, num_layers,") == 0);
  CHECK(error_of([&] { load("base: LLaMA-3-8B\nnum_kv_heads: 5\n"); }) ==
        "model.yaml:1: model 'LLaMA-3-8B': num_kv_heads 5 must divide num_heads 32");
  CHECK(error_of([&] { load("base: llama-9b\n"); }).find("model.yaml:1: base: unknown model 'llama-9b'") == 0);
}

TEST_CASE("GPT training FLOPs equal Megatron-LM's 72 B s l h^2 (1 + s/6h + V/12lh)", "[parallelism][model]") {
  const ModelSpec m = gpt_model("gpt", 24, 2304, 24, 51200, 2048, "");
  const double s = 2048, l = 24, h = 2304, V = 51200, B = 1;
  const double megatron = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  CHECK(m.model_training_flops_per_token() * B * s == Approx(megatron).epsilon(1e-12));
}

TEST_CASE("activation memory per layer follows Korthikanti et al. 2022, eqs. 1-5", "[parallelism][memory]") {
  // GPT-style (dropout): sbh(34 + 5as/h) without parallelism.
  const ModelSpec m = gpt_model("gpt", 24, 4096, 32, 51200, 2048, "");
  const double s = 2048, b = 2, h = 4096, a = 32, t = 8;
  ParallelismPlan p;
  p.micro_batch = 2;
  p.fused_attention = false;
  CHECK(activation_bytes_per_layer(m, p) == Approx(s * b * h * (34 + 5 * a * s / h)).epsilon(1e-12));
  p.tensor = 8;
  p.sequence_parallel = false;  // eq. 2: sbh(10 + 24/t + 5as/(ht))
  CHECK(activation_bytes_per_layer(m, p) == Approx(s * b * h * (10 + 24 / t + 5 * a * s / (h * t))).epsilon(1e-12));
  p.sequence_parallel = true;  // eq. 4: sbh/t (34 + 5as/h)
  CHECK(activation_bytes_per_layer(m, p) == Approx(s * b * h / t * (34 + 5 * a * s / h)).epsilon(1e-12));
  p.recompute = Recompute::kSelective;  // eq. 5: 34 sbh/t
  CHECK(activation_bytes_per_layer(m, p) == Approx(34 * s * b * h / t).epsilon(1e-12));
  // Fused attention stores no scores either.
  p.recompute = Recompute::kNone;
  p.fused_attention = true;
  CHECK(activation_bytes_per_layer(m, p) == Approx(34 * s * b * h / t).epsilon(1e-12));
}

TEST_CASE("1F1B: the first stage holds p micro-batches, i.e. the whole model's layers' activations", "[parallelism][memory]") {
  const ModelSpec m = gpt_model("gpt", 32, 4096, 32, 51200, 2048, "");
  ParallelismPlan p;
  p.tensor = 8;
  p.pipeline = 4;
  p.global_batch = 64;
  p.recompute = Recompute::kSelective;
  MemoryOptions o;
  const MemoryBreakdown first = memory_per_device(m, p, o);
  // Korthikanti et al. sec. 4.2.3: L/p layers x p micro-batches = L layers' worth (34 sbh/t each).
  CHECK(std::string(first.stage) == "first");
  CHECK(first.activations_bytes == Approx(32 * 34 * 2048.0 * 4096 / 8).epsilon(1e-12));
  p.virtual_stages = 2;  // interleaving: x (1 + (p-1)/(p v))
  CHECK(memory_per_device(m, p, o).activations_bytes == Approx(32 * 34 * 2048.0 * 4096 / 8 * (1 + 3.0 / 8)).epsilon(1e-12));
  p.virtual_stages = 1;
  p.recompute = Recompute::kFull;  // layer inputs (2 sbh/t) plus one layer being recomputed
  CHECK(memory_per_device(m, p, o).activations_bytes ==
        Approx(32 * 2 * 2048.0 * 4096 / 8 + 34 * 2048.0 * 4096 / 8).epsilon(1e-12));
}

TEST_CASE("ZeRO stages shard optimizer, gradients and parameters as in Rajbhandari et al. 2020", "[parallelism][memory]") {
  // The ZeRO paper's Figure 1: Psi parameters, K = 12, N_d = 64: (2 + 2 + K) Psi,
  // 2 Psi + 2 Psi + K Psi / N_d, 2 Psi + (2 + K) Psi / N_d, (2 + 2 + K) Psi / N_d.
  const ModelSpec m = find_model("LLaMA-2-7B");
  const double psi = m.total_params();
  ParallelismPlan p;
  p.data = 64;
  p.global_batch = 64;
  auto states = [&](Sharding s) {
    p.sharding = s;
    const MemoryBreakdown b = memory_per_device(m, p);
    return b.parameters_bytes + b.gradients_bytes + b.optimizer_bytes;
  };
  CHECK(states(Sharding::kNone) == Approx(16 * psi).epsilon(1e-12));
  CHECK(states(Sharding::kZero1) == Approx(4 * psi + 12 * psi / 64).epsilon(1e-12));
  CHECK(states(Sharding::kZero2) == Approx(2 * psi + 14 * psi / 64).epsilon(1e-12));
  CHECK(states(Sharding::kZero3) == Approx(16 * psi / 64).epsilon(1e-12));
  CHECK(states(Sharding::kFsdp) == Approx(16 * psi / 64).epsilon(1e-12));
}

TEST_CASE("an OOM names the plan, the numbers and the device", "[parallelism][memory]") {
  const ModelSpec m = find_model("LLaMA-2-7B");
  ParallelismPlan p;
  p.data = 8;
  p.global_batch = 8;
  CHECK(error_of([&] { check_fits(m, p, device("A100-80GB")); }) ==
        "plan tp=1 pp=1 dp=8 ep=1 cp=1 sp=off zero0 recompute=none mb=1 gb=8 for LLaMA-2-7B on 8 x A100-80GB: out of "
        "memory: needs 127.8 GB per device (parameters 13.5 GB, gradients 13.5 GB, optimizer states 80.9 GB, "
        "activations 17.8 GB, buffers 2.2 GB) but A100-80GB has 80.0 GB; shard more "
        "(zero1..zero3), recompute activations, or raise tensor/pipeline");
  p.pipeline = 2;  // with a pipeline, the message says which stage is the heaviest
  p.micro_batch = 2;
  p.global_batch = 32;
  CHECK(error_of([&] { check_fits(m, p, device("A100-80GB")); }).find(", first pipeline stage) but A100-80GB has 80.0 GB") !=
        std::string::npos);
  p.pipeline = 1;
  p.micro_batch = 1;
  p.global_batch = 8;
  p.sharding = Sharding::kZero3;
  CHECK_NOTHROW(check_fits(m, p, device("A100-80GB")));
}

TEST_CASE("plan validation names the field and what is allowed", "[parallelism][plan]") {
  const ModelSpec m = find_model("LLaMA-2-7B");
  ParallelismPlan p;
  p.tensor = 3;
  CHECK(error_of([&] { p.validate(m); }) ==
        "plan tp=3 pp=1 dp=1 ep=1 cp=1 sp=on zero0 recompute=none mb=1 gb=1 for LLaMA-2-7B: tensor 3 must divide the "
        "attention heads (32)");
  p.tensor = 1;
  p.data = 4;
  p.micro_batch = 2;
  p.global_batch = 12;
  CHECK(error_of([&] { p.validate(m); }) ==
        "plan tp=1 pp=1 dp=4 ep=1 cp=1 sp=off zero0 recompute=none mb=2 gb=12 for LLaMA-2-7B: global_batch 12 must be "
        "a multiple of data x micro_batch (4 x 2 = 8)");
  p.global_batch = 16;
  p.pipeline = 33;
  CHECK(error_of([&] { p.validate(m); }) ==
        "plan tp=1 pp=33 dp=4 ep=1 cp=1 sp=off zero0 recompute=none mb=2 gb=16 for LLaMA-2-7B: pipeline 33 is more "
        "than the model's 32 layers");
  p.pipeline = 4;
  p.virtual_stages = 2;
  p.global_batch = 24;  // 3 micro-batches per rank, not a multiple of 4 stages
  CHECK(error_of([&] { p.validate(m); }) ==
        "plan tp=1 pp=4 vp=2 dp=4 ep=1 cp=1 sp=off zero0 recompute=none mb=2 gb=24 for LLaMA-2-7B: interleaving needs "
        "the micro-batches per data-parallel rank (3) to be a multiple of pipeline (4)");
  p.expert = 2;
  p.virtual_stages = 1;
  CHECK(error_of([&] { p.validate(m); }) ==
        "plan tp=1 pp=4 dp=4 ep=2 cp=1 sp=off zero0 recompute=none mb=2 gb=24 for LLaMA-2-7B: expert 2 must divide the "
        "experts (1)");
}

TEST_CASE("iteration time: compute roofline, x4/3 with full recompute, and the 1F1B bubble", "[parallelism][time]") {
  const ModelSpec m = gpt_model("gpt", 24, 2048, 16, 51200, 2048, "");
  const AcceleratorSpec& a100 = device("A100-80GB");
  TimeOptions o;
  ParallelismPlan p;
  p.global_batch = 4;
  p.fused_attention = false;
  const IterationBreakdown none = iteration_time(m, p, a100, dgx_a100(), o);
  // One device: every FLOP at peak x efficiency.
  CHECK(none.compute_s == Approx(none.hardware_flops / (312e12 * o.compute_efficiency)).epsilon(1e-12));
  CHECK(none.hardware_flops == Approx(none.model_flops).epsilon(1e-12));
  CHECK(none.tp_comm_s == 0);
  CHECK(none.dp_comm_s == 0);
  CHECK(none.bubble_s == 0);
  p.recompute = Recompute::kFull;
  const IterationBreakdown full = iteration_time(m, p, a100, dgx_a100(), o);
  const double layers = 24 * m.forward_flops_per_token_layer(), logits = m.forward_flops_per_token_logits();
  CHECK(full.compute_s / none.compute_s == Approx((4 * layers + 3 * logits) / (3 * layers + 3 * logits)).epsilon(1e-12));
  CHECK(full.mfu < none.mfu);
  CHECK(full.hfu > full.mfu);

  // p stages, m micro-batches: the bubble is (p-1)/(m+p-1) of the pipeline time.
  p.recompute = Recompute::kNone;
  p.pipeline = 4;
  p.global_batch = 12;
  const IterationBreakdown piped = iteration_time(m, p, a100, dgx_a100(), o);
  CHECK(piped.bubble_s / (piped.iteration_s - piped.optimizer_s) == Approx(3.0 / (12 + 3)).epsilon(1e-12));
  p.virtual_stages = 2;  // interleaving halves the bubble
  const IterationBreakdown inter = iteration_time(m, p, a100, dgx_a100(), o);
  CHECK(inter.bubble_s / (inter.iteration_s - inter.optimizer_s) == Approx(1.5 / (12 + 1.5)).epsilon(1e-12));
}

TEST_CASE("iteration time: TP all-reduces on NVLink, DP gradients over the network, overlap", "[parallelism][time]") {
  const ModelSpec m = gpt_model("gpt", 24, 2048, 16, 51200, 2048, "");
  const AcceleratorSpec& a100 = device("A100-80GB");
  const ClusterNetwork net = dgx_a100();
  TimeOptions o;
  ParallelismPlan p;
  p.tensor = 8;
  p.global_batch = 2;
  const IterationBreakdown tp = iteration_time(m, p, a100, net, o);
  // 4 collectives per layer (2 forward, 2 backward) of the micro-batch's hidden states.
  const double bytes = 2 * 2048.0 * 2048;
  CHECK(tp.tp_comm_s ==
        Approx(2 * 24 * 4 * ring_allreduce_time_s(8, bytes, 300e9 * o.comm_efficiency, 1e-6)).epsilon(1e-12));

  p.tensor = 1;
  p.data = 16;
  p.global_batch = 16;
  o.dp_overlap = 0;
  const IterationBreakdown dp = iteration_time(m, p, a100, net, o);
  const double params = m.total_params() - m.hidden_size * 2.0;  // the final norm is not synchronised here
  CHECK(dp.dp_comm_s == Approx(ring_allreduce_time_s(16, 2 * params, 25e9 * o.comm_efficiency, 5e-6)).epsilon(1e-9));
  CHECK(dp.dp_exposed_s == Approx(dp.dp_comm_s).epsilon(1e-12));
  o.dp_overlap = 1;
  const IterationBreakdown hidden = iteration_time(m, p, a100, net, o);
  CHECK(hidden.dp_exposed_s == Approx(std::max(0.0, dp.dp_comm_s - (hidden.iteration_s - hidden.optimizer_s - hidden.dp_exposed_s))).margin(1e-12));
  CHECK(hidden.iteration_s < dp.iteration_s);
  o.dp_overlap = 1.5;
  CHECK(error_of([&] { iteration_time(m, p, a100, net, o); }) ==
        "parallelism time option dp_overlap: must be in [0, 1], got 1.500000");
  o.dp_overlap = 0.5;
  o.compute_efficiency = 0;
  CHECK(error_of([&] { iteration_time(m, p, a100, net, o); }) ==
        "parallelism time option compute_efficiency: must be in (0, 1], got 0.000000");
}

TEST_CASE("ClusterNetwork from a topology: NVLink domain, NIC share per device, latencies", "[parallelism][time]") {
  TopologyConfig t;
  t.nic_bandwidth_gbps = 400;
  t.nodes_per_nvlink_domain = 9;
  const ClusterNetwork n = ClusterNetwork::from_topology(t, device("H100-SXM"), 8);
  CHECK(n.devices_per_nvlink_domain == 72);
  CHECK(n.nvlink_Bps == 450e9);
  CHECK(n.network_Bps == 50e9);
  CHECK(n.network_latency_s == Approx(5e-6));
}

TEST_CASE("the planner finds the fastest fitting plan; LLaMA-2-7B fits 8 A100-80GB", "[parallelism][planner]") {
  const ModelSpec m = find_model("LLaMA-2-7B");
  const AcceleratorSpec& a100 = device("A100-80GB");
  const PlanChoice c = plan_training(m, a100, dgx_a100(), 8, 64);
  CHECK(c.memory.total_bytes() <= a100.memory_bytes);
  CHECK(c.plans_fitting > 0);
  CHECK(c.plans_fitting < c.plans_evaluated);
  CHECK(c.plan.num_devices() == 8);
  // Brute force over the same space: nothing that fits is faster.
  PlannerOptions o;
  for (int tp : {1, 2, 4, 8})
    for (int pp : {1, 2, 4, 8})
      for (int mb : {1, 2, 4, 8})
        for (Sharding s : o.shardings)
          for (Recompute r : o.recomputes) {
            ParallelismPlan p;
            p.tensor = tp;
            p.pipeline = pp;
            p.data = 8 / (tp * pp);
            if (p.data < 1 || 64 % (p.data * mb) != 0 || (p.data == 1 && s != Sharding::kNone)) continue;
            p.micro_batch = mb;
            p.sharding = s;
            p.recompute = r;
            p.global_batch = 64;
            if (memory_per_device(m, p).total_bytes() > a100.memory_bytes) continue;
            CHECK(iteration_time(m, p, a100, dgx_a100()).iteration_s >= c.time.iteration_s);
          }
  // Deterministic: the same question, the same answer.
  CHECK(plan_training(m, a100, dgx_a100(), 8, 64).plan.describe() == c.plan.describe());
}

TEST_CASE("the planner plans Mixtral (MoE) and says when nothing fits", "[parallelism][planner]") {
  const ModelSpec mixtral = find_model("Mixtral-8x7B");
  const PlanChoice moe = plan_training(mixtral, device("H100-SXM"), dgx_a100(), 64, 256);
  CHECK(moe.memory.total_bytes() <= 80e9);
  CHECK(moe.plan.num_devices() == 64);
  // EP divides the experts' model states: with 8-way EP a device holds one expert per layer.
  ParallelismPlan p;
  p.data = 8;
  p.global_batch = 8;
  const double ep1 = memory_per_device(mixtral, p).parameters_bytes;
  p.expert = 8;
  const double ep8 = memory_per_device(mixtral, p).parameters_bytes;
  CHECK(ep1 - ep8 == Approx(32 * 7 * mixtral.mlp_params_per_expert() * 2).epsilon(1e-12));

  const std::string message = error_of([] {
    plan_training(find_model("LLaMA-3-405B"), device("A100-40GB"), dgx_a100(), 8, 64);
  });
  CHECK(message.rfind("planner: LLaMA-3-405B on 8 x A100-40GB, global batch 64: no plan fits 40.0 GB per device; the leanest of ", 0) == 0);
  CHECK(message.find("; use more devices or a larger device type") != std::string::npos);
  CHECK(error_of([] { plan_training(find_model("LLaMA-2-7B"), device("A100-80GB"), dgx_a100(), 7, 3); }) ==
        "planner: LLaMA-2-7B on 7 x A100-80GB, global batch 3: no parallelism plan splits 7 devices and the batch (TP a "
        "power of two up to the NVLink domain of 8 dividing the heads, PP dividing the layers, the global batch a "
        "multiple of DP x micro-batch)");
}

}  // namespace schedsim
