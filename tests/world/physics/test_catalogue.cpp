#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "world/physics/accelerator_catalogue.hpp"
#include "world/physics/catalogue_data.hpp"  // generated from sim/data/*.yaml
#include "base/config_node.hpp"
#include "base/error.hpp"
#include "world/physics/workload_profiles.hpp"

using namespace schedsim;
using Catch::Contains;

namespace {

// The value of the top-level `key` of a YAML text, as a scenario parser would pass it.
ConfigNode section(const std::string& yaml, const std::string& key, const std::string& source = "user.yaml") {
  return ConfigNode::load_string(yaml, source).child(key);
}

const std::vector<std::string> kAcceleratorTypes = {"A100-40GB", "A100-80GB", "H100-SXM", "H200",   "B200",
                                                    "V100",      "P100",      "K80",      "T4",     "L4",
                                                    "A10",       "MI300X",    "TPU-v4",   "TPU-v5e", "Ascend-910B"};

const std::vector<std::string> kProfiles = {"ResNet-50",  "BERT-large",  "GPT-2-1.5B",          "LLaMA-2-7B",
                                            "LLaMA-2-70B", "DLRM",       "StableDiffusion-UNet"};

}  // namespace

TEST_CASE("every built-in accelerator type is present with positive values", "[sim][catalogue]") {
  const AcceleratorCatalogue cat = AcceleratorCatalogue::builtin();
  CHECK(cat.names() == kAcceleratorTypes);  // file order
  for (const std::string& name : kAcceleratorTypes) {
    INFO(name);
    const AcceleratorSpec& a = cat.get(name);
    CHECK(a.name == name);
    CHECK(a.peak_dense_bf16_flops > 0);
    CHECK(a.peak_fp32_flops > 0);
    CHECK(a.peak_fp32_flops <= a.peak_dense_bf16_flops);
    CHECK(a.memory_bytes > 0);
    CHECK(a.memory_bandwidth_bytes_per_s > 0);
    CHECK(a.tdp_w > 0);
    CHECK(a.idle_w > 0);
    CHECK(a.idle_w < a.tdp_w);
    CHECK(a.intra_node_link_bytes_per_s > 0);
  }
  // Units are converted to SI on the way in.
  const AcceleratorSpec& h100 = cat.get("H100-SXM");
  CHECK(h100.peak_dense_bf16_flops == 989e12);
  CHECK(h100.peak_fp32_flops == 67e12);
  CHECK(h100.memory_bytes == 80e9);
  CHECK(h100.memory_bandwidth_bytes_per_s == 3350e9);
  CHECK(h100.tdp_w == 700);
  CHECK(h100.intra_node_link_bytes_per_s == 450e9);  // 900 GB/s bidirectional, per direction
  // The documented variant choices: V100 = SXM2 32 GB; K80 = one GPU of the board.
  CHECK(cat.get("V100").memory_bytes == 32e9);
  CHECK(cat.get("V100").peak_dense_bf16_flops == 125e12);
  CHECK(cat.get("K80").memory_bytes == 12e9);
  CHECK(cat.get("K80").tdp_w == 150);
  CHECK(cat.get("TPU-v4").idle_w == 90);
}

TEST_CASE("accelerator names match ignoring case and through aliases", "[sim][catalogue]") {
  const AcceleratorCatalogue cat = AcceleratorCatalogue::builtin();
  CHECK(cat.get("v100").name == "V100");  // Gavel's names
  CHECK(cat.get("k80").name == "K80");
  CHECK(cat.get("p100").name == "P100");
  CHECK(cat.get("h100").name == "H100-SXM");
  CHECK(cat.get("h100_sxm").name == "H100-SXM");
  CHECK(cat.get("A100").name == "A100-40GB");
  CHECK(cat.get("tpu v4").name == "TPU-v4");
  CHECK(cat.get("Tesla V100").name == "V100");
  CHECK(cat.get("mi300x").name == "MI300X");
  CHECK(cat.contains("ascend910b"));
  CHECK_FALSE(cat.contains("A100-120GB"));
  CHECK(cat.find("nothing") == nullptr);
  CHECK(cat.aliases_of("v100") == std::vector<std::string>{"V100", "V100-SXM2-32GB", "Tesla-V100"});
}

TEST_CASE("unknown accelerator types are rejected with the known names", "[sim][catalogue]") {
  const AcceleratorCatalogue cat = AcceleratorCatalogue::builtin();
  CHECK_THROWS_AS(cat.get("H300"), InputError);
  CHECK_THROWS_WITH(cat.get("H300"), Contains("accelerator catalogue: unknown accelerator type 'H300' (did you mean 'H100'?)") &&
                                         Contains("known accelerator types: A100-40GB, A100-80GB, H100-SXM, H200, B200, V100") &&
                                         Contains("Ascend-910B; names match ignoring case"));
  // A type name read from a config file is reported at its line.
  const ConfigNode doc = ConfigNode::load_string("cluster:\n  type: RTX-9090\n", "s.yaml");
  CHECK_THROWS_WITH(cat.get(doc.child("cluster").child("type")),
                    Catch::StartsWith("s.yaml:2: cluster.type: unknown accelerator type 'RTX-9090'; known accelerator types: A100-40GB"));
}

