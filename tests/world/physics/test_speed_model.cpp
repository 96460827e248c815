#include <catch2/catch.hpp>

#include <string>

#include "world/physics/accelerator_catalogue.hpp"
#include "base/config_node.hpp"
#include "base/error.hpp"
#include "world/physics/speed_model.hpp"
#include "world/physics/workload_profiles.hpp"

using namespace schedsim;
using Catch::Contains;

namespace {

// Round numbers whose products and quotients are exact in binary floating point up to the
// final division, so the roofline can be compared with ==.
AcceleratorCatalogue test_devices() {
  AcceleratorCatalogue cat;
  cat.merge(ConfigNode::load_string(
                "Round:\n"
                "  peak_dense_bf16_tflops: 100\n"
                "  peak_fp32_tflops: 10\n"
                "  memory_gb: 40\n"
                "  memory_bandwidth_gbps: 1000\n"
                "  tdp_w: 300\n"
                "  idle_w: 50\n"
                "  intra_node_link_gbps: 100\n",
                "test devices"));
  return cat;
}

WorkloadProfile round_profile(double memory_bytes_per_iteration, Precision precision = Precision::bf16) {
  WorkloadProfile p;
  p.name = "round";
  p.batch_size = 64;
  p.flops_per_iteration = 8e12;
  p.memory_bytes_per_iteration = memory_bytes_per_iteration;
  p.gradient_bytes = 1e9;
  p.params = 5e8;
  p.memory_per_device_bytes = 40e9;
  p.efficiency = 0.5;
  p.precision = precision;
  return p;
}

}  // namespace

TEST_CASE("roofline time of a compute-bound iteration equals the hand computation", "[sim][speed]") {
  const AcceleratorCatalogue devices = test_devices();
  const AcceleratorSpec& dev = devices.get("Round");
  // 4 devices: compute (8e12 / 4) / (100e12 * 0.5) = 0.04 s; memory (1e10 / 4) / (1000e9 * 0.5) = 0.005 s.
  const IterationComputeTime t = iteration_compute_time(round_profile(1e10), dev, 4);
  CHECK(t.compute_s == 0.04);
  CHECK(t.memory_s == 0.005);
  CHECK(t.time_s == 0.04);
  CHECK_FALSE(t.memory_bound());
  CHECK(compute_samples_per_s(round_profile(1e10), dev, 4) == Approx(64 / 0.04));
}

TEST_CASE("roofline time of a memory-bound iteration equals the hand computation", "[sim][speed]") {
  const AcceleratorCatalogue devices = test_devices();
  const AcceleratorSpec& dev = devices.get("Round");
  // 4 devices: memory (4e11 / 4) / (1000e9 * 0.5) = 0.2 s; compute stays 0.04 s.
  const IterationComputeTime t = iteration_compute_time(round_profile(4e11), dev, 4);
  CHECK(t.memory_s == 0.2);
  CHECK(t.compute_s == 0.04);
  CHECK(t.time_s == 0.2);
  CHECK(t.memory_bound());
}

TEST_CASE("the profile's precision picks the device peak", "[sim][speed]") {
  const AcceleratorCatalogue devices = test_devices();
  const AcceleratorSpec& dev = devices.get("Round");
  CHECK(peak_flops_per_s(dev, Precision::bf16) == 100e12);
  CHECK(peak_flops_per_s(dev, Precision::fp32) == 10e12);
  // fp32: (8e12 / 4) / (10e12 * 0.5) = 0.4 s.
  const IterationComputeTime t = iteration_compute_time(round_profile(1e10, Precision::fp32), dev, 4);
  CHECK(t.compute_s == 0.4);
  CHECK(t.time_s == 0.4);
}

TEST_CASE("data parallelism divides the iteration time by the device count", "[sim][speed]") {
  const AcceleratorCatalogue acc = AcceleratorCatalogue::builtin();
  const WorkloadProfileCatalogue prof = WorkloadProfileCatalogue::builtin();
  const WorkloadProfile& gpt2 = prof.get("GPT-2-1.5B");
  const double one = iteration_compute_time(gpt2, acc.get("A100-80GB"), 1).time_s;
  CHECK(iteration_compute_time(gpt2, acc.get("A100-80GB"), 8).time_s == Approx(one / 8));
  CHECK(iteration_compute_time(gpt2, acc.get("A100-80GB"), 512).time_s == Approx(one / 512));
  // By hand: 4.8998211649536e15 / (312e12 * 0.40) = 39.261387539692... s on one A100.
  CHECK(one == Approx(4.8998211649536e15 / (312e12 * 0.40)));
}

