// The advisor's job file (docs/market.md, "Advisor"; keys in docs/config.md#advise): the
// scenario that holds the world (datacenters with their signals, the market's offers,
// physics, failures), the job (workload profile, amount of work, allowed device types,
// counts, regions and offer kinds, start, deadline, budget, carbon cap) and the search
// (start-time grid, split plans). Parsed strictly; builds the AdvisorWorld the advisor
// plans in from the simulator's own models.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/advisor.hpp"
#include "scenario/scenario.hpp"
#include "scenario/simulation_setup.hpp"
#include "base/config_node.hpp"
#include "world/market/market.hpp"

namespace schedsim {

class AdvisePlanner {
 public:
  // Parses the job document `root` (a file's or a tree built from a Python dict). Throws
  // InputError naming the file, line and key.
  explicit AdvisePlanner(const ConfigNode& root);
  AdvisePlanner(const AdvisePlanner&) = delete;
  AdvisePlanner& operator=(const AdvisePlanner&) = delete;

  const ScenarioConfig& scenario() const { return *scenario_; }
  const AdvisorWorld& world() const { return world_; }
  const AdviseJob& job() const { return job_; }

  AdviseOutcome run(Objective objective) const { return advise(world_, job_, objective); }

 private:
  std::unique_ptr<ScenarioConfig> scenario_;
  std::unique_ptr<SimulationSetup> setup_;
  std::unique_ptr<Market> market_;
  AdvisorWorld world_;
  AdviseJob job_;
};

// "cost", "finish" or "emissions"; InputError naming `where` otherwise.
Objective parse_objective(const std::string& name, const std::string& where);

}  // namespace schedsim
