#include <catch2/catch.hpp>

#include "sim/cluster_state.hpp"
#include "sim/error.hpp"

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
