// libFuzzer target: the machine-inventory readers behind `schedsim trace cluster-from`,
// format named by SCHEDSIM_FUZZ_FORMAT (pai-machines, the default, or openb-nodes). The
// groups read must be usable as a cluster: positive device and machine counts.
#include <cstdlib>

#include "tests/fuzz/fuzz_input.hpp"
#include "traces/cluster_inventory.hpp"

using namespace schedsim;

namespace {
std::string g_format = "pai-machines";
}

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  if (const char* f = std::getenv("SCHEDSIM_FUZZ_FORMAT")) g_format = f;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = fuzz::write_input("inventory.csv", data, size);
  fuzz::expect_input_errors_only([&] {
    const Inventory inv = read_inventory(path, g_format);
    std::uint64_t machines = 0;
    for (const auto& g : inv.groups) {
      if (g.devices_per_node < 1 || g.count < 1 || g.type.empty()) {
        std::fprintf(stderr, "fuzz: unusable inventory group '%s' x %llu with %d devices\n", g.type.c_str(),
                     static_cast<unsigned long long>(g.count), g.devices_per_node);
        std::abort();
      }
      machines += g.count;
    }
    if (machines != inv.machines_read) {
      std::fprintf(stderr, "fuzz: groups count %llu machines, the reader %llu\n", static_cast<unsigned long long>(machines),
                   static_cast<unsigned long long>(inv.machines_read));
      std::abort();
    }
    (void)inventory_yaml(inv);
  });
  return 0;
}
