// Shared pieces of the _schedsim extension: scenario handles, Python -> YAML conversion
// and the exception types.
#pragma once

#include <memory>
#include <string>

#include <pybind11/pybind11.h>
#include <yaml-cpp/yaml.h>

#include "scenario/scenario.hpp"

namespace schedsim {
struct JobColumns;  // experiments/job_columns.hpp
}

namespace schedsim::python {

namespace py = pybind11;

// The jobs.csv records of a run as simulate() returns them (numpy columns that take over
// the vectors of `columns`, which is left empty). simulate.cpp.
py::dict job_columns_dict(JobColumns& columns);

// A parsed scenario. Immutable once built, so environments and runs share it.
struct Scenario {
  std::shared_ptr<const ScenarioConfig> config;
};

// The name of a value's Python type, for "expected ..., got <type>" messages.
std::string python_type_name(py::handle value);

// A dict/list/str/number/bool/None tree as a YAML node (what the CLI would have read
// from the equivalent YAML). Throws TypeError naming the key path for anything else.
YAML::Node to_yaml(py::handle value, const std::string& path);

// Registers SimError (and InputError, PolicyError) and the translator of the C++
// error types to them.
void register_errors(py::module_& m);

void bind_policy_bridge(py::module_& m);
void bind_simulate(py::module_& m);
void bind_env(py::module_& m);
void bind_advise(py::module_& m);
// schedsim.evaluate/compare (evaluate.cpp; without the RL environment no_env.cpp binds
// nothing, and schedsim.HAS_ENV is False).
void bind_evaluate(py::module_& m);

}  // namespace schedsim::python
