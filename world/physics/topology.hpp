// The network of a cluster: NVLink domains, node NICs, racks behind leaf switches with an
// oversubscribed uplink to the spine, and optionally pods of racks. TopologyConfig is
// what the user writes under `cluster.topology`; TopologySpec is the immutable result of
// laying the cluster's nodes out in it: which domain, rack and pod each node is in, and
// the list of links with their capacities. For a job's placement it tells which links the
// job's ring all-reduce crosses (CommPath). The model and its formulas are described in
// docs/physics.md ("Topology").
#pragma once

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster_spec.hpp"
#include "base/config_node.hpp"
#include "base/span.hpp"

namespace schedsim {

// The keys of `cluster.topology`. Every key is optional; the defaults describe racks of
// 32 nodes with one NVSwitch domain per node and one 400 Gb/s NIC per device, non-blocking.
struct TopologyConfig {
  // Nodes joined by one NVLink/NVSwitch fabric. 1: the fabric is inside each node.
  // 9: e.g. a 72-device NVL72 rack of 8-device nodes. Must divide nodes_per_rack.
  int nodes_per_nvlink_domain = 1;
  // NVLink bandwidth per device inside a domain, in GB/s (gigabytes). Unset: the caller's
  // per-device-type default (the accelerator catalogue).
  std::optional<double> intra_node_bandwidth_gbps;
  // Bandwidth of one NIC in Gb/s (gigabits), each direction.
  double nic_bandwidth_gbps = 400;
  // NICs per node. Unset: one per device of the node.
  std::optional<int> nics_per_node;
  // Nodes behind one leaf (top-of-rack) switch.
  int nodes_per_rack = 32;
  // A rack's NIC bandwidth divided by its uplink bandwidth to the spine: 1 is
  // non-blocking, 2 means the uplink has half the rack's NIC bandwidth. At least 1.
  double oversubscription = 1.0;
  // Latency of one ring step inside an NVLink domain, in microseconds.
  double nvlink_latency_us = 1.0;
  // Latency of one ring step over the network (NIC, leaf, spine), in microseconds.
  double network_latency_us = 5.0;
  // Racks per pod (a third switching level). Unset: all racks hang off one spine and
  // there are no pod uplinks.
  std::optional<int> racks_per_pod;
  // Like oversubscription, for a pod's uplink: the sum of its racks' uplink bandwidth
  // divided by the pod's uplink bandwidth. Only with racks_per_pod. At least 1.
  double pod_oversubscription = 1.0;

  // Parses the map at `node` (`cluster.topology`); a null node (`topology:` with nothing
  // after it) gives the defaults. Throws InputError naming the file, line and key for an
  // unknown key (listing the valid ones), a value of the wrong type or out of range.
  static TopologyConfig from_yaml(const ConfigNode& node);
  // The keys from_yaml accepts, in documentation order.
  static const std::vector<std::string>& keys();
};

enum class LinkKind {
  kNvlinkDomain,  // per-device NVLink bandwidth of one domain; never shared between jobs
  kNodeNic,       // the NIC bundle of one node, full duplex
  kRackUplink,    // a leaf switch's uplink to the spine (or to its pod)
  kPodUplink,     // a pod's uplink to the top level
};
// "nvlink_domain", "node_nic", "rack_uplink", "pod_uplink".
const char* to_string(LinkKind kind);

struct Link {
  std::string name;           // e.g. "node 12 NIC", "rack 3 uplink"
  double capacity_Bps = 0;    // bytes per second, each direction
  double latency_s = 0;       // per ring step across this link
  LinkKind kind = LinkKind::kNodeNic;
};

// How far apart a job's devices are; decides the per-step latency of its ring.
enum class LatencyClass {
  kLocal,   // one device: no communication
  kNvlink,  // all devices in one NVLink domain
  kNetwork, // devices in several domains
};
const char* to_string(LatencyClass latency_class);

// The links one job's ring all-reduce crosses. The ring visits the job's devices node by
// node and rack by rack, so it enters and leaves each node, rack and pod once: one flow
// per crossed node NIC, rack uplink and pod uplink (NCCL-style).
struct CommPath {
  LatencyClass latency_class = LatencyClass::kLocal;
  double latency_s = 0;  // per ring step: nvlink_latency_us or network_latency_us
  // kNvlinkDomain links of the domains holding at least two of the job's devices (their
  // ring hops run over NVLink). Per job: the job does not share them with other jobs.
  std::vector<int> nvlink_links;
  // The smallest capacity among nvlink_links; +infinity when there is none.
  double private_bandwidth_Bps = std::numeric_limits<double>::infinity();
  // Links shared with other jobs, ascending: the NICs of every node holding the job's
  // devices, plus every such rack's uplink when the job spans racks, plus every such
  // pod's uplink when it spans pods. Empty when the job stays in one NVLink domain.
  std::vector<int> shared_links;
};

class TopologySpec {
 public:
  // Intra-node (NVLink) bandwidth per device in bytes/s for a device type; used for the
  // types when the config has no intra_node_bandwidth_gbps. May be empty then if the
  // config sets it.
  using IntraNodeBandwidthFn = std::function<double(const std::string& device_type)>;

