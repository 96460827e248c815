// The world of one scenario while its sections build it (scenario/section_registry.hpp:
// each section's `build` hook adds its models and world processes here). SimulationSetup
// owns one and reads its models from it; make_simulator registers its processes sorted by
// rank, so the registration order (and with it the event sequence numbers) does not
// depend on the order the sections were built in.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sim/cluster_spec.hpp"
#include "sim/simulator.hpp"
#include "sim/training_plan.hpp"
#include "sim/world_process.hpp"
#include "base/signals.hpp"
#include "world/failures/failure_model.hpp"
#include "world/geography/datacenters.hpp"
#include "world/market/market.hpp"
#include "world/physics/cluster_physics.hpp"
#include "world/physics/topology.hpp"
#include "world/thermal/thermal.hpp"

namespace schedsim {

// The registration order of the world processes: that of their events before they were
// processes (failures, then the market), then the branch worlds' (the straggler factor
// first, then the caps' or the throttle's). Changing it changes event sequence numbers.
enum class ProcessRank : int { kFailures = 0, kSpot = 1, kGeography = 2, kPowerCaps = 3, kThermal = 4 };

struct WorldBuild {
  WorldBuild(ClusterSpec cluster_spec, std::uint64_t world_seed) : cluster(std::move(cluster_spec)), seed(world_seed) {}
  // Options and processes point into the models: the build stays where it was made.
  WorldBuild(const WorldBuild&) = delete;
  WorldBuild& operator=(const WorldBuild&) = delete;

  ClusterSpec cluster;
  std::uint64_t seed = 0;
  SimulatorOptions options;
  std::unique_ptr<TopologySpec> topology;
  std::unique_ptr<TrainingPlanModel> plans;  // before physics, which points at it
  std::unique_ptr<ClusterPhysics> physics;
  std::vector<int> node_rack;                // options.node_group
  std::unique_ptr<GridSignals> signals;
  std::vector<std::unique_ptr<GridSignals>> site_signals;
  std::unique_ptr<Geography> geography;
  std::vector<double> device_speed;          // power caps (the thermal model's base speeds)
  std::unique_ptr<ThermalModel> thermal;
  std::unique_ptr<FailureModel> failures;
  std::unique_ptr<Market> market;

  // Adds a world process (at most one per rank); it may point at the models above.
  void add_process(ProcessRank rank, std::unique_ptr<WorldProcess> process) {
    processes_.emplace_back(rank, std::move(process));
    std::stable_sort(processes_.begin(), processes_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  // The process of `rank` (null: none was added).
  WorldProcess* process(ProcessRank rank) const {
    for (const auto& [r, p] : processes_) {
      if (r == rank) return p.get();
    }
    return nullptr;
  }
  // The processes in registration order (by rank).
  std::vector<WorldProcess*> processes() const {
    std::vector<WorldProcess*> out;
    for (const auto& rp : processes_) out.push_back(rp.second.get());
    return out;
  }

 private:
  // Last: destroyed before the models they point at.
  std::vector<std::pair<ProcessRank, std::unique_ptr<WorldProcess>>> processes_;
};

}  // namespace schedsim
