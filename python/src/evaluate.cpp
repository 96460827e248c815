// schedsim.evaluate() / compare() / sweep(): runs of a built-in policy, a Python policy
// or a Python *agent* (observation, mask -> action) with the runner's own writers
// (results.json, jobs.csv) and the compare command's tables.
//
// An agent schedules through the RL environment's MDP (rl/env/mdp.hpp), exactly as the
// `rl` policy runs a trained checkpoint: at each of the kernel's decision points it sees
// the environment's candidate rows, global features and mask, picks one action, and is
// asked again at the same instant after each start, until it picks "wait" or no row is
// legal. So an agent trained on schedsim.make()/VectorEnv sees here what it saw there.
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "common.hpp"
#include "app/compare.hpp"
#include "run/job_columns.hpp"
#include "run/runner.hpp"
#include "base/svg_plot.hpp"
#include "policy_bridge.hpp"
#include "rl/env/candidates.hpp"
#include "rl/env/features.hpp"
#include "rl/env/mdp.hpp"
#include "world/physics/cluster_physics.hpp"
#include "base/error.hpp"
#include "sim/simulator.hpp"

namespace schedsim::python {

namespace {

// A finished run as Python holds it: the runner's result (for the comparison tables),
// the results.json text, and the jobs.csv records as columns (simulate()'s form, taken
// once by take_jobs()).
struct RunHandle {
  RunResult result;
  std::string results_json;
  std::shared_ptr<JobColumns> jobs = std::make_shared<JobColumns>();
  std::uint64_t agent_decisions = 0;   // agent calls (0 for a policy)
  std::uint64_t invalid_actions = 0;   // of them, actions that were masked and remapped
};

std::string seconds_text(Tick t) {
  std::ostringstream s;
  s << t.seconds();
  return s.str();
}

// A Python agent behind the kernel's Policy interface, through the environment's MDP.
// `act(candidates [K, F] float32, global [G] float32, mask [K + 1] bool) -> int` is
// called with the GIL held; everything else runs without it.
class AgentPolicy final : public Policy {
 public:
  AgentPolicy(py::object act, std::string name, rl::EnvConfig config, AcceleratorCatalogue accelerators, bool raise_invalid)
      : act_(std::move(act)), name_(std::move(name)), config_(std::move(config)), accelerators_(std::move(accelerators)),
        raise_invalid_(raise_invalid), queue_(config_.order, config_.information), mdp_(config_) {}
  std::string name() const override { return name_; }
  void on_run_start(const SchedulerView& /*view*/) override { mdp_.reset(nullptr); }
  bool decide_again_after_actions() const override { return true; }
  void on_job_queued(const SchedulerView& view, JobSlot job) override { queue_.on_job_queued(view, job); }
  void on_job_finished(const SchedulerView& view, JobSlot job) override { queue_.on_job_finished(view, job); }

  void decide(const SchedulerView& view, ActionBatch& out) override {
    if (!mdp_.has_builder()) {
      const auto* physics = dynamic_cast<const ClusterPhysics*>(view.physics());
      mdp_.reset(std::make_unique<rl::CandidateBuilder>(config_, view.cluster(), physics, view.node_group(), accelerators_));
    }
    const int k = config_.max_candidates;
    if (!mdp_.build(view, queue_, view.has_future_events())) return;  // as the environment: the agent is not asked
    const int f = rl::candidate_feature_count(config_), g = rl::global_feature_count(config_);
    cand_.resize(static_cast<std::size_t>(k) * static_cast<std::size_t>(f));
    glob_.resize(static_cast<std::size_t>(g));
    mask_.resize(static_cast<std::size_t>(k) + 1);
    mdp_.write_observation(view, queue_, cand_.data(), glob_.data(), mask_.data(), &feature_logs_);
    int a = ask(view, k, f, g);
    ++decisions_;
    if (!mdp_.legal(a)) {
      if (raise_invalid_) {
        throw PolicyError("agent '" + name_ + "' at t=" + seconds_text(view.now()) + " s: action " + std::to_string(a) +
                          " is masked (legal: " + mdp_.mask_string() + "; invalid_action='remap' takes it as wait)");
      }
      // The environment's default rule (schedsim.env.legal_action): wait, or the first
      // legal row when waiting is illegal.
      ++invalid_;
      if (mdp_.wait_legal()) {
        a = mdp_.wait_action();
      } else {
        a = 0;
        while (!mdp_.legal(a)) ++a;
      }
    }
    mdp_.decode(a, view, out);
    mdp_.commit(a, view.now(), queue_);
  }

  std::uint64_t decisions() const { return decisions_; }
  std::uint64_t invalid() const { return invalid_; }

