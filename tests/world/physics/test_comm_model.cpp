#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "world/physics/comm_model.hpp"
#include "base/error.hpp"
#include "world/physics/topology.hpp"

using namespace schedsim;

namespace {

// Progressive filling written the slow, obvious way: raise every unfrozen flow by the
// smallest remaining fair share, freeze the flows of every link that is then full.
std::vector<double> reference_max_min(const std::vector<double>& capacity, const std::vector<std::vector<int>>& flows) {
  std::vector<double> rate(flows.size(), 0.0);
  std::vector<bool> frozen(flows.size(), false);
  std::vector<double> left = capacity;
  for (;;) {
    double step = INFINITY;
    for (std::size_t l = 0; l < capacity.size(); ++l) {
      int n = 0;
      for (std::size_t f = 0; f < flows.size(); ++f) n += !frozen[f] && std::count(flows[f].begin(), flows[f].end(), static_cast<int>(l));
      if (n > 0) step = std::min(step, left[l] / n);
    }
    if (step == INFINITY) return rate;
    for (std::size_t f = 0; f < flows.size(); ++f) {
      if (frozen[f]) continue;
      rate[f] += step;
      for (int l : flows[f]) left[static_cast<std::size_t>(l)] -= step;
    }
    for (std::size_t f = 0; f < flows.size(); ++f) {
      for (int l : flows[f]) {
        if (left[static_cast<std::size_t>(l)] <= 1e-9 * capacity[static_cast<std::size_t>(l)]) frozen[f] = true;
      }
    }
  }
}

// The same with per-flow caps (demands): a flow also freezes when it reaches its cap.
std::vector<double> reference_max_min_capped(const std::vector<double>& capacity, const std::vector<std::vector<int>>& flows,
                                             const std::vector<double>& cap) {
  std::vector<double> rate(flows.size(), 0.0);
  std::vector<bool> frozen(flows.size(), false);
  std::vector<double> left = capacity;
  for (;;) {
    double step = INFINITY;
    for (std::size_t l = 0; l < capacity.size(); ++l) {
      int n = 0;
      for (std::size_t f = 0; f < flows.size(); ++f) n += !frozen[f] && std::count(flows[f].begin(), flows[f].end(), static_cast<int>(l));
      if (n > 0) step = std::min(step, left[l] / n);
    }
    for (std::size_t f = 0; f < flows.size(); ++f) {
      if (!frozen[f]) step = std::min(step, cap[f] - rate[f]);
    }
    if (step == INFINITY) return rate;
    for (std::size_t f = 0; f < flows.size(); ++f) {
      if (frozen[f]) continue;
      rate[f] += step;
      for (int l : flows[f]) left[static_cast<std::size_t>(l)] -= step;
    }
    bool any = false;
    for (std::size_t f = 0; f < flows.size(); ++f) {
      if (frozen[f]) continue;
      any = true;
      if (rate[f] >= cap[f] * (1 - 1e-12)) frozen[f] = true;
      for (int l : flows[f]) {
        if (left[static_cast<std::size_t>(l)] <= 1e-9 * capacity[static_cast<std::size_t>(l)]) frozen[f] = true;
      }
    }
    if (!any) return rate;
  }
}

std::vector<double> capacities_of(const TopologySpec& topo) {
  std::vector<double> out;
  for (const Link& l : topo.links()) out.push_back(l.capacity_Bps);
  return out;
}

double ignore_type(const std::string&) { return 900e9; }

}  // namespace

