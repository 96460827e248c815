#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "world/physics/comm_model.hpp"
#include "base/error.hpp"
#include "world/physics/topology.hpp"

using namespace schedsim;

namespace {

// Per-device NVLink bandwidth the accelerator catalogue would give, in bytes/s.
double catalogue_Bps(const std::string& type) {
  if (type == "H100") return 900e9;
  if (type == "A100") return 600e9;
  if (type == "T4") return 32e9;
  return std::nan("");
}

TopologyConfig parse(const std::string& yaml) {
  const ConfigNode root = ConfigNode::load_string(yaml, "t.yaml");
  return TopologyConfig::from_yaml(root.child("cluster").child("topology"));
}

std::vector<DeviceId> devices(DeviceId first, int count) {
  std::vector<DeviceId> out;
  for (int i = 0; i < count; ++i) out.push_back(first + i);
  return out;
}

}  // namespace

TEST_CASE("topology config has documented defaults and reads every key", "[sim][topology]") {
  const TopologyConfig d = parse("cluster:\n  topology:\n");
  CHECK(d.nodes_per_nvlink_domain == 1);
  CHECK_FALSE(d.intra_node_bandwidth_gbps.has_value());
  CHECK(d.nic_bandwidth_gbps == 400.0);
  CHECK_FALSE(d.nics_per_node.has_value());
  CHECK(d.nodes_per_rack == 32);
  CHECK(d.oversubscription == 1.0);
  CHECK(d.nvlink_latency_us == 1.0);
  CHECK(d.network_latency_us == 5.0);
  CHECK_FALSE(d.racks_per_pod.has_value());
  CHECK(d.pod_oversubscription == 1.0);

  const TopologyConfig c = parse(
      "cluster:\n  topology:\n    nodes_per_nvlink_domain: 9\n    intra_node_bandwidth_gbps: 1800\n    nic_bandwidth_gbps: 800\n"
      "    nics_per_node: 4\n    nodes_per_rack: 18\n    oversubscription: 2\n    nvlink_latency_us: 0.5\n    network_latency_us: 10\n"
      "    racks_per_pod: 8\n    pod_oversubscription: 3\n");
  CHECK(c.nodes_per_nvlink_domain == 9);
  CHECK(*c.intra_node_bandwidth_gbps == 1800.0);
  CHECK(c.nic_bandwidth_gbps == 800.0);
  CHECK(*c.nics_per_node == 4);
  CHECK(c.nodes_per_rack == 18);
  CHECK(c.oversubscription == 2.0);
  CHECK(c.nvlink_latency_us == 0.5);
  CHECK(c.network_latency_us == 10.0);
  CHECK(*c.racks_per_pod == 8);
  CHECK(c.pod_oversubscription == 3.0);
  CHECK(TopologyConfig::keys().size() == 10);
}

