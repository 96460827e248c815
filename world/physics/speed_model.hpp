// Compute speed of a data-parallel training job: the roofline time of one iteration of a
// workload profile on n devices of one accelerator type, each processing 1/n of the global
// batch. Communication (the gradient all-reduce) is modelled elsewhere; this model only
// exposes the bytes it must move. docs/physics.md, "Compute speed", states the model.
#pragma once

#include "world/physics/accelerator_catalogue.hpp"
#include "world/physics/workload_profiles.hpp"

namespace schedsim {

// The two roofline terms of one iteration on one device and the time they bound.
struct IterationComputeTime {
  double compute_s = 0;  // (flops / n) / (peak(precision) * efficiency)
  double memory_s = 0;   // (memory_bytes / n) / (memory_bandwidth * efficiency)
  double time_s = 0;     // max(compute_s, memory_s)
  bool memory_bound() const { return memory_s > compute_s; }
};

// The device's peak FLOP/s for arithmetic in `precision`.
double peak_flops_per_s(const AcceleratorSpec& device, Precision precision);

// The roofline time of one iteration of `profile` over `num_devices` devices of type
// `device`. Throws InputError when num_devices < 1 or exceeds the global batch (a device
// would get no sample).
IterationComputeTime iteration_compute_time(const WorkloadProfile& profile, const AcceleratorSpec& device,
                                            int num_devices);

// Samples per second of the whole job from compute alone: batch_size / time_s.
double compute_samples_per_s(const WorkloadProfile& profile, const AcceleratorSpec& device, int num_devices);

// Whether one device holds the profile's per-device footprint:
// memory_per_device_bytes <= device memory_bytes.
bool fits_device_memory(const WorkloadProfile& profile, const AcceleratorSpec& device);

// Bytes each iteration's data-parallel gradient all-reduce carries (the profile's
// gradient_bytes), for the communication model.
inline double gradient_allreduce_bytes(const WorkloadProfile& profile) { return profile.gradient_bytes; }

}  // namespace schedsim
