// LibTorch as a plugin: `schedsim` links no LibTorch (start-up in milliseconds, not half a
// second and 170 MB); libschedsim_rl_plugin.so (rl_plugin.cpp: schedsim_rl + LibTorch)
// is loaded with dlopen only when a command needs it: `train`, `bench ppo`, or a scenario
// that names the `rl` policy (run, compare, sweep, eval). No LibTorch in this header.
//
// The plugin and the executable are built from the same sources in the same build, so
// C++ types cross the boundary as they are (the same layouts; exceptions thrown in the
// plugin are caught by the executable's handlers, matched by type name). The plugin
// exports one C symbol, kRlPluginEntry; everything else in it is hidden (its copies of
// the static libraries hold no state that the executable's copies would need to share).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/scenario.hpp"
#include "policies/registry.hpp"
#include "rl/ppo_bench.hpp"
#include "rl/train_command.hpp"

namespace schedsim::rl {

// Bumped whenever RlPluginApi, or what a plugin call means, changes.
constexpr int kRlPluginAbi = 3;  // 2: rl_bench; 3: rl_bench takes an RlBenchRequest (--jobs, --train-one)
constexpr const char* kRlPluginEntry = "schedsim_rl_plugin_api";
constexpr const char* kRlPluginFile = "libschedsim_rl_plugin.so";
constexpr const char* kRlPluginEnv = "SCHEDSIM_RL_PLUGIN";

// `schedsim rl-bench` as the command line asked for it.
struct RlBenchRequest {
  std::string config_path;
  std::string out_dir;
  bool quiet = false;     // no progress on stderr
  int jobs = 0;           // --jobs N: trainings at a time; 0: the benchmark file's `jobs`
  // The hidden --train-one SETTING/SEED: train only that agent into OUT/SETTING/seed_SEED/
  // (what each child process of --jobs N runs); empty: the whole benchmark.
  std::string train_one;
};

// The sizes of the types that cross the boundary, as each side was compiled: a plugin from
// another build (other headers) is refused instead of crashing.
struct RlPluginLayout {
  std::size_t scenario = sizeof(ScenarioConfig);
  std::size_t policy_context = sizeof(PolicyContext);
  std::size_t policy_instance = sizeof(PolicyInstance);
  std::size_t config_node = sizeof(ConfigNode);
  std::size_t train_options = sizeof(TrainOptions);
  std::size_t train_outcome = sizeof(TrainOutcome);
  std::size_t ppo_bench_options = sizeof(PpoBenchOptions);
  std::size_t rl_bench_request = sizeof(RlBenchRequest);
  bool operator==(const RlPluginLayout& o) const {
    return scenario == o.scenario && policy_context == o.policy_context && policy_instance == o.policy_instance && config_node == o.config_node &&
           train_options == o.train_options && train_outcome == o.train_outcome && ppo_bench_options == o.ppo_bench_options &&
           rl_bench_request == o.rl_bench_request;
  }
};

// What the plugin offers. Its functions may throw the executable's error types.
struct RlPluginApi {
  int abi = 0;
  const char* version = "";  // SCHEDSIM_VERSION of the plugin's build
  RlPluginLayout layout;
  PolicyInstance (*make_rl_policy)(const ConfigNode& config, const PolicyContext& context) = nullptr;
  TrainOutcome (*train_agent)(const ScenarioConfig& scenario, const TrainOptions& options) = nullptr;
  // rl::ppo_bench_json(rl::run_ppo_bench(scenario, options))
  nlohmann::ordered_json (*ppo_bench)(const ScenarioConfig& scenario, const PpoBenchOptions& options) = nullptr;
  // `schedsim rl-bench CONFIG --out DIR` (rl/rl_bench.hpp): runs it, prints the verdicts
  // and where the tables are (progress on stderr unless `quiet`); with train_one, trains
  // that one agent.
  void (*rl_bench)(const RlBenchRequest& request) = nullptr;
};

// The rl policy's name, description and options: what `schedsim policies` lists, with or
// without the plugin loaded. Its `make` is left empty.
PolicyInfo rl_policy_doc();
// The rl policy's factory (rl_policy.cpp, LibTorch).
PolicyInstance make_rl_policy(const ConfigNode& config, const PolicyContext& context);

// Where the plugin is looked for, in this order: next to the executable (the build
// folder), ../lib/schedsim/ from the executable's folder (an install: bin/schedsim,
// lib/schedsim/libschedsim_rl_plugin.so), then the file named by $SCHEDSIM_RL_PLUGIN
// (`env_value`; null or empty = unset).
std::vector<std::string> rl_plugin_search_paths(const std::string& exe_path, const char* env_value);

// Loads the plugin on first use and keeps it loaded for the process's life (policies it
// made may outlive any owner; LibTorch does not support being unloaded).
class RlPlugin {
 public:
  explicit RlPlugin(std::vector<std::string> search_paths) : search_paths_(std::move(search_paths)) {}
  RlPlugin(const RlPlugin&) = delete;
  RlPlugin& operator=(const RlPlugin&) = delete;

  // The plugin's functions. Throws InputError("<where>: <who> needs LibTorch ...") naming
  // the files tried when it is absent, cannot be loaded (the loader's message) or is from
  // another build.
  const RlPluginApi& api(const std::string& where, const std::string& who);
  bool loaded() const { return api_ != nullptr; }
  // The file that was loaded ("" before).
  const std::string& path() const { return loaded_path_; }

 private:
  std::vector<std::string> search_paths_;
  const RlPluginApi* api_ = nullptr;
  std::string loaded_path_;
};

// Adds the `rl` policy (rl_policy_doc()) whose factory loads `plugin` on its first use.
void register_rl_policy_plugin(PolicyRegistry& registry, std::shared_ptr<RlPlugin> plugin);

}  // namespace schedsim::rl
