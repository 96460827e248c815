// Packed placement with its node index against the full scan it replaced: on random
// sequences of starts and ends, with and without locality groups and device-type
// filters, both choose the same devices.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "policies/placement.hpp"
#include "sim/cluster_state.hpp"
#include "base/error.hpp"

using namespace schedsim;

namespace {

// The packed placement as a full scan over every node's free count (the original code).
std::vector<DeviceId> packed_by_scan(const ClusterState& state, const std::vector<DeviceId>& claimed, int n, const std::vector<int>* node_group,
                                     int only_type) {
  const ClusterSpec& spec = state.spec();
  const int nodes = spec.num_nodes();
  auto is_claimed = [&](DeviceId d) { return std::find(claimed.begin(), claimed.end(), d) != claimed.end(); };
  std::vector<int> nf(static_cast<std::size_t>(nodes), 0);
  for (int k = 0; k < nodes; ++k) {
    const NodeSpec& ns = spec.node(k);
    if (only_type >= 0 && ns.type_index != only_type) continue;
    for (DeviceId d = ns.first_device; d < ns.first_device + ns.num_devices; ++d) nf[static_cast<std::size_t>(k)] += state.is_free(d) && !is_claimed(d);
  }
  std::vector<DeviceId> out;
  auto take = [&](int k, int count) {
    const NodeSpec& ns = spec.node(k);
    for (DeviceId d = ns.first_device; count > 0 && d < ns.first_device + ns.num_devices; ++d) {
      if (state.is_free(d) && !is_claimed(d)) {
        out.push_back(d);
        --count;
      }
    }
  };
  int usable = 0;
  for (int f : nf) usable += f;
  if (n > usable) return {};
  int best = -1;
  for (int k = 0; k < nodes; ++k) {
    const int f = nf[static_cast<std::size_t>(k)];
    if (f >= n && (best < 0 || f < nf[static_cast<std::size_t>(best)])) best = k;
  }
  if (best >= 0) {
    take(best, n);
    return out;
  }
  std::vector<int> group_free;
  auto group_of = [&](int k) { return node_group ? (*node_group)[static_cast<std::size_t>(k)] : 0; };
  for (int k = 0; k < nodes; ++k) {
    const auto g = static_cast<std::size_t>(group_of(k));
    if (g >= group_free.size()) group_free.resize(g + 1, 0);
    group_free[g] += nf[static_cast<std::size_t>(k)];
  }
  int chosen = -1;
  for (std::size_t g = 0; g < group_free.size(); ++g) {
    if (group_free[g] >= n && (chosen < 0 || group_free[g] < group_free[static_cast<std::size_t>(chosen)])) chosen = static_cast<int>(g);
  }
  std::vector<int> order;
  for (int k = 0; k < nodes; ++k) {
    if (nf[static_cast<std::size_t>(k)] > 0 && (chosen < 0 || group_of(k) == chosen)) order.push_back(k);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (chosen < 0 && group_of(a) != group_of(b)) return group_free[static_cast<std::size_t>(group_of(a))] > group_free[static_cast<std::size_t>(group_of(b))];
    return nf[static_cast<std::size_t>(a)] > nf[static_cast<std::size_t>(b)];
  });
  for (int k : order) {
    if (n == 0) break;
    const int t = std::min(n, nf[static_cast<std::size_t>(k)]);
    take(k, t);
    n -= t;
  }
  return out;
}

}  // namespace

