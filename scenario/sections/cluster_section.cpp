// `cluster:`: the node groups (unless `datacenters:` gives them) and the network topology.
#include "scenario/scenario.hpp"
#include "scenario/section_registry.hpp"

namespace schedsim::sections {

namespace {

void parse_cluster(const ConfigNode& cluster, SectionParse& p) {
  cluster.expect_map({"nodes", "topology"});
  p.cluster = cluster;
  // With `datacenters:` the cluster is their node groups (datacenters_section).
  if (!p.root.has("datacenters")) p.scenario.cluster = parse_node_groups(cluster.child("nodes"), p.total_devices);
  if (auto t = cluster.maybe_child("topology")) p.scenario.topology = TopologyConfig::from_yaml(*t);
}

void write_cluster(const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) {
  YAML::Node nodes(YAML::NodeType::Sequence);
  for (const auto& g : c.cluster) {
    YAML::Node gn(YAML::NodeType::Map);
    gn["count"] = g.count;
    gn["type"] = g.type;
    gn["devices_per_node"] = g.devices_per_node;
    nodes.push_back(gn);
  }
  if (!c.datacenters) doc["cluster"]["nodes"] = nodes;
  if (c.physics) {
    const TopologyConfig& topology = c.topology;
    YAML::Node t(YAML::NodeType::Map);
    t["nodes_per_nvlink_domain"] = topology.nodes_per_nvlink_domain;
    if (topology.intra_node_bandwidth_gbps) t["intra_node_bandwidth_gbps"] = *topology.intra_node_bandwidth_gbps;
    t["nic_bandwidth_gbps"] = topology.nic_bandwidth_gbps;
    if (topology.nics_per_node) t["nics_per_node"] = *topology.nics_per_node;
    t["nodes_per_rack"] = topology.nodes_per_rack;
    t["oversubscription"] = topology.oversubscription;
    t["nvlink_latency_us"] = topology.nvlink_latency_us;
    t["network_latency_us"] = topology.network_latency_us;
    if (topology.racks_per_pod) {
      t["racks_per_pod"] = *topology.racks_per_pod;
      t["pod_oversubscription"] = topology.pod_oversubscription;
    }
    doc["cluster"]["topology"] = t;
  }
}

}  // namespace

ScenarioSection cluster_section() {
  ScenarioSection s;
  s.key = "cluster";
  s.parse = parse_cluster;
  s.absent = [](SectionParse& p) {
    if (!p.root.has("datacenters")) p.root.child("cluster");  // fails: the key is required
    parse_cluster(ConfigNode(YAML::Node(YAML::NodeType::Map), p.root.source(), "cluster"), p);
  };
  s.to_yaml = write_cluster;
  return s;
}

}  // namespace schedsim::sections