TEST_CASE("ring all-reduce time follows the closed form", "[sim][comm]") {
  // n = 2: 2 * 1/2 * 1e9 / 1e9 + 2 * 0 = 1 s
  CHECK(ring_allreduce_time_s(2, 1e9, 1e9, 0) == 1.0);
  // n = 4: 2 * 3/4 * 4e9 / 2e9 + 6 * 0.5 = 3 + 3 = 6 s
  CHECK(ring_allreduce_time_s(4, 4e9, 2e9, 0.5) == 6.0);
  // n = 8: 2 * 7/8 * 1e9 / 50e9 + 14 * 5e-6 = 0.035 + 0.00007
  CHECK(ring_allreduce_time_s(8, 1e9, 50e9, 5e-6) == Approx(0.03507).epsilon(1e-14));
  CHECK(ring_allreduce_time_s(1, 1e12, 1, 1) == 0.0);
  CHECK(ring_allreduce_time_s(3, 0, 1e9, 2e-6) == Approx(8e-6).epsilon(1e-14));
  CHECK(ring_allreduce_time_s(3, 3e9, INFINITY, 0) == 0.0);
  CHECK_THROWS_WITH(ring_allreduce_time_s(0, 1, 1, 0), "ring_allreduce_time_s: num_devices must be >= 1, got 0");
  CHECK_THROWS_WITH(ring_allreduce_time_s(2, -1, 1, 0), "ring_allreduce_time_s: bytes must be finite and >= 0, got -1");
  CHECK_THROWS_WITH(ring_allreduce_time_s(2, 1, 0, 0), "ring_allreduce_time_s: bandwidth_Bps must be > 0, got 0");
  CHECK_THROWS_AS(ring_allreduce_time_s(2, 1, 1, -1e-6), InvariantError);
}

TEST_CASE("compute and communication overlap", "[sim][comm]") {
  CHECK(iteration_time_s(1.0, 0.5, 0.0) == 1.5);   // no overlap: compute + comm
  CHECK(iteration_time_s(1.0, 0.5, 1.0) == 1.0);   // full overlap: max(compute, comm)
  CHECK(iteration_time_s(1.0, 3.0, 1.0) == 3.0);
  CHECK(iteration_time_s(1.0, 0.5, 0.25) == 1.25); // 1 + (0.5 - 0.25)
  CHECK(iteration_time_s(2.0, 0.5, 0.5) == 2.0);   // comm hidden in half the compute
  CHECK(iteration_time_s(0.0, 0.5, 0.5) == 0.5);
  CHECK_THROWS_WITH(iteration_time_s(1, 1, 1.5), "iteration_time_s: overlap must be in [0, 1], got 1.5");
  CHECK_THROWS_AS(iteration_time_s(-1, 1, 0.5), InvariantError);
}

TEST_CASE("max-min fair share of three flows over two links", "[sim][comm][maxmin]") {
  // Link 0: 10 units, link 1: 4 units. Flow 0 crosses both, flow 1 only link 0, flow 2
  // only link 1. Link 1 is the first bottleneck (4/2 = 2 < 10/2 = 5): flows 0 and 2 get
  // 2; flow 1 takes the rest of link 0: 8.
  const std::vector<double> rates = max_min_fair_rates({10, 4}, {{0, 1}, {0}, {1}});
  CHECK(rates == std::vector<double>{2, 8, 2});

  // Bertsekas-Gallager style: link 0 (1 unit) is shared by flows 0 and 1, link 1 (2 units)
  // by flows 1, 2 and 3. Link 0 saturates first at 1/2; flows 2 and 3 split the 1.5 left.
  CHECK(max_min_fair_rates({1, 2}, {{0}, {0, 1}, {1}, {1}}) == std::vector<double>{0.5, 0.5, 0.75, 0.75});

  // One long flow over three unit links, each shared with one short flow: all get 1/2.
  CHECK(max_min_fair_rates({1, 1, 1}, {{0, 1, 2}, {0}, {1}, {2}}) == std::vector<double>{0.5, 0.5, 0.5, 0.5});
}

