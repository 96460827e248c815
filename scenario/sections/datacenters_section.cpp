// `datacenters:`: several sites; the cluster is their node groups, in order.
#include "scenario/scenario.hpp"
#include "scenario/section_registry.hpp"
#include "scenario/world_build.hpp"
#include "world/geography/geography_process.hpp"

namespace schedsim::sections {

namespace {

// The sites (each with its signals) over the cluster's nodes in order, and the process
// that moves jobs between them.
void build_datacenters(const ScenarioConfig& s, WorldBuild& w) {
  if (!s.datacenters) return;
  std::vector<Datacenter> sites;
  GeographyOptions geo;
  int next_node = 0;
  for (const DatacenterConfig& dc : s.datacenters->sites) {
    Datacenter site;
    site.name = dc.name;
    site.pue = dc.pue;
    site.utc_offset_h = dc.utc_offset_h;
    if (dc.signals) {
      w.site_signals.push_back(std::make_unique<GridSignals>(dc.signals->build(w.seed)));
      site.signals = w.site_signals.back().get();
    }
    site.first_node = next_node;
    for (const NodeGroup& g : dc.nodes) site.num_nodes += g.count;
    next_node += site.num_nodes;
    sites.push_back(site);
    geo.home_weights.push_back(dc.home_weight);
  }
  geo.checkpoint_gb = s.datacenters->checkpoint_gb;
  geo.restart_s = s.datacenters->restart_s;
  geo.allowed_home_only = s.datacenters->allowed_home_only;
  geo.seed = w.seed;
  w.geography = std::make_unique<Geography>(w.cluster, std::move(sites), s.datacenters->wan(), geo);
  w.add_process(ProcessRank::kGeography, std::make_unique<GeographyProcess>(*w.geography));
  // Policies that read one signal (e.g. carbon-aware without a geography-aware base) see the first site's.
  w.options.signals = w.geography->site(0).signals;
}

}  // namespace

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
  s.build = build_datacenters;
  return s;
}

}  // namespace schedsim::sections
