#include "experiments/simulation_setup.hpp"

#include "sim/error.hpp"

namespace schedsim {

SimulationSetup::SimulationSetup(const ScenarioConfig& scenario, std::uint64_t seed, std::vector<std::string>& warnings)
    : seed_(seed), cluster_(scenario.cluster), source_(scenario.workload.make_source(seed, warnings)) {
  options_.oversized = scenario.workload.oversized;
  if (scenario.physics) {
    topology_ = std::make_unique<TopologySpec>(cluster_, scenario.topology, [&](const std::string& type) {
      return scenario.accelerators.get(type).intra_node_link_bytes_per_s;
    });
    physics_ = std::make_unique<ClusterPhysics>(cluster_, *topology_, scenario.accelerators, scenario.profiles, *scenario.physics,
                                                scenario.throughputs.get());
    options_.physics = physics_.get();
    for (int n = 0; n < cluster_.num_nodes(); ++n) node_rack_.push_back(topology_->rack_of_node(n));
    options_.node_group = &node_rack_;
  }
  if (scenario.signals) {
    signals_ = std::make_unique<GridSignals>(scenario.signals->build(seed));
    options_.signals = signals_.get();
  }
  if (scenario.failures) {
    failures_ = std::make_unique<FailureModel>(*scenario.failures, cluster_, seed, physics_.get());
    options_.failures = failures_.get();
  }
}

std::unique_ptr<Simulator> SimulationSetup::make_simulator(Policy& policy) {
  if (used_) throw InvariantError("SimulationSetup::make_simulator called twice: the job source is consumed by the first run");
  used_ = true;
  return std::make_unique<Simulator>(cluster_, *source_, policy, options_);
}

}  // namespace schedsim
