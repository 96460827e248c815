// The executable's side of the LibTorch plugin (rl/rl_plugin.hpp): finding and loading
// it, and the rl policy entry that loads it on first use. No LibTorch here.
#include <dlfcn.h>

#include <filesystem>

#include "rl/rl_plugin.hpp"
#include "base/error.hpp"

namespace schedsim::rl {

PolicyInfo rl_policy_doc() {
  PolicyInfo info;
  info.name = "rl";
  info.description = "a trained agent (checkpoint of `schedsim train`), greedy over the RL environment's candidates; short form rl:PATH";
  info.options = {{"path", "(required)", "the checkpoint file, e.g. experiments/agents/default.pt"}};
  info.argument_option = "path";
  return info;
}

std::vector<std::string> rl_plugin_search_paths(const std::string& exe_path, const char* env_value) {
  std::vector<std::string> out;
  if (!exe_path.empty()) {
    const std::filesystem::path dir = std::filesystem::path(exe_path).parent_path();
    out.push_back((dir / kRlPluginFile).string());
    out.push_back((dir.parent_path() / "lib" / "schedsim" / kRlPluginFile).string());
  }
  if (env_value && *env_value) out.emplace_back(env_value);
  return out;
}

namespace {

std::string joined(const std::vector<std::string>& paths) {
  std::string out;
  for (const auto& p : paths) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

const RlPluginApi& RlPlugin::api(const std::string& where, const std::string& who) {
  if (api_) return *api_;
  const std::string what = who + " needs LibTorch, which schedsim loads from its plugin " + kRlPluginFile;
  std::error_code ec;
  for (const auto& path : search_paths_) {
    if (!std::filesystem::is_regular_file(path, ec)) continue;
    // The first file that exists is the one: a broken plugin is reported, not passed
    // over for another build's. RTLD_LOCAL: its symbols stay out of the global scope.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      throw InputError(where, what + "; " + path + " could not be loaded: " + (why ? why : "unknown reason"));
    }
    using Entry = const RlPluginApi* (*)();
    const auto entry = reinterpret_cast<Entry>(dlsym(handle, kRlPluginEntry));
    const RlPluginApi* api = entry ? entry() : nullptr;
    if (!api) throw InputError(where, what + "; " + path + " is not a schedsim rl plugin (no " + kRlPluginEntry + ")");
    if (api->abi != kRlPluginAbi || std::string(api->version) != SCHEDSIM_VERSION || !(api->layout == RlPluginLayout{})) {
      throw InputError(where, what + "; " + path + " is from another build of schedsim (plugin version " + api->version + ", interface " +
                                       std::to_string(api->abi) + "; this schedsim: " + SCHEDSIM_VERSION + ", interface " + std::to_string(kRlPluginAbi) +
                                       "): rebuild both, or point " + kRlPluginEnv + " at this build's plugin");
    }
    // Never dlclose'd: see the class comment.
    api_ = api;
    loaded_path_ = path;
    return *api_;
  }
  throw InputError(where, what + ": not found (tried " + (search_paths_.empty() ? std::string("nothing") : joined(search_paths_)) + "); set " + kRlPluginEnv +
                              " to the plugin's file, or build it (cmake -DSCHEDSIM_WITH_TORCH=ON, target schedsim_rl_plugin)");
}

void register_rl_policy_plugin(PolicyRegistry& registry, std::shared_ptr<RlPlugin> plugin) {
  PolicyInfo info = rl_policy_doc();
  info.make = [plugin](const ConfigNode& config, const PolicyContext& context) {
    return plugin->api(config.where(), "the rl policy").make_rl_policy(config, context);
  };
  registry.add(std::move(info));
}

}  // namespace schedsim::rl
