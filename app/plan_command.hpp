// `schedsim plan MODEL`: the parallelism planner on the command line (docs/parallelism.md):
// for a catalogued LLM, a device type and one or more device counts, the fastest plan
// that fits, its memory per device and its iteration time.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace schedsim {

struct PlanCliOptions {
  std::string model;              // catalogue name (LLaMA-2-7B, ...) or a model YAML file (*.yaml, *.yml)
  std::string device = "H100-SXM";
  std::vector<int> devices;       // device counts, one row each
  int global_batch = 0;           // sequences per iteration; 0: 1024
  int seq_length = 0;             // 0: the model's
  double nic_gbps = 400;          // network bandwidth per NIC, Gb/s
  int devices_per_node = 8;
  int nodes_per_nvlink_domain = 1;
};

// Prints one table row per device count (the plan, GB per device, iteration time, MFU,
// tokens/s per device). Throws InputError for an unknown model or device type, and, for
// a count with no plan that fits, says so in that row (the other rows still print).
void run_plan_cli(const PlanCliOptions& options, std::ostream& out);

}  // namespace schedsim
