// simulate(): one run of a scenario, exactly as `schedsim run` does it (the same
// run_scenario), with the per-job records kept in memory instead of jobs.csv.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "common.hpp"
#include "experiments/runner.hpp"
#include "policy_bridge.hpp"
#include "sim/observer.hpp"

namespace schedsim::python {

namespace {

// The columns of jobs.csv, as numbers (seconds as doubles of the exact microsecond ticks).
class JobRecorder : public Observer {
 public:
  void on_job_end(const JobState& j) override {
    id.push_back(j.spec.id);
    submit_s.push_back(j.spec.submit.seconds());
    start_s.push_back(j.start.seconds());
    end_s.push_back(j.end.seconds());
    num_gpus.push_back(j.spec.num_gpus);
    jct_s.push_back((j.end - j.spec.submit).seconds());
    queue_delay_s.push_back((j.end - j.spec.submit - Tick::from_us(j.held_us)).seconds());
    status.push_back(to_string(j.status));
    gpu_s.push_back(Tick::from_us(j.device_us).seconds());
    checkpoint_gpu_s.push_back(Tick::from_us(j.overhead_device_us).seconds());
    preemptions.push_back(j.preemptions);
    moves.push_back(j.moves);
  }

  py::dict columns() const {
    py::dict d;
    d["job_id"] = id;
    d["submit_s"] = py::array_t<double>(static_cast<py::ssize_t>(submit_s.size()), submit_s.data());
    d["start_s"] = py::array_t<double>(static_cast<py::ssize_t>(start_s.size()), start_s.data());
    d["end_s"] = py::array_t<double>(static_cast<py::ssize_t>(end_s.size()), end_s.data());
    d["num_gpus"] = py::array_t<std::int64_t>(static_cast<py::ssize_t>(num_gpus.size()), num_gpus.data());
    d["jct_s"] = py::array_t<double>(static_cast<py::ssize_t>(jct_s.size()), jct_s.data());
    d["queue_delay_s"] = py::array_t<double>(static_cast<py::ssize_t>(queue_delay_s.size()), queue_delay_s.data());
    d["status"] = status;
    d["gpu_s"] = py::array_t<double>(static_cast<py::ssize_t>(gpu_s.size()), gpu_s.data());
    d["checkpoint_gpu_s"] = py::array_t<double>(static_cast<py::ssize_t>(checkpoint_gpu_s.size()), checkpoint_gpu_s.data());
    d["preemptions"] = py::array_t<std::int64_t>(static_cast<py::ssize_t>(preemptions.size()), preemptions.data());
    d["moves"] = py::array_t<std::int64_t>(static_cast<py::ssize_t>(moves.size()), moves.data());
    return d;
  }

 private:
  std::vector<std::string> id, status;
  std::vector<double> submit_s, start_s, end_s, jct_s, queue_delay_s, gpu_s, checkpoint_gpu_s;
  std::vector<std::int64_t> num_gpus, preemptions, moves;
};

}  // namespace

void bind_simulate(py::module_& m) {
  m.def(
      "simulate",
      [](const Scenario& scenario, const py::object& policy, bool check_invariants) {
        const ScenarioConfig& config = *scenario.config;
        JobRecorder recorder;
        RunOptions options;
        options.check_invariants = check_invariants;
        const std::vector<Observer*> observers = {&recorder};
        RunResult result;
        const PolicyRegistry registry = builtin_policies();
        if (policy.is_none() || py::isinstance<py::str>(policy) || py::isinstance<py::dict>(policy)) {
          // A built-in policy: the scenario's, or a name / {name: ..., option: ...} map.
          const ConfigNode node = policy.is_none() ? ConfigNode(config.policy, config.policy_source, "policy")
                                                   : ConfigNode(to_yaml(policy, "policy"), "simulate(policy=...)", "policy");
          PolicyInstance instance = registry.create(node, PolicyContext{config.seed});
          py::gil_scoped_release release;
          result = run_scenario(config, *instance.policy, instance.resolved, options, observers);
        } else {
          PythonPolicy bridge(policy);
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
        out["jobs"] = recorder.columns();
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
      "jobs (the columns of jobs.csv) and stats.");
}

}  // namespace schedsim::python
