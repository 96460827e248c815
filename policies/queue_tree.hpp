// Hierarchical queues as Volcano and Apache YuniKorn declare them, and the share
// computations their schedulers make over them (docs/policies.md, "Volcano" and "Apache
// YuniKorn"). Pure data and functions: the engine that schedules with them is
// policies/queue_tree_policy.hpp.
//
// A tree is declared in a policy's options:
//   queues: [{name: research, weight: 2, guaranteed_gpus: 8, max_gpus: 24, reclaimable: true},
//            {name: nlp, parent: research}, ...]
// Every tree has an implicit `root` (the whole cluster) and a leaf `default` (under
// root) unless one is declared. Jobs go to the leaf named by JobSpec.group, else by
// JobSpec.user, else to `default`.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/config_node.hpp"
#include "sim/job.hpp"
#include "sim/job_view.hpp"

namespace schedsim {

struct QueueSpec {
  std::string name;
  int parent = -1;  // index of the parent queue; -1 for root
  double weight = 1.0;  // Volcano's queue weight: share of the parent's capacity
  double guaranteed_gpus = 0.0;  // YuniKorn's guaranteed resources (GPUs)
  double max_gpus = std::numeric_limits<double>::infinity();  // YuniKorn's max, Volcano's capability
  bool reclaimable = true;  // Volcano: other queues may take back what it holds over its share
  std::vector<int> children;
  bool is_leaf() const { return children.empty(); }
};

class QueueTree {
 public:
  // The tree of `queues` (a sequence of maps, may be null: root and default only).
  // Throws InputError naming the key (queues[2].parent) for an unknown or repeated name,
  // a parent declared after its child, a non-positive weight, guaranteed above max, or a
  // `default` queue that has children.
  static QueueTree parse(const std::optional<ConfigNode>& queues);
  // The tree of root and default only.
  QueueTree();

  int size() const { return static_cast<int>(queues_.size()); }
  const QueueSpec& queue(int q) const { return queues_[static_cast<std::size_t>(q)]; }
  // Index of a queue by name, or -1.
  int find(const std::string& name) const;
  // The leaf a job belongs to: its group's, else its user's, else `default`.
  int leaf_for(const JobView& job) const;
  int default_leaf() const { return default_leaf_; }
  // The declared queues as the policy's resolved options write them (root left out, and
  // max_gpus when unlimited), so that the resolved config parses to the same tree.
  YAML::Node to_yaml() const;

 private:
  int add(QueueSpec q);
  std::vector<QueueSpec> queues_;  // [0] = root; parents before children
  int default_leaf_ = -1;
};

// Water-filling: splits `capacity` among entries in proportion to `weight`, none above its
// `cap`; what a capped entry cannot take goes to the others, in proportion to their
// weights, until every entry is capped or the capacity is spent. Entries with weight 0 or
// cap 0 get 0. Exact up to floating-point rounding; O(entries^2) at worst.
std::vector<double> water_fill(double capacity, const std::vector<double>& weight, const std::vector<double>& cap);

// Volcano's proportion plugin over a hierarchy: a queue's deserved GPUs are its
// weight's share of its parent's deserved GPUs, capped by its capability (max_gpus) and
// by its demand (GPUs it holds plus GPUs its pending jobs ask for), the surplus
// redistributed among its siblings (water_fill). Root deserves min(cluster, demand).
// `demand_gpus` is by queue (leaf values are used; inner queues sum their children).
std::vector<double> proportion_deserved(const QueueTree& tree, double cluster_gpus, const std::vector<double>& leaf_demand_gpus);

// Dominant resource fairness: the largest share of any resource a queue holds,
// held[r] / capacity[r] over the resources r (resources with capacity 0 are skipped).
// schedsim's resources are the device types: a queue holding 4 of 8 H100s and 2 of 16
// A100s has dominant share 0.5.
double dominant_share(const std::vector<double>& held, const std::vector<double>& capacity);

// YuniKorn's fair queue ordering key: held / guaranteed when the queue has a guarantee
// (below 1 = under it, served first), else 1 + held / cluster (after every queue under its
// guarantee, by usage). Smaller first.
double guaranteed_fair_key(double held_gpus, double guaranteed_gpus, double cluster_gpus);

}  // namespace schedsim