TEST_CASE("faster devices give shorter iterations where the numbers say so", "[sim][speed]") {
  const AcceleratorCatalogue acc = AcceleratorCatalogue::builtin();
  WorkloadProfileCatalogue prof = WorkloadProfileCatalogue::builtin();
  const AcceleratorSpec& v100 = acc.get("V100");
  const AcceleratorSpec& h100 = acc.get("H100-SXM");

  // ResNet-50 (mixed precision) is memory-bound on both: the ratio is the bandwidth ratio.
  const WorkloadProfile resnet = prof.get("ResNet-50");  // a copy: merge() below invalidates references
  const IterationComputeTime rv = iteration_compute_time(resnet, v100, 1);
  const IterationComputeTime rh = iteration_compute_time(resnet, h100, 1);
  CHECK(rv.memory_bound());
  CHECK(rh.memory_bound());
  CHECK(rv.time_s == Approx(6.144e10 / (900e9 * 0.35)));  // 0.195 s
  CHECK(rv.time_s / rh.time_s == Approx(3350.0 / 900.0));

  // ResNet-50 in fp32 is compute-bound on both: the ratio is the fp32 peak ratio.
  prof.merge(ConfigNode::load_string("ResNet-50: {precision: fp32}\n", "override"));
  const IterationComputeTime fv = iteration_compute_time(prof.get("ResNet-50"), v100, 1);
  const IterationComputeTime fh = iteration_compute_time(prof.get("ResNet-50"), h100, 1);
  CHECK_FALSE(fv.memory_bound());
  CHECK_FALSE(fh.memory_bound());
  CHECK(fv.time_s == Approx(5.94432e12 / (15.7e12 * 0.35)));  // 1.08 s
  CHECK(fv.time_s / fh.time_s == Approx(67.0 / 15.7));

  // GPT-2 1.5B is compute-bound everywhere: the ratio is the bf16 peak ratio.
  const WorkloadProfile& gpt2 = prof.get("GPT-2-1.5B");
  const IterationComputeTime gv = iteration_compute_time(gpt2, v100, 8);
  const IterationComputeTime gh = iteration_compute_time(gpt2, h100, 8);
  CHECK_FALSE(gv.memory_bound());
  CHECK(gv.time_s / gh.time_s == Approx(989.0 / 125.0));

  // Gavel's three generations order as expected for ResNet-50: K80 slower than P100 slower than V100.
  const double k80 = iteration_compute_time(resnet, acc.get("K80"), 1).time_s;
  const double p100 = iteration_compute_time(resnet, acc.get("P100"), 1).time_s;
  CHECK(k80 == Approx(5.94432e12 / (4.37e12 * 0.35)));  // compute-bound: 3.89 s
  CHECK(p100 == Approx(5.94432e12 / (18.7e12 * 0.35)));  // compute-bound: 0.908 s
  CHECK(k80 > p100);
  CHECK(p100 > rv.time_s);

  // Same compute, more bandwidth: H200 beats H100 only where the job is memory-bound.
  const AcceleratorSpec& h200 = acc.get("H200");
  CHECK(iteration_compute_time(resnet, h200, 1).time_s < rh.time_s);
  CHECK(iteration_compute_time(gpt2, h200, 8).time_s == gh.time_s);
}

TEST_CASE("the memory-fit rule compares the per-device footprint with device memory", "[sim][speed]") {
  const AcceleratorCatalogue acc = AcceleratorCatalogue::builtin();
  const WorkloadProfileCatalogue prof = WorkloadProfileCatalogue::builtin();
  // 70B unsharded (~1.1 TB) fits no single device, not even 192 GB.
  for (const std::string& type : acc.names()) {
    INFO(type);
    CHECK_FALSE(fits_device_memory(prof.get("LLaMA-2-70B"), acc.get(type)));
  }
  // 7B unsharded (112 GB) misses 80 GB devices but fits H200 (141 GB) and MI300X (192 GB).
  CHECK_FALSE(fits_device_memory(prof.get("LLaMA-2-7B"), acc.get("H100-SXM")));
  CHECK_FALSE(fits_device_memory(prof.get("LLaMA-2-7B"), acc.get("A100-80GB")));
  CHECK(fits_device_memory(prof.get("LLaMA-2-7B"), acc.get("H200")));
  CHECK(fits_device_memory(prof.get("LLaMA-2-7B"), acc.get("MI300X")));
  // GPT-2 1.5B (28 GB) fits a 32 GB V100 but not a 16 GB T4; ResNet-50 fits a K80 GPU.
  CHECK(fits_device_memory(prof.get("GPT-2-1.5B"), acc.get("V100")));
  CHECK_FALSE(fits_device_memory(prof.get("GPT-2-1.5B"), acc.get("T4")));
  CHECK(fits_device_memory(prof.get("ResNet-50"), acc.get("K80")));
  // Equal sizes fit.
  const AcceleratorCatalogue devices = test_devices();
  CHECK(fits_device_memory(round_profile(1e10), devices.get("Round")));
}

TEST_CASE("gradient bytes are exposed for the communication model", "[sim][speed]") {
  const WorkloadProfileCatalogue prof = WorkloadProfileCatalogue::builtin();
  CHECK(gradient_allreduce_bytes(prof.get("LLaMA-2-70B")) == 137953296384.0);
  CHECK(gradient_allreduce_bytes(prof.get("ResNet-50")) == 102228128.0);
}

TEST_CASE("impossible device counts are rejected with the reason", "[sim][speed]") {
  const AcceleratorCatalogue devices = test_devices();
  const AcceleratorSpec& dev = devices.get("Round");
  CHECK_THROWS_WITH(iteration_compute_time(round_profile(1e10), dev, 0),
                    "speed model (profile 'round' on Round): the number of devices must be a positive integer, got 0");
  CHECK_THROWS_WITH(iteration_compute_time(round_profile(1e10), dev, 65),
                    "speed model (profile 'round' on Round): cannot split a global batch of 64 samples over 65 devices; "
                    "use at most 64 devices or a larger batch_size");
  CHECK(iteration_compute_time(round_profile(1e10), dev, 64).compute_s == Approx(8e12 / 64 / 50e12));
}
