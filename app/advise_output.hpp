// What `schedsim advise` prints and writes: the ranked table, plans.csv (every feasible
// plan, with a pareto column) and the Pareto front as an SVG figure. The Python binding
// returns the same CSV text, so the CLI and Python give the same numbers.
#pragma once

#include <cstddef>
#include <string>

#include "app/advisor.hpp"

namespace schedsim {

// Every feasible plan in rank order, one row each (docs/market.md lists the columns).
std::string plans_csv(const AdvisorWorld& world, const AdviseOutcome& outcome);

// The top `top` plans as a text table (0 = all), with the Pareto plans marked and a line
// on how many candidates were evaluated and why the others were dropped. With no
// feasible plan: the reasons, and no table.
std::string plans_table(const AdvisorWorld& world, const AdviseOutcome& outcome, Objective objective, std::size_t top);

// Cost against expected finish (hours since time 0), each plan a dot colored by its
// emissions, the Pareto front drawn as larger outlined dots.
std::string pareto_svg(const AdviseOutcome& outcome);

// One message for an outcome without feasible plans: how many were evaluated and why
// each group was dropped.
std::string no_feasible_plan_message(const AdviseOutcome& outcome);

}  // namespace schedsim
