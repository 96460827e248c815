#include "world/physics/topology.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "base/error.hpp"

namespace schedsim {
namespace {

constexpr std::int64_t kMaxCount = 10'000'000;
constexpr const char* kPrefix = "cluster.topology.";

std::string number(double v) {
  std::ostringstream out;
  out.precision(15);
  out << v;
  return out.str();
}

int count_from(const ConfigNode& n) {
  const std::int64_t v = n.as_positive_int();
  if (v > kMaxCount) n.fail("must be at most " + std::to_string(kMaxCount) + ", got " + std::to_string(v));
  return static_cast<int>(v);
}

double ratio_from(const ConfigNode& n) {
  const double v = n.as_double();
  if (!(v >= 1.0)) {
    n.fail("must be >= 1 (1 = non-blocking, 2 = the uplink has half the bandwidth below it), got " + number(v));
  }
  return v;
}

[[noreturn]] void bad(const std::string& key, const std::string& what) { throw InputError(kPrefix + key, what); }

void check_count(const std::string& key, int v) {
  if (v <= 0 || v > kMaxCount) bad(key, "must be an integer in [1, " + std::to_string(kMaxCount) + "], got " + std::to_string(v));
}

void check_positive(const std::string& key, double v) {
  if (!(std::isfinite(v) && v > 0)) bad(key, "must be a finite number > 0, got " + number(v));
}

void check_nonnegative(const std::string& key, double v) {
  if (!(std::isfinite(v) && v >= 0)) bad(key, "must be a finite number >= 0, got " + number(v));
}

void check_ratio(const std::string& key, double v) {
  if (!(std::isfinite(v) && v >= 1.0)) {
    bad(key, "must be a finite number >= 1 (1 = non-blocking, 2 = the uplink has half the bandwidth below it), got " + number(v));
  }
}

std::string rack_domain_mismatch(int nodes_per_rack, int nodes_per_domain) {
  return "must be a multiple of nodes_per_nvlink_domain (" + std::to_string(nodes_per_domain) + ") so that no NVLink domain straddles two racks, got " +
         std::to_string(nodes_per_rack) + "; e.g. " + std::to_string(nodes_per_domain) + " or " + std::to_string(4 * nodes_per_domain);
}

// Every value in range, checked again here because a config may be built in code.
void validate(const TopologyConfig& c) {
  check_count("nodes_per_nvlink_domain", c.nodes_per_nvlink_domain);
  if (c.intra_node_bandwidth_gbps) check_positive("intra_node_bandwidth_gbps", *c.intra_node_bandwidth_gbps);
  check_positive("nic_bandwidth_gbps", c.nic_bandwidth_gbps);
  if (c.nics_per_node) check_count("nics_per_node", *c.nics_per_node);
  check_count("nodes_per_rack", c.nodes_per_rack);
  if (c.nodes_per_rack % c.nodes_per_nvlink_domain != 0) bad("nodes_per_rack", rack_domain_mismatch(c.nodes_per_rack, c.nodes_per_nvlink_domain));
  check_ratio("oversubscription", c.oversubscription);
  check_nonnegative("nvlink_latency_us", c.nvlink_latency_us);
  check_nonnegative("network_latency_us", c.network_latency_us);
  if (c.racks_per_pod) check_count("racks_per_pod", *c.racks_per_pod);
  check_ratio("pod_oversubscription", c.pod_oversubscription);
  if (!c.racks_per_pod && c.pod_oversubscription != 1.0) bad("pod_oversubscription", "needs racks_per_pod: without pods there is no pod uplink");
}

int ceil_div(int a, int b) { return a / b + (a % b != 0 ? 1 : 0); }

}  // namespace

const std::vector<std::string>& TopologyConfig::keys() {
  static const std::vector<std::string> k{"nodes_per_nvlink_domain", "intra_node_bandwidth_gbps", "nic_bandwidth_gbps", "nics_per_node",
                                          "nodes_per_rack",          "oversubscription",          "nvlink_latency_us",  "network_latency_us",
                                          "racks_per_pod",           "pod_oversubscription"};
  return k;
}

TopologyConfig TopologyConfig::from_yaml(const ConfigNode& node) {
  TopologyConfig c;
  if (node.is_null()) return c;
  node.expect_keys(keys());
  const auto domain = node.maybe_child("nodes_per_nvlink_domain");
  if (domain) c.nodes_per_nvlink_domain = count_from(*domain);
  if (auto v = node.maybe_child("intra_node_bandwidth_gbps")) c.intra_node_bandwidth_gbps = v->as_positive_double();
  if (auto v = node.maybe_child("nic_bandwidth_gbps")) c.nic_bandwidth_gbps = v->as_positive_double();
  if (auto v = node.maybe_child("nics_per_node")) c.nics_per_node = count_from(*v);
  const auto rack = node.maybe_child("nodes_per_rack");
  if (rack) c.nodes_per_rack = count_from(*rack);
  if (c.nodes_per_rack % c.nodes_per_nvlink_domain != 0) {
    const std::string what = rack_domain_mismatch(c.nodes_per_rack, c.nodes_per_nvlink_domain);
    if (rack) rack->fail(what);
    (domain ? *domain : node).fail("the default nodes_per_rack (" + std::to_string(c.nodes_per_rack) + ") is not a multiple of " + std::to_string(c.nodes_per_nvlink_domain) +
                 ", so NVLink domains would straddle racks; set nodes_per_rack to a multiple, e.g. " + std::to_string(c.nodes_per_nvlink_domain) + " or " +
                 std::to_string(4 * c.nodes_per_nvlink_domain));
  }
  if (auto v = node.maybe_child("oversubscription")) c.oversubscription = ratio_from(*v);
  if (auto v = node.maybe_child("nvlink_latency_us")) c.nvlink_latency_us = v->as_nonnegative_double();
  if (auto v = node.maybe_child("network_latency_us")) c.network_latency_us = v->as_nonnegative_double();
  if (auto v = node.maybe_child("racks_per_pod")) c.racks_per_pod = count_from(*v);
  if (auto v = node.maybe_child("pod_oversubscription")) {
    if (!c.racks_per_pod) v->fail("needs racks_per_pod: without pods there is no pod uplink");
    c.pod_oversubscription = ratio_from(*v);
  }
  return c;
}

const char* to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::kNvlinkDomain: return "nvlink_domain";
    case LinkKind::kNodeNic: return "node_nic";
    case LinkKind::kRackUplink: return "rack_uplink";
    case LinkKind::kPodUplink: return "pod_uplink";
  }
  return "?";
}