TEST_CASE("per-flow caps release bandwidth to the other flows", "[sim][comm][maxmin]") {
  MaxMinFairShare share({12});
  const auto capped = share.add_flow(std::vector<int>{0}, 2);
  const auto a = share.add_flow(std::vector<int>{0});
  const auto b = share.add_flow(std::vector<int>{0});
  share.solve();
  CHECK(share.rate_Bps(capped) == 2);
  CHECK(share.rate_Bps(a) == 5);
  CHECK(share.rate_Bps(b) == 5);
  CHECK(share.link_load_Bps(0) == 12);
  // A cap above the fair share changes nothing.
  share.update_flow(capped, std::vector<int>{0}, 100);
  share.solve();
  CHECK(share.rate_Bps(capped) == 4);
  CHECK(share.rate_Bps(a) == 4);
  // No links: the cap alone, or unlimited.
  const auto alone = share.add_flow(std::vector<int>{}, 7);
  const auto free_flow = share.add_flow(std::vector<int>{});
  share.solve();
  CHECK(share.rate_Bps(alone) == 7);
  CHECK(std::isinf(share.rate_Bps(free_flow)));
}

TEST_CASE("flows whose demands fit their links get their demands and leave the others alone", "[sim][comm][maxmin]") {
  MaxMinFairShare share({10, 100});
  const auto a = share.add_flow(std::vector<int>{0}, 3);
  const auto b = share.add_flow(std::vector<int>{0, 1}, 4);
  share.solve();
  CHECK(share.rate_Bps(a) == 3);
  CHECK(share.rate_Bps(b) == 4);
  // 3 + 4 + 2 <= 10: link 0 cannot bind, so only the new flow is solved.
  const auto c = share.add_flow(std::vector<int>{0}, 2);
  share.solve();
  CHECK(share.last_solved_flows() == std::vector<int>{c});
  CHECK(share.rate_Bps(c) == 2);
  CHECK(share.link_load_Bps(0) == 9);
  // A fourth flow asking 5 overloads link 0 (14 > 10): progressive filling with caps. The
  // 2-flow stops at its cap, the other three split the remaining 8.
  const auto d = share.add_flow(std::vector<int>{0}, 5);
  share.solve();
  CHECK(share.last_solved_flows() == std::vector<int>{a, b, c, d});
  CHECK(share.rate_Bps(c) == 2);
  CHECK(share.rate_Bps(a) == 8.0 / 3);
  CHECK(share.rate_Bps(b) == 8.0 / 3);
  CHECK(share.rate_Bps(d) == 8.0 / 3);
  CHECK(share.link_load_Bps(0) == Approx(10).epsilon(1e-15));
  // It leaves: link 0 has room again and every flow gets its demand back.
  share.remove_flow(d);
  share.solve();
  CHECK(share.rate_Bps(a) == 3);
  CHECK(share.rate_Bps(b) == 4);
  CHECK(share.rate_Bps(c) == 2);
  // A flow on the roomy link 1 only does not touch link 0's flows.
  const auto e = share.add_flow(std::vector<int>{1}, 50);
  share.solve();
  CHECK(share.last_solved_flows() == std::vector<int>{e});
  CHECK(share.rate_Bps(e) == 50);
}

