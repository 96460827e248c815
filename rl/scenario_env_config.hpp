// The environment settings of a scenario (its `env:` map), in one place for the trainer
// and the rl policy.
#pragma once

#include "rl/env/scheduling_env.hpp"

namespace schedsim::rl {

EnvConfig scenario_env_config(const ScenarioConfig& scenario);

}  // namespace schedsim::rl