 private:
  int ask(const SchedulerView& view, int k, int f, int g) {
    py::gil_scoped_acquire gil;
    py::array_t<float> c({k, f});
    std::copy(cand_.begin(), cand_.end(), c.mutable_data());
    py::array_t<float> gl(static_cast<py::ssize_t>(g));
    std::copy(glob_.begin(), glob_.end(), gl.mutable_data());
    py::array_t<bool> m(static_cast<py::ssize_t>(k) + 1);
    for (std::size_t i = 0; i < mask_.size(); ++i) m.mutable_data()[i] = mask_[i] != 0;
    try {
      py::object r = act_(c, gl, m);
      if (!py::isinstance<py::int_>(r) || py::isinstance<py::bool_>(r)) {
        throw py::type_error("agent '" + name_ + "' at t=" + seconds_text(view.now()) + " s: expected an int action in 0.." + std::to_string(k) +
                             ", got " + python_type_name(r));
      }
      const long long v = r.cast<long long>();
      if (v < 0 || v > k) {
        throw py::value_error("agent '" + name_ + "' at t=" + seconds_text(view.now()) + " s: expected an action in 0.." + std::to_string(k) +
                              " (" + std::to_string(k) + " = wait), got " + std::to_string(v));
      }
      return static_cast<int>(v);
    } catch (py::error_already_set& e) {
      const std::string note = "in schedsim agent '" + name_ + "' at t=" + seconds_text(view.now()) + " s";
      if (py::hasattr(e.value(), "add_note")) e.value().attr("add_note")(note);
      throw;
    }
  }

  py::object act_;
  std::string name_;
  rl::EnvConfig config_;
  AcceleratorCatalogue accelerators_;
  bool raise_invalid_;
  rl::PendingQueue queue_;
  rl::MdpStep mdp_;
  rl::FeatureLogCache feature_logs_;
  std::vector<float> cand_, glob_;
  std::vector<std::uint8_t> mask_;
  std::uint64_t decisions_ = 0, invalid_ = 0;
};

RunOptions run_options(const std::optional<std::string>& out_dir, JobColumns& jobs) {
  RunOptions options;
  if (out_dir) {
    check_output_path(*out_dir, "out");
    options.out_dir = *out_dir;
  }
  options.job_columns = &jobs;
  return options;
}

void finish(RunHandle& h, RunResult result, const ScenarioConfig& config) {
  h.results_json = results_json(result, config.seed).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  h.result = std::move(result);
}

std::vector<RunResult> results_of(const std::vector<const RunHandle*>& runs, const std::vector<std::string>& labels) {
  if (labels.size() != runs.size()) throw py::value_error("labels: expected one per run");
  std::vector<RunResult> out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    out.push_back(runs[i]->result);
    out.back().policy_name = labels[i];
  }
  return out;
}

}  // namespace