TEST_CASE("max-min fair share with demands matches slow progressive filling on random instances", "[sim][comm][maxmin]") {
  std::mt19937 rng(777);
  for (int instance = 0; instance < 200; ++instance) {
    const int num_links = 1 + static_cast<int>(rng() % 12);
    const int num_flows = 1 + static_cast<int>(rng() % 30);
    std::vector<double> capacity;
    for (int l = 0; l < num_links; ++l) capacity.push_back(static_cast<double>(1 + rng() % 100));
    std::vector<std::vector<int>> flows(static_cast<std::size_t>(num_flows));
    std::vector<double> cap;
    MaxMinFairShare share(capacity);
    // Built incrementally with a solve after every few changes, so the component logic
    // (links turning contended and back) is exercised, then compared with a fresh solve.
    std::vector<MaxMinFairShare::FlowId> ids;
    for (auto& f : flows) {
      for (int l = 0; l < num_links; ++l) {
        if (rng() % 3 == 0) f.push_back(l);
      }
      if (f.empty()) f.push_back(static_cast<int>(rng() % static_cast<unsigned>(num_links)));
      // A third of the flows unbounded, the others asking 0.5 to 40 units.
      cap.push_back(rng() % 3 == 0 ? INFINITY : 0.5 + static_cast<double>(rng() % 80) / 2);
      ids.push_back(share.add_flow(f, cap.back()));
      if (rng() % 4 == 0) share.solve();
    }
    // Remove and re-add a few flows (same links and caps) to turn links back and forth.
    for (int k = 0; k < 3 && num_flows > 1; ++k) {
      const std::size_t f = rng() % flows.size();
      share.remove_flow(ids[f]);
      share.solve();
      ids[f] = share.add_flow(flows[f], cap[f]);
    }
    share.solve();
    const std::vector<double> slow = reference_max_min_capped(capacity, flows, cap);
    MaxMinFairShare fresh(capacity);
    for (std::size_t f = 0; f < flows.size(); ++f) fresh.add_flow(flows[f], cap[f]);
    fresh.solve();
    for (std::size_t f = 0; f < flows.size(); ++f) {
      CHECK(share.rate_Bps(ids[f]) == Approx(slow[f]).epsilon(1e-9));
      CHECK(share.rate_Bps(ids[f]) <= cap[f]);
      CHECK(fresh.rate_Bps(static_cast<int>(f)) == Approx(slow[f]).epsilon(1e-9));
    }
  }
}

TEST_CASE("two jobs crossing one rack uplink each get half and then all of it", "[sim][comm][topology]") {
  // 4 nodes of 8 GPUs, 2 nodes per rack, 4:1 oversubscribed: each rack uplink carries
  // 2 x 400e9 / 4 = 200e9 B/s; each node NIC bundle 8 x 50e9 = 400e9 B/s.
  const ClusterSpec cluster({NodeGroup{4, "H100", 8}});
  TopologyConfig c;
  c.nodes_per_rack = 2;
  c.oversubscription = 4;
  const TopologySpec topo(cluster, c, ignore_type);
  REQUIRE(topo.link(topo.rack_uplink(0)).capacity_Bps == 200e9);

  // Job A: 4 GPUs on node 0 (rack 0) + 4 on node 2 (rack 1); job B: nodes 1 and 3.
  const std::vector<DeviceId> a_devices{0, 1, 2, 3, 16, 17, 18, 19};
  const std::vector<DeviceId> b_devices{8, 9, 10, 11, 24, 25, 26, 27};
  const CommPath a_path = topo.comm_path(a_devices);
  const CommPath b_path = topo.comm_path(b_devices);
  CHECK(a_path.shared_links == std::vector<int>{topo.nic_link(0), topo.nic_link(2), topo.rack_uplink(0), topo.rack_uplink(1)});

  MaxMinFairShare share(capacities_of(topo));
  const auto a = share.add_flow(a_path.shared_links, a_path.private_bandwidth_Bps);
  const auto b = share.add_flow(b_path.shared_links, b_path.private_bandwidth_Bps);
  share.solve();
  CHECK(share.rate_Bps(a) == 100e9);
  CHECK(share.rate_Bps(b) == 100e9);
  CHECK(share.link_load_Bps(topo.rack_uplink(0)) == 200e9);
  CHECK(share.link_load_Bps(topo.nic_link(1)) == 100e9);
  // 2 * 7/8 * 1e9 / 100e9 + 14 * 5e-6
  CHECK(ring_allreduce_time_s(8, 1e9, share.rate_Bps(b), b_path.latency_s) == Approx(0.01757).epsilon(1e-14));

  share.remove_flow(a);
  CHECK_THROWS_WITH(share.rate_Bps(b), Catch::StartsWith("MaxMinFairShare: rates are stale"));
  share.solve();
  CHECK(share.rate_Bps(b) == 200e9);
  CHECK(share.num_flows() == 1);
  CHECK_FALSE(share.has_flow(a));
  CHECK(ring_allreduce_time_s(8, 1e9, share.rate_Bps(b), b_path.latency_s) == Approx(0.00882).epsilon(1e-14));
  // The freed id is reused first.
  CHECK(share.add_flow(a_path.shared_links) == a);
}

