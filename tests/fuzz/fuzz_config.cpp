// libFuzzer target: the scenario loader (YAML text -> ScenarioConfig with every section
// validated), then the resolved document. Only InputError may come out; files the
// document names are looked up relative to the temp folder and are normally absent.
#include "scenario/scenario.hpp"
#include "policies/registry.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace schedsim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const PolicyRegistry registry = builtin_policies();
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_input_errors_only([&] {
    const ScenarioConfig scenario = load_scenario(ConfigNode::load_string(text, "fuzz.yaml"), {}, std::nullopt, registry);
    (void)scenario.to_yaml(scenario.policy);
  });
  return 0;
}
