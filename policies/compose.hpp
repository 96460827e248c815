// compose: any queue order with any placement and extras, chosen in config:
// {name: compose, order: las, placement: packed, backfill: easy, preemption: true}.
// `order` is a name or a map with the order's own options ({name: sjf, by: duration}).
#pragma once

#include <memory>
#include <vector>

#include "policies/queue_order.hpp"
#include "policies/registry.hpp"

namespace schedsim {

// Every queue order by config name, in registry order.
std::vector<OrderKind> builtin_orders();

// The `order:` key of a policy config (a name or a map with the order's options; default
// fifo), validated: the order, its kind and its resolved options ({name: ..., ...}).
struct ParsedOrder {
  std::unique_ptr<QueueOrder> order;
  OrderKind kind;
  YAML::Node resolved;
};
ParsedOrder parse_order(const ConfigNode& config);
PolicyInfo compose_policy_info();

}  // namespace schedsim