TEST_CASE("oversubscription 2:1 halves the rack uplink", "[sim][comm][topology]") {
  const ClusterSpec cluster({NodeGroup{4, "H100", 8}});
  TopologyConfig c;
  c.nodes_per_rack = 2;
  const std::vector<DeviceId> a_devices{0, 1, 2, 3, 16, 17, 18, 19};
  const std::vector<DeviceId> b_devices{8, 9, 10, 11, 24, 25, 26, 27};
  std::vector<double> uplink, rate_a, rate_b;
  for (double ratio : {1.0, 2.0}) {
    c.oversubscription = ratio;
    const TopologySpec topo(cluster, c, ignore_type);
    uplink.push_back(topo.link(topo.rack_uplink(1)).capacity_Bps);
    MaxMinFairShare share(capacities_of(topo));
    const auto a = share.add_flow(topo.comm_path(a_devices).shared_links);
    const auto b = share.add_flow(topo.comm_path(b_devices).shared_links);
    share.solve();
    rate_a.push_back(share.rate_Bps(a));
    rate_b.push_back(share.rate_Bps(b));
  }
  CHECK(uplink == std::vector<double>{800e9, 400e9});  // 2 nodes x 8 NICs x 50e9 / ratio
  CHECK(rate_a == std::vector<double>{400e9, 200e9});  // 1:1: the NICs bind; 2:1: half the uplink each
  CHECK(rate_b == std::vector<double>{400e9, 200e9});
}

TEST_CASE("max-min fair share matches slow progressive filling on random instances", "[sim][comm][maxmin]") {
  std::mt19937 rng(12345);
  for (int instance = 0; instance < 200; ++instance) {
    const int num_links = 1 + static_cast<int>(rng() % 12);
    const int num_flows = 1 + static_cast<int>(rng() % 30);
    std::vector<double> capacity;
    for (int l = 0; l < num_links; ++l) capacity.push_back(static_cast<double>(1 + rng() % 100));
    std::vector<std::vector<int>> flows(static_cast<std::size_t>(num_flows));
    for (auto& f : flows) {
      for (int l = 0; l < num_links; ++l) {
        if (rng() % 3 == 0) f.push_back(l);
      }
      if (f.empty()) f.push_back(static_cast<int>(rng() % static_cast<unsigned>(num_links)));
    }
    const std::vector<double> fast = max_min_fair_rates(capacity, flows);
    const std::vector<double> slow = reference_max_min(capacity, flows);
    REQUIRE(fast.size() == slow.size());
    for (std::size_t f = 0; f < fast.size(); ++f) CHECK(fast[f] == Approx(slow[f]).epsilon(1e-9));
    // Feasible, and every flow has a full link on which no flow gets more (its bottleneck).
    std::vector<double> load(capacity.size(), 0.0);
    for (std::size_t f = 0; f < flows.size(); ++f) {
      for (int l : flows[f]) load[static_cast<std::size_t>(l)] += fast[f];
    }
    for (std::size_t l = 0; l < capacity.size(); ++l) CHECK(load[l] <= capacity[l] * (1 + 1e-12));
    for (std::size_t f = 0; f < flows.size(); ++f) {
      bool has_bottleneck = false;
      for (int l : flows[f]) {
        bool largest = true;
        for (std::size_t g = 0; g < flows.size(); ++g) {
          if (std::count(flows[g].begin(), flows[g].end(), l) && fast[g] > fast[f] * (1 + 1e-12)) largest = false;
        }
        if (largest && load[static_cast<std::size_t>(l)] >= capacity[static_cast<std::size_t>(l)] * (1 - 1e-12)) has_bottleneck = true;
      }
      CHECK(has_bottleneck);
    }
  }
}