void bind_evaluate(py::module_& m) {
  py::class_<RunHandle>(m, "Run", "A finished run (schedsim.evaluate / compare internals).")
      .def_property_readonly("results_json", [](const RunHandle& h) { return h.results_json; })
      .def("take_jobs", [](RunHandle& h) {
        if (!h.jobs) throw py::value_error("take_jobs: the jobs of this run were already taken");
        py::dict d = job_columns_dict(*h.jobs);
        h.jobs.reset();
        return d;
      }, "The jobs.csv records as columns (simulate()'s form); once per run.")
      .def_property_readonly("policy_name", [](const RunHandle& h) { return h.result.policy_name; })
      .def_property_readonly("agent_decisions", [](const RunHandle& h) { return h.agent_decisions; })
      .def_property_readonly("invalid_actions", [](const RunHandle& h) { return h.invalid_actions; })
      .def_property_readonly("stats", [](const RunHandle& h) {
        py::dict stats;
        stats["events"] = h.result.stats.events;
        stats["decision_points"] = h.result.stats.decision_points;
        stats["actions"] = h.result.stats.actions;
        stats["rate_updates"] = h.result.stats.rate_updates;
        return stats;
      });

  m.def(
      "run_policy",
      [](const Scenario& scenario, const py::object& policy, std::optional<std::string> out_dir) {
        // simulate()'s run, with the option of writing the CLI's files into out_dir.
        const ScenarioConfig& config = *scenario.config;
        RunHandle h;
        const RunOptions options = run_options(out_dir, *h.jobs);
        RunResult result;
        if (policy.is_none() || py::isinstance<py::str>(policy) || py::isinstance<py::dict>(policy)) {
          const PolicyRegistry registry = builtin_policies();
          const ConfigNode node = policy.is_none() ? ConfigNode(config.policy, config.policy_source, "policy")
                                                   : ConfigNode(to_yaml(policy, "policy"), "compare(policies=...)", "policy");
          PolicyInstance instance = registry.create(node, policy_context(config));
          py::gil_scoped_release release;
          result = run_scenario(config, *instance.policy, instance.resolved, options);
        } else {
          PythonPolicy bridge(policy, policy_context(config).information);
          YAML::Node resolved(YAML::NodeType::Map);
          resolved["name"] = bridge.name();
          resolved["python_class"] = py::str(py::type::handle_of(policy).attr("__module__")).cast<std::string>() + "." +
                                     py::str(py::type::handle_of(policy).attr("__qualname__")).cast<std::string>();
          py::gil_scoped_release release;
          result = run_scenario(config, bridge, resolved, options);
        }
        finish(h, std::move(result), config);
        return h;
      },
      py::arg("scenario"), py::arg("policy") = py::none(), py::arg("out_dir") = py::none());

  m.def(
      "run_agent",
      [](const Scenario& scenario, py::object act, const std::string& name, const std::string& source, std::optional<int> max_candidates,
         bool raise_invalid, std::optional<std::string> out_dir) {
        const ScenarioConfig& config = *scenario.config;
        // The environment's configuration for this scenario (its `env:` map), as
        // schedsim.make(scenario) builds it; the information level is the run's.
        rl::EnvConfig env = rl::EnvConfig::from_scenario(config);
        const PolicyContext context = policy_context(config);
        env.information = context.information;
        if (max_candidates) {
          if (*max_candidates < 1 || *max_candidates > 4096)
            throw py::value_error("max_candidates: expected an int in 1..4096 (candidate rows per observation), got " + std::to_string(*max_candidates));
          env.max_candidates = *max_candidates;
        }
        RunHandle h;
        const RunOptions options = run_options(out_dir, *h.jobs);
        AgentPolicy agent(std::move(act), name, env, context.accelerators ? *context.accelerators : AcceleratorCatalogue::builtin(), raise_invalid);
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = name;
        resolved["agent"] = source;
        resolved["max_candidates"] = env.max_candidates;
        RunResult result;
        {
          py::gil_scoped_release release;
          result = run_scenario(config, agent, resolved, options);
        }
        finish(h, std::move(result), config);
        h.agent_decisions = agent.decisions();
        h.invalid_actions = agent.invalid();
        return h;
      },
      py::arg("scenario"), py::arg("act"), py::arg("name"), py::arg("source"), py::arg("max_candidates") = py::none(),
      py::arg("raise_invalid") = false, py::arg("out_dir") = py::none(),
      "Runs `scenario` under a Python agent act(candidates, global, mask) -> int through the RL environment's MDP.");

  m.def(
      "policy_label",
      [](const py::object& policy) {
        // compare's label of a built-in policy spec: "fifo", "fifo(placement=packed)".
        return policy_label(ConfigNode(to_yaml(policy, "policy"), "compare(policies=...)", "policy"));
      },
      py::arg("policy"));

  m.def(
      "comparison_table",
      [](const std::vector<const RunHandle*>& runs, const std::vector<std::string>& labels, bool markdown) {
        return comparison_table(results_of(runs, labels), markdown);
      },
      py::arg("runs"), py::arg("labels"), py::arg("markdown") = false, "The table `schedsim compare` prints, one row per run.");

  m.def(
      "clear_comparison",
      [](const std::string& out_dir, const std::vector<std::string>& files) {
        // As compare does before its runs: a failed comparison leaves no earlier table.
        clear_output_folder(out_dir, files, false);
      },
      py::arg("out_dir"), py::arg("files"));

  m.def(
      "write_comparison",
      [](const std::vector<const RunHandle*>& runs, const std::vector<std::string>& labels, const Scenario& scenario, const std::string& out_dir,
         std::size_t baseline) {
        // compare's tables and CDF, written as `schedsim compare --out DIR` writes them.
        const std::vector<RunResult> rs = results_of(runs, labels);
        if (baseline >= rs.size()) throw py::value_error("baseline: out of range");
        const ScenarioConfig& config = *scenario.config;
        const std::filesystem::path dir(out_dir);
        write_file_atomically((dir / "comparison.csv").string(), comparison_csv(rs));
        write_file_atomically((dir / "comparison.md").string(),
                              comparison_header(rs, config.num_devices()) + "\n" + comparison_table(rs, true) + "\n" + paired_table(rs, baseline, true));
        const auto same = identical_rows(rs);
        std::vector<std::vector<double>> hours(rs.size());
        std::vector<CdfSeries> series;
        for (std::size_t i = 0; i < rs.size(); ++i) {
          for (double v : rs[i].sorted_jct_s) hours[i].push_back(v / 3600);
          series.push_back({rs[i].policy_name + (same[i] ? " (= " + rs[*same[i]].policy_name + ")" : ""), &hours[i]});
        }
        write_file_atomically((dir / "jct_cdf.svg").string(), cdf_svg(series, "job completion time (h, log scale)", "fraction of jobs",
                                                                       config.name.empty() ? "JCT CDF" : "JCT CDF: " + config.name));
      },
      py::arg("runs"), py::arg("labels"), py::arg("scenario"), py::arg("out_dir"), py::arg("baseline") = 0);
}

}  // namespace schedsim::python
