// The `market:` map: parsing, defaults, price files and every error a user can hit.
#include <catch2/catch.hpp>

#include "scenario/scenario.hpp"
#include "base/error.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::TempDir;

namespace {

const std::string kWorkload = "workload: {synthetic: {num_jobs: 4, gpus: {1: 1}}}\npolicy: fifo\n";
const std::string kCluster = "cluster: {nodes: [{count: 2, type: A100-80GB, devices_per_node: 4}, {count: 1, type: V100, devices_per_node: 4}]}\n";
const std::string kTwoSites =
    "datacenters:\n  sites:\n"
    "    - {name: DE-LU, provider: cloud-a, nodes: [{count: 1, type: A100-80GB, devices_per_node: 8}]}\n"
    "    - {name: SG, nodes: [{count: 1, type: V100, devices_per_node: 4}]}\n";

ScenarioConfig load(const TempDir& dir, const std::string& yaml) {
  const std::string path = dir.write("run.yaml", yaml);
  return load_scenario(path, {}, std::nullopt, builtin_policies());
}

std::string error_of(const std::string& yaml) {
  TempDir dir;
  try {
    load(dir, yaml);
  } catch (const InputError& e) {
    std::string m = e.what();
    for (std::size_t pos; (pos = m.find(dir.path())) != std::string::npos;) m.replace(pos, dir.path().size(), "DIR");
    return m;
  }
  return "";
}

}  // namespace

TEST_CASE("market config: one cluster, three kinds, and the devices each gets", "[experiments][market]") {
  TempDir dir;
  const ScenarioConfig s = load(dir, kCluster + kWorkload +
                                         "market:\n  provider: lab\n  offers:\n"
                                         "    - {type: a100-sxm4-80gb, on_demand_usd_h: 3.2, reserved: {devices: 2, usd_h: 2.0}}\n"
                                         "    - {type: A100-80GB, spot: {devices: 3, usd_h: 1.1, availability: {model: on_off, mean_up_h: 12}}}\n");
  REQUIRE(s.market);
  REQUIRE(s.market->offers.size() == 3);
  CHECK(s.market->offers[0].type == "A100-80GB");  // the cluster's spelling of the alias
  CHECK(s.market->offers[2].mean_up_h == 12.0);
  CHECK(s.market->offers[2].mean_down_h == 2.0);  // default
  const ClusterSpec cluster(s.cluster);
  const Market m = s.market->build(cluster, nullptr);
  REQUIRE(m.providers().size() == 1);
  CHECK(m.providers()[0].name == "lab");
  CHECK(m.offer(1).devices == 2);
  CHECK(m.offer(2).devices == 3);
  CHECK(m.offer(0).devices == 3);  // 8 A100 - 2 reserved - 3 spot
  CHECK(m.offer_devices(1) == std::vector<DeviceId>{0, 1});
  CHECK(m.offer_devices(2) == std::vector<DeviceId>{2, 3, 4});
  for (DeviceId d = 8; d < 12; ++d) CHECK(m.device_offer(d) == -1);  // the V100s have no offer
  CHECK(m.price_usd_per_device_h(0, Tick::from_seconds(1e6)) == 3.2);
  // The resolved config parses back to the same offers.
  const YAML::Node resolved = s.market->to_yaml();
  CHECK(resolved["provider"].as<std::string>() == "lab");
  CHECK(resolved["offers"][2]["spot"]["availability"]["mean_up_h"].as<double>() == 12.0);
}

