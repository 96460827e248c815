#include "world/geography/datacenters_config.hpp"

#include <cmath>

#include "sim/interrupt.hpp"
#include "base/error.hpp"

namespace schedsim {

std::vector<NodeGroup> parse_node_groups(const ConfigNode& nodes, std::int64_t& total) {
  if (nodes.size() == 0) nodes.fail("the cluster needs at least one node group, e.g. - {count: 4, type: V100, devices_per_node: 8}");
  // Bounded before anything is allocated (docs/config.md#limits): a cluster of more
  // groups than devices allowed is a generated or damaged file.
  if (nodes.size() > kMaxNodeGroups) {
    nodes.fail("a list of " + std::to_string(nodes.size()) + " node groups, more than the " + std::to_string(kMaxNodeGroups) +
               " schedsim reads (docs/config.md#limits); merge groups of the same device type and size");
  }
  std::vector<NodeGroup> out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (i % 4096 == 0) throw_if_interrupted("reading the scenario's node groups");
    const ConfigNode g = nodes.at(i);
    g.expect_map({"count", "type", "devices_per_node"});
    NodeGroup group;
    if (auto c = g.maybe_child("count")) {
      const std::int64_t v = c->as_positive_int();
      if (v > 10'000'000) c->fail("more than 10,000,000 nodes in one group; is this a typo?");
      group.count = static_cast<int>(v);
    }
    group.type = g.child("type").as_string();
    if (group.type.empty()) g.child("type").fail("must be a device type name such as V100");
    const ConfigNode dpn = g.child("devices_per_node");
    const std::int64_t d = dpn.as_positive_int();
    if (d > 100'000) dpn.fail("more than 100,000 devices in one node; is this a typo?");
    group.devices_per_node = static_cast<int>(d);
    total += static_cast<std::int64_t>(group.count) * group.devices_per_node;
    if (total > 100'000'000) g.fail("the cluster would have more than 100,000,000 devices");
    out.push_back(group);
  }
  return out;
}

namespace {
double bandwidth(const ConfigNode& n) {
  const double v = n.as_positive_double();
  if (v > 1e6) n.fail("more than 1,000,000 Gbit/s; is this a typo?");
  return v;
}
}  // namespace

DatacentersConfig DatacentersConfig::parse(const ConfigNode& node, std::int64_t& total_devices) {
  DatacentersConfig c;
  node.expect_map({"sites", "wan", "checkpoint_gb", "restart_s", "allowed"});
  const ConfigNode sites = node.child("sites");
  if (!sites.is_sequence() || sites.size() == 0) sites.fail("expected a list of datacenters, each {name, nodes, pue, utc_offset_h, signals}");
  // The WAN model keeps a link for every pair of datacenters (n^2), so the list is bounded
  // before anything is built (docs/config.md#limits).
  if (sites.size() > kMaxDatacenters) {
    sites.fail("a list of " + std::to_string(sites.size()) + " datacenters, more than the " + std::to_string(kMaxDatacenters) +
               " schedsim models (docs/config.md#limits: every pair has a WAN link)");
  }
  for (std::size_t i = 0; i < sites.size(); ++i) {
    throw_if_interrupted("reading the scenario's datacenters");
    const ConfigNode s = sites.at(i);
    s.expect_map({"name", "nodes", "pue", "utc_offset_h", "signals", "home_weight", "provider", "thermal"});
    DatacenterConfig dc;
    dc.name = s.child("name").as_string();
    if (dc.name.empty()) s.child("name").fail("must be a non-empty region name such as DE-LU");
    for (const auto& other : c.sites) {
      if (other.name == dc.name) s.child("name").fail("datacenter '" + dc.name + "' is listed twice");
    }
    if (auto p = s.maybe_child("provider")) {
      dc.provider = p->as_string();
      if (dc.provider.empty()) p->fail("must be a non-empty provider name such as cloud-a");
    }
    dc.nodes = parse_node_groups(s.child("nodes"), total_devices);
    if (auto p = s.maybe_child("pue")) {
      dc.pue = p->as_double();
      if (!(dc.pue >= 1.0) || dc.pue > 10.0) p->fail("the PUE (facility power / IT power) must be in [1, 10], got " + std::to_string(dc.pue));
    }
    if (auto o = s.maybe_child("utc_offset_h")) {
      dc.utc_offset_h = o->as_double();
      if (!(dc.utc_offset_h >= -12.0 && dc.utc_offset_h <= 14.0)) o->fail("must be an offset from UTC in hours in [-12, 14]");
    }
    if (auto w = s.maybe_child("home_weight")) dc.home_weight = w->as_nonnegative_double();
    if (auto sg = s.maybe_child("signals")) {
      dc.signals = SignalsConfig::parse(*sg);
      const DatacenterConfig& first = c.sites.empty() ? dc : c.sites.front();
      if (first.signals && dc.signals->origin_utc_us != first.signals->origin_utc_us) {
        (sg->has("origin_utc") ? sg->child("origin_utc") : *sg)
            .fail("every datacenter's signals must share one origin_utc (simulated time 0); the first datacenter has " + first.signals->origin_utc);
      }
      if (first.signals && (dc.signals->price.has_value() != first.signals->price.has_value() ||
                            dc.signals->carbon.has_value() != first.signals->carbon.has_value())) {
        sg->fail("every datacenter needs the same signals (price, carbon) as the first one, so that totals add up");
      }
    } else if (!c.sites.empty() && c.sites.front().signals) {
      s.fail("needs signals like the first datacenter (every datacenter has signals, or none has)");
    }
    if (auto th = s.maybe_child("thermal")) {
      if (!c.sites.empty() && !c.sites.front().thermal) th->fail("the first datacenter has no thermal model: every datacenter has one, or none has");
      dc.thermal = ThermalConfig::parse(*th, dc.utc_offset_h, false);
    } else if (!c.sites.empty() && c.sites.front().thermal) {
      s.fail("needs thermal like the first datacenter (every datacenter has a thermal model, or none has)");
    }
    c.sites.push_back(dc);
  }
  double weights = 0.0;
  for (const auto& dc : c.sites) weights += dc.home_weight;
  if (!(weights > 0.0)) sites.fail("the home_weight of at least one datacenter must be positive");
  if (auto wan = node.maybe_child("wan")) {
    wan->expect_map({"bandwidth_gbit_s", "latency_ms", "links"});
    if (auto b = wan->maybe_child("bandwidth_gbit_s")) c.default_bandwidth_gbit_s = bandwidth(*b);
    if (auto l = wan->maybe_child("latency_ms")) c.default_latency_ms = l->as_nonnegative_double();
    if (auto links = wan->maybe_child("links")) {
      if (!links->is_sequence()) links->fail("expected a list of {between: [A, B], bandwidth_gbit_s, latency_ms}");
      for (std::size_t i = 0; i < links->size(); ++i) {
        const ConfigNode l = links->at(i);
        l.expect_map({"between", "bandwidth_gbit_s", "latency_ms"});
        const ConfigNode between = l.child("between");
        if (!between.is_sequence() || between.size() != 2) between.fail("expected two datacenter names, e.g. [DE-LU, SG]");
        WanLinkConfig link;
        link.a = between.at(0).as_string();
        link.b = between.at(1).as_string();
        for (std::size_t k = 0; k < 2; ++k) {
          const std::string& name = k == 0 ? link.a : link.b;
          bool found = false;
          for (const auto& dc : c.sites) found = found || dc.name == name;
          if (!found) between.at(k).fail("'" + name + "' is not one of the datacenters under sites");
        }
        if (link.a == link.b) between.fail("a WAN link joins two different datacenters");
        link.bandwidth_gbit_s = l.has("bandwidth_gbit_s") ? bandwidth(l.child("bandwidth_gbit_s")) : c.default_bandwidth_gbit_s;
        link.latency_ms = l.has("latency_ms") ? l.child("latency_ms").as_nonnegative_double() : c.default_latency_ms;
        c.links.push_back(link);
      }
    }
  }
  if (auto g = node.maybe_child("checkpoint_gb")) c.checkpoint_gb = g->as_nonnegative_double();
  if (auto r = node.maybe_child("restart_s")) c.restart_s = r->as_nonnegative_double();
  if (auto a = node.maybe_child("allowed")) {
    const std::string v = a->as_string();
    if (v != "any" && v != "home") a->fail("must be any (every datacenter) or home (only the job's home), got '" + v + "'");
    c.allowed_home_only = v == "home";
  }
  return c;
}

std::vector<NodeGroup> DatacentersConfig::cluster() const {
  std::vector<NodeGroup> out;
  for (const auto& dc : sites) out.insert(out.end(), dc.nodes.begin(), dc.nodes.end());
  return out;
}

int DatacentersConfig::largest_site_devices() const {
  int best = 0;
  for (const auto& dc : sites) {
    int n = 0;
    for (const auto& g : dc.nodes) n += g.count * g.devices_per_node;
    best = std::max(best, n);
  }
  return best;
}

std::vector<std::vector<WanLink>> DatacentersConfig::wan() const {
  const WanLink def{default_bandwidth_gbit_s * 1e9, default_latency_ms / 1e3};
  std::vector<std::vector<WanLink>> m(sites.size(), std::vector<WanLink>(sites.size(), def));
  auto index = [&](const std::string& name) {
    for (std::size_t s = 0; s < sites.size(); ++s) {
      if (sites[s].name == name) return s;
    }
    return sites.size();
  };
  for (const auto& l : links) {
    const std::size_t a = index(l.a), b = index(l.b);
    m[a][b] = m[b][a] = WanLink{l.bandwidth_gbit_s * 1e9, l.latency_ms / 1e3};
  }
  return m;
}

YAML::Node DatacentersConfig::to_yaml() const {
  YAML::Node n(YAML::NodeType::Map);
  for (const auto& dc : sites) {
    YAML::Node s(YAML::NodeType::Map);
    s["name"] = dc.name;
    if (!dc.provider.empty() && dc.provider != dc.name) s["provider"] = dc.provider;
    YAML::Node nodes(YAML::NodeType::Sequence);
    for (const auto& g : dc.nodes) {
      YAML::Node gn(YAML::NodeType::Map);
      gn["count"] = g.count;
      gn["type"] = g.type;
      gn["devices_per_node"] = g.devices_per_node;
      nodes.push_back(gn);
    }
    s["nodes"] = nodes;
    s["pue"] = dc.pue;
    s["utc_offset_h"] = dc.utc_offset_h;
    s["home_weight"] = dc.home_weight;
    if (dc.signals) s["signals"] = dc.signals->to_yaml();
    if (dc.thermal) s["thermal"] = dc.thermal->to_yaml(false);
    n["sites"].push_back(s);
  }
  n["wan"]["bandwidth_gbit_s"] = default_bandwidth_gbit_s;
  n["wan"]["latency_ms"] = default_latency_ms;
  YAML::Node links_node(YAML::NodeType::Sequence);
  for (const auto& l : links) {
    YAML::Node ln(YAML::NodeType::Map);
    ln["between"].push_back(l.a);
    ln["between"].push_back(l.b);
    ln["bandwidth_gbit_s"] = l.bandwidth_gbit_s;
    ln["latency_ms"] = l.latency_ms;
    links_node.push_back(ln);
  }
  n["wan"]["links"] = links_node;
  n["checkpoint_gb"] = checkpoint_gb;
  n["restart_s"] = restart_s;
  n["allowed"] = allowed_home_only ? "home" : "any";
  return n;
}

}  // namespace schedsim
