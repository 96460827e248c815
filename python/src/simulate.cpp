// simulate(): one run of a scenario, exactly as `schedsim run` does it (the same
// run_scenario), with the jobs.csv records kept in memory as typed columns (numpy arrays
// that own the C++ vectors: no copy, no Python object per job) instead of a file; the
// columns that are formulas of others (jct_s = (end - submit) / 1e6, ...) are computed
// by simulate.py when first read.
#include <memory>
#include <sstream>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "common.hpp"
#include "run/job_columns.hpp"
#include "run/runner.hpp"
#include "policy_bridge.hpp"
#include "sim/observer.hpp"

namespace schedsim::python {

namespace {

// A numpy array that takes over `values` (freed with the array).
template <typename T>
py::array to_numpy(std::vector<T>&& values) {
  auto* owned = new std::vector<T>(std::move(values));
  owned->shrink_to_fit();
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>({static_cast<py::ssize_t>(owned->size())}, {static_cast<py::ssize_t>(sizeof(T))}, owned->data(), free_when_done);
}

// A column as (kind, payload): ("array", ndarray) or ("constant", value) for a column
// whose every row holds the same value (stored once; simulate.py broadcasts it).
template <typename T>
py::tuple column(ConstantRunColumn<T>& c) {
  if (c.constant()) return py::make_tuple("constant", py::cast(c.first()));
  return py::make_tuple("array", to_numpy(std::move(c.values())));
}

// A column stored only where it differs from its formula: ("derived", None) or as column().
py::tuple derived_column(DerivedRunColumn& c) {
  if (c.derived()) return py::make_tuple("derived", py::none());
  return py::make_tuple("array", to_numpy(std::move(c.values())));
}

}  // namespace

// What simulate.py's JobTable computes the jobs.csv columns from (the columns it derives
// are listed there, with their formulas).
py::dict job_columns_dict(JobColumns& c) {
  py::dict out;
  out["rows"] = c.rows();
  if (c.job_id.numbered()) {
    out["job_id"] = py::make_tuple("numbered", py::bytes(c.job_id.prefix()), to_numpy(std::move(c.job_id.numbers())));
  } else {
    py::dtype bytes_dtype("S" + std::to_string(c.job_id.width()));
    auto* owned = new std::vector<char>(std::move(c.job_id.bytes()));
    owned->shrink_to_fit();
    py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<char>*>(p); });
    out["job_id"] = py::make_tuple(
        "bytes", py::array(bytes_dtype, {static_cast<py::ssize_t>(c.rows())}, {static_cast<py::ssize_t>(c.job_id.width())}, owned->data(), free_when_done));
  }
  out["ids_ascii"] = c.job_id.ascii();
  out["submit_us"] = column(c.submit_us);
  out["start_us"] = column(c.start_us);
  out["end_us"] = column(c.end_us);
  out["num_gpus"] = c.num_gpus.wide() ? column(c.num_gpus.wide_column()) : column(c.num_gpus.narrow());
  out["held_us"] = derived_column(c.held_us);
  out["device_us"] = derived_column(c.device_us);
  out["status"] = column(c.status);
  out["checkpoint_gpu_s"] = column(c.checkpoint_gpu_s);
  out["preemptions"] = column(c.preemptions);
  out["moves"] = column(c.moves);
  out["loss_spike_restarts"] = column(c.loss_spike_restarts);
  out["failure_restarts"] = column(c.failure_restarts);
  out["periodic_checkpoint_gpu_s"] = column(c.periodic_checkpoint_gpu_s);
  out["restart_gpu_s"] = column(c.restart_gpu_s);
  out["lost_gpu_s"] = column(c.lost_gpu_s);
  if (c.has_energy) {
    out["energy_kwh"] = column(c.energy_kwh);
    out["cost_usd"] = column(c.cost_usd);
    out["co2_kg"] = column(c.co2_kg);
  }
  py::list status_names;  // by JobStatus code
  for (int s = 0; s <= static_cast<int>(JobStatus::kKilled); ++s) status_names.append(to_string(static_cast<JobStatus>(s)));
  out["status_names"] = status_names;
  return out;
}


void bind_simulate(py::module_& m) {
  m.def(
      "simulate",
      [](const Scenario& scenario, const py::object& policy, bool check_invariants) {
        const ScenarioConfig& config = *scenario.config;
        JobColumns jobs;
        RunOptions options;
        options.check_invariants = check_invariants;
        options.job_columns = &jobs;
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
        std::vector<double>().swap(result.sorted_jct_s);  // 8 bytes a job that results.json no longer needs
        out["jobs"] = job_columns_dict(jobs);  // the CLI's jobs.csv records, as columns
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
      "jobs (the records of the CLI's jobs.csv as columns: numpy arrays, or ('constant', value)) and stats.");
}

}  // namespace schedsim::python