TEST_CASE("partial accelerator overrides keep the other values", "[sim][catalogue]") {
  AcceleratorCatalogue cat = AcceleratorCatalogue::builtin();
  const AcceleratorSpec before = cat.get("V100");
  cat.merge(section("accelerators:\n  v100:\n    memory_gb: 16\n    idle_w: 35\n", "accelerators"));
  const AcceleratorSpec& v100 = cat.get("V100");
  CHECK(v100.name == "V100");
  CHECK(v100.memory_bytes == 16e9);
  CHECK(v100.idle_w == 35);
  CHECK(v100.peak_dense_bf16_flops == before.peak_dense_bf16_flops);
  CHECK(v100.memory_bandwidth_bytes_per_s == before.memory_bandwidth_bytes_per_s);
  CHECK(v100.tdp_w == before.tdp_w);
  CHECK(v100.intra_node_link_bytes_per_s == before.intra_node_link_bytes_per_s);
  CHECK(cat.size() == kAcceleratorTypes.size());
  // A null section changes nothing.
  cat.merge(section("accelerators:\n", "accelerators"));
  CHECK(cat.size() == kAcceleratorTypes.size());
}

TEST_CASE("new accelerator types from YAML are added with their aliases", "[sim][catalogue]") {
  AcceleratorCatalogue cat = AcceleratorCatalogue::builtin();
  cat.merge(section(
      "accelerators:\n"
      "  MyChip:\n"
      "    aliases: [mc1, My Chip One]\n"
      "    peak_dense_bf16_tflops: 100\n"
      "    peak_fp32_tflops: 12.5\n"
      "    memory_gb: 48\n"
      "    memory_bandwidth_gbps: 1000\n"
      "    tdp_w: 350\n"
      "    idle_w: 0\n"
      "    intra_node_link_gbps: 64\n",
      "accelerators"));
  CHECK(cat.size() == kAcceleratorTypes.size() + 1);
  CHECK(cat.names().back() == "MyChip");
  const AcceleratorSpec& c = cat.get("MC1");
  CHECK(c.name == "MyChip");
  CHECK(c.peak_dense_bf16_flops == 100e12);
  CHECK(c.peak_fp32_flops == 12.5e12);
  CHECK(c.memory_bytes == 48e9);
  CHECK(c.memory_bandwidth_bytes_per_s == 1000e9);
  CHECK(c.tdp_w == 350);
  CHECK(c.idle_w == 0);
  CHECK(c.intra_node_link_bytes_per_s == 64e9);
  CHECK(cat.get("my-chip-one").name == "MyChip");
  // The empty catalogue accepts the same document.
  AcceleratorCatalogue empty;
  CHECK(empty.size() == 0);
  CHECK_THROWS_WITH(empty.get("V100"), "accelerator catalogue: unknown accelerator type 'V100'; the catalogue has no accelerator types yet");
}