const char* to_string(LatencyClass latency_class) {
  switch (latency_class) {
    case LatencyClass::kLocal: return "local";
    case LatencyClass::kNvlink: return "nvlink";
    case LatencyClass::kNetwork: return "network";
  }
  return "?";
}

TopologySpec::TopologySpec(const ClusterSpec& cluster, const TopologyConfig& config,
                           const IntraNodeBandwidthFn& default_intra_node_bandwidth_Bps)
    : cluster_(&cluster), config_(config) {
  validate(config_);
  const int num_nodes = cluster.num_nodes();
  const int per_domain = config_.nodes_per_nvlink_domain;
  num_domains_ = ceil_div(num_nodes, per_domain);
  num_racks_ = ceil_div(num_nodes, config_.nodes_per_rack);
  num_pods_ = config_.racks_per_pod ? ceil_div(num_racks_, *config_.racks_per_pod) : 0;
  nic_base_ = num_domains_;
  rack_base_ = nic_base_ + num_nodes;
  pod_base_ = rack_base_ + num_racks_;
  links_.reserve(static_cast<std::size_t>(pod_base_ + num_pods_));

  // The group each node came from, for messages.
  std::vector<int> group_of_node;
  group_of_node.reserve(static_cast<std::size_t>(num_nodes));
  for (std::size_t g = 0; g < cluster.groups().size(); ++g) group_of_node.insert(group_of_node.end(), static_cast<std::size_t>(cluster.groups()[g].count), static_cast<int>(g));

  // Per-device NVLink bandwidth of each device type, asked once per type.
  const auto& types = cluster.device_types();
  std::vector<double> type_bandwidth_Bps(types.size());
  for (std::size_t t = 0; t < types.size(); ++t) {
    if (config_.intra_node_bandwidth_gbps) {
      type_bandwidth_Bps[t] = *config_.intra_node_bandwidth_gbps * 1e9;
      continue;
    }
    const double v = default_intra_node_bandwidth_Bps ? default_intra_node_bandwidth_Bps(types[t]) : std::nan("");
    if (!(std::isfinite(v) && v > 0)) {
      bad("intra_node_bandwidth_gbps", "no intra-node bandwidth is known for device type '" + types[t] +
                                           "'; add it to the accelerator catalogue or set cluster.topology.intra_node_bandwidth_gbps (GB/s per device)");
    }
    type_bandwidth_Bps[t] = v;
  }

  nvlink_latency_s_ = config_.nvlink_latency_us / 1e6;
  network_latency_s_ = config_.network_latency_us / 1e6;
  for (int d = 0; d < num_domains_; ++d) {
    const int first = d * per_domain;
    const int last = std::min(num_nodes, first + per_domain) - 1;
    const int type = cluster.node(first).type_index;
    for (int n = first + 1; n <= last; ++n) {
      if (cluster.node(n).type_index == type) continue;
      const int g = group_of_node[static_cast<std::size_t>(first)];
      bad("nodes_per_nvlink_domain", "NVLink domain " + std::to_string(d) + " (nodes " + std::to_string(first) + "-" + std::to_string(last) +
                                         ") would join device types '" + types[static_cast<std::size_t>(type)] + "' and '" +
                                         types[static_cast<std::size_t>(cluster.node(n).type_index)] + "', but a domain joins devices of one type; make cluster.nodes[" +
                                         std::to_string(g) + "].count (" + std::to_string(cluster.groups()[static_cast<std::size_t>(g)].count) +
                                         ") a multiple of " + std::to_string(per_domain) + " or set nodes_per_nvlink_domain to 1");
    }
    links_.push_back(Link{"NVLink domain " + std::to_string(d), type_bandwidth_Bps[static_cast<std::size_t>(type)], nvlink_latency_s_, LinkKind::kNvlinkDomain});
  }

  const double nic_Bps = config_.nic_bandwidth_gbps * 1e9 / 8.0;
  std::vector<double> rack_nic_Bps(static_cast<std::size_t>(num_racks_), 0.0);
  for (int n = 0; n < num_nodes; ++n) {
    const int nics = config_.nics_per_node.value_or(cluster.node(n).num_devices);
    const double capacity = nics * nic_Bps;
    rack_nic_Bps[static_cast<std::size_t>(rack_of_node(n))] += capacity;
    links_.push_back(Link{"node " + std::to_string(n) + " NIC", capacity, network_latency_s_, LinkKind::kNodeNic});
  }

  std::vector<double> pod_uplink_Bps(static_cast<std::size_t>(num_pods_), 0.0);
  for (int r = 0; r < num_racks_; ++r) {
    const double capacity = rack_nic_Bps[static_cast<std::size_t>(r)] / config_.oversubscription;
    if (num_pods_ > 0) pod_uplink_Bps[static_cast<std::size_t>(pod_of_rack(r))] += capacity;
    links_.push_back(Link{"rack " + std::to_string(r) + " uplink", capacity, network_latency_s_, LinkKind::kRackUplink});
  }
  for (int p = 0; p < num_pods_; ++p) {
    links_.push_back(Link{"pod " + std::to_string(p) + " uplink", pod_uplink_Bps[static_cast<std::size_t>(p)] / config_.pod_oversubscription,
                          network_latency_s_, LinkKind::kPodUplink});
  }
}