TEST_CASE("bad topology YAML gives located errors", "[sim][topology][errors]") {
  CHECK_THROWS_WITH(parse("cluster:\n  topology:\n    nodes_per_rack: 4\n    nic_bandwidth_gpbs: 100\n"),
                    "t.yaml:4: cluster.topology: unknown key 'nic_bandwidth_gpbs' (did you mean 'nic_bandwidth_gbps'?); valid keys here: "
                    "nodes_per_nvlink_domain, intra_node_bandwidth_gbps, nic_bandwidth_gbps, nics_per_node, nodes_per_rack, oversubscription, "
                    "nvlink_latency_us, network_latency_us, racks_per_pod, pod_oversubscription");
  CHECK_THROWS_WITH(parse("cluster:\n  topology:\n    nic_bandwidth_gbps: -100\n"), "t.yaml:3: cluster.topology.nic_bandwidth_gbps: must be > 0, got '-100'");
  CHECK_THROWS_WITH(parse("cluster:\n  topology:\n    intra_node_bandwidth_gbps: 0\n"),
                    "t.yaml:3: cluster.topology.intra_node_bandwidth_gbps: must be > 0, got '0'");
  CHECK_THROWS_WITH(parse("cluster:\n  topology:\n    network_latency_us: -1\n"), "t.yaml:3: cluster.topology.network_latency_us: must be >= 0, got '-1'");
  CHECK_THROWS_WITH(parse("cluster:\n  topology:\n    nics_per_node: 2.5\n"), "t.yaml:3: cluster.topology.nics_per_node: expected an integer, got '2.5'");
  CHECK_THROWS_WITH(parse("cluster:\n  topology:\n    oversubscription: 0.5\n"),
                    "t.yaml:3: cluster.topology.oversubscription: must be >= 1 (1 = non-blocking, 2 = the uplink has half the bandwidth below it), got 0.5");
  CHECK_THROWS_WITH(parse("cluster:\n  topology:\n    nodes_per_nvlink_domain: 9\n    nodes_per_rack: 32\n"),
                    "t.yaml:4: cluster.topology.nodes_per_rack: must be a multiple of nodes_per_nvlink_domain (9) so that no NVLink domain "
                    "straddles two racks, got 32; e.g. 9 or 36");
  CHECK_THROWS_WITH(parse("cluster:\n  topology:\n    nodes_per_nvlink_domain: 9\n"),
                    Catch::StartsWith("t.yaml:3: cluster.topology.nodes_per_nvlink_domain: the default nodes_per_rack (32) is not a multiple of 9"));
  CHECK_THROWS_WITH(parse("cluster:\n  topology:\n    pod_oversubscription: 2\n"),
                    "t.yaml:3: cluster.topology.pod_oversubscription: needs racks_per_pod: without pods there is no pod uplink");
  CHECK_THROWS_WITH(parse("cluster:\n  topology: [1, 2]\n"), Catch::StartsWith("t.yaml:2: cluster.topology: expected a map with keys nodes_per_nvlink_domain"));

  // A config built in code is checked too, naming the key.
  const ClusterSpec cluster({NodeGroup{2, "H100", 8}});
  TopologyConfig c;
  c.nic_bandwidth_gbps = -1;
  CHECK_THROWS_WITH(TopologySpec(cluster, c, catalogue_Bps), "cluster.topology.nic_bandwidth_gbps: must be a finite number > 0, got -1");
  // A device type the catalogue does not know, with no bandwidth in the config.
  const ClusterSpec odd({NodeGroup{1, "Z9", 8}});
  CHECK_THROWS_WITH(TopologySpec(odd, TopologyConfig{}, catalogue_Bps),
                    Catch::StartsWith("cluster.topology.intra_node_bandwidth_gbps: no intra-node bandwidth is known for device type 'Z9'"));
  CHECK_THROWS_AS(TopologySpec(odd, TopologyConfig{}, nullptr), InputError);
  TopologyConfig with_bandwidth;
  with_bandwidth.intra_node_bandwidth_gbps = 50;
  CHECK(TopologySpec(odd, with_bandwidth, nullptr).link(0).capacity_Bps == 50e9);
}

