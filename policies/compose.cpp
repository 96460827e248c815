#include "policies/compose.hpp"

#include "policies/edf.hpp"
#include "policies/fair_share.hpp"
#include "policies/fifo.hpp"
#include "policies/gittins.hpp"
#include "policies/las.hpp"
#include "policies/priority.hpp"
#include "policies/queue_policy.hpp"
#include "policies/sjf.hpp"
#include "policies/srtf.hpp"
#include "policies/themis.hpp"

namespace schedsim {

std::vector<OrderKind> builtin_orders() { return {fifo_order(), sjf_order(), srtf_order(), las_order(), edf_order(), priority_order(), gittins_order(), fair_share_order(), themis_order()}; }

ParsedOrder parse_order(const ConfigNode& config) {
  const std::vector<OrderKind> orders = builtin_orders();
  std::string order_name = "fifo";
  std::optional<ConfigNode> order_node = config.maybe_child("order");
  if (order_node) order_name = order_node->is_map() ? order_node->child("name").as_string() : order_node->as_string();
  const OrderKind* kind = nullptr;
  std::string valid;
  for (const auto& o : orders) {
    if (o.name == order_name) kind = &o;
    valid += (valid.empty() ? "" : ", ") + o.name;
  }
  if (!kind) {
    const ConfigNode& where = order_node->is_map() ? order_node->child("name") : *order_node;
    where.fail("unknown order '" + order_name + "'; choose one of: " + valid);
  }
  ParsedOrder p;
  p.kind = *kind;
  if (order_node && order_node->is_map()) {
    std::vector<std::string> order_keys = {"name"};
    for (const auto& k : kind->keys()) order_keys.push_back(k);
    order_node->expect_keys(order_keys);
    p.order = kind->make(*order_node);
  } else {
    YAML::Node empty(YAML::NodeType::Map);
    p.order = kind->make(ConfigNode(empty, config.source(), config.path()));
  }
  p.resolved = YAML::Node(YAML::NodeType::Map);
  p.resolved["name"] = order_name;
  p.order->write(p.resolved);
  return p;
}

PolicyInfo compose_policy_info() {
  std::string names;
  for (const auto& o : builtin_orders()) names += (names.empty() ? "" : ", ") + o.name;
  std::vector<PolicyOptionDoc> options = {{"order", "fifo", "queue order: " + names + "; or a map with the order's options, e.g. {name: sjf, by: duration}"}};
  QueuePolicyOptions shared;
  for (auto d : QueuePolicyOptions::docs(shared)) {
    if (d.name == "preemption") d.default_value = "the order's (true for srtf, las and gittins)";
    options.push_back(d);
  }
  return PolicyInfo{
      "compose",
      "a queue order composed with a placement, preemption and backfilling, all chosen in config",
      options,
      [](const ConfigNode& config, const PolicyContext& context) {
        std::vector<std::string> keys = {"name", "order"};
        for (const auto& k : QueuePolicyOptions::keys()) keys.push_back(k);
        config.expect_keys(keys);
        ParsedOrder parsed = parse_order(config);
        std::unique_ptr<QueueOrder> order = std::move(parsed.order);
        const OrderKind* kind = &parsed.kind;
        QueuePolicyOptions defaults;
        defaults.preemption = kind->preemptive_by_default;
        const QueuePolicyOptions options = QueuePolicyOptions::parse(config, context, defaults);
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = "compose";
        resolved["order"] = parsed.resolved;
        options.write(resolved);
        return PolicyInstance{std::make_unique<QueuePolicy>("compose", std::move(order), options), resolved};
      },
  };
}

}  // namespace schedsim