CommPath TopologySpec::comm_path(Span<DeviceId> devices) const {
  CommPath out;
  comm_path(devices, out);
  return out;
}

void TopologySpec::comm_path(Span<DeviceId> devices, CommPath& out) const {
  out.latency_class = LatencyClass::kLocal;
  out.latency_s = 0;
  out.nvlink_links.clear();
  out.private_bandwidth_Bps = std::numeric_limits<double>::infinity();
  // `shared_links` doubles as scratch: first the sorted device ids, then their nodes,
  // then the distinct nodes, racks and pods, finally the link indices.
  std::vector<int>& v = out.shared_links;
  v.assign(devices.begin(), devices.end());
  std::sort(v.begin(), v.end());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || v[i] >= cluster_->num_devices()) {
      throw InvariantError("comm_path: device " + std::to_string(v[i]) + " is not in the cluster (devices 0-" + std::to_string(cluster_->num_devices() - 1) + ")");
    }
    if (i > 0 && v[i] == v[i - 1]) throw InvariantError("comm_path: device " + std::to_string(v[i]) + " listed twice in one placement");
  }
  if (v.size() <= 1) {
    v.clear();
    return;
  }
  // Device ids grow with node index, so the node list stays sorted.
  for (int& x : v) x = cluster_->node_of(x);

  // Devices per NVLink domain: runs of equal domains in the sorted list.
  int domains = 0;
  for (std::size_t i = 0; i < v.size();) {
    const int domain = nvlink_domain_of_node(v[i]);
    std::size_t j = i;
    while (j < v.size() && nvlink_domain_of_node(v[j]) == domain) ++j;
    ++domains;
    if (j - i >= 2) {
      out.nvlink_links.push_back(nvlink_link(domain));
      out.private_bandwidth_Bps = std::min(out.private_bandwidth_Bps, link(nvlink_link(domain)).capacity_Bps);
    }
    i = j;
  }
  if (domains == 1) {
    out.latency_class = LatencyClass::kNvlink;
    out.latency_s = nvlink_latency_s_;
    v.clear();
    return;
  }
  out.latency_class = LatencyClass::kNetwork;
  out.latency_s = network_latency_s_;

  v.erase(std::unique(v.begin(), v.end()), v.end());
  const std::size_t num_nodes = v.size();
  // Distinct racks (sorted, since racks grow with node index), appended after the nodes.
  for (std::size_t i = 0; i < num_nodes; ++i) {
    const int rack = rack_of_node(v[i]);
    if (v.size() == num_nodes || v.back() != rack) v.push_back(rack);
  }
  const std::size_t num_racks = v.size() - num_nodes;
  if (num_racks == 1) {
    v.pop_back();
  } else {
    std::size_t num_pods = 0;
    if (num_pods_ > 0) {
      const std::size_t end = v.size();
      for (std::size_t i = num_nodes; i < end; ++i) {
        const int pod = pod_of_rack(v[i]);
        if (v.size() == end || v.back() != pod) v.push_back(pod);
      }
      num_pods = v.size() - end;
      if (num_pods == 1) v.pop_back();
    }
    for (std::size_t i = num_nodes; i < num_nodes + num_racks; ++i) v[i] = rack_uplink(v[i]);
    for (std::size_t i = num_nodes + num_racks; i < v.size(); ++i) v[i] = pod_uplink(v[i]);
  }
  for (std::size_t i = 0; i < num_nodes; ++i) v[i] = nic_link(v[i]);
}

}  // namespace schedsim
