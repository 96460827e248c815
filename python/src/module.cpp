// The _schedsim extension: scenarios, the policy registry, simulate(), Python policies
// and the RL environments. The pure-Python package `schedsim` wraps it; users never
// import this module directly. No LibTorch here (see docs/python.md).
#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <vector>

#include <pybind11/stl.h>

#include "common.hpp"
#include "run/ledger.hpp"
#include "run/runner.hpp"
#include "policies/registry.hpp"
#include "base/error.hpp"

namespace schedsim::python {

namespace {

PyObject* g_sim_error = nullptr;
PyObject* g_input_error = nullptr;
PyObject* g_policy_error = nullptr;

// Python's repr of a float is the shortest text that reads back to the same double, so
// a dict value and the same number written in YAML give the same configuration.
std::string float_text(double v) { return py::str(py::repr(py::float_(v))); }

}  // namespace

std::string python_type_name(py::handle value) { return py::str(py::type::handle_of(value).attr("__name__")); }

namespace {

// Key paths in messages: the start of a very long one is enough.
std::string short_path(const std::string& where) { return where.size() <= 80 ? where : where.substr(0, 60) + "...(" + std::to_string(where.size()) + " chars)"; }

class YamlConverter {
 public:
  YAML::Node convert(py::handle value, const std::string& path) {
    const std::string where = path.empty() ? "the config" : path;
    if (value.is_none()) return YAML::Node(YAML::NodeType::Null);
    if (py::isinstance<py::bool_>(value)) return YAML::Node(value.cast<bool>() ? "true" : "false");
    if (py::isinstance<py::int_>(value)) return YAML::Node(py::str(value).cast<std::string>());
    if (py::isinstance<py::float_>(value)) {
      const double v = value.cast<double>();
      if (!std::isfinite(v)) throw py::value_error(short_path(where) + ": expected a finite number, got " + float_text(v));
      return YAML::Node(float_text(v));
    }
    if (py::isinstance<py::str>(value)) return string_scalar(value.cast<std::string>());
    const bool is_dict = py::isinstance<py::dict>(value);
    if (is_dict || py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
      // A container on the path to itself has no YAML form (and would recurse forever).
      if (std::find(open_.begin(), open_.end(), value.ptr()) != open_.end()) {
        throw py::value_error(short_path(where) + ": the config contains itself (a dict or list that holds itself, directly or through others, "
                                                  "is not a YAML document)");
      }
      // A dict may not go deeper than its YAML could (without the limit a dict nested
      // 100,000 levels overflowed the C stack).
      if (open_.size() >= kMaxConfigNesting) {
        throw InputError("<dict>", short_path(where) + ": lists and maps nested more than " + std::to_string(kMaxConfigNesting) +
                                       " levels deep, more than YAML scenarios allow; no scenario needs that: is this the right object?");
      }
      open_.push_back(value.ptr());
      YAML::Node n = is_dict ? convert_dict(value, path, where) : convert_list(value, where);
      open_.pop_back();
      return n;
    }
    // numpy scalars and other numbers: anything with __index__ or __float__.
    const py::object obj = py::reinterpret_borrow<py::object>(value);
    if (py::hasattr(obj, "__index__")) return YAML::Node(py::str(py::int_(obj)).cast<std::string>());
    if (py::hasattr(obj, "__float__")) return convert(py::float_(obj), path);
    throw py::type_error(short_path(where) + ": expected a dict, list, str, int, float, bool or None, got " + python_type_name(value));
  }

 private:
  YAML::Node convert_dict(py::handle value, const std::string& path, const std::string& where) {
    YAML::Node n(YAML::NodeType::Map);
    for (auto kv : value.cast<py::dict>()) {
      // int keys as YAML writes them unquoted (workload.synthetic.gpus: {1: 0.5, 8: 0.5}).
      const bool int_key = py::isinstance<py::int_>(kv.first) && !py::isinstance<py::bool_>(kv.first);
      if (!py::isinstance<py::str>(kv.first) && !int_key)
        throw py::type_error(short_path(where) + ": expected str (or int) keys, got " + python_type_name(kv.first) + " " + py::repr(kv.first).cast<std::string>());
      const std::string key = py::str(kv.first).cast<std::string>();
      n[key] = convert(kv.second, path.empty() ? key : path + "." + key);
    }
    return n;
  }
  YAML::Node convert_list(py::handle value, const std::string& where) {
    YAML::Node n(YAML::NodeType::Sequence);
    std::size_t i = 0;
    for (auto item : value) {
      n.push_back(convert(item, where + "[" + std::to_string(i) + "]"));
      ++i;
    }
    return n;
  }

  std::vector<PyObject*> open_;  // the containers being converted, outermost first
};

}  // namespace

YAML::Node to_yaml(py::handle value, const std::string& path) { return YamlConverter().convert(value, path); }

void register_errors(py::module_& m) {
  g_sim_error = PyErr_NewExceptionWithDoc("schedsim.SimError", "An error reported by the schedsim simulator.", PyExc_Exception, nullptr);
  py::tuple input_bases = py::make_tuple(py::handle(g_sim_error), py::handle(PyExc_ValueError));
  // InputError is also a ValueError: a bad config is a bad argument value.
  g_input_error = PyErr_NewExceptionWithDoc("schedsim.InputError",
                                            "Bad input: a config key, a trace row, a missing file (the message names where).",
                                            input_bases.ptr(), nullptr);
  g_policy_error = PyErr_NewExceptionWithDoc("schedsim.PolicyError",
                                             "A policy asked for something the simulator cannot do (the message names the policy, "
                                             "the time and the action).",
                                             g_sim_error, nullptr);
  m.attr("SimError") = py::handle(g_sim_error);
  m.attr("InputError") = py::handle(g_input_error);
  m.attr("PolicyError") = py::handle(g_policy_error);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(g_input_error, e.what());
    } catch (const PolicyError& e) {
      PyErr_SetString(g_policy_error, e.what());
    } catch (const Error& e) {
      PyErr_SetString(g_sim_error, e.what());
    }
  });
}