  // Lays the cluster's nodes out in order (group by group, as ClusterSpec numbers them):
  // consecutive nodes fill an NVLink domain, consecutive domains fill a rack, consecutive
  // racks fill a pod. Throws InputError naming the `cluster.topology` key when a value is
  // out of range, when an NVLink domain would join nodes of different device types, or
  // when no intra-node bandwidth is known for a device type.
  TopologySpec(const ClusterSpec& cluster, const TopologyConfig& config,
               const IntraNodeBandwidthFn& default_intra_node_bandwidth_Bps);

  const ClusterSpec& cluster() const { return *cluster_; }
  const TopologyConfig& config() const { return config_; }

  int num_nvlink_domains() const { return num_domains_; }
  int num_racks() const { return num_racks_; }
  int num_pods() const { return num_pods_; }  // 0 without racks_per_pod
  int nvlink_domain_of_node(int node) const { return node / config_.nodes_per_nvlink_domain; }
  int rack_of_node(int node) const { return node / config_.nodes_per_rack; }
  int pod_of_rack(int rack) const { return config_.racks_per_pod ? rack / *config_.racks_per_pod : 0; }
  int nvlink_domain_of(DeviceId d) const { return nvlink_domain_of_node(cluster_->node_of(d)); }
  int rack_of(DeviceId d) const { return rack_of_node(cluster_->node_of(d)); }

  // All links: the NVLink domains (in domain order), then the node NICs, then the rack
  // uplinks, then the pod uplinks. Use the accessors below for the index of one link.
  const std::vector<Link>& links() const { return links_; }
  const Link& link(int index) const { return links_[static_cast<std::size_t>(index)]; }
  int nvlink_link(int domain) const { return domain; }
  int nic_link(int node) const { return nic_base_ + node; }
  int rack_uplink(int rack) const { return rack_base_ + rack; }
  int pod_uplink(int pod) const { return pod_base_ + pod; }

  // The links a job on `devices` crosses. The devices must be distinct, valid ids of the
  // cluster (InvariantError otherwise: the kernel validates placements before this).
  CommPath comm_path(Span<DeviceId> devices) const;
  // The same, reusing `out`'s buffers (no allocation once they have grown). Keeps no
  // state: one spec may serve several threads.
  void comm_path(Span<DeviceId> devices, CommPath& out) const;

 private:
  const ClusterSpec* cluster_;
  TopologyConfig config_;
  int num_domains_ = 0;
  int num_racks_ = 0;
  int num_pods_ = 0;
  int nic_base_ = 0;
  int rack_base_ = 0;
  int pod_base_ = 0;
  double nvlink_latency_s_ = 0;
  double network_latency_s_ = 0;
  std::vector<Link> links_;
};

}  // namespace schedsim
