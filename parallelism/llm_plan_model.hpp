// The kernel's view of LLM training jobs with a parallelism plan (sim/training_plan.hpp),
// implemented with this module's catalogue, memory model, time model and planner. Built
// by the composition root (experiments/simulation_setup.cpp) from the scenario's plan
// requests and topology; immutable afterwards except for its answer cache.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "parallelism/model_spec.hpp"
#include "parallelism/planner.hpp"
#include "world/physics/topology.hpp"
#include "sim/training_plan.hpp"

namespace schedsim {

class LlmPlanModel : public TrainingPlanModel {
 public:
  // `requests`: (model name as the jobs carry it, its plan request). Names must be
  // catalogue models (find_model; InputError at the request's `where` otherwise).
  // Requests of kind data_parallel are left out: such jobs keep their workload profile.
  LlmPlanModel(const std::vector<std::pair<std::string, PlanRequest>>& requests, TopologyConfig topology, PlannerOptions options = {});

  bool handles(const JobSpec& job) const override { return entry_of(job) != nullptr; }
  PlannedIteration plan(const JobSpec& job, const AcceleratorSpec& device, int num_devices, int devices_per_node,
                        bool ignore_memory = false) const override;
  double params(const JobSpec& job) const override;
  bool empty() const { return entries_.empty(); }

  // The global batch of a job class without `global_batch`: the LLaMA papers' 4M tokens
  // (4,194,304) in sequences of the model's length, at least 1.
  static int default_global_batch(const ModelSpec& model);

 private:
  struct Entry {
    ModelSpec model;
    PlanRequest request;
  };
  const Entry* entry_of(const JobSpec& job) const;
  PlannedIteration compute(const Entry& e, const AcceleratorSpec& device, int num_devices, int devices_per_node, bool ignore_memory) const;

  std::map<std::string, Entry> entries_;  // by the job's model string
  TopologyConfig topology_;
  PlannerOptions options_;
  // Answers by (model, device type, devices, devices per node, ignore memory): a run asks
  // about few; the planner takes milliseconds.
  mutable std::map<std::tuple<std::string, const AcceleratorSpec*, int, int, bool>, PlannedIteration> cache_;
  mutable std::string last_model_;
  mutable const Entry* last_entry_ = nullptr;
};

}  // namespace schedsim
