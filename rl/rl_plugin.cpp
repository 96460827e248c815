// libschedsim_rl_plugin.so: the LibTorch half of `schedsim` (rl/rl_plugin.hpp). Its one
// exported symbol hands the executable the functions that need LibTorch.
#include "rl/rl_plugin.hpp"

namespace {

nlohmann::ordered_json ppo_bench(const schedsim::ScenarioConfig& scenario, const schedsim::rl::PpoBenchOptions& options) {
  return schedsim::rl::ppo_bench_json(schedsim::rl::run_ppo_bench(scenario, options));
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const schedsim::rl::RlPluginApi* schedsim_rl_plugin_api() {
  // A constant, made on the first call.
  static const schedsim::rl::RlPluginApi api{schedsim::rl::kRlPluginAbi, SCHEDSIM_VERSION, schedsim::rl::RlPluginLayout{},
                                             &schedsim::rl::make_rl_policy, &schedsim::rl::train_agent, &ppo_bench};
  return &api;
}
