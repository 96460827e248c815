#include "rl/scenario_env_config.hpp"

namespace schedsim::rl {

// Until the env helper's `env:` parsing is merged, the defaults of EnvConfig.
EnvConfig scenario_env_config(const ScenarioConfig& /*scenario*/) { return EnvConfig{}; }

}  // namespace schedsim::rl
