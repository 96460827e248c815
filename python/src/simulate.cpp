// simulate(): one run of a scenario, exactly as `schedsim run` does it (the same
// run_scenario), with the jobs.csv text kept in memory instead of a file.
#include <sstream>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "common.hpp"
#include "experiments/runner.hpp"
#include "policy_bridge.hpp"
#include "sim/observer.hpp"

namespace schedsim::python {

void bind_simulate(py::module_& m) {
  m.def(
      "simulate",
      [](const Scenario& scenario, const py::object& policy, bool check_invariants) {
        const ScenarioConfig& config = *scenario.config;
        std::ostringstream jobs_csv;
        RunOptions options;
        options.check_invariants = check_invariants;
        options.jobs_csv = &jobs_csv;
        const std::vector<Observer*> observers;
        RunResult result;
        const PolicyRegistry registry = builtin_policies();
        if (policy.is_none() || py::isinstance<py::str>(policy) || py::isinstance<py::dict>(policy)) {
          // A built-in policy: the scenario's, or a name / {name: ..., option: ...} map.
          const ConfigNode node = policy.is_none() ? ConfigNode(config.policy, config.policy_source, "policy")
                                                   : ConfigNode(to_yaml(policy, "policy"), "simulate(policy=...)", "policy");
          PolicyInstance instance = registry.create(node, policy_context(config));
          py::gil_scoped_release release;
          result = run_scenario(config, *instance.policy, instance.resolved, options, observers);
        } else {
          PythonPolicy bridge(policy, policy_context(config).information);
          YAML::Node resolved(YAML::NodeType::Map);
          resolved["name"] = bridge.name();
          resolved["python_class"] = py::str(py::type::handle_of(policy).attr("__module__")).cast<std::string>() + "." +
                                     py::str(py::type::handle_of(policy).attr("__qualname__")).cast<std::string>();
          {
            py::gil_scoped_release release;
            result = run_scenario(config, bridge, resolved, options, observers);
          }
        }
        py::dict out;
        out["results_json"] = results_json(result, config.seed).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
        out["jobs_csv"] = jobs_csv.str();  // exactly the CLI's jobs.csv
        py::dict stats;
        stats["events"] = result.stats.events;
        stats["decision_points"] = result.stats.decision_points;
        stats["actions"] = result.stats.actions;
        stats["rate_updates"] = result.stats.rate_updates;
        out["stats"] = stats;
        return out;
      },
      py::arg("scenario"), py::arg("policy") = py::none(), py::arg("check_invariants") = false,
      "Runs `scenario` to the end; returns results_json (the text the CLI writes to results.json), "
      "jobs_csv (the text the CLI writes to jobs.csv) and stats.");
}

}  // namespace schedsim::python
