#include "app/plan_command.hpp"

#include <cstdio>

#include "parallelism/planner.hpp"
#include "base/config_node.hpp"
#include "base/error.hpp"

namespace schedsim {

void run_plan_cli(const PlanCliOptions& options, std::ostream& out) {
  auto ends_with = [&](const char* suffix) {
    const std::string x(suffix);
    return options.model.size() >= x.size() && options.model.compare(options.model.size() - x.size(), x.size(), x) == 0;
  };
  // A catalogue name, or a YAML file describing the model (its own shape or a base: with changes).
  ModelSpec model = ends_with(".yaml") || ends_with(".yml") ? model_from_yaml(ConfigNode::load_file(options.model))
                                                            : find_model(options.model);
  if (options.seq_length > 0) model.seq_length = options.seq_length;
  const AcceleratorCatalogue catalogue = AcceleratorCatalogue::builtin();
  const AcceleratorSpec& device = catalogue.get(options.device);
  TopologyConfig topology;
  topology.nic_bandwidth_gbps = options.nic_gbps;
  topology.nodes_per_nvlink_domain = options.nodes_per_nvlink_domain;
  const ClusterNetwork network = ClusterNetwork::from_topology(topology, device, options.devices_per_node);
  const int batch = options.global_batch > 0 ? options.global_batch : 1024;

  char buf[512];
  std::snprintf(buf, sizeof buf, "%s (%.1fB parameters, sequence %d, global batch %d) on %s, %.0f Gb/s per NIC, %d devices per NVLink domain\n\n",
                model.name.c_str(), model.total_params() / 1e9, model.seq_length, batch, device.name.c_str(), options.nic_gbps,
                network.devices_per_nvlink_domain);
  out << buf;
  std::snprintf(buf, sizeof buf, "%8s %-72s %8s %10s %6s %12s\n", "devices", "plan", "GB/dev", "iter (s)", "MFU", "tokens/s/dev");
  out << buf;
  for (int n : options.devices) {
    try {
      const PlanChoice c = plan_training(model, device, network, n, batch);
      std::snprintf(buf, sizeof buf, "%8d %-72s %8.1f %10.3f %6.3f %12.0f\n", n, c.plan.describe().c_str(), c.memory.total_bytes() / 1e9,
                    c.time.iteration_s, c.time.mfu, c.time.tokens_per_s / n);
      out << buf;
    } catch (const InputError& e) {
      // One count that cannot hold the model does not hide the answers for the others.
      std::snprintf(buf, sizeof buf, "%8d ", n);
      out << buf << e.what() << '\n';
    }
  }
}

}  // namespace schedsim
