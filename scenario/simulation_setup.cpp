#include "scenario/simulation_setup.hpp"

#include "sim/interrupt.hpp"
#include "parallelism/llm_plan_model.hpp"
#include "base/error.hpp"

namespace schedsim {

SimulationSetup::SimulationSetup(const ScenarioConfig& scenario, std::uint64_t seed, std::vector<std::string>& warnings)
    : scenario_(scenario), seed_(seed), cluster_(scenario.cluster), source_(scenario.workload.make_source(seed, warnings, throw_if_interrupted_reading)) {
  options_.oversized = scenario.workload.oversized;
  if (scenario.physics) {
    topology_ = std::make_unique<TopologySpec>(cluster_, scenario.topology, [&](const std::string& type) {
      return scenario.accelerators.get(type).intra_node_link_bytes_per_s;
    });
    physics_ = std::make_unique<ClusterPhysics>(cluster_, *topology_, scenario.accelerators, scenario.profiles, *scenario.physics,
                                                scenario.throughputs.get());
    // LLM jobs under a parallelism plan: the implementation lives in parallelism/, which
    // sim/ may not include; the physics model sees only the interface.
    if (!scenario.llm_plans.empty()) {
      auto plans = std::make_unique<LlmPlanModel>(scenario.llm_plans, scenario.topology);
      if (!plans->empty()) {
        plans_ = std::move(plans);
        physics_->set_plan_model(plans_.get());
      }
    }
    options_.physics = physics_.get();
    for (int n = 0; n < cluster_.num_nodes(); ++n) node_rack_.push_back(topology_->rack_of_node(n));
    options_.node_group = &node_rack_;
  }
  if (scenario.signals) {
    signals_ = std::make_unique<GridSignals>(scenario.signals->build(seed));
    options_.signals = signals_.get();
  }
  if (scenario.datacenters) {
    std::vector<Datacenter> sites;
    GeographyOptions geo;
    int next_node = 0;
    for (const DatacenterConfig& dc : scenario.datacenters->sites) {
      Datacenter site;
      site.name = dc.name;
      site.pue = dc.pue;
      site.utc_offset_h = dc.utc_offset_h;
      if (dc.signals) {
        site_signals_.push_back(std::make_unique<GridSignals>(dc.signals->build(seed)));
        site.signals = site_signals_.back().get();
      }
      site.first_node = next_node;
      for (const NodeGroup& g : dc.nodes) site.num_nodes += g.count;
      next_node += site.num_nodes;
      sites.push_back(site);
      geo.home_weights.push_back(dc.home_weight);
    }
    geo.checkpoint_gb = scenario.datacenters->checkpoint_gb;
    geo.restart_s = scenario.datacenters->restart_s;
    geo.allowed_home_only = scenario.datacenters->allowed_home_only;
    geo.seed = seed;
    geography_ = std::make_unique<Geography>(cluster_, std::move(sites), scenario.datacenters->wan(), geo);
    geography_process_ = std::make_unique<GeographyProcess>(*geography_);
    // Policies that read one signal (e.g. carbon-aware without a geography-aware base) see the first site's.
    options_.signals = geography_->site(0).signals;
  }
  if (scenario.energy && !scenario.energy->power_caps.empty()) {  // capped device types run slower
    for (DeviceId d = 0; d < cluster_.num_devices(); ++d) {
      device_speed_.push_back(scenario.energy->speed_by_type[static_cast<std::size_t>(cluster_.node(cluster_.node_of(d)).type_index)]);
    }
  }
  const bool site_thermal = scenario.datacenters && scenario.datacenters->sites.front().thermal;
  if (scenario.energy && (scenario.energy->thermal || site_thermal)) {  // throttled speeds replace the caps' (they include them)
    std::vector<ThermalSiteSpec> sites;
    if (site_thermal) {
      for (int i = 0; i < geography_->num_sites(); ++i) {
        const Datacenter& dc = geography_->site(i);
        sites.push_back(scenario.datacenters->sites[static_cast<std::size_t>(i)].thermal->site(dc.name, dc.first_device, dc.num_devices, dc.pue));
      }
    } else {
      sites.push_back(scenario.energy->thermal->site("", 0, cluster_.num_devices(), scenario.energy->pue));
    }
    std::vector<double> load;
    for (DeviceId d = 0; d < cluster_.num_devices(); ++d) {
      load.push_back(scenario.energy->load_by_type[static_cast<std::size_t>(cluster_.node(cluster_.node_of(d)).type_index)]);
    }
    thermal_ = std::make_unique<ThermalModel>(std::move(sites), scenario.origin_utc_us(), std::move(load), device_speed_);
    thermal_process_ = std::make_unique<ThermalProcess>(*thermal_);
  } else if (!device_speed_.empty()) {  // (with a thermal model, its speeds include the caps')
    power_cap_process_ = std::make_unique<PowerCapProcess>(device_speed_);
  }
  if (scenario.failures) {
    failures_ = std::make_unique<FailureModel>(*scenario.failures, cluster_, seed, physics_.get());
    failure_process_ = std::make_unique<FailureProcess>(*failures_);
  }
  if (scenario.market) {
    market_ = std::make_unique<Market>(scenario.market->build(cluster_, scenario.datacenters ? &*scenario.datacenters : nullptr));
    options_.market_view = market_.get();
    spot_process_ = std::make_unique<SpotProcess>(*market_, seed);
  }
}

std::unique_ptr<Simulator> SimulationSetup::make_simulator(Policy& policy) {
  if (used_) throw InvariantError("SimulationSetup::make_simulator called twice: the job source is consumed by the first run");
  used_ = true;
  auto sim = std::make_unique<Simulator>(cluster_, *source_, policy, options_);
  // World processes, in the order their events were scheduled before they were processes
  // (failures, then the market): event sequence numbers and outputs stay the same.
  if (failure_process_) sim->add_process(*failure_process_);
  if (spot_process_) sim->add_process(*spot_process_);
  // Then the models of branch worlds (their hooks run after the failures' and market's,
  // as their kernel branches did: the straggler factor first, then the caps' or throttle's).
  if (geography_process_) sim->add_process(*geography_process_);
  if (power_cap_process_) sim->add_process(*power_cap_process_);
  if (thermal_process_) sim->add_process(*thermal_process_);
  sim->add_process(inference_process_);  // service holds: any policy may hold devices
  return sim;
}

std::unique_ptr<EnergyMeter> SimulationSetup::make_energy_meter(const Simulator& sim) const {
  if (!scenario_.energy) return nullptr;
  const std::vector<DevicePower>& power = scenario_.energy->power_by_type;
  if (const Geography* geo = geography()) {
    std::vector<MeteredSite> sites;
    for (int i = 0; i < geo->num_sites(); ++i) {
      const Datacenter& dc = geo->site(i);
      sites.push_back(MeteredSite{dc.name, dc.first_device, dc.num_devices, dc.pue, dc.signals, thermal(), thermal() ? i : -1});
    }
    return std::make_unique<EnergyMeter>(sim, power, sites);
  }
  if (thermal()) {
    return std::make_unique<EnergyMeter>(sim, power,
                                         std::vector<MeteredSite>{MeteredSite{"", 0, cluster_.num_devices(), scenario_.energy->pue, signals(), thermal(), 0}});
  }
  return std::make_unique<EnergyMeter>(sim, power, scenario_.energy->pue, signals());
}

}  // namespace schedsim
