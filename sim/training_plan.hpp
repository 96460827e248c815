// Training jobs that run under a parallelism plan (issue 26): what the physics model asks
// about such a job, without knowing how plans are made. sim/ never includes
// parallelism/; the implementation (parallelism/llm_plan_model.hpp) is built by the
// composition root (scenario/sections/physics_section.cpp) and handed to ClusterPhysics.
// docs/parallelism.md, "In a run".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

#include "sim/job.hpp"

namespace schedsim {

class ConfigNode;
// Declared in world/physics/accelerator_catalogue.hpp (a higher layer; sim/ does not include it).
struct AcceleratorSpec;

// A job class's `plan:` as written: `auto` (the planner's fastest fitting plan for the
// devices offered), `data_parallel` (no plan: the workload profile's whole-model data
// parallelism, as before issue 26), or a map of the plan's fields (docs/parallelism.md,
// "The plan"); `data` omitted = derived from the device count.
struct PlanRequest {
  enum class Kind { kAuto, kDataParallel, kFixed };
  Kind kind = Kind::kAuto;
  std::optional<int> tensor, pipeline, virtual_stages, data, expert, context, micro_batch, global_batch;
  std::optional<bool> sequence_parallel, fused_attention;
  std::string sharding;   // "" = zero0; zero0..zero3, fsdp
  std::string recompute;  // "" = none; none, selective, full
  std::string where;      // "file:line: key" of the request, for messages

  // Strict: unknown keys, degrees below 1, unknown sharding or recompute names throw
  // InputError naming the file, line and key.
  static PlanRequest parse(const ConfigNode& node);
  YAML::Node to_yaml() const;
  bool operator==(const PlanRequest& o) const;
};

// One LLM job on `num_devices` devices of one type, alone (no other job on its links).
struct PlannedIteration {
  std::string problem;      // why it cannot run there (the OOM / no-plan message); "" = it can
  std::string plan;         // the plan, ParallelismPlan::describe()
  double iteration_s = 0;   // one iteration alone
  double compute_s = 0;     // its compute + element-wise part (the energy model's busy share)
  double memory_bytes = 0;  // per device
  // Data-parallel traffic that leaves the job's NVLink domains: bytes one device sends
  // per iteration (0 when the DP group stays inside a domain). The physics model puts a
  // node's worth of it through each shared link the placement crosses.
  double dp_network_bytes_per_device = 0;
};

class TrainingPlanModel {
 public:
  virtual ~TrainingPlanModel() = default;
  // Whether `job` runs under a plan (its model names an LLM of the parallelism catalogue
  // with a plan request other than data_parallel).
  virtual bool handles(const JobSpec& job) const = 0;
  // The job on `num_devices` devices of `device` (devices_per_node of them per node).
  // With `ignore_memory`, a plan is chosen as if memory were unlimited (for the
  // reference placement, whose only use is the rate's denominator).
  virtual PlannedIteration plan(const JobSpec& job, const AcceleratorSpec& device, int num_devices, int devices_per_node,
                                bool ignore_memory = false) const = 0;
  // Trainable parameters of the job's model (checkpoint size).
  virtual double params(const JobSpec& job) const = 0;
};

}  // namespace schedsim
