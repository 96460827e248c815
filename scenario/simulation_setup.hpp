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
#include "scenario/world_build.hpp"
// (The models and processes the world may hold: callers read them through this header.)
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
  // outlive the setup. The sections build the world (scenario/section_registry.hpp).
  SimulationSetup(const ScenarioConfig& scenario, std::uint64_t seed, std::vector<std::string>& warnings);
  SimulationSetup(const SimulationSetup&) = delete;
  SimulationSetup& operator=(const SimulationSetup&) = delete;

  const ClusterSpec& cluster() const { return world_.cluster; }
  JobSource& source() { return *source_; }
  const TopologySpec* topology() const { return world_.topology.get(); }
  const ClusterPhysics* physics() const { return world_.physics.get(); }
  const FailureModel* failures() const { return world_.failures.get(); }
  const SimulatorOptions& simulator_options() const { return world_.options; }
  // The price/carbon signals of `signals:` (null without), seen by policies and metered.
  const GridSignals* signals() const { return world_.signals.get(); }
  std::uint64_t seed() const { return world_.seed; }
  // The datacenters of `datacenters:` (null for one cluster), with each site's signals.
  const Geography* geography() const { return world_.geography.get(); }
  // The compute market of `market:` (null without).
  const Market* market() const { return world_.market.get(); }
  // Outside temperatures, set-points and throttling (null without `thermal:`); its sites
  // are the datacenters in order, or the one cluster.
  const ThermalModel* thermal() const { return world_.thermal.get(); }
  // The whole world, with its processes (e.g. world().process(ProcessRank::kFailures)).
  const WorldBuild& world() const { return world_; }

  // A simulator over this world (one per setup: the job source is consumed by the run).
  std::unique_ptr<Simulator> make_simulator(Policy& policy);
  // The energy meter of the scenario's `energy:` map for `sim` (null without one): one site
  // per datacenter, each with its PUE (or thermal model) and signals. Add it to `sim`
  // before observers that read its last_job().
  std::unique_ptr<EnergyMeter> make_energy_meter(const Simulator& sim) const;

 private:
  const ScenarioConfig& scenario_;
  WorldBuild world_;
  std::unique_ptr<JobSource> source_;
  InferenceProcess inference_process_;  // registered with every simulator, after the world's
  bool used_ = false;
};

}  // namespace schedsim