TEST_CASE("nodes fill NVLink domains then racks in group order", "[sim][topology]") {
  // Nodes 0-3 are H100 x8, nodes 4-5 A100 x4. Domains of 2 nodes, racks of 4 nodes.
  const ClusterSpec cluster({NodeGroup{4, "H100", 8}, NodeGroup{2, "A100", 4}});
  TopologyConfig c;
  c.nodes_per_nvlink_domain = 2;
  c.nodes_per_rack = 4;
  c.oversubscription = 2;
  const TopologySpec topo(cluster, c, catalogue_Bps);
  CHECK(topo.num_nvlink_domains() == 3);
  CHECK(topo.num_racks() == 2);
  CHECK(topo.num_pods() == 0);
  CHECK(topo.nvlink_domain_of_node(3) == 1);
  CHECK(topo.nvlink_domain_of_node(4) == 2);
  CHECK(topo.rack_of_node(3) == 0);
  CHECK(topo.rack_of_node(4) == 1);
  CHECK(topo.nvlink_domain_of(33) == 2);  // device 33 is on node 4 (devices 32-35)
  CHECK(topo.rack_of(31) == 0);

  REQUIRE(topo.links().size() == 11);  // 3 domains + 6 NICs + 2 rack uplinks
  CHECK(topo.link(0).name == "NVLink domain 0");
  CHECK(topo.link(0).kind == LinkKind::kNvlinkDomain);
  CHECK(topo.link(0).capacity_Bps == 900e9);
  CHECK(topo.link(0).latency_s == 1e-6);
  CHECK(topo.link(2).capacity_Bps == 600e9);
  CHECK(topo.nic_link(0) == 3);
  CHECK(topo.link(3).name == "node 0 NIC");
  CHECK(std::string(to_string(topo.link(3).kind)) == "node_nic");
  CHECK(topo.link(3).capacity_Bps == 400e9);  // 8 NICs x 400 Gb/s = 8 x 50 GB/s
  CHECK(topo.link(3).latency_s == 5e-6);
  CHECK(topo.link(topo.nic_link(5)).capacity_Bps == 200e9);  // 4 NICs
  CHECK(topo.rack_uplink(0) == 9);
  CHECK(topo.link(9).name == "rack 0 uplink");
  CHECK(topo.link(9).kind == LinkKind::kRackUplink);
  CHECK(topo.link(9).capacity_Bps == 800e9);   // 4 x 400e9 / 2
  CHECK(topo.link(10).capacity_Bps == 200e9);  // 2 x 200e9 / 2: the partial rack's own NICs

  // An NVLink domain never joins two device types.
  const ClusterSpec mixed({NodeGroup{3, "H100", 8}, NodeGroup{3, "A100", 8}});
  c.oversubscription = 1;
  CHECK_THROWS_WITH(TopologySpec(mixed, c, catalogue_Bps),
                    "cluster.topology.nodes_per_nvlink_domain: NVLink domain 1 (nodes 2-3) would join device types 'H100' and 'A100', but a domain "
                    "joins devices of one type; make cluster.nodes[0].count (3) a multiple of 2 or set nodes_per_nvlink_domain to 1");
}

TEST_CASE("an 8-GPU job inside one NVLink node vs split 4+4 across two nodes", "[sim][topology][comm]") {
  const ClusterSpec cluster({NodeGroup{4, "H100", 8}});
  const TopologySpec topo(cluster, TopologyConfig{}, catalogue_Bps);
  const double bytes = 1e9;

  const CommPath inside = topo.comm_path(devices(0, 8));
  CHECK(inside.latency_class == LatencyClass::kNvlink);
  CHECK(inside.latency_s == 1e-6);
  CHECK(inside.nvlink_links == std::vector<int>{0});
  CHECK(inside.private_bandwidth_Bps == 900e9);
  CHECK(inside.shared_links.empty());
  // 2 * 7/8 * 1e9 B / 900e9 B/s + 14 * 1 us
  CHECK(ring_allreduce_time_s(8, bytes, inside.private_bandwidth_Bps, inside.latency_s) == Approx(0.0019584444444444444).epsilon(1e-14));

  std::vector<DeviceId> split = devices(4, 4);
  for (DeviceId d : devices(8, 4)) split.push_back(d);  // devices 4-7 on node 0 and 8-11 on node 1
  const CommPath across = topo.comm_path(split);
  CHECK(across.latency_class == LatencyClass::kNetwork);
  CHECK(across.latency_s == 5e-6);
  CHECK(across.nvlink_links == std::vector<int>{0, 1});
  CHECK(across.private_bandwidth_Bps == 900e9);
  CHECK(across.shared_links == std::vector<int>{topo.nic_link(0), topo.nic_link(1)});  // one rack: no uplink

  MaxMinFairShare share;
  {
    std::vector<double> capacity;
    for (const Link& l : topo.links()) capacity.push_back(l.capacity_Bps);
    share = MaxMinFairShare(capacity);
  }
  const auto job = share.add_flow(across.shared_links, across.private_bandwidth_Bps);
  share.solve();
  CHECK(share.rate_Bps(job) == 400e9);  // the NIC bundle: 8 x 400 Gb/s
  // 2 * 7/8 * 1e9 B / 400e9 B/s + 14 * 5 us
  CHECK(ring_allreduce_time_s(8, bytes, share.rate_Bps(job), across.latency_s) == Approx(0.004445).epsilon(1e-14));

  // One device: no communication at all.
  const CommPath single = topo.comm_path(devices(3, 1));
  CHECK(single.latency_class == LatencyClass::kLocal);
  CHECK(single.shared_links.empty());
  CHECK(single.nvlink_links.empty());
  CHECK(ring_allreduce_time_s(1, bytes, single.private_bandwidth_Bps, single.latency_s) == 0.0);

  CHECK_THROWS_WITH(topo.comm_path(std::vector<DeviceId>{1, 2, 1}), "comm_path: device 1 listed twice in one placement");
  CHECK_THROWS_WITH(topo.comm_path(std::vector<DeviceId>{0, 32}), "comm_path: device 32 is not in the cluster (devices 0-31)");
}

