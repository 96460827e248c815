// Machine inventories of public traces turned into a scenario's `cluster:` section:
// Alibaba PAI 2020 pai_machine_spec.csv and Alibaba 2023 openb node lists. Machines with
// the same GPU type and GPU count become one node group.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/trace_reader.hpp"

namespace schedsim {

struct InventoryGroup {
  std::string type;          // GPU model as the inventory names it (V100, P100, T4, G2...)
  int devices_per_node = 0;
  std::uint64_t count = 0;   // machines
};

struct Inventory {
  std::string path, format;
  std::vector<InventoryGroup> groups;  // sorted by type, then GPUs per machine
  std::uint64_t machines_read = 0;     // GPU machines, i.e. the sum of the counts
  RowSkips skipped;                    // e.g. cpu_only machines
};

// `format` is "pai-machines" or "openb-nodes". Throws InputError naming file, line and
// field for a bad row.
Inventory read_inventory(const std::string& path, const std::string& format);
// A YAML document with one `cluster:` key, preceded by comment lines that say where it
// came from and what was skipped.
std::string inventory_yaml(const Inventory& inv);

}  // namespace schedsim
