#include "policies/fragmentation.hpp"

namespace schedsim {

void TaskMix::add(int num_gpus, int milli) {
  ++total_;
  for (Class& c : classes_) {
    if (c.num_gpus == num_gpus && c.milli == milli) {
      ++c.count;
      return;
    }
  }
  classes_.push_back(Class{num_gpus, milli, 1});
}

double TaskMix::node_fragmentation_milli(const int* free_milli, int num_gpus) const {
  if (total_ == 0) return 0.0;
  std::int64_t all = 0, whole = 0;
  for (int g = 0; g < num_gpus; ++g) {
    all += free_milli[g];
    if (free_milli[g] == ClusterState::kWholeMilli) ++whole;
  }
  double sum = 0.0;
  for (const Class& c : classes_) {
    const int need = c.milli < ClusterState::kWholeMilli ? c.milli : ClusterState::kWholeMilli;
    std::int64_t unusable = 0;
    bool fits = false;
    if (c.milli < ClusterState::kWholeMilli) {
      for (int g = 0; g < num_gpus; ++g) {
        if (free_milli[g] >= need) fits = true;
        else unusable += free_milli[g];
      }
    } else {
      fits = whole >= c.num_gpus;
      unusable = all - whole * ClusterState::kWholeMilli;
    }
    sum += static_cast<double>(c.count) * static_cast<double>(fits ? unusable : all);
  }
  return sum / static_cast<double>(total_);
}

double cluster_fragmentation_milli(const ClusterState& state, const TaskMix& mix) {
  const ClusterSpec& spec = state.spec();
  std::vector<int> free;
  double total = 0.0;
  for (int n = 0; n < spec.num_nodes(); ++n) {
    const NodeSpec& ns = spec.node(n);
    free.resize(static_cast<std::size_t>(ns.num_devices));
    for (int g = 0; g < ns.num_devices; ++g) free[static_cast<std::size_t>(g)] = state.free_milli(ns.first_device + g);
    total += mix.node_fragmentation_milli(free.data(), ns.num_devices);
  }
  return total;
}

}  // namespace schedsim