TEST_CASE("a multi-node NVLink domain keeps a job off the network", "[sim][topology][comm]") {
  // NVL72-like: 9 nodes of 8 devices per domain; 18 nodes per rack.
  const ClusterSpec cluster({NodeGroup{18, "H100", 8}});
  TopologyConfig c;
  c.nodes_per_nvlink_domain = 9;
  c.nodes_per_rack = 18;
  const TopologySpec topo(cluster, c, catalogue_Bps);
  CHECK(topo.num_nvlink_domains() == 2);
  const CommPath in_domain = topo.comm_path(devices(0, 72));  // nodes 0-8
  CHECK(in_domain.latency_class == LatencyClass::kNvlink);
  CHECK(in_domain.shared_links.empty());
  CHECK(in_domain.private_bandwidth_Bps == 900e9);
  // 2 * 71/72 * 72e9 B / 900e9 B/s + 142 * 1 us = 0.1577777... + 0.000142
  CHECK(ring_allreduce_time_s(72, 72e9, in_domain.private_bandwidth_Bps, in_domain.latency_s) == Approx(0.157919777777777778).epsilon(1e-14));

  const CommPath two = topo.comm_path(std::vector<DeviceId>{70, 71, 72, 73});  // nodes 8 and 9: domains 0 and 1
  CHECK(two.latency_class == LatencyClass::kNetwork);
  CHECK(two.shared_links == std::vector<int>{topo.nic_link(8), topo.nic_link(9)});
}

TEST_CASE("jobs spanning racks and pods cross each one's uplink once", "[sim][topology][comm]") {
  // 8 single-device nodes, 1 NIC of 100 Gb/s each, 2 nodes per rack, 2 racks per pod.
  const ClusterSpec cluster({NodeGroup{8, "T4", 1}});
  TopologyConfig c;
  c.nic_bandwidth_gbps = 100;
  c.nodes_per_rack = 2;
  c.racks_per_pod = 2;
  c.pod_oversubscription = 2;
  const TopologySpec topo(cluster, c, catalogue_Bps);
  CHECK(topo.num_racks() == 4);
  CHECK(topo.num_pods() == 2);
  REQUIRE(topo.links().size() == 22);  // 8 domains + 8 NICs + 4 racks + 2 pods
  CHECK(topo.link(topo.nic_link(0)).capacity_Bps == 12.5e9);
  CHECK(topo.link(topo.rack_uplink(0)).capacity_Bps == 25e9);  // 2 x 12.5e9 / 1
  CHECK(topo.link(topo.pod_uplink(1)).name == "pod 1 uplink");
  CHECK(topo.link(topo.pod_uplink(1)).kind == LinkKind::kPodUplink);
  CHECK(topo.link(topo.pod_uplink(1)).capacity_Bps == 25e9);  // 2 x 25e9 / 2

  const CommPath same_rack = topo.comm_path(std::vector<DeviceId>{1, 0});
  CHECK(same_rack.shared_links == std::vector<int>{8, 9});
  CHECK(same_rack.nvlink_links.empty());  // one device per node: no NVLink hop
  CHECK(std::isinf(same_rack.private_bandwidth_Bps));
  const CommPath same_pod = topo.comm_path(std::vector<DeviceId>{0, 2});
  CHECK(same_pod.shared_links == std::vector<int>{8, 10, 16, 17});
  const CommPath across_pods = topo.comm_path(std::vector<DeviceId>{4, 0, 1});
  CHECK(across_pods.shared_links == std::vector<int>{8, 9, 12, 16, 18, 20, 21});

  // The buffer-reusing overload gives the same answer when reused.
  CommPath reused;
  topo.comm_path(std::vector<DeviceId>{4, 0, 1}, reused);
  topo.comm_path(std::vector<DeviceId>{0, 2}, reused);
  CHECK(reused.shared_links == same_pod.shared_links);
  CHECK(reused.latency_class == LatencyClass::kNetwork);
}
