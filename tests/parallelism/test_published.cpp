// Issue 26: schedsim's training-time model against published numbers. Each row: the
// published figure, schedsim's, the relative error and the bound it must stay within.
// docs/parallelism.md has the same table (print it: schedsim_parallelism_tests
// "[.table]"). The time options are the defaults for every row: nothing is tuned per row.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "parallelism/planner.hpp"

namespace schedsim {
namespace {

struct Comparison {
  std::string source;
  std::string setup;
  std::string metric;
  double published = 0;
  double ours = 0;
  double bound = 0;  // allowed |ours - published| / published
  std::string plan;  // the plan schedsim evaluated
  double error() const { return (ours - published) / published; }
};

const AcceleratorSpec& device(const char* name) {
  static const AcceleratorCatalogue catalogue = AcceleratorCatalogue::builtin();
  return catalogue.get(name);
}

// Selene (the Megatron-LM papers): DGX A100 nodes, 8 GPUs on NVSwitch, 8 x 200 Gb/s HDR
// InfiniBand per node: 25 GB/s per GPU.
ClusterNetwork selene() {
  ClusterNetwork n;
  n.devices_per_nvlink_domain = 8;
  n.nvlink_Bps = device("A100-80GB").intra_node_link_bytes_per_s;
  n.network_Bps = 200e9 / 8;
  return n;
}

// Meta's Llama 3 cluster: 8 x H100 per server on NVLink, 400 Gb/s RoCE per GPU.
ClusterNetwork grand_teton() {
  ClusterNetwork n;
  n.devices_per_nvlink_domain = 8;
  n.nvlink_Bps = device("H100-SXM").intra_node_link_bytes_per_s;
  n.network_Bps = 400e9 / 8;
  return n;
}

// The published degrees are fixed; the planner chooses only what the paper leaves out
// (where asked: interleaving and the recomputation mode).
PlannerOptions fixed(int tp, int pp, int cp, std::vector<Recompute> recomputes, std::vector<Sharding> shardings) {
  PlannerOptions o;
  o.tensors = {tp};
  o.pipelines = {pp};
  o.contexts = {cp};
  o.micro_batches = {1};
  o.recomputes = std::move(recomputes);
  o.shardings = std::move(shardings);
  return o;
}

const char* const kMegatron2021 =
    "Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM, "
    "arXiv:2104.04473, Table 1";

// Table 1: GPT models (vocabulary 51,200, sequence 2,048) on A100-80GB, full activation
// recomputation; "achieved teraFLOP/s per GPU" counts the recomputation (HFU x 312).
std::vector<Comparison> megatron_2021() {
  struct Row {
    const char* name;
    int heads, hidden, layers, tp, pp, gpus, batch;
    double tflops;
  };
  const Row rows[] = {
      {"GPT 1.7B", 24, 2304, 24, 1, 1, 32, 512, 137},        {"GPT 3.6B", 32, 3072, 30, 2, 1, 64, 512, 138},
      {"GPT 7.5B", 32, 4096, 36, 4, 1, 128, 512, 142},       {"GPT 18.4B", 48, 6144, 40, 8, 1, 256, 1024, 135},
      {"GPT 39.1B", 64, 8192, 48, 8, 2, 512, 1536, 138},     {"GPT 76.1B", 80, 10240, 60, 8, 4, 1024, 1792, 140},
      {"GPT 145.6B", 96, 12288, 80, 8, 8, 1536, 2304, 148},  {"GPT 310.1B", 128, 16384, 96, 8, 16, 1920, 2160, 155},
      {"GPT 529.6B", 128, 20480, 105, 8, 35, 2520, 2520, 163}, {"GPT 1008B", 160, 25600, 128, 8, 64, 3072, 3072, 163},
  };
  std::vector<Comparison> out;
  for (const Row& r : rows) {
    const ModelSpec model = gpt_model(r.name, r.layers, r.hidden, r.heads, 51200, 2048, kMegatron2021);
    PlannerOptions o = fixed(r.tp, r.pp, 1, {Recompute::kFull}, {Sharding::kNone});
    o.fused_attention = false;
    o.sequence_parallel = false;  // introduced a year later (Korthikanti et al. 2022)
    o.virtual_stages = {1};  // Table 1 is the plain 1F1B schedule (interleaving is sec. 5.3's experiment)
    const PlanChoice c = plan_training(model, device("A100-80GB"), selene(), r.gpus, r.batch, o);
    out.push_back({kMegatron2021,
                   std::string(r.name) + ", " + std::to_string(r.gpus) + " A100, TP " + std::to_string(r.tp) + " PP " +
                       std::to_string(r.pp) + ", batch " + std::to_string(r.batch),
                   "TFLOP/s per GPU", r.tflops, c.time.hfu * 312, 0.10, c.plan.describe()});
  }
  return out;
}

const char* const kKorthikanti2022 =
    "Korthikanti et al. 2022, Reducing Activation Recomputation in Large Transformer Models, arXiv:2205.05198, abstract";

// The 530B GPT (105 layers, hidden 20480, 128 heads; Megatron-LM's shape) on 2,240
// A100: TP 8, PP 35, DP 8; global batch 2,240 assumed (one sequence per GPU, as in the
// paper's scaling runs). MFU 54.2% with sequence parallelism and selective
// recomputation, 42.1% with full recomputation.
std::vector<Comparison> korthikanti_2022() {
  const ModelSpec model = gpt_model("GPT 530B", 105, 20480, 128, 51200, 2048, kKorthikanti2022);
  std::vector<Comparison> out;
  for (bool selective : {true, false}) {
    PlannerOptions o = fixed(8, 35, 1, {selective ? Recompute::kSelective : Recompute::kFull}, {Sharding::kNone});
    o.fused_attention = false;
    o.sequence_parallel = selective;  // the baseline is TP with full recomputation, without SP
    o.virtual_stages = {1};
    const PlanChoice c = plan_training(model, device("A100-80GB"), selene(), 2240, 2240, o);
    out.push_back({kKorthikanti2022,
                   std::string("GPT 530B, 2240 A100, TP 8 PP 35, ") + (selective ? "SP + selective recompute" : "full recompute"),
                   "MFU", selective ? 0.542 : 0.421, c.time.mfu, 0.15, c.plan.describe()});
  }
  return out;
}

const char* const kLlama3 = "Llama Team 2024, The Llama 3 Herd of Models, arXiv:2407.21783, Table 4";

// Table 4: Llama 3 405B on H100, 16M tokens per batch, BF16 MFU. FSDP that keeps the
// gathered weights through the step: zero2 here. Meta's schedule is interleaved (its
// degree not published) and fits 80 GB; schedsim's activation counts (Korthikanti et
// al.) leave room for interleaving only with full recomputation, so the planner's best
// plan is slower than Meta's: a 25% bound, and docs/parallelism.md gives the number
// with interleaving and no recomputation.
std::vector<Comparison> llama3_405b() {
  struct Row {
    int gpus, cp, dp, seq;
    double mfu;
  };
  const Row rows[] = {{8192, 1, 64, 8192, 0.43}, {16384, 1, 128, 8192, 0.41}, {16384, 16, 8, 131072, 0.38}};
  std::vector<Comparison> out;
  for (const Row& r : rows) {
    ModelSpec model = find_model("LLaMA-3-405B");
    model.seq_length = r.seq;
    const int batch = 16 * 1024 * 1024 / r.seq;
    PlannerOptions o = fixed(8, 16, r.cp, {Recompute::kNone, Recompute::kSelective, Recompute::kFull}, {Sharding::kZero2});
    const PlanChoice c = plan_training(model, device("H100-SXM"), grand_teton(), r.gpus, batch, o);
    out.push_back({kLlama3,
                   "LLaMA-3 405B, " + std::to_string(r.gpus) + " H100, TP 8 CP " + std::to_string(r.cp) + " PP 16 DP " +
                       std::to_string(r.dp) + ", seq " + std::to_string(r.seq),
                   "MFU", r.mfu, c.time.mfu, 0.25, c.plan.describe()});
  }
  return out;
}

const char* const kLlama2 = "Touvron et al. 2023, Llama 2, arXiv:2307.09288, Table 2 (GPU hours, 2T tokens)";

// LLaMA-2's reported A100-80GB GPU hours for 2T tokens give tokens/s per GPU. The set-up
// is not published: the planner picks the plan on 512 GPUs with 200 Gb/s per GPU (RSC),
// global batch 4M tokens. The GPU hours include restarts, evaluation and checkpoints, so
// schedsim is expected to be faster: a wide bound.
std::vector<Comparison> llama2_gpu_hours() {
  struct Row {
    const char* model;
    double gpu_hours;
  };
  const Row rows[] = {{"LLaMA-2-7B", 184320}, {"LLaMA-2-13B", 368640}, {"LLaMA-2-70B", 1720320}};
  std::vector<Comparison> out;
  for (const Row& r : rows) {
    const ModelSpec model = find_model(r.model);
    const PlanChoice c = plan_training(model, device("A100-80GB"), selene(), 512, 1024);
    out.push_back({kLlama2, std::string(r.model) + ", planner's plan on 512 A100-80GB", "tokens/s per GPU",
                   2e12 / (r.gpu_hours * 3600), c.time.tokens_per_s / 512, 0.50, c.plan.describe()});
  }
  return out;
}

void check_all(const std::vector<Comparison>& rows) {
  for (const Comparison& c : rows) {
    INFO(c.setup << ": published " << c.published << ", schedsim " << c.ours << " (" << c.plan << "), error "
                 << c.error() * 100 << "%, bound " << c.bound * 100 << "%");
    CHECK(std::abs(c.error()) <= c.bound);
  }
}

}  // namespace

TEST_CASE("Megatron-LM 2021 Table 1: achieved TFLOP/s per GPU within 10%", "[parallelism][published]") {
  const std::vector<Comparison> rows = megatron_2021();
  REQUIRE(rows.size() == 10);
  check_all(rows);
}

TEST_CASE("Korthikanti et al. 2022: 530B MFU with selective and full recomputation within 15%", "[parallelism][published]") {
  const std::vector<Comparison> rows = korthikanti_2022();
  check_all(rows);
  // The paper's point: selective recomputation is faster than full.
  CHECK(rows[0].ours > rows[1].ours);
}

TEST_CASE("Llama 3 405B on H100: BF16 MFU of Table 4 within 25%", "[parallelism][published]") {
  check_all(llama3_405b());
}

TEST_CASE("LLaMA-2 GPU hours: tokens/s per GPU within 50%, and faster than reported", "[parallelism][published]") {
  const std::vector<Comparison> rows = llama2_gpu_hours();
  check_all(rows);
  for (const Comparison& c : rows) CHECK(c.ours > c.published);
}

// Prints the comparison table of docs/parallelism.md (hidden: run with "[.table]").
TEST_CASE("print the published-number table", "[.table]") {
  std::vector<Comparison> all;
  for (auto* group : {&megatron_2021, &korthikanti_2022, &llama3_405b, &llama2_gpu_hours}) {
    std::vector<Comparison> rows = (*group)();
    all.insert(all.end(), rows.begin(), rows.end());
  }
  std::printf("| set-up | metric | published | schedsim | error | bound | source | schedsim's plan |\n|---|---|---|---|---|---|---|---|\n");
  for (const Comparison& c : all) {
    const std::size_t at = c.source.find("arXiv:") + 6;
    const std::string id = c.source.substr(at, c.source.find(',', at) - at);
    std::printf("| %s | %s | %.4g | %.4g | %+.1f%% | %.0f%% | [arXiv:%s](https://arxiv.org/abs/%s) | `%s` |\n", c.setup.c_str(),
                c.metric.c_str(), c.published, c.ours, c.error() * 100, c.bound * 100, id.c_str(), id.c_str(), c.plan.c_str());
  }
  // The Llama 3 rows with Meta's interleaving assumed (v = 4) and no recomputation, memory
  // not checked (docs/parallelism.md explains the gap).
  const int cps[] = {1, 1, 16}, dps[] = {64, 128, 8}, seqs[] = {8192, 8192, 131072};
  for (int i = 0; i < 3; ++i) {
    ModelSpec model = find_model("LLaMA-3-405B");
    model.seq_length = seqs[i];
    ParallelismPlan p;
    p.tensor = 8;
    p.pipeline = 16;
    p.virtual_stages = 4;
    p.context = cps[i];
    p.data = dps[i];
    p.sharding = Sharding::kZero2;
    p.global_batch = 16 * 1024 * 1024 / seqs[i];
    const IterationBreakdown t = iteration_time(model, p, device("H100-SXM"), grand_teton());
    std::printf("llama3 v=4 none: %s MFU %.3f, memory %.1f GB\n", p.describe().c_str(), t.mfu,
                memory_per_device(model, p).total_bytes() / 1e9);
  }
  // The planner's answers for common questions (docs/parallelism.md, "The planner").
  struct Question {
    const char* model;
    const char* device;
    int devices, batch;
  };
  const Question questions[] = {{"LLaMA-2-7B", "A100-80GB", 8, 1024},   {"LLaMA-2-70B", "A100-80GB", 64, 1024},
                                {"LLaMA-2-70B", "H100-SXM", 64, 1024},   {"LLaMA-3-70B", "H100-SXM", 512, 2048},
                                {"LLaMA-3-405B", "H100-SXM", 2048, 2048}, {"Mixtral-8x7B", "H100-SXM", 64, 1024}};
  std::printf("| model | devices | batch | plan | GB per device | iteration (s) | MFU | tokens/s per device |\n|---|---|---|---|---|---|---|---|\n");
  for (const Question& q : questions) {
    const PlanChoice c = plan_training(find_model(q.model), device(q.device), grand_teton(), q.devices, q.batch);
    std::printf("| %s | %d x %s | %d | `%s` | %.1f | %.2f | %.3f | %.0f |\n", q.model, q.devices, q.device, q.batch,
                c.plan.describe().c_str(), c.memory.total_bytes() / 1e9, c.time.iteration_s, c.time.mfu,
                c.time.tokens_per_s / q.devices);
  }
}

}  // namespace schedsim
