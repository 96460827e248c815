#include "app/advise_command.hpp"

#include <filesystem>
#include <ostream>

#include "app/advise_config.hpp"
#include "app/advise_output.hpp"
#include "run/runner.hpp"
#include "base/error.hpp"

namespace schedsim {

void run_advise_cli(const AdviseCliOptions& options, std::ostream& table_out) {
  const Objective objective = parse_objective(options.objective, "--objective");
  const AdvisePlanner planner(ConfigNode::load_file(options.job));
  const AdviseOutcome outcome = planner.run(objective);
  if (outcome.plans.empty()) throw InputError(options.job, no_feasible_plan_message(outcome));
  std::error_code ec;
  std::filesystem::create_directories(options.out, ec);
  if (ec) throw InputError(options.out, "cannot create the output folder: " + ec.message());
  write_file_atomically(options.out + "/plans.csv", plans_csv(planner.world(), outcome));
  if (options.plot) write_file_atomically(options.out + "/pareto.svg", pareto_svg(outcome));
  if (!options.quiet) {
    table_out << plans_table(planner.world(), outcome, objective, options.top);
    table_out << "\nall " << outcome.plans.size() << " feasible plans in " << options.out << "/plans.csv" << (options.plot ? ", the front in " + options.out + "/pareto.svg" : "")
              << '\n';
  }
}

}  // namespace schedsim
