#include <catch2/catch.hpp>

#include <random>
#include <set>

#include "sim/cluster_state.hpp"
#include "base/error.hpp"
#include "sim/summary_bitset.hpp"

using namespace schedsim;

TEST_CASE("a cluster spec numbers devices node by node", "[sim][cluster]") {
  const ClusterSpec spec({NodeGroup{2, "V100", 8}, NodeGroup{1, "K80", 4}});
  CHECK(spec.num_devices() == 20);
  CHECK(spec.num_nodes() == 3);
  CHECK(spec.node(2).first_device == 16);
  CHECK(spec.node_of(15) == 1);
  CHECK(spec.device_type_of(17) == "K80");
  CHECK(spec.device_types() == std::vector<std::string>{"V100", "K80"});
  CHECK_THROWS_WITH(ClusterSpec({NodeGroup{0, "V100", 8}}), Catch::Contains("cluster.nodes[0].count: must be a positive integer"));
  CHECK_THROWS_WITH(ClusterSpec({NodeGroup{1, "V100", -1}}), Catch::Contains("devices_per_node"));
}

TEST_CASE("allocation tracks owners and refuses double booking", "[sim][cluster]") {
  const ClusterSpec spec({NodeGroup{2, "V100", 40}});  // 80 devices: spans two bitmap words
  ClusterState state(spec);
  CHECK(state.free_devices() == 80);
  const std::vector<DeviceId> a{0, 1, 63, 64};
  state.allocate(a, 7);
  CHECK(state.free_devices() == 76);
  CHECK(state.free_on_node(0) == 38);  // devices 0 and 1
  CHECK(state.free_on_node(1) == 38);  // devices 63 and 64 (node 1 holds 40..79)
  CHECK(state.owner(63) == 7);
  CHECK(state.next_free(0) == 2);
  CHECK(state.next_free(63) == 65);
  CHECK_THROWS_WITH(state.allocate(std::vector<DeviceId>{5, 64}, 8), Catch::Contains("device 64 double-booked"));
  CHECK(state.is_free(5));  // a refused allocation changes nothing
  CHECK_THROWS_WITH(state.allocate(std::vector<DeviceId>{5, 6, 5}, 8), Catch::Contains("listed twice"));
  CHECK(state.is_free(5));
  CHECK(state.is_free(6));
  CHECK(state.free_devices() == 76);
  CHECK_THROWS_AS(state.release(std::vector<DeviceId>{0}, 8), InvariantError);  // not the owner
  state.release(a, 7);
  CHECK(state.free_devices() == 80);
  CHECK(state.owner(63) == ClusterState::kNoOwner);
  std::vector<DeviceId> all;
  for (DeviceId d = 0; d < 80; ++d) all.push_back(d);
  state.allocate(all, 1);
  CHECK(state.next_free(0) == -1);
}

TEST_CASE("next_free finds the first free device at or after `from`, as a linear scan does", "[cluster][bench]") {
  // 20,000 devices: more than one summary word (4,096 devices each), and a partial last
  // word. Random allocations and releases, then every `from` is checked against a scan.
  const ClusterSpec spec({NodeGroup{2500, "V100", 8}});
  ClusterState state(spec);
  std::mt19937_64 rng(7);
  std::vector<DeviceId> held;
  for (int round = 0; round < 4000; ++round) {
    const DeviceId d = static_cast<DeviceId>(rng() % 20000);
    if (state.is_free(d)) {
      state.allocate(Span<DeviceId>(&d, 1), 1);
      held.push_back(d);
    } else if (!held.empty() && rng() % 3 == 0) {
      const std::size_t k = rng() % held.size();
      state.release(Span<DeviceId>(&held[k], 1), 1);
      held[k] = held.back();
      held.pop_back();
    }
  }
  // Fill a whole summary word (devices 4096..8191) so the search must skip it.
  for (DeviceId d = 4096; d < 8192; ++d)
    if (state.is_free(d)) state.allocate(Span<DeviceId>(&d, 1), 2);
  int mismatches = 0;
  for (DeviceId from = 0; from <= 20000; from += 7) {
    DeviceId expect = -1;
    for (DeviceId d = from; d < 20000; ++d)
      if (state.is_free(d)) {
        expect = d;
        break;
      }
    if (state.next_free(from) != expect) ++mismatches;
  }
  CHECK(mismatches == 0);
  CHECK(state.next_free(4096) >= 8192);
}

TEST_CASE("SummaryBitset: next() and count agree with a std::set across summary words", "[sim][cluster]") {
  // 10,000 bits span three summary words (4,096 bits each); random sets and resets,
  // repeats included, and next() from random points is the set's lower_bound.
  const std::size_t size = 10000;
  SummaryBitset bits(size);
  std::set<std::int64_t> model;
  std::mt19937_64 rng(3);
  for (int step = 0; step < 20000; ++step) {
    const auto i = static_cast<std::int64_t>(rng() % size);
    if (rng() % 3 == 0) {
      bits.reset(static_cast<std::size_t>(i));
      model.erase(i);
    } else {
      bits.set(static_cast<std::size_t>(i));
      model.insert(i);
    }
    REQUIRE(bits.count() == model.size());
    REQUIRE(bits.empty() == model.empty());
    const auto from = static_cast<std::int64_t>(rng() % (size + 10));
    const auto it = model.lower_bound(from);
    REQUIRE(bits.next(from) == (it == model.end() ? -1 : *it));
    REQUIRE(bits.test(static_cast<std::size_t>(i)) == (model.count(i) == 1));
  }
  std::int64_t walked = 0;
  for (std::int64_t k = bits.next(0); k >= 0; k = bits.next(k + 1)) ++walked;
  CHECK(walked == static_cast<std::int64_t>(model.size()));
}
