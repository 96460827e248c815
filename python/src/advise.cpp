// advise(): the compute advisor, exactly as `schedsim advise` runs it (the same planner,
// the same plans.csv text), so Python and the CLI give the same numbers.
#include <pybind11/stl.h>

#include "common.hpp"
#include "app/advise_output.hpp"
#include "app/advise_config.hpp"

namespace schedsim::python {

namespace {

py::dict advise_node(const ConfigNode& root, const std::string& objective_name, std::size_t top) {
  const Objective objective = parse_objective(objective_name, "advise(objective=...)");
  const AdvisePlanner planner(root);
  AdviseOutcome outcome;
  {
    py::gil_scoped_release release;
    outcome = planner.run(objective);
  }
  py::dict out;
  out["plans_csv"] = plans_csv(planner.world(), outcome);  // exactly the CLI's plans.csv
  out["table"] = plans_table(planner.world(), outcome, objective, top);
  out["pareto_svg"] = pareto_svg(outcome);
  out["evaluated"] = outcome.evaluated;
  py::list rejected;
  for (const auto& [why, n] : outcome.rejected) rejected.append(py::make_tuple(why, n));
  out["rejected"] = rejected;
  out["no_feasible_message"] = outcome.plans.empty() ? no_feasible_plan_message(outcome) : std::string();
  return out;
}

}  // namespace

void bind_advise(py::module_& m) {
  m.def(
      "advise_file", [](const std::string& path, const std::string& objective, std::size_t top) { return advise_node(ConfigNode::load_file(path), objective, top); },
      py::arg("path"), py::arg("objective") = "cost", py::arg("top") = 10, "Runs the advisor on a job file (schedsim advise JOB.yaml).");
  m.def(
      "advise_string",
      [](const std::string& text, const std::string& source, const std::string& objective, std::size_t top) {
        return advise_node(ConfigNode::load_string(text, source), objective, top);
      },
      py::arg("text"), py::arg("source"), py::arg("objective") = "cost", py::arg("top") = 10, "Runs the advisor on a job document given as YAML text.");
  m.def(
      "advise_dict",
      [](const py::dict& d, const std::string& objective, std::size_t top) { return advise_node(ConfigNode(to_yaml(d, ""), "<dict>"), objective, top); },
      py::arg("job"), py::arg("objective") = "cost", py::arg("top") = 10, "Runs the advisor on a job document given as a dict.");
}

}  // namespace schedsim::python
