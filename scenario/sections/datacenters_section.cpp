// `datacenters:`: several sites; the cluster is their node groups, in order.
#include "scenario/scenario.hpp"
#include "scenario/section_registry.hpp"

namespace schedsim::sections {

ScenarioSection datacenters_section() {
  ScenarioSection s;
  s.key = "datacenters";
  s.parse = [](const ConfigNode& node, SectionParse& p) {
    const ConfigNode& root = p.root;
    const ConfigNode& cluster = *p.cluster;
    if (cluster.has("nodes")) cluster.child("nodes").fail("with `datacenters:` the nodes go under each datacenter (datacenters.sites[i].nodes)");
    if (root.has("signals")) root.child("signals").fail("with `datacenters:` the signals go under each datacenter (datacenters.sites[i].signals)");
    if (root.has("energy") && root.child("energy").has("pue")) root.child("energy").child("pue").fail("with `datacenters:` the PUE goes under each datacenter (datacenters.sites[i].pue)");
    if (root.has("energy") && root.child("energy").has("thermal")) {
      root.child("energy").child("thermal").fail("with `datacenters:` the thermal model goes under each datacenter (datacenters.sites[i].thermal)");
    }
    p.scenario.datacenters = DatacentersConfig::parse(node, p.total_devices);
    p.scenario.cluster = p.scenario.datacenters->cluster();
  };
  s.to_yaml = [](const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) {
    if (c.datacenters) doc["datacenters"] = c.datacenters->to_yaml();
  };
  return s;
}

}  // namespace schedsim::sections
