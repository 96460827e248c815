#include "traces/cluster_inventory.hpp"

#include <map>
#include <sstream>

#include "base/error.hpp"
#include "traces/csv_table.hpp"

namespace schedsim {

Inventory read_inventory(const std::string& path, const std::string& format) {
  Inventory inv;
  inv.path = path;
  inv.format = format;
  std::unique_ptr<CsvTable> t;
  int type_col = 0, gpu_col = 0;
  if (format == "pai-machines") {
    t = std::make_unique<CsvTable>(path, format, std::vector<std::string>{"machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"});
    type_col = 1;
    gpu_col = 4;
  } else if (format == "openb-nodes") {
    t = std::make_unique<CsvTable>(path, format);
    type_col = t->column("model", true);
    gpu_col = t->column("gpu", true);
  } else {
    throw InputError(path, "unknown inventory format '" + format + "'; known formats: pai-machines, openb-nodes");
  }
  std::map<std::pair<std::string, int>, std::uint64_t> groups;
  while (t->next_row()) {
    const auto gpus = t->integer(gpu_col, 0, 100'000);
    std::string type(t->text(type_col));
    if (gpus == 0) {
      ++inv.skipped["cpu_only"];
      continue;
    }
    if (type.empty() || type == "nan") t->fail(type_col, "the GPU model is empty on a machine with GPUs", "missing_value");
    if (type.find_first_of("{}[],:#&*!|>'\"%@`\n") != std::string::npos) {
      t->fail(type_col, "the GPU model " + t->quoted(type_col) + " has characters that cannot be written as a plain YAML name", "bad_value");
    }
    ++groups[{type, static_cast<int>(gpus)}];
    ++inv.machines_read;
  }
  if (groups.empty()) throw InputError(path, "the inventory has no machine with GPUs");
  for (const auto& [key, n] : groups) inv.groups.push_back({key.first, key.second, n});
  return inv;
}

std::string inventory_yaml(const Inventory& inv) {
  std::ostringstream out;
  out << "# " << inv.machines_read << " GPU machines from " << inv.path << " (format " << inv.format << ")";
  for (const auto& [reason, n] : inv.skipped) out << "; skipped " << n << " " << reason;
  out << "\ncluster:\n  nodes:\n";
  for (const auto& g : inv.groups) out << "    - {count: " << g.count << ", type: " << g.type << ", devices_per_node: " << g.devices_per_node << "}\n";
  return out.str();
}

}  // namespace schedsim
