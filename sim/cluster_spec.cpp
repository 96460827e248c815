#include "sim/cluster_spec.hpp"

#include <algorithm>
#include <limits>

#include "base/error.hpp"

namespace schedsim {

ClusterSpec::ClusterSpec(const std::vector<NodeGroup>& groups) : groups_(groups) {
  if (groups.empty()) throw InputError("cluster.nodes", "the cluster has no nodes; add at least one node group");
  std::int64_t total = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const NodeGroup& group = groups[g];
    const std::string where = "cluster.nodes[" + std::to_string(g) + "]";
    if (group.count <= 0) throw InputError(where + ".count", "must be a positive integer, got " + std::to_string(group.count));
    if (group.devices_per_node <= 0) {
      throw InputError(where + ".devices_per_node", "must be a positive integer, got " + std::to_string(group.devices_per_node));
    }
    if (group.type.empty()) throw InputError(where + ".type", "must be a non-empty device type name");
    total += static_cast<std::int64_t>(group.count) * group.devices_per_node;
    if (total > 100'000'000) throw InputError("cluster.nodes", "more than 100,000,000 devices in total; this is surely a typo");
    auto it = std::find(device_types_.begin(), device_types_.end(), group.type);
    const int type_index = static_cast<int>(it - device_types_.begin());
    if (it == device_types_.end()) device_types_.push_back(group.type);
    for (int n = 0; n < group.count; ++n) {
      const int node_index = static_cast<int>(nodes_.size());
      nodes_.push_back(NodeSpec{type_index, group.devices_per_node, static_cast<DeviceId>(device_node_.size())});
      device_node_.insert(device_node_.end(), static_cast<std::size_t>(group.devices_per_node), node_index);
    }
  }
}

}  // namespace schedsim
