#include "world/market/market_config.hpp"

#include <cmath>

#include "base/error.hpp"
#include "traces/signal_files.hpp"

namespace schedsim {

namespace {

constexpr const char* kPriceColumn = "usd_per_device_h";
constexpr const char* kDevicesColumn = "devices";

// A number or {file, time_column, value_column}; `what` names the value in messages.
MarketSeriesSpec parse_series(const ConfigNode& node, const std::string& what, const char* default_column) {
  MarketSeriesSpec s;
  if (node.is_scalar()) {
    s.constant = node.as_nonnegative_double();
    s.series = std::make_shared<const StepSeries>(StepSeries::constant(node.path(), s.constant));
    return s;
  }
  if (!node.is_map()) node.fail("expected " + what + " as a number or {file, time_column, value_column}");
  node.expect_map({"file", "time_column", "value_column"});
  const ConfigNode f = node.child("file");
  s.file = f.as_string();
  if (auto t = node.maybe_child("time_column")) s.time_column = t->as_string();
  if (auto v = node.maybe_child("value_column")) s.value_column = v->as_string();
  s.series = std::make_shared<const StepSeries>(load_signal_csv(
      f.as_path(), SignalKind::kPrice, {s.time_column, s.value_column.empty() ? default_column : s.value_column}, f.as_path()));
  for (std::int64_t u = s.series->begin_us(); u < s.series->end_us(); u = s.series->next_change_us(u)) {
    if (s.series->value_at(u) < 0) f.fail(what + " at " + format_utc(u) + " is negative (" + std::to_string(s.series->value_at(u)) + ")");
  }
  return s;
}

// The cluster's spelling of the catalogue type `node` names among `types`, or "".
std::string cluster_type(const ConfigNode& node, const std::vector<std::string>& types, const AcceleratorCatalogue& catalogue) {
  const std::string& canonical = catalogue.get(node).name;  // unknown type: error listing the catalogue
  for (const auto& t : types) {
    const AcceleratorSpec* spec = catalogue.find(t);
    if (spec ? spec->name == canonical : t == canonical) return t;
  }
  return "";
}

std::vector<std::string> types_of(const std::vector<NodeGroup>& groups) {
  std::vector<std::string> out;
  for (const auto& g : groups) {
    if (std::find(out.begin(), out.end(), g.type) == out.end()) out.push_back(g.type);
  }
  return out;
}

int devices_of(const std::vector<NodeGroup>& groups, const std::string& type) {
  int n = 0;
  for (const auto& g : groups) n += g.type == type ? g.count * g.devices_per_node : 0;
  return n;
}

}  // namespace

YAML::Node MarketSeriesSpec::to_yaml() const {
  if (file.empty()) return YAML::Node(constant);
  YAML::Node n(YAML::NodeType::Map);
  n["file"] = file;
  if (!time_column.empty()) n["time_column"] = time_column;
  if (!value_column.empty()) n["value_column"] = value_column;
  return n;
}

MarketConfig MarketConfig::parse(const ConfigNode& node, const std::vector<NodeGroup>& cluster, const DatacentersConfig* datacenters,
                                 const AcceleratorCatalogue& catalogue, std::int64_t origin_utc_us) {
  MarketConfig c;
  c.origin_utc_us = origin_utc_us;
  node.expect_map({"provider", "offers"});
  if (auto p = node.maybe_child("provider")) {
    if (datacenters) p->fail("with `datacenters:` each datacenter names its provider (datacenters.sites[i].provider)");
    c.provider = p->as_string();
    if (c.provider.empty()) p->fail("must be a non-empty provider name");
  }
  const ConfigNode offers = node.child("offers");
  if (!offers.is_sequence() || offers.size() == 0) {
    offers.fail("expected a list of offers, each {datacenter, type, on_demand_usd_h, reserved: {devices, usd_h}, spot: {devices, usd_h, availability}}");
  }
  for (std::size_t i = 0; i < offers.size(); ++i) {
    const ConfigNode o = offers.at(i);
    o.expect_map({"datacenter", "type", "on_demand_usd_h", "reserved", "spot"});
    // The site and its node groups.
    std::string site = "cluster";
    std::vector<NodeGroup> groups = cluster;
    if (datacenters) {
      const ConfigNode dc = o.child("datacenter");
      site = dc.as_string();
      const DatacenterConfig* found = nullptr;
      std::string names;
      for (const auto& s : datacenters->sites) {
        names += (names.empty() ? "" : ", ") + s.name;
        if (s.name == site) found = &s;
      }
      if (!found) dc.fail("'" + site + "' is not one of the datacenters under datacenters.sites: " + names);
      groups = found->nodes;
    } else if (o.has("datacenter")) {
      o.child("datacenter").fail("only goes with `datacenters:`; without it every offer is on the one cluster");
    }
    const ConfigNode type_node = o.child("type");
    const std::vector<std::string> types = types_of(groups);
    const std::string type = cluster_type(type_node, types, catalogue);
    if (type.empty()) {
      std::string list;
      for (const auto& t : types) list += (list.empty() ? "" : ", ") + t;
      type_node.fail("the " + site + " nodes have no device of type " + catalogue.get(type_node).name + "; they have " + list);
    }
    const int capacity = devices_of(groups, type);
    if (!o.has("on_demand_usd_h") && !o.has("reserved") && !o.has("spot")) o.fail("give at least one of on_demand_usd_h, reserved or spot");

    auto add = [&](OfferConfig offer, const ConfigNode& where) {
      offer.datacenter = site;
      offer.type = type;
      int sold = offer.devices;
      for (const auto& other : c.offers) {
        if (other.datacenter != site || other.type != type) continue;
        if (other.kind == offer.kind) where.fail(std::string("a second ") + to_string(offer.kind) + " offer for " + type + " in " + site + "; give one per datacenter, type and kind");
        sold += other.devices;
      }
      if (sold > capacity) {
        where.fail("reserved and spot offers for " + type + " in " + site + " sell " + std::to_string(sold) + " devices but it has " + std::to_string(capacity));
      }
      c.offers.push_back(std::move(offer));
    };
    if (auto p = o.maybe_child("on_demand_usd_h")) {
      OfferConfig offer;
      offer.kind = PriceKind::kOnDemand;
      offer.usd_h = parse_series(*p, "the on-demand price (USD per device-hour)", kPriceColumn);
      add(std::move(offer), *p);
    }
    for (const PriceKind kind : {PriceKind::kReserved, PriceKind::kSpot}) {
      const char* key = kind == PriceKind::kReserved ? "reserved" : "spot";
      const auto k = o.maybe_child(key);
      if (!k) continue;
      if (kind == PriceKind::kReserved) {
        k->expect_map({"devices", "usd_h"});
      } else {
        k->expect_map({"devices", "usd_h", "availability"});
      }
      OfferConfig offer;
      offer.kind = kind;
      const ConfigNode d = k->child("devices");
      const std::int64_t n = d.as_positive_int();
      if (n > capacity) d.fail(std::to_string(n) + " devices, but " + site + " has " + std::to_string(capacity) + " of type " + type);
      offer.devices = static_cast<int>(n);
      offer.usd_h = parse_series(k->child("usd_h"), std::string("the ") + key + " price (USD per device-hour)", kPriceColumn);
      if (auto a = k->maybe_child("availability")) {
        if (!a->is_map()) a->fail("expected {file, time_column, value_column} or {model: on_off, mean_up_h, mean_down_h, fraction_reclaimed}");
        if (a->has("model")) {
          a->expect_map({"model", "mean_up_h", "mean_down_h", "fraction_reclaimed"});
          a->child("model").as_choice({"on_off"});
          offer.availability = SpotAvailability::Kind::kOnOff;
          if (auto m = a->maybe_child("mean_up_h")) offer.mean_up_h = m->as_positive_double();
          if (auto m = a->maybe_child("mean_down_h")) offer.mean_down_h = m->as_positive_double();
          if (auto f = a->maybe_child("fraction_reclaimed")) {
            offer.fraction_reclaimed = f->as_nonnegative_double();
            if (offer.fraction_reclaimed > 1.0) f->fail("must be a share of the offer's devices in [0, 1]");
          }
        } else if (a->has("file")) {
          offer.availability = SpotAvailability::Kind::kSeries;
          offer.available_devices = parse_series(*a, "the available spot devices", kDevicesColumn);
          const StepSeries& s = *offer.available_devices.series;
          for (std::int64_t u = s.begin_us(); u < s.end_us(); u = s.next_change_us(u)) {
            const double v = s.value_at(u);
            if (v > offer.devices || v != std::floor(v)) {
              a->child("file").fail("available spot devices at " + format_utc(u) + " are " + std::to_string(v) + "; expected a whole number in [0, " +
                                    std::to_string(offer.devices) + "]");
            }
          }
          if (s.begin_us() > origin_utc_us) {
            a->child("file").fail("the availability starts at " + format_utc(s.begin_us()) + ", after simulated time 0 (" + format_utc(origin_utc_us) + ")");
          }
        } else {
          a->fail("give either file (a CSV of available devices) or model: on_off");
        }
      }
      add(std::move(offer), *k);
    }
  }
  return c;
}

YAML::Node MarketConfig::to_yaml() const {
  YAML::Node n(YAML::NodeType::Map);
  if (provider != "cluster") n["provider"] = provider;
  YAML::Node list(YAML::NodeType::Sequence);
  for (const auto& o : offers) {
    YAML::Node e(YAML::NodeType::Map);
    if (o.datacenter != "cluster") e["datacenter"] = o.datacenter;
    e["type"] = o.type;
    if (o.kind == PriceKind::kOnDemand) {
      e["on_demand_usd_h"] = o.usd_h.to_yaml();
    } else {
      YAML::Node k(YAML::NodeType::Map);
      k["devices"] = o.devices;
      k["usd_h"] = o.usd_h.to_yaml();
      if (o.availability == SpotAvailability::Kind::kSeries) k["availability"] = o.available_devices.to_yaml();
      if (o.availability == SpotAvailability::Kind::kOnOff) {
        k["availability"]["model"] = "on_off";
        k["availability"]["mean_up_h"] = o.mean_up_h;
        k["availability"]["mean_down_h"] = o.mean_down_h;
        k["availability"]["fraction_reclaimed"] = o.fraction_reclaimed;
      }
      e[to_string(o.kind)] = k;
    }
    list.push_back(e);
  }
  n["offers"] = list;
  return n;
}

Market MarketConfig::build(const ClusterSpec& cluster, const DatacentersConfig* datacenters) const {
  std::vector<MarketSite> sites;
  std::vector<Provider> providers;
  auto provider_index = [&](const std::string& name) {
    for (std::size_t p = 0; p < providers.size(); ++p) {
      if (providers[p].name == name) return static_cast<int>(p);
    }
    providers.push_back(Provider{name, {}});
    return static_cast<int>(providers.size() - 1);
  };
  if (datacenters) {
    DeviceId first = 0;
    for (const auto& dc : datacenters->sites) {
      int n = 0;
      for (const auto& g : dc.nodes) n += g.count * g.devices_per_node;
      const int p = provider_index(dc.provider.empty() ? dc.name : dc.provider);
      providers[static_cast<std::size_t>(p)].sites.push_back(static_cast<int>(sites.size()));
      sites.push_back(MarketSite{dc.name, p, first, n});
      first += n;
    }
  } else {
    providers.push_back(Provider{provider, {0}});
    sites.push_back(MarketSite{"cluster", 0, 0, cluster.num_devices()});
  }
  std::vector<Offer> out;
  for (const auto& o : offers) {
    Offer offer;
    for (std::size_t s = 0; s < sites.size(); ++s) {
      if (sites[s].name == o.datacenter) offer.site = static_cast<int>(s);
    }
    offer.provider = sites[static_cast<std::size_t>(offer.site)].provider;
    offer.device_type = o.type;
    offer.kind = o.kind;
    offer.usd_per_device_h = o.usd_h.series;
    offer.devices = o.devices;
    offer.availability.kind = o.availability;
    offer.availability.devices = o.available_devices.series;
    offer.availability.mean_up_h = o.mean_up_h;
    offer.availability.mean_down_h = o.mean_down_h;
    offer.availability.fraction_reclaimed = o.fraction_reclaimed;
    out.push_back(std::move(offer));
  }
  return Market(cluster, std::move(sites), std::move(providers), std::move(out), origin_utc_us);
}

}  // namespace schedsim
