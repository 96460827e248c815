// The executable's side of the LibTorch plugin (rl/rl_plugin.hpp): where it looks, what
// it says when the plugin is missing, broken or from another build, and that the rl
// policy is listed without loading it. The real plugin: tests/cli/rl_plugin.sh.
#include <catch2/catch.hpp>

#include "rl/rl_plugin.hpp"
#include "base/error.hpp"
#include "test_support.hpp"

using namespace schedsim;
using schedsim::test::TempDir;

TEST_CASE("the rl plugin is looked for next to the executable, in ../lib/schedsim, then in SCHEDSIM_RL_PLUGIN", "[rl_plugin]") {
  CHECK(rl::rl_plugin_search_paths("/opt/x/bin/schedsim", nullptr) ==
        std::vector<std::string>{"/opt/x/bin/libschedsim_rl_plugin.so", "/opt/x/lib/schedsim/libschedsim_rl_plugin.so"});
  CHECK(rl::rl_plugin_search_paths("/opt/x/bin/schedsim", "") ==
        std::vector<std::string>{"/opt/x/bin/libschedsim_rl_plugin.so", "/opt/x/lib/schedsim/libschedsim_rl_plugin.so"});
  CHECK(rl::rl_plugin_search_paths("/b/schedsim", "/p/my.so") ==
        std::vector<std::string>{"/b/libschedsim_rl_plugin.so", "/lib/schedsim/libschedsim_rl_plugin.so", "/p/my.so"});
  CHECK(rl::rl_plugin_search_paths("", "/p/my.so") == std::vector<std::string>{"/p/my.so"});
}

TEST_CASE("a missing rl plugin is reported with every path tried", "[rl_plugin]") {
  rl::RlPlugin plugin(std::vector<std::string>{"/nonexistent/a/libschedsim_rl_plugin.so", "/nonexistent/b.so"});
  CHECK_THROWS_MATCHES(plugin.api("schedsim train", "training"), InputError,
                       Catch::Message("schedsim train: training needs LibTorch, which schedsim loads from its plugin libschedsim_rl_plugin.so: not found "
                                      "(tried /nonexistent/a/libschedsim_rl_plugin.so, /nonexistent/b.so); set SCHEDSIM_RL_PLUGIN to the plugin's "
                                      "file, or build it (cmake -DSCHEDSIM_WITH_TORCH=ON, target schedsim_rl_plugin)"));
  CHECK_FALSE(plugin.loaded());
  rl::RlPlugin nowhere(std::vector<std::string>{});
  CHECK_THROWS_WITH(nowhere.api("x", "y"), Catch::Contains(": not found (tried nothing); set SCHEDSIM_RL_PLUGIN"));
}

TEST_CASE("an rl plugin that cannot be loaded, has no entry point or is from another build is refused", "[rl_plugin]") {
  TempDir dir;
  // The first file that exists is the one: the next (a good one or not) is not tried.
  const std::string text = dir.write("libschedsim_rl_plugin.so", "not a shared object\n");
  rl::RlPlugin broken(std::vector<std::string>{dir.path("missing.so"), text, FAKE_RL_PLUGIN_OTHER_BUILD});
  CHECK_THROWS_WITH(broken.api("where", "the rl policy"),
                    Catch::StartsWith("where: the rl policy needs LibTorch, which schedsim loads from its plugin libschedsim_rl_plugin.so; " + text +
                                      " could not be loaded: " + text + ": "));
  rl::RlPlugin no_entry(std::vector<std::string>{FAKE_RL_PLUGIN_NO_ENTRY});
  CHECK_THROWS_MATCHES(no_entry.api("where", "the rl policy"), InputError,
                       Catch::Message(std::string("where: the rl policy needs LibTorch, which schedsim loads from its plugin libschedsim_rl_plugin.so; ") +
                                      FAKE_RL_PLUGIN_NO_ENTRY + " is not a schedsim rl plugin (no schedsim_rl_plugin_api)"));
  rl::RlPlugin other(std::vector<std::string>{FAKE_RL_PLUGIN_OTHER_BUILD});
  CHECK_THROWS_MATCHES(other.api("where", "the rl policy"), InputError,
                       Catch::Message(std::string("where: the rl policy needs LibTorch, which schedsim loads from its plugin libschedsim_rl_plugin.so; ") +
                                      FAKE_RL_PLUGIN_OTHER_BUILD + " is from another build of schedsim (plugin version 0.0.0-other, interface 999; this schedsim: " +
                                      SCHEDSIM_VERSION + ", interface " + std::to_string(rl::kRlPluginAbi) + "): rebuild both, or point SCHEDSIM_RL_PLUGIN at this build's plugin"));
  CHECK_FALSE(other.loaded());
  CHECK(other.path().empty());
}

TEST_CASE("the rl policy is listed without its plugin, which loads only when an rl policy is made", "[rl_plugin]") {
  auto plugin = std::make_shared<rl::RlPlugin>(std::vector<std::string>{"/nonexistent/libschedsim_rl_plugin.so"});
  PolicyRegistry registry = builtin_policies();
  rl::register_rl_policy_plugin(registry, plugin);
  const PolicyInfo* info = registry.find("rl");
  REQUIRE(info);
  CHECK(info->description == "a trained agent (checkpoint of `schedsim train`), greedy over the RL environment's candidates; short form rl:PATH");
  REQUIRE(info->options.size() == 1);
  CHECK(info->options[0].name == "path");
  CHECK(info->argument_option == "path");
  CHECK(registry.knows("rl:agent.pt"));
  // "all" leaves it out (it needs a checkpoint), so a default compare never loads LibTorch.
  const auto plain = registry.plain_names();
  CHECK(std::find(plain.begin(), plain.end(), "rl") == plain.end());
  CHECK_FALSE(plugin->loaded());
  CHECK_THROWS_MATCHES(registry.create("rl:agent.pt"), InputError,
                       Catch::Message("policy name: the rl policy needs LibTorch, which schedsim loads from its plugin libschedsim_rl_plugin.so: not found "
                                      "(tried /nonexistent/libschedsim_rl_plugin.so); set SCHEDSIM_RL_PLUGIN to the plugin's file, or build it "
                                      "(cmake -DSCHEDSIM_WITH_TORCH=ON, target schedsim_rl_plugin)"));
  CHECK_FALSE(plugin->loaded());
}