TEST_CASE("bad accelerator YAML fails with a located message and changes nothing", "[sim][catalogue]") {
  AcceleratorCatalogue cat = AcceleratorCatalogue::builtin();
  SECTION("unknown field") {
    CHECK_THROWS_WITH(cat.merge(section("accelerators:\n  H100-SXM:\n    tdp: 600\n", "accelerators", "u.yaml")),
                      "u.yaml:3: accelerators.H100-SXM: unknown key 'tdp' (did you mean 'tdp_w'?); valid keys here: "
                      "peak_dense_bf16_tflops, peak_fp32_tflops, memory_gb, memory_bandwidth_gbps, tdp_w, idle_w, "
                      "intra_node_link_gbps, aliases");
  }
  SECTION("new type with missing fields") {
    CHECK_THROWS_WITH(cat.merge(section("accelerators:\n  H300:\n    peak_dense_bf16_tflops: 3000\n    peak_fp32_tflops: 90\n"
                                        "    memory_gb: 200\n    memory_bandwidth_gbps: 9000\n    tdp_w: 1200\n",
                                        "accelerators", "n.yaml")),
                      "n.yaml:3: accelerators.H300: new accelerator type 'H300' is missing idle_w, intra_node_link_gbps; "
                      "a new accelerator type needs all of: peak_dense_bf16_tflops, peak_fp32_tflops, memory_gb, "
                      "memory_bandwidth_gbps, tdp_w, idle_w, intra_node_link_gbps (or did you mean to override 'H100'?)");
  }
  SECTION("negative value") {
    CHECK_THROWS_WITH(cat.merge(section("accelerators:\n  T4:\n    memory_gb: -4\n", "accelerators", "v.yaml")),
                      "v.yaml:3: accelerators.T4.memory_gb: must be > 0, got '-4'");
  }
  SECTION("idle power above TDP") {
    CHECK_THROWS_WITH(cat.merge(section("accelerators:\n  T4:\n    idle_w: 80\n", "accelerators", "p.yaml")),
                      "p.yaml:3: accelerators.T4.idle_w: idle_w (80 W) must not exceed tdp_w (70 W) for accelerator type 'T4'");
  }
  SECTION("alias that names another type") {
    CHECK_THROWS_WITH(cat.merge(section("accelerators:\n  L4:\n    aliases: [tpu-v4]\n", "accelerators", "a.yaml")),
                      "a.yaml:3: accelerators.L4.aliases[0]: alias 'tpu-v4' already names accelerator type 'TPU-v4'; "
                      "choose another alias");
  }
  SECTION("not a map") {
    CHECK_THROWS_WITH(cat.merge(section("accelerators:\n  T4: 70\n", "accelerators", "m.yaml")),
                      Catch::StartsWith("m.yaml:2: accelerators.T4: expected a map with keys peak_dense_bf16_tflops"));
  }
  SECTION("a failed merge leaves earlier entries of the same document out") {
    CHECK_THROWS_AS(cat.merge(section("accelerators:\n  T4:\n    tdp_w: 75\n  L4:\n    tdp: 1\n", "accelerators")), InputError);
    CHECK(cat.get("T4").tdp_w == 70);
  }
  CHECK(cat.size() == kAcceleratorTypes.size());
  CHECK(cat.get("T4").memory_bytes == 16e9);
}

TEST_CASE("every built-in workload profile is present with positive values", "[sim][catalogue]") {
  const WorkloadProfileCatalogue cat = WorkloadProfileCatalogue::builtin();
  CHECK(cat.names() == kProfiles);
  for (const std::string& name : kProfiles) {
    INFO(name);
    const WorkloadProfile& p = cat.get(name);
    CHECK(p.name == name);
    CHECK(p.batch_size > 0);
    CHECK(p.flops_per_iteration > 0);
    CHECK(p.memory_bytes_per_iteration > 0);
    CHECK(p.gradient_bytes > 0);
    CHECK(p.params > 0);
    CHECK(p.memory_per_device_bytes > 0);
    CHECK(p.efficiency > 0);
    CHECK(p.efficiency <= 1);
    CHECK(p.precision == Precision::bf16);
  }
  // Transformers: 6 x params x tokens per iteration (tokens = batch x sequence length).
  CHECK(cat.get("BERT-large").flops_per_iteration == Approx(6.0 * 340e6 * 256 * 512));
  CHECK(cat.get("GPT-2-1.5B").flops_per_iteration == Approx(6.0 * 1557611200.0 * 512 * 1024));
  CHECK(cat.get("LLaMA-2-7B").flops_per_iteration == Approx(6.0 * 6738415616.0 * 1024 * 4096));
  CHECK(cat.get("LLaMA-2-70B").flops_per_iteration == Approx(6.0 * 68976648192.0 * 1024 * 4096));
  // CNN: 3 x forward FLOPs (7.74e9 per 224x224 image).
  CHECK(cat.get("ResNet-50").flops_per_iteration == Approx(3.0 * 7.74e9 * 256));
  // bf16 gradients: 2 bytes per parameter.
  CHECK(cat.get("LLaMA-2-70B").gradient_bytes == 2.0 * cat.get("LLaMA-2-70B").params);
  CHECK(cat.get("LLaMA-2-70B").memory_per_device_bytes == 1112e9);
  CHECK(cat.get("ResNet-50").gradient_bytes == 4.0 * 25557032);
}

TEST_CASE("workload profiles match ignoring case and through aliases", "[sim][catalogue]") {
  const WorkloadProfileCatalogue cat = WorkloadProfileCatalogue::builtin();
  CHECK(cat.get("resnet50").name == "ResNet-50");
  CHECK(cat.get("gpt2-xl").name == "GPT-2-1.5B");
  CHECK(cat.get("llama 2 70b").name == "LLaMA-2-70B");
  CHECK(cat.get("stable-diffusion").name == "StableDiffusion-UNet");
  CHECK_THROWS_WITH(cat.get("ResNet-51"), Contains("workload profile catalogue: unknown workload profile 'ResNet-51' (did you mean 'ResNet-50'?); "
                                                   "known workload profiles: ResNet-50, BERT-large, GPT-2-1.5B"));
}

