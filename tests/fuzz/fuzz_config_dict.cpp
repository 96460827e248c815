// libFuzzer target: the Python config path, schedsim.load_config(dict). The input is JSON
// (the shape of a Python dict: str keys; lists; str, int, float, bool and None values),
// turned into the node tree python/src/module.cpp builds from a dict (a str is a string
// scalar whatever it reads as, numbers keep their text, None is null, nesting beyond
// kMaxConfigNesting is refused), then loaded as "<dict>" exactly as Scenario.from_dict
// does. Unlike the `config` target this reaches trees the YAML reader never produces:
// any bytes in keys and strings (NUL, control characters, invalid UTF-8 through \u
// escapes), 500 levels without the reader's depth guard, numbers as plain scalars.
// Only InputError may come out.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "scenario/scenario.hpp"
#include "policies/registry.hpp"
#include "base/config_node.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace schedsim;

namespace {

struct TooDeep {};

YAML::Node to_node(const nlohmann::json& v, std::size_t depth) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: return YAML::Node(YAML::NodeType::Null);
    case nlohmann::json::value_t::boolean: return YAML::Node(v.get<bool>() ? "true" : "false");
    case nlohmann::json::value_t::string: return string_scalar(v.get<std::string>());
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float: return YAML::Node(v.dump());  // shortest round-trip text, as Python's repr
    case nlohmann::json::value_t::object:
    case nlohmann::json::value_t::array: {
      if (depth >= kMaxConfigNesting) throw TooDeep{};  // the Python side refuses it with an InputError
      YAML::Node n(v.is_object() ? YAML::NodeType::Map : YAML::NodeType::Sequence);
      if (v.is_object()) {
        for (const auto& [key, item] : v.items()) n[key] = to_node(item, depth + 1);
      } else {
        for (const auto& item : v) n.push_back(to_node(item, depth + 1));
      }
      return n;
    }
    default: return YAML::Node(YAML::NodeType::Null);  // binary and discarded values: JSON text has none
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const PolicyRegistry registry = builtin_policies();
  // Python dicts go no deeper than kMaxConfigNesting, so neither does the parse: a depth
  // callback stops deeper JSON before nlohmann's recursive destructor sees it.
  const nlohmann::json::parser_callback_t limit = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > static_cast<int>(kMaxConfigNesting) + 1) throw TooDeep{};
    return true;
  };
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(data, data + size, limit, /*allow_exceptions=*/false);
  } catch (const TooDeep&) {
    return 0;
  }
  if (value.is_discarded() || !value.is_object()) return 0;  // from_dict takes a dict
  YAML::Node root;
  try {
    root = to_node(value, 0);
  } catch (const TooDeep&) {
    return 0;
  }
  fuzz::expect_input_errors_only([&] {
    const ScenarioConfig scenario = load_scenario(ConfigNode(root, "<dict>"), {}, std::nullopt, registry);
    (void)scenario.to_yaml(scenario.policy);
  });
  return 0;
}
