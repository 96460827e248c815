#include "policies/queue_tree.hpp"

#include <algorithm>
#include <cmath>

#include "world/physics/catalogue_names.hpp"
#include "base/error.hpp"

namespace schedsim {

QueueTree::QueueTree() {
  QueueSpec root;
  root.name = "root";
  add(root);
  QueueSpec d;
  d.name = "default";
  d.parent = 0;
  default_leaf_ = add(d);
}

int QueueTree::add(QueueSpec q) {
  const int index = size();
  if (q.parent >= 0) queues_[static_cast<std::size_t>(q.parent)].children.push_back(index);
  queues_.push_back(std::move(q));
  return index;
}

int QueueTree::find(const std::string& name) const {
  for (int q = 0; q < size(); ++q)
    if (queue(q).name == name) return q;
  return -1;
}

QueueTree QueueTree::parse(const std::optional<ConfigNode>& queues) {
  if (!queues || queues->is_null()) return QueueTree();
  if (!queues->is_sequence()) queues->fail("expected a list of queues, e.g. [{name: research, weight: 2, max_gpus: 16}]");
  QueueTree t;
  t.queues_.clear();
  QueueSpec root;
  root.name = "root";
  t.add(root);
  for (std::size_t i = 0; i < queues->size(); ++i) {
    const ConfigNode n = queues->at(i);
    if (!n.is_map()) n.fail("expected a map such as {name: research, parent: root, weight: 1}");
    n.expect_keys({"name", "parent", "weight", "guaranteed_gpus", "max_gpus", "reclaimable"});
    QueueSpec q;
    const ConfigNode name = n.child("name");
    q.name = name.as_string();
    if (q.name.empty()) name.fail("a queue needs a non-empty name");
    if (q.name == "root") name.fail("'root' is the implicit top of the tree (the whole cluster); name the queue otherwise");
    if (t.find(q.name) >= 0) name.fail("queue '" + q.name + "' is declared twice");
    q.parent = 0;
    if (auto p = n.maybe_child("parent")) {
      const std::string parent = p->as_string();
      q.parent = t.find(parent);
      if (q.parent < 0) {
        std::string known;
        for (const auto& s : t.queues_) known += (known.empty() ? "" : ", ") + s.name;
        p->fail("unknown queue '" + parent + "'; a parent must be declared before its children (declared so far: " + known + ")");
      }
      if (t.queue(q.parent).name == "default") p->fail("queue 'default' takes the jobs no other queue matches, so it must be a leaf");
    }
    if (auto w = n.maybe_child("weight")) q.weight = w->as_positive_double();
    if (auto g = n.maybe_child("guaranteed_gpus")) q.guaranteed_gpus = g->as_nonnegative_double();
    if (auto m = n.maybe_child("max_gpus")) q.max_gpus = m->as_positive_double();
    if (q.guaranteed_gpus > q.max_gpus) {
      n.child("guaranteed_gpus").fail("guaranteed_gpus " + detail::format_number(q.guaranteed_gpus) + " is above max_gpus " + detail::format_number(q.max_gpus) + "; a queue can never hold more than its max");
    }
    if (auto r = n.maybe_child("reclaimable")) q.reclaimable = r->as_bool();
    t.add(q);
  }
  t.default_leaf_ = t.find("default");
  if (t.default_leaf_ < 0) {
    QueueSpec d;
    d.name = "default";
    d.parent = 0;
    t.default_leaf_ = t.add(d);
  }
  return t;
}

int QueueTree::leaf_for(const JobView& job) const {
  for (const std::string* key : {&job.group(), &job.user()}) {
    if (key->empty()) continue;
    const int q = find(*key);
    if (q >= 0 && queue(q).is_leaf()) return q;
  }
  return default_leaf_;
}

YAML::Node QueueTree::to_yaml() const {
  YAML::Node out(YAML::NodeType::Sequence);
  for (int q = 1; q < size(); ++q) {
    const QueueSpec& s = queue(q);
    YAML::Node n(YAML::NodeType::Map);
    n["name"] = s.name;
    n["parent"] = queue(s.parent).name;
    n["weight"] = s.weight;
    n["guaranteed_gpus"] = s.guaranteed_gpus;
    if (std::isfinite(s.max_gpus)) n["max_gpus"] = s.max_gpus;  // left out: unlimited
    n["reclaimable"] = s.reclaimable;
    out.push_back(n);
  }
  return out;
}

std::vector<double> water_fill(double capacity, const std::vector<double>& weight, const std::vector<double>& cap) {
  const std::size_t n = weight.size();
  std::vector<double> out(n, 0.0);
  std::vector<char> active(n, 0);
  for (std::size_t i = 0; i < n; ++i) active[i] = weight[i] > 0 && cap[i] > 0;
  double remaining = std::max(0.0, capacity);
  // Each round caps at least one entry (or ends): at most n rounds.
  while (remaining > 0) {
    double total_weight = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (active[i]) total_weight += weight[i];
    if (total_weight <= 0) break;
    bool capped = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (!active[i]) continue;
      if (remaining * weight[i] / total_weight >= cap[i] - out[i]) {  // this entry saturates
        capped = true;
        active[i] = 0;
      }
    }
    if (!capped) {
      for (std::size_t i = 0; i < n; ++i)
        if (active[i]) out[i] += remaining * weight[i] / total_weight;
      break;
    }
    // Saturated entries take exactly their cap; the rest is shared again next round.
    for (std::size_t i = 0; i < n; ++i) {
      if (active[i] || out[i] >= cap[i] || weight[i] <= 0 || cap[i] <= 0) continue;
      remaining -= cap[i] - out[i];
      out[i] = cap[i];
    }
  }
  return out;
}

