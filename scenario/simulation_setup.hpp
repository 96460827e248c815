// Everything one run of a scenario needs besides the policy and the observers: the
// cluster, the job source for a seed, and the topology and physics model when the
// scenario has them. The runner, the RL environment and the Python bindings all build
// their simulators through it, so a scenario means the same world everywhere.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "world/physics/cluster_physics.hpp"
#include "world/geography/datacenters.hpp"
#include "world/energy/energy.hpp"
#include "world/failures/failure_model.hpp"
#include "world/market/market.hpp"
#include "sim/simulator.hpp"
#include "world/thermal/thermal.hpp"
#include "world/physics/topology.hpp"
#include "world/failures/failure_process.hpp"
#include "world/market/spot_process.hpp"
#include "world/geography/geography_process.hpp"
#include "world/inference/inference_process.hpp"
#include "world/power_caps/power_cap_process.hpp"
#include "world/thermal/thermal_process.hpp"

namespace schedsim {

class SimulationSetup {
 public:
  // Builds the world of `scenario` with `seed` (usually scenario.seed). Warnings from the
  // workload (e.g. skipped trace rows) are appended to `warnings`. The scenario must
  // outlive the setup.
  SimulationSetup(const ScenarioConfig& scenario, std::uint64_t seed, std::vector<std::string>& warnings);
  SimulationSetup(const SimulationSetup&) = delete;
  SimulationSetup& operator=(const SimulationSetup&) = delete;

  const ClusterSpec& cluster() const { return cluster_; }
  JobSource& source() { return *source_; }
  const TopologySpec* topology() const { return topology_.get(); }
  const ClusterPhysics* physics() const { return physics_.get(); }
  const FailureModel* failures() const { return failures_.get(); }
  const SimulatorOptions& simulator_options() const { return options_; }
  // The price/carbon signals of `signals:` (null without), seen by policies and metered.
  const GridSignals* signals() const { return signals_.get(); }
  std::uint64_t seed() const { return seed_; }
  // The datacenters of `datacenters:` (null for one cluster), with each site's signals.
  const Geography* geography() const { return geography_.get(); }
  // The compute market of `market:` (null without).
  const Market* market() const { return market_.get(); }
  // Outside temperatures, set-points and throttling (null without `thermal:`); its sites
  // are the datacenters in order, or the one cluster.
  const ThermalModel* thermal() const { return thermal_.get(); }

  // A simulator over this world (one per setup: the job source is consumed by the run).
  std::unique_ptr<Simulator> make_simulator(Policy& policy);
  // The energy meter of the scenario's `energy:` map for `sim` (null without one): one site
  // per datacenter, each with its PUE (or thermal model) and signals. Add it to `sim`
  // before observers that read its last_job().
  std::unique_ptr<EnergyMeter> make_energy_meter(const Simulator& sim) const;

 private:
  const ScenarioConfig& scenario_;
  std::uint64_t seed_;
  ClusterSpec cluster_;
  std::unique_ptr<JobSource> source_;
  std::unique_ptr<TopologySpec> topology_;
  std::unique_ptr<TrainingPlanModel> plans_;  // before physics_, which points at it
  std::unique_ptr<ClusterPhysics> physics_;
  std::unique_ptr<GridSignals> signals_;
  std::vector<std::unique_ptr<GridSignals>> site_signals_;
  std::unique_ptr<Geography> geography_;
  std::unique_ptr<GeographyProcess> geography_process_;  // registered with the simulator
  std::unique_ptr<FailureModel> failures_;
  std::unique_ptr<Market> market_;
  std::unique_ptr<FailureProcess> failure_process_;  // world processes, registered by make_simulator
  std::unique_ptr<SpotProcess> spot_process_;
  std::vector<int> node_rack_;
  std::vector<double> device_speed_;  // power caps (the thermal model's base speeds)
  std::unique_ptr<PowerCapProcess> power_cap_process_;  // registered with the simulator (none with a thermal model)
  std::unique_ptr<ThermalModel> thermal_;
  std::unique_ptr<ThermalProcess> thermal_process_;  // registered with the simulator
  InferenceProcess inference_process_;  // registered with every simulator
  SimulatorOptions options_;
  bool used_ = false;
};

}  // namespace schedsim
