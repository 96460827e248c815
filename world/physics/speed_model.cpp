#include "world/physics/speed_model.hpp"

#include <algorithm>
#include <string>

#include "base/error.hpp"

namespace schedsim {

double peak_flops_per_s(const AcceleratorSpec& device, Precision precision) {
  return precision == Precision::fp32 ? device.peak_fp32_flops : device.peak_dense_bf16_flops;
}

IterationComputeTime iteration_compute_time(const WorkloadProfile& profile, const AcceleratorSpec& device,
                                            int num_devices) {
  const std::string where = "speed model (profile '" + profile.name + "' on " + device.name + ")";
  if (num_devices < 1) {
    throw InputError(where, "the number of devices must be a positive integer, got " + std::to_string(num_devices));
  }
  if (num_devices > profile.batch_size) {
    throw InputError(where, "cannot split a global batch of " + std::to_string(profile.batch_size) + " samples over " +
                                std::to_string(num_devices) + " devices; use at most " +
                                std::to_string(profile.batch_size) + " devices or a larger batch_size");
  }
  const double peak = peak_flops_per_s(device, profile.precision);
  if (!(peak > 0) || !(device.memory_bandwidth_bytes_per_s > 0) || !(profile.efficiency > 0)) {
    throw InputError(where, "peak FLOP/s, memory bandwidth and efficiency must be > 0");
  }
  const double n = static_cast<double>(num_devices);
  IterationComputeTime t;
  t.compute_s = (profile.flops_per_iteration / n) / (peak * profile.efficiency);
  t.memory_s = (profile.memory_bytes_per_iteration / n) / (device.memory_bandwidth_bytes_per_s * profile.efficiency);
  t.time_s = std::max(t.compute_s, t.memory_s);
  return t;
}

double compute_samples_per_s(const WorkloadProfile& profile, const AcceleratorSpec& device, int num_devices) {
  return static_cast<double>(profile.batch_size) / iteration_compute_time(profile, device, num_devices).time_s;
}

bool fits_device_memory(const WorkloadProfile& profile, const AcceleratorSpec& device) {
  return profile.memory_per_device_bytes <= device.memory_bytes;
}

}  // namespace schedsim
