// The immutable description of a cluster: its nodes and devices. Mutable occupancy lives
// in ClusterState; policies only ever see this spec read-only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace schedsim {

using DeviceId = std::int32_t;

// `count` identical nodes of `devices_per_node` devices of one type: the unit of the
// `cluster.nodes` list in YAML.
struct NodeGroup {
  int count = 1;
  std::string type;
  int devices_per_node = 0;
};

struct NodeSpec {
  int type_index = 0;     // into ClusterSpec::device_types()
  int num_devices = 0;
  DeviceId first_device = 0;  // devices of a node are numbered contiguously
};

class ClusterSpec {
 public:
  // Throws InputError naming the key (e.g. "cluster.nodes[1].count") when a group has a
  // non-positive count or device count, or an empty type.
  explicit ClusterSpec(const std::vector<NodeGroup>& groups);

  int num_devices() const { return static_cast<int>(device_node_.size()); }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const NodeSpec& node(int index) const { return nodes_[static_cast<std::size_t>(index)]; }
  int node_of(DeviceId d) const { return device_node_[static_cast<std::size_t>(d)]; }
  const std::vector<std::string>& device_types() const { return device_types_; }
  const std::string& device_type_of(DeviceId d) const {
    return device_types_[static_cast<std::size_t>(node(node_of(d)).type_index)];
  }
  const std::vector<NodeGroup>& groups() const { return groups_; }

 private:
  std::vector<NodeGroup> groups_;
  std::vector<std::string> device_types_;
  std::vector<NodeSpec> nodes_;
  std::vector<int> device_node_;
};

}  // namespace schedsim