namespace {

std::vector<std::string> overrides_of(const std::optional<std::vector<std::string>>& o) { return o ? *o : std::vector<std::string>{}; }

Scenario load(const ConfigNode& root, const std::optional<std::vector<std::string>>& overrides, std::optional<std::int64_t> seed) {
  if (seed && *seed < 0) throw py::value_error("seed: expected a non-negative integer, got " + std::to_string(*seed));
  const PolicyRegistry registry = builtin_policies();
  std::optional<std::uint64_t> s;
  if (seed) s = static_cast<std::uint64_t>(*seed);
  return Scenario{std::make_shared<const ScenarioConfig>(load_scenario(root, overrides_of(overrides), s, registry))};
}

py::object json_to_python(const nlohmann::ordered_json& j) {
  // Through Python's json module: exactly the values the CLI writes (floats round-trip).
  return py::module_::import("json").attr("loads")(j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

}  // namespace

}  // namespace schedsim::python

PYBIND11_MODULE(_schedsim, m) {
  using namespace schedsim;
  using namespace schedsim::python;
  m.doc() = "schedsim C++ core (use the `schedsim` package)";
  m.attr("__version__") = SCHEDSIM_VERSION;
  register_errors(m);

  m.def("policies", [] {
    py::list out;
    const PolicyRegistry registry = builtin_policies();
    for (const PolicyInfo& info : registry.all()) {
      py::list options;
      for (const auto& o : info.options) options.append(py::dict(py::arg("name") = o.name, py::arg("default") = o.default_value, py::arg("description") = o.description));
      out.append(py::dict(py::arg("name") = info.name, py::arg("description") = info.description, py::arg("options") = options));
    }
    return out;
  }, "Every built-in policy: name, one-line description and documented options.");

  m.def("default_scenario_yaml", [] { return std::string(default_scenario_yaml()); });

  m.def("ledger_verify", [](const std::string& path, std::optional<std::string> key_file) {
    const LedgerCheck c = verify_ledger_file(path, key_file ? std::optional<std::string>(read_ledger_key_file(*key_file)) : std::nullopt);
    return py::dict(py::arg("ok") = c.ok, py::arg("problem") = c.problem, py::arg("rows") = c.totals.rows, py::arg("device_hours") = c.totals.device_h,
                    py::arg("energy_kwh") = c.totals.energy_kwh, py::arg("electricity_usd") = c.totals.electricity_usd,
                    py::arg("compute_usd") = c.totals.compute_usd, py::arg("co2_kg") = c.totals.co2_kg);
  }, py::arg("path"), py::arg("key_file") = py::none(),
     "Recomputes a settlement ledger's hash chain (docs/market.md), with the key in key_file for a keyed one: ok, the first problem, the row count and totals.");

  py::class_<Scenario>(m, "Scenario", "A parsed, validated scenario (immutable).")
      .def_static("from_file", [](const std::string& path, std::optional<std::vector<std::string>> overrides, std::optional<std::int64_t> seed) {
        return load(ConfigNode::load_file(path), overrides, seed);
      }, py::arg("path"), py::arg("overrides") = py::none(), py::arg("seed") = py::none())
      .def_static("from_string", [](const std::string& text, const std::string& source, std::optional<std::vector<std::string>> overrides, std::optional<std::int64_t> seed) {
        return load(ConfigNode::load_string(text, source), overrides, seed);
      }, py::arg("text"), py::arg("source") = "<string>", py::arg("overrides") = py::none(), py::arg("seed") = py::none())
      .def_static("from_dict", [](const py::dict& d, std::optional<std::vector<std::string>> overrides, std::optional<std::int64_t> seed) {
        return load(ConfigNode(to_yaml(d, ""), "<dict>"), overrides, seed);
      }, py::arg("config"), py::arg("overrides") = py::none(), py::arg("seed") = py::none())
      .def_property_readonly("seed", [](const Scenario& s) { return s.config->seed; })
      .def_property_readonly("name", [](const Scenario& s) { return s.config->name; })
      .def_property_readonly("source", [](const Scenario& s) { return s.config->source; })
      .def_property_readonly("num_devices", [](const Scenario& s) { return s.config->num_devices(); })
      .def_property_readonly("has_physics", [](const Scenario& s) { return s.config->physics.has_value(); })
      .def("resolved", [](const Scenario& s) {
        // The resolved config as results.json records it (policy built with its defaults).
        const PolicyRegistry registry = builtin_policies();
        // Only the options are resolved here: the policy is built under the oracle so that
        // one the scenario's information level refuses still shows its config (the refusal
        // comes when a run builds it).
        PolicyContext context = policy_context(*s.config);
        context.information = InformationModel::oracle();
        PolicyInstance p = registry.create(ConfigNode(s.config->policy, s.config->policy_source, "policy"), context);
        return json_to_python(yaml_to_json(s.config->to_yaml(p.resolved)));
      }, "The fully resolved configuration (every default filled in) as a dict.")
      .def("with_seed", [](const Scenario& s, std::int64_t seed) {
        if (seed < 0) throw py::value_error("seed: expected a non-negative integer, got " + std::to_string(seed));
        auto copy = std::make_shared<ScenarioConfig>(*s.config);
        copy->seed = static_cast<std::uint64_t>(seed);
        return Scenario{copy};
      }, py::arg("seed"));

  bind_policy_bridge(m);
  bind_simulate(m);
  bind_env(m);
  bind_advise(m);
  bind_evaluate(m);
}