TEST_CASE("max-min solver rejects bad flows and keeps its state", "[sim][comm][maxmin][errors]") {
  MaxMinFairShare share({10, 20});
  CHECK_THROWS_WITH(share.add_flow(std::vector<int>{0, 2}), "MaxMinFairShare: a flow crosses link 2, but there are 2 links");
  CHECK_THROWS_WITH(share.add_flow(std::vector<int>{1, 1}), "MaxMinFairShare: a flow lists link 1 twice");
  CHECK_THROWS_WITH(share.add_flow(std::vector<int>{0}, 0), "MaxMinFairShare: a flow's cap must be > 0 (or unlimited), got 0");
  CHECK(share.num_flows() == 0);
  const auto f = share.add_flow(std::vector<int>{1, 0});
  CHECK_THROWS_AS(share.update_flow(f, std::vector<int>{5}), InvariantError);
  share.solve();
  CHECK(share.rate_Bps(f) == 10);  // the update was refused: still links 0 and 1
  CHECK_THROWS_WITH(share.rate_Bps(7), "MaxMinFairShare: no flow 7");
  CHECK_THROWS_WITH(share.remove_flow(7), "MaxMinFairShare: removal of unknown flow 7");
  CHECK_THROWS_WITH(MaxMinFairShare({1, -1}), "MaxMinFairShare: link 1 capacity must be finite and >= 0, got -1");
  share.set_capacity_Bps(0, 30);
  share.solve();
  CHECK(share.rate_Bps(f) == 20);
  share.clear();
  CHECK(share.num_flows() == 0);
  CHECK(share.add_flow(std::vector<int>{0}) == 0);
  share.solve();
  CHECK(share.rate_Bps(0) == 30);
}

TEST_CASE("recomputing a few thousand jobs is deterministic and feasible", "[sim][comm][maxmin]") {
  // 512 nodes of 8 GPUs in 16 racks (2:1); 2048 two-node jobs. Rates stay deterministic
  // across repeated solves and after removing and re-adding a flow.
  const ClusterSpec cluster({NodeGroup{512, "H100", 8}});
  TopologyConfig c;
  c.oversubscription = 2;
  const TopologySpec topo(cluster, c, ignore_type);
  MaxMinFairShare share(capacities_of(topo));
  CommPath path;
  std::vector<MaxMinFairShare::FlowId> ids;
  for (int j = 0; j < 2048; ++j) {
    // Job j: 2 GPUs on node j % 512 and 2 on node (j * 37 + 5) % 512 (a different node).
    const int n1 = j % 512;
    int n2 = (j * 37 + 5) % 512;
    if (n2 == n1) n2 = (n2 + 1) % 512;
    const int slot = (j / 512) * 2;
    const std::vector<DeviceId> devs{n1 * 8 + slot, n1 * 8 + slot + 1, n2 * 8 + slot, n2 * 8 + slot + 1};
    topo.comm_path(devs, path);
    ids.push_back(share.add_flow(path.shared_links, path.private_bandwidth_Bps));
  }
  share.solve();
  std::vector<double> first;
  for (auto id : ids) first.push_back(share.rate_Bps(id));
  for (int i = 0; i < 5; ++i) {
    share.remove_flow(ids[100]);
    share.solve();
    // Job 100 again: nodes 100 and (100 * 37 + 5) % 512 = 121, slot 0.
    ids[100] = share.add_flow(topo.comm_path(std::vector<DeviceId>{100 * 8, 100 * 8 + 1, 121 * 8, 121 * 8 + 1}).shared_links, 900e9);
    share.solve();
  }
  std::vector<double> again;
  for (auto id : ids) again.push_back(share.rate_Bps(id));
  CHECK(ids[100] == 100);
  // No link carries more than its capacity.
  for (int l = 0; l < static_cast<int>(topo.links().size()); ++l) CHECK(share.link_load_Bps(l) <= topo.link(l).capacity_Bps * (1 + 1e-12));
  CHECK(first.size() == again.size());
  CHECK(std::equal(first.begin(), first.end(), again.begin()));
}