TEST_CASE("packed placement with its node index picks the devices of the full scan", "[policies][placement]") {
  // Two device types, nodes of 4 and 8 devices, 4 racks of unequal size.
  const ClusterSpec cluster({NodeGroup{10, "A", 8}, NodeGroup{6, "B", 4}});
  std::vector<int> racks;
  for (int k = 0; k < cluster.num_nodes(); ++k) racks.push_back(k < 5 ? 0 : k < 9 ? 1 : k < 13 ? 2 : 3);
  const std::vector<const std::vector<int>*> group_maps = {nullptr, &racks};
  for (const std::vector<int>* groups : group_maps) {
    ClusterState state(cluster);
    FreeDevices free;
    std::mt19937 rng(groups ? 11 : 5);
    std::vector<std::pair<std::int64_t, std::vector<DeviceId>>> running;
    std::int64_t next_owner = 0;
    int multi_node = 0, refused = 0;
    for (int decision = 0; decision < 3000; ++decision) {
      // Some jobs end between decisions.
      for (std::size_t i = 0; i < running.size();) {
        if (rng() % 4 == 0) {
          state.release(running[i].second, running[i].first);
          running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
          ++i;
        }
      }
      free.reset(state);
      std::vector<DeviceId> claimed;
      std::vector<std::vector<DeviceId>> started;
      const int attempts = 1 + static_cast<int>(rng() % 4);
      for (int a = 0; a < attempts; ++a) {
        const int n = 1 + static_cast<int>(rng() % 20);
        const int only_type = static_cast<int>(rng() % 3) - 1;  // -1, 0 or 1
        const std::vector<DeviceId> expected = packed_by_scan(state, claimed, n, groups, only_type);
        std::vector<DeviceId> got;
        const bool ok = free.packed(n, groups, got, only_type);
        INFO("decision " << decision << " n " << n << " type " << only_type);
        REQUIRE(ok == !expected.empty());
        REQUIRE(got == expected);
        if (!ok) {
          ++refused;
          continue;
        }
        std::vector<int> nodes;
        for (DeviceId d : got) nodes.push_back(cluster.node_of(d));
        multi_node += std::count(nodes.begin(), nodes.end(), nodes[0]) != static_cast<long>(nodes.size());
        claimed.insert(claimed.end(), got.begin(), got.end());
        started.push_back(got);
        // A first-fit claim in the same decision must keep the index in step.
        if (rng() % 5 == 0) {
          std::vector<DeviceId> ff;
          if (free.first_fit(1, ff)) {
            claimed.push_back(ff[0]);
            started.push_back(ff);
          }
        }
      }
      for (auto& devs : started) {
        state.allocate(devs, next_owner);
        running.emplace_back(next_owner++, devs);
      }
    }
    CHECK(multi_node > 100);  // the multi-node paths are exercised
    CHECK(refused > 100);
  }
}

