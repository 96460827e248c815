// compose: any queue order with any placement and extras, chosen in config:
// {name: compose, order: las, placement: packed, backfill: easy, preemption: true}.
// `order` is a name or a map with the order's own options ({name: sjf, by: duration}).
#pragma once

#include <vector>

#include "policies/queue_order.hpp"
#include "policies/registry.hpp"

namespace schedsim {

// Every queue order by config name, in registry order.
std::vector<OrderKind> builtin_orders();
PolicyInfo compose_policy_info();

}  // namespace schedsim
