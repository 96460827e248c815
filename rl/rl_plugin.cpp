// libschedsim_rl_plugin.so: the LibTorch half of `schedsim` (rl/rl_plugin.hpp). Its one
// exported symbol hands the executable the functions that need LibTorch.
#include "rl/rl_plugin.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "rl/rl_bench.hpp"
#include "base/error.hpp"

namespace {

nlohmann::ordered_json ppo_bench(const schedsim::ScenarioConfig& scenario, const schedsim::rl::PpoBenchOptions& options) {
  return schedsim::rl::ppo_bench_json(schedsim::rl::run_ppo_bench(scenario, options));
}

void rl_bench(const schedsim::rl::RlBenchRequest& request) {
  namespace rl = schedsim::rl;
  const rl::RlBenchConfig config = rl::RlBenchConfig::load_file(request.config_path);
  if (!request.train_one.empty()) {
    // SETTING/SEED (setting names hold no '/'): a child of --jobs N. Its progress goes to
    // stderr, which the parent sends to the seed's train.log.
    const auto slash = request.train_one.rfind('/');
    std::uint64_t seed = 0;
    if (slash == std::string::npos || !schedsim::parse_seed(request.train_one.substr(slash + 1), seed).empty())
      throw schedsim::InputError("--train-one", "expected SETTING/SEED, got '" + request.train_one + "'");
    const std::string setting = request.train_one.substr(0, slash);
    const std::string dir = (std::filesystem::path(request.out_dir) / setting / ("seed_" + std::to_string(seed))).string();
    rl::train_rl_bench_agent(config, setting, seed, dir, !request.quiet);
    return;
  }
  rl::RlBenchOptions options;
  options.log = request.quiet ? nullptr : stderr;
  options.jobs = request.jobs;
  const auto r = rl::run_rl_bench(config, request.out_dir, options);
  for (const auto& s : r.settings) std::printf("%s\n", s.verdict.c_str());
  const char* d = request.out_dir.c_str();
  std::printf("  tables %s/windows.{csv,md}, summary %s/summary.{csv,md}, figure %s/ratios.svg, agents %s/<setting>/seed_*/best.pt\n", d, d, d, d);
  const bool pareto = std::any_of(config.settings.begin(), config.settings.end(), [](const rl::RlBenchSetting& s) { return !s.objectives.empty(); });
  if (pareto) std::printf("  Pareto report %s/pareto.{csv,md,svg}\n", d);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const schedsim::rl::RlPluginApi* schedsim_rl_plugin_api() {
  // A constant, made on the first call.
  static const schedsim::rl::RlPluginApi api{schedsim::rl::kRlPluginAbi, SCHEDSIM_VERSION, schedsim::rl::RlPluginLayout{},
                                             &schedsim::rl::make_rl_policy, &schedsim::rl::train_agent, &ppo_bench, &rl_bench};
  return &api;
}