TEST_CASE("with claiming off, placements are read-only queries of the free set", "[policies][placement]") {
  const ClusterSpec cluster({NodeGroup{6, "A", 8}, NodeGroup{4, "B", 4}});
  std::vector<int> racks;
  for (int k = 0; k < cluster.num_nodes(); ++k) racks.push_back(k / 3);
  ClusterState state(cluster);
  FreeDevices query;  // claiming off, one reset per decision, kept across decisions
  query.set_claiming(false);
  std::mt19937 rng(7);
  std::vector<std::pair<std::int64_t, std::vector<DeviceId>>> running;
  std::int64_t next_owner = 0;
  int answered = 0;
  for (int decision = 0; decision < 1500; ++decision) {
    for (std::size_t i = 0; i < running.size();) {
      if (rng() % 3 == 0) {
        state.release(running[i].second, running[i].first);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    query.reset(state);
    std::vector<DeviceId> first;
    for (int q = 0; q < 6; ++q) {  // several answers of one decision, none claimed
      const int n = 1 + static_cast<int>(rng() % 12);
      const int only_type = static_cast<int>(rng() % 3) - 1;
      const std::vector<DeviceId> expected = packed_by_scan(state, {}, n, &racks, only_type);
      std::vector<DeviceId> got;
      INFO("decision " << decision << " n " << n << " type " << only_type);
      REQUIRE(query.packed(n, &racks, got, only_type) == !expected.empty());
      REQUIRE(got == expected);
      std::vector<DeviceId> ff, lowest;
      for (DeviceId d = state.next_free(0); d >= 0 && static_cast<int>(lowest.size()) < n; d = state.next_free(d + 1)) lowest.push_back(d);
      REQUIRE(query.first_fit(n, ff) == (static_cast<int>(lowest.size()) == n));
      if (!ff.empty()) REQUIRE(ff == lowest);
      if (first.empty()) first = got;
      answered += !got.empty();
    }
    if (!first.empty() && rng() % 2 == 0) {  // the decision starts one of its answers
      state.allocate(first, next_owner);
      running.emplace_back(next_owner++, first);
    }
  }
  CHECK(answered > 3000);
  CHECK(query.claims() == 0);
  std::vector<DeviceId> out;
  CHECK_THROWS_AS(query.spread(1, out), InvariantError);
  query.set_claiming(true);
  query.reset(state);
  REQUIRE(query.first_fit(1, out));
  CHECK(query.claims() == 1);
}

TEST_CASE("node_strict (yarn) placement: one node, or whole idle nodes plus one, else nothing", "[policies][placement]") {
  // Node 0 has 8 devices (0-7), nodes 1 and 2 have 4 (8-11, 12-15).
  const ClusterSpec cluster({NodeGroup{1, "A", 8}, NodeGroup{2, "A", 4}});
  ClusterState state(cluster);
  FreeDevices free;
  free.reset(state);
  using V = std::vector<DeviceId>;
  V got;
  REQUIRE(free.node_strict(6, got));  // the first node with room for all 6
  CHECK(got == V{0, 1, 2, 3, 4, 5});
  got.clear();
  REQUIRE(free.node_strict(4, got));  // node 0 has 2 left: node 1
  CHECK(got == V{8, 9, 10, 11});
  got.clear();
  // 6 devices free (2 on node 0, 4 on node 2), but no node holds 5 and 5 fits a node.
  CHECK_FALSE(free.node_strict(5, got));
  // 10 > the largest node: the idle node 2 (4), then 6 on one other node: none has 6.
  CHECK_FALSE(free.node_strict(10, got));
  CHECK(got.empty());
  CHECK(free.count() == 6);  // a refusal claims nothing
  // On a fresh cluster 10 takes the idle node 0 (8, not more than the 10 asked), skips
  // node 1 (4 > the 2 left) as a whole node and puts the remainder there.
  FreeDevices fresh;
  ClusterState empty(cluster);
  fresh.reset(empty);
  got.clear();
  REQUIRE(fresh.node_strict(10, got));
  CHECK(got == V{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  got.clear();
  REQUIRE(fresh.node_strict(4, got));  // node 1 has 2 left: node 2
  CHECK(got == V{12, 13, 14, 15});
}

TEST_CASE("first_fit, random and spread restricted to one device type", "[policies][placement]") {
  // Type A: nodes 0, 1 (devices 0-3, 4-7); type B: node 2 (8-11). Devices 0-2 busy.
  const ClusterSpec cluster({NodeGroup{2, "A", 4}, NodeGroup{1, "B", 4}});
  ClusterState state(cluster);
  state.allocate(std::vector<DeviceId>{0, 1, 2}, 0);
  FreeDevices free;
  using V = std::vector<DeviceId>;
  V got;
  free.reset(state);
  REQUIRE(free.first_fit(3, got, 1));  // type B only, though 3..5 are lower
  CHECK(got == V{8, 9, 10});
  got.clear();
  CHECK_FALSE(free.first_fit(2, got, 1));  // one B device left: nothing taken
  CHECK(got.empty());
  REQUIRE(free.first_fit(2, got, 0));  // type A: the lowest free ones
  CHECK(got == V{3, 4});
  CHECK(free.count() == 4);  // 5, 6, 7 and 11
  free.reset(state);
  got.clear();
  Rng rng(7, "test");
  CHECK_FALSE(free.random(6, rng, got, 0));  // A has 5 free: no draw, nothing taken
  CHECK(got.empty());
  REQUIRE(free.random(4, rng, got, 1));
  std::sort(got.begin(), got.end());
  CHECK(got == V{8, 9, 10, 11});
  got.clear();
  REQUIRE(free.random(5, rng, got, 0));
  std::sort(got.begin(), got.end());
  CHECK(got == V{3, 4, 5, 6, 7});
  got.clear();
  free.reset(state);
  REQUIRE(free.spread(2, got, 0));  // one device on each A node, the emptiest (node 1) first
  CHECK(got == V{4, 3});
  got.clear();
  CHECK_FALSE(free.spread(4, got, 0));  // 3 A devices left
  CHECK(got.empty());
}
