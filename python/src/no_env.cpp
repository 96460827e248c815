// Built when the RL environment library (rl/env) is not part of the build: the module
// then has no environments, and schedsim.make() says so.
#include "common.hpp"

namespace schedsim::python {

void bind_env(py::module_& m) { m.attr("HAS_ENV") = false; }

}  // namespace schedsim::python

namespace schedsim::python {

// evaluate()/compare() run agents through the RL environment's MDP: not in this build.
void bind_evaluate(py::module_& /*m*/) {}

}  // namespace schedsim::python