TEST_CASE("market config: providers of several datacenters and a price file", "[experiments][market]") {
  TempDir dir;
  dir.write("spot.csv", "Datetime (UTC),usd_per_device_h\n2023-01-01 00:00:00,1.5\n2023-01-01 01:00:00,0.5\n2023-01-01 02:00:00,2.5\n");
  dir.write("avail.csv", "time,devices\n2023-01-01 00:00:00,4\n2023-01-01 06:00:00,0\n");
  const ScenarioConfig s = load(dir, kTwoSites + kWorkload +
                                         "market:\n  offers:\n"
                                         "    - {datacenter: DE-LU, type: A100-80GB, on_demand_usd_h: 4,\n"
                                         "       spot: {devices: 4, usd_h: {file: spot.csv}, availability: {file: avail.csv, time_column: time}}}\n"
                                         "    - {datacenter: SG, type: V100, on_demand_usd_h: 1.5}\n");
  const ClusterSpec cluster(s.cluster);
  const Market m = s.market->build(cluster, &*s.datacenters);
  REQUIRE(m.providers().size() == 2);
  CHECK(m.providers()[0].name == "cloud-a");
  CHECK(m.providers()[1].name == "SG");  // default: the site's own name
  CHECK(m.offer(2).provider == 1);
  CHECK(m.offer_devices(1) == std::vector<DeviceId>{0, 1, 2, 3});
  CHECK(m.offer_devices(2) == std::vector<DeviceId>{8, 9, 10, 11});
  CHECK(m.price_usd_per_device_h(1, Tick::from_seconds(3600)) == 0.5);
  // 1 h at 1.5 + 1 h at 0.5 + 0.5 h at 2.5 for one device.
  CHECK(m.cost_usd_per_device(1, Tick(), Tick::from_seconds(2.5 * 3600)) == Approx(3.25).epsilon(1e-12));
  const auto t = m.spot_timeline(1, Tick::from_seconds(1e6), s.seed);
  REQUIRE(t.size() == 2);
  CHECK(t[1].time == Tick::from_seconds(6 * 3600));
  CHECK(t[1].available == 0);
  CHECK(s.datacenters->to_yaml()["sites"][0]["provider"].as<std::string>() == "cloud-a");
  CHECK_FALSE(s.datacenters->to_yaml()["sites"][1]["provider"]);  // the default is not written
}