TEST_CASE("workload profiles are overridden and added from YAML", "[sim][catalogue]") {
  WorkloadProfileCatalogue cat = WorkloadProfileCatalogue::builtin();
  const WorkloadProfile before = cat.get("ResNet-50");
  cat.merge(section(
      "workload_profiles:\n"
      "  resnet-50:\n"
      "    precision: fp32\n"
      "    efficiency: 0.5\n"
      "  Tiny-MLP:\n"
      "    batch_size: 32\n"
      "    flops_per_iteration: 1e9\n"
      "    memory_bytes_per_iteration: 0\n"
      "    gradient_bytes: 4e6\n"
      "    params: 1e6\n"
      "    memory_per_device_gb: 0.5\n"
      "    efficiency: 1\n",
      "workload_profiles"));
  const WorkloadProfile& r = cat.get("ResNet-50");
  CHECK(r.precision == Precision::fp32);
  CHECK(r.efficiency == 0.5);
  CHECK(r.flops_per_iteration == before.flops_per_iteration);
  CHECK(r.batch_size == before.batch_size);
  CHECK(r.memory_per_device_bytes == before.memory_per_device_bytes);
  const WorkloadProfile& t = cat.get("tiny mlp");
  CHECK(t.batch_size == 32);
  CHECK(t.flops_per_iteration == 1e9);
  CHECK(t.memory_bytes_per_iteration == 0);
  CHECK(t.memory_per_device_bytes == 0.5e9);
  CHECK(t.precision == Precision::bf16);  // the default
  CHECK(std::string(to_string(t.precision)) == "bf16");
  CHECK(cat.size() == kProfiles.size() + 1);
}

TEST_CASE("bad workload profile YAML fails with a located message", "[sim][catalogue]") {
  WorkloadProfileCatalogue cat = WorkloadProfileCatalogue::builtin();
  CHECK_THROWS_WITH(cat.merge(section("workload_profiles:\n  DLRM:\n    batchsize: 10\n", "workload_profiles", "w.yaml")),
                    "w.yaml:3: workload_profiles.DLRM: unknown key 'batchsize' (did you mean 'batch_size'?); valid keys here: "
                    "batch_size, flops_per_iteration, memory_bytes_per_iteration, gradient_bytes, params, "
                    "memory_per_device_gb, efficiency, precision, aliases");
  CHECK_THROWS_WITH(cat.merge(section("workload_profiles:\n  DLRM:\n    efficiency: 1.5\n", "workload_profiles", "w.yaml")),
                    "w.yaml:3: workload_profiles.DLRM.efficiency: must be a fraction of peak in (0, 1], got 1.5");
  CHECK_THROWS_WITH(cat.merge(section("workload_profiles:\n  DLRM:\n    efficiency: 0\n", "workload_profiles", "w.yaml")),
                    "w.yaml:3: workload_profiles.DLRM.efficiency: must be > 0, got '0'");
  CHECK_THROWS_WITH(cat.merge(section("workload_profiles:\n  DLRM:\n    precision: fp8\n", "workload_profiles", "w.yaml")),
                    "w.yaml:3: workload_profiles.DLRM.precision: 'fp8' is not allowed; choose one of: bf16, fp32");
  CHECK_THROWS_WITH(cat.merge(section("workload_profiles:\n  DLRM:\n    batch_size: 12.5\n", "workload_profiles", "w.yaml")),
                    "w.yaml:3: workload_profiles.DLRM.batch_size: expected an integer, got '12.5'");
  CHECK_THROWS_WITH(cat.merge(section("workload_profiles:\n  GPT-3:\n    params: 175e9\n", "workload_profiles", "w.yaml")),
                    "w.yaml:3: workload_profiles.GPT-3: new workload profile 'GPT-3' is missing batch_size, flops_per_iteration, "
                    "memory_bytes_per_iteration, gradient_bytes, memory_per_device_gb, efficiency; a new workload profile needs "
                    "all of: batch_size, flops_per_iteration, memory_bytes_per_iteration, gradient_bytes, params, "
                    "memory_per_device_gb, efficiency");
  CHECK(cat.get("DLRM").efficiency == 0.10);
  CHECK_FALSE(cat.contains("GPT-3"));
}

TEST_CASE("the built-in catalogue texts pass every check load_string makes, so load_builtin may skip them", "[sim][catalogue]") {
  // load_builtin() parses the compiled-in YAML once, without the checks for hostile input
  // (a second document, NUL, UTF-8, aliases, repeated keys): they run here instead.
  for (const char* text : {kBuiltinAcceleratorsYaml, kBuiltinWorkloadProfilesYaml}) {
    const ConfigNode checked = ConfigNode::load_string(text, "built in");
    const ConfigNode fast = ConfigNode::load_builtin(text, "built in");
    CHECK(YAML::Dump(checked.yaml()) == YAML::Dump(fast.yaml()));
  }
  CHECK(AcceleratorCatalogue::builtin().names().size() > 0);
}
