// libschedsim_rl_plugin.so: the LibTorch half of `schedsim` (rl/rl_plugin.hpp). Its one
// exported symbol hands the executable the functions that need LibTorch.
#include "rl/rl_plugin.hpp"

#include <cstdio>

#include "rl/rl_bench.hpp"

namespace {

nlohmann::ordered_json ppo_bench(const schedsim::ScenarioConfig& scenario, const schedsim::rl::PpoBenchOptions& options) {
  return schedsim::rl::ppo_bench_json(schedsim::rl::run_ppo_bench(scenario, options));
}

void rl_bench(const std::string& config_path, const std::string& out_dir, bool quiet) {
  const auto r = schedsim::rl::run_rl_bench(schedsim::rl::RlBenchConfig::load_file(config_path), out_dir, quiet ? nullptr : stderr);
  for (const auto& s : r.settings) std::printf("%s\n", s.verdict.c_str());
  std::printf("  tables %s/windows.{csv,md}, summary %s/summary.{csv,md}, figure %s/ratios.svg, agents %s/seed_*/best.pt\n", out_dir.c_str(), out_dir.c_str(),
              out_dir.c_str(), out_dir.c_str());
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const schedsim::rl::RlPluginApi* schedsim_rl_plugin_api() {
  // A constant, made on the first call.
  static const schedsim::rl::RlPluginApi api{schedsim::rl::kRlPluginAbi, SCHEDSIM_VERSION, schedsim::rl::RlPluginLayout{},
                                             &schedsim::rl::make_rl_policy, &schedsim::rl::train_agent, &ppo_bench, &rl_bench};
  return &api;
}