TEST_CASE("market config: errors name the key and what is allowed", "[experiments][market][errors]") {
  const std::string base = kCluster + kWorkload + "market:\n  offers:\n";
  CHECK_THAT(error_of(base + "    - {type: H100-SXM, on_demand_usd_h: 3}\n"),
             Catch::Contains("DIR/run.yaml:6: market.offers[0].type: the cluster nodes have no device of type H100-SXM; they have A100-80GB, V100"));
  CHECK_THAT(error_of(base + "    - {type: Z9000, on_demand_usd_h: 3}\n"), Catch::Contains("market.offers[0].type") && Catch::Contains("Z9000"));
  CHECK_THAT(error_of(base + "    - {type: V100, on_demand_usd_h: -1}\n"), Catch::Contains("market.offers[0].on_demand_usd_h: must be >= 0"));
  CHECK_THAT(error_of(base + "    - {type: V100, reserved: {devices: 5, usd_h: 1}}\n"),
             Catch::Contains("market.offers[0].reserved.devices: 5 devices, but cluster has 4 of type V100"));
  CHECK_THAT(error_of(base + "    - {type: V100, reserved: {devices: 3, usd_h: 1}, spot: {devices: 2, usd_h: 0.5}}\n"),
             Catch::Contains("market.offers[0].spot: reserved and spot offers for V100 in cluster sell 5 devices but it has 4"));
  CHECK_THAT(error_of(base + "    - {type: V100, on_demand_usd_h: 2}\n    - {type: V100, on_demand_usd_h: 3}\n"),
             Catch::Contains("market.offers[1].on_demand_usd_h: a second on_demand offer for V100 in cluster"));
  CHECK_THAT(error_of(base + "    - {type: V100}\n"), Catch::Contains("market.offers[0]: give at least one of on_demand_usd_h, reserved or spot"));
  CHECK_THAT(error_of(base + "    - {type: V100, spot: {devices: 2, usd_h: 1, availability: {model: markov}}}\n"),
             Catch::Contains("market.offers[0].spot.availability.model: 'markov' is not allowed; choose one of: on_off"));
  CHECK_THAT(error_of(base + "    - {type: V100, spot: {devices: 2, usd_h: 1, availability: {model: on_off, fraction_reclaimed: 1.5}}}\n"),
             Catch::Contains("fraction_reclaimed: must be a share of the offer's devices in [0, 1]"));
  CHECK_THAT(error_of(base + "    - {type: V100, spot: {devices: 2, usd_h: 1, availability: {}}}\n"),
             Catch::Contains("give either file (a CSV of available devices) or model: on_off"));
  CHECK_THAT(error_of(base + "    - {type: V100, reserved: {devices: 2, usd_h: 1, availability: {model: on_off}}}\n"),
             Catch::Contains("market.offers[0].reserved: unknown key 'availability'"));
  CHECK_THAT(error_of(base + "    - {datacenter: X, type: V100, on_demand_usd_h: 1}\n"),
             Catch::Contains("market.offers[0].datacenter: only goes with `datacenters:`"));
  CHECK_THAT(error_of(base + "    - {type: V100, spot: {devices: 2, usd_h: {file: nothere.csv}}}\n"), Catch::Contains("nothere.csv"));
  CHECK_THAT(error_of(kCluster + kWorkload + "market: {offers: []}\n"), Catch::Contains("market.offers: expected a list of offers"));
  CHECK_THAT(error_of(kTwoSites + kWorkload + "market:\n  provider: x\n  offers: [{datacenter: SG, type: V100, on_demand_usd_h: 1}]\n"),
             Catch::Contains("market.provider: with `datacenters:` each datacenter names its provider"));
  CHECK_THAT(error_of(kTwoSites + kWorkload + "market:\n  offers: [{datacenter: FR, type: V100, on_demand_usd_h: 1}]\n"),
             Catch::Contains("'FR' is not one of the datacenters under datacenters.sites: DE-LU, SG"));
  CHECK_THAT(error_of(kTwoSites + kWorkload + "market:\n  offers: [{datacenter: SG, type: A100-80GB, on_demand_usd_h: 1}]\n"),
             Catch::Contains("the SG nodes have no device of type A100-80GB; they have V100"));
}

TEST_CASE("market config: file contents are checked", "[experiments][market][errors]") {
  TempDir dir;
  dir.write("neg.csv", "Datetime (UTC),usd_per_device_h\n2023-01-01 00:00:00,1.5\n2023-01-01 01:00:00,-0.5\n");
  dir.write("frac.csv", "Datetime (UTC),devices\n2023-01-01 00:00:00,2\n2023-01-01 01:00:00,1.5\n");
  dir.write("many.csv", "Datetime (UTC),devices\n2023-01-01 00:00:00,2\n2023-01-01 01:00:00,3\n");
  dir.write("late.csv", "Datetime (UTC),devices\n2023-01-02 00:00:00,2\n2023-01-02 01:00:00,1\n");
  const std::string base = kCluster + kWorkload + "market:\n  offers:\n";
  auto err = [&](const std::string& offer) {
    try {
      load(dir, base + offer);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(err("    - {type: V100, on_demand_usd_h: {file: neg.csv}}\n"),
             Catch::Contains("on_demand_usd_h.file: the on-demand price (USD per device-hour) at 2023-01-01T01:00:00Z is negative"));
  CHECK_THAT(err("    - {type: V100, spot: {devices: 2, usd_h: 1, availability: {file: frac.csv}}}\n"),
             Catch::Contains("available spot devices at 2023-01-01T01:00:00Z are 1.5"));
  CHECK_THAT(err("    - {type: V100, spot: {devices: 2, usd_h: 1, availability: {file: many.csv}}}\n"), Catch::Contains("expected a whole number in [0, 2]"));
  CHECK_THAT(err("    - {type: V100, spot: {devices: 2, usd_h: 1, availability: {file: late.csv}}}\n"),
             Catch::Contains("the availability starts at 2023-01-02T00:00:00Z, after simulated time 0"));
}
