// `energy:`: the energy meter (docs/energy.md): device power, PUE, power caps, thermal model.
#include "scenario/scenario.hpp"
#include "scenario/section_registry.hpp"
#include "scenario/world_build.hpp"
#include "world/power_caps/power_cap_process.hpp"
#include "world/thermal/thermal_process.hpp"

namespace schedsim::sections {

namespace {

// Power caps (capped device types run slower) and the thermal model (its throttled speeds
// include the caps'), each with its process: one of the two, never both.
void build_energy(const ScenarioConfig& s, WorldBuild& w) {
  if (!s.energy) return;
  const ClusterSpec& cluster = w.cluster;
  if (!s.energy->power_caps.empty()) {
    for (DeviceId d = 0; d < cluster.num_devices(); ++d) {
      w.device_speed.push_back(s.energy->speed_by_type[static_cast<std::size_t>(cluster.node(cluster.node_of(d)).type_index)]);
    }
  }
  const bool site_thermal = s.datacenters && s.datacenters->sites.front().thermal;
  if (s.energy->thermal || site_thermal) {
    std::vector<ThermalSiteSpec> sites;
    if (site_thermal) {
      for (int i = 0; i < w.geography->num_sites(); ++i) {
        const Datacenter& dc = w.geography->site(i);
        sites.push_back(s.datacenters->sites[static_cast<std::size_t>(i)].thermal->site(dc.name, dc.first_device, dc.num_devices, dc.pue));
      }
    } else {
      sites.push_back(s.energy->thermal->site("", 0, cluster.num_devices(), s.energy->pue));
    }
    std::vector<double> load;
    for (DeviceId d = 0; d < cluster.num_devices(); ++d) {
      load.push_back(s.energy->load_by_type[static_cast<std::size_t>(cluster.node(cluster.node_of(d)).type_index)]);
    }
    w.thermal = std::make_unique<ThermalModel>(std::move(sites), s.origin_utc_us(), std::move(load), w.device_speed);
    w.add_process(ProcessRank::kThermal, std::make_unique<ThermalProcess>(*w.thermal));
  } else if (!w.device_speed.empty()) {  // (with a thermal model, its speeds include the caps')
    w.add_process(ProcessRank::kPowerCaps, std::make_unique<PowerCapProcess>(w.device_speed));
  }
}

}  // namespace

ScenarioSection energy_section() {
  ScenarioSection s;
  s.key = "energy";
  s.parse = [](const ConfigNode& node, SectionParse& p) { p.scenario.energy = EnergyConfig::parse(node, p.scenario.cluster, p.scenario.accelerators); };
  s.absent = [](SectionParse& p) {
    const ScenarioConfig& c = p.scenario;
    if (c.datacenters && c.datacenters->sites.front().thermal) {
      p.root.child("datacenters").child("sites").at(0).child("thermal").fail("the thermal model needs an `energy:` map (the meter that applies its PUE)");
    }
  };
  s.to_yaml = [](const ScenarioConfig& c, const YAML::Node&, YAML::Node& doc) {
    if (c.energy) doc["energy"] = c.energy->to_yaml();
  };
  s.build = build_energy;
  return s;
}

}  // namespace schedsim::sections
