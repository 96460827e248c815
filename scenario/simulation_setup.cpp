#include "scenario/simulation_setup.hpp"

#include "sim/interrupt.hpp"
#include "scenario/section_registry.hpp"
#include "base/error.hpp"

namespace schedsim {

SimulationSetup::SimulationSetup(const ScenarioConfig& scenario, std::uint64_t seed, std::vector<std::string>& warnings)
    : scenario_(scenario), world_(ClusterSpec(scenario.cluster), seed), source_(scenario.workload.make_source(seed, warnings, throw_if_interrupted_reading)) {
  world_.options.oversized = scenario.workload.oversized;
  build_sections(scenario, world_);  // physics, signals, datacenters, energy, failures, market
}

std::unique_ptr<Simulator> SimulationSetup::make_simulator(Policy& policy) {
  if (used_) throw InvariantError("SimulationSetup::make_simulator called twice: the job source is consumed by the first run");
  used_ = true;
  auto sim = std::make_unique<Simulator>(world_.cluster, *source_, policy, world_.options);
  // The world processes by rank (ProcessRank: failures, spot, geography, power caps,
  // thermal), whatever order the sections built them in: event sequence numbers and
  // outputs stay the same.
  for (WorldProcess* process : world_.processes()) sim->add_process(*process);
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
                                         std::vector<MeteredSite>{MeteredSite{"", 0, world_.cluster.num_devices(), scenario_.energy->pue, signals(), thermal(), 0}});
  }
  return std::make_unique<EnergyMeter>(sim, power, scenario_.energy->pue, signals());
}

}  // namespace schedsim