std::vector<double> proportion_deserved(const QueueTree& tree, double cluster_gpus, const std::vector<double>& leaf_demand_gpus) {
  const int n = tree.size();
  // Demand of an inner queue: the sum of its children's (children come after parents).
  std::vector<double> demand(static_cast<std::size_t>(n), 0.0);
  for (int q = n - 1; q >= 0; --q) {
    const QueueSpec& s = tree.queue(q);
    if (s.is_leaf()) demand[static_cast<std::size_t>(q)] = leaf_demand_gpus[static_cast<std::size_t>(q)];
    if (s.parent >= 0) demand[static_cast<std::size_t>(s.parent)] += demand[static_cast<std::size_t>(q)];
  }
  std::vector<double> deserved(static_cast<std::size_t>(n), 0.0);
  deserved[0] = std::min({cluster_gpus, demand[0], tree.queue(0).max_gpus});
  for (int q = 0; q < n; ++q) {
    const QueueSpec& s = tree.queue(q);
    if (s.is_leaf()) continue;
    std::vector<double> w, cap;
    for (int c : s.children) {
      w.push_back(tree.queue(c).weight);
      cap.push_back(std::min(tree.queue(c).max_gpus, demand[static_cast<std::size_t>(c)]));
    }
    const std::vector<double> share = water_fill(deserved[static_cast<std::size_t>(q)], w, cap);
    for (std::size_t i = 0; i < s.children.size(); ++i) deserved[static_cast<std::size_t>(s.children[i])] = share[i];
  }
  return deserved;
}

double dominant_share(const std::vector<double>& held, const std::vector<double>& capacity) {
  double best = 0;
  for (std::size_t r = 0; r < held.size() && r < capacity.size(); ++r) {
    if (capacity[r] > 0) best = std::max(best, held[r] / capacity[r]);
  }
  return best;
}

double guaranteed_fair_key(double held_gpus, double guaranteed_gpus, double cluster_gpus) {
  if (guaranteed_gpus > 0) return held_gpus / guaranteed_gpus;
  return 1.0 + (cluster_gpus > 0 ? held_gpus / cluster_gpus : 0.0);
}

}  // namespace schedsim
