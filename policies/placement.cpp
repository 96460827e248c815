#include "policies/placement.hpp"

#include <algorithm>

#include "base/error.hpp"

namespace schedsim {

void FreeDevices::reset(const ClusterState& state) {
  const std::size_t words = (static_cast<std::size_t>(state.spec().num_devices()) + 63) / 64;
  if (hints_ && index_built_ && state_ == &state) {  // the last decision's starts were applied
    for (DeviceId d : claimed_list_) touch_node(state.spec().node_of(d));
  }
  if (state_ != &state || claimed_bits_.size() != words) {
    claimed_bits_.assign(words, 0);
  } else {
    for (DeviceId d : claimed_list_) claimed_bits_[static_cast<std::size_t>(d) >> 6] = 0;
  }
  claimed_list_.clear();
  for (DeviceId d : share_claims_) claimed_milli_[static_cast<std::size_t>(d)] = 0;
  share_claims_.clear();
  if (claimed_milli_.size() != static_cast<std::size_t>(state.spec().num_devices())) {
    claimed_milli_.assign(static_cast<std::size_t>(state.spec().num_devices()), 0);
  }
  if (state_ != &state) index_built_ = false;
  state_ = &state;
  free_ = state.free_devices();
  node_free_valid_ = false;
}

void FreeDevices::require_claiming(const char* what) const {
  if (!claiming_) throw InvariantError(std::string("FreeDevices::") + what + " needs claims, which set_claiming(false) turned off");
}

void FreeDevices::claim(DeviceId d) {
  if (!claiming_) return;
  ++claims_;
  claimed_bits_[static_cast<std::size_t>(d) >> 6] |= 1ULL << (d & 63);
  claimed_list_.push_back(d);
  --free_;
  if (node_free_valid_) {
    const int k = state_->spec().node_of(d);
    set_node_free(k, node_free_[static_cast<std::size_t>(k)] - 1);
  }
}

bool FreeDevices::is_of_type(DeviceId d, int only_type) const {
  const ClusterSpec& spec = state_->spec();
  return only_type < 0 || spec.node(spec.node_of(d)).type_index == only_type;
}

bool FreeDevices::first_fit(int n, std::vector<DeviceId>& out, int only_type) {
  if (n > free_) return false;
  if (only_type >= 0) {  // tentative: nothing is claimed unless the type holds all n
    const std::size_t before = out.size();
    for (DeviceId d = state_->next_free(0); d >= 0 && static_cast<int>(out.size() - before) < n; d = state_->next_free(d + 1)) {
      if (!claimed(d) && is_of_type(d, only_type)) out.push_back(d);
    }
    if (static_cast<int>(out.size() - before) < n) {
      out.resize(before);
      return false;
    }
    for (std::size_t i = before; i < out.size(); ++i) claim(out[i]);
    return true;
  }
  for (DeviceId d = state_->next_free(0); n > 0; d = state_->next_free(d + 1)) {
    if (d < 0) throw InvariantError("free-device count out of step with the free-device map");
    if (claimed(d)) continue;
    out.push_back(d);
    claim(d);
    --n;
  }
  return true;
}

bool FreeDevices::first_fit_among(int n, const std::vector<DeviceId>& candidates, std::vector<DeviceId>& out) {
  if (n > free_) return false;
  const std::size_t before = out.size();
  for (DeviceId d : candidates) {
    if (static_cast<int>(out.size() - before) == n) break;
    if (state_->is_free(d) && !claimed(d)) out.push_back(d);
  }
  if (static_cast<int>(out.size() - before) < n) {
    out.resize(before);
    return false;
  }
  for (std::size_t i = before; i < out.size(); ++i) claim(out[i]);
  return true;
}

}  // namespace schedsim

namespace schedsim {

const std::vector<int>& FreeDevices::node_free() {
  if (node_free_valid_) return node_free_;
  if (!index_built_ || node_free_.size() != static_cast<std::size_t>(state_->spec().num_nodes())) {
    build_index();
  } else {
    // Follow what changed since the last decision (starts applied, jobs ended or moved):
    // set each node to its free count now, then take this decision's claims off again.
    bool synced = false;
    if (hints_) {
      for (int k : dirty_nodes_) set_node_free(k, state_->free_on_node(k));
      synced = filter_free_[0] == state_->free_devices();
    }
    if (!synced) {
      const int nodes = state_->spec().num_nodes();
      for (int k = 0; k < nodes; ++k) {
        const int now = state_->free_on_node(k);
        if (now != node_free_[static_cast<std::size_t>(k)]) set_node_free(k, now);
      }
    }
    const ClusterSpec& spec = state_->spec();
    for (DeviceId d : claimed_list_) {
      const int k = spec.node_of(d);
      set_node_free(k, node_free_[static_cast<std::size_t>(k)] - 1);
    }
  }
  for (int k : dirty_nodes_) node_dirty_[static_cast<std::size_t>(k)] = 0;
  dirty_nodes_.clear();
  node_free_valid_ = true;
  return node_free_;
}

void FreeDevices::touch_node(int node) {
  if (node_dirty_.size() <= static_cast<std::size_t>(node)) node_dirty_.resize(static_cast<std::size_t>(node) + 1, 0);
  if (node_dirty_[static_cast<std::size_t>(node)]) return;
  node_dirty_[static_cast<std::size_t>(node)] = 1;
  dirty_nodes_.push_back(node);
}

void FreeDevices::touch(const std::vector<DeviceId>& devices) {
  if (!hints_ || !index_built_ || !state_) return;
  for (DeviceId d : devices) touch_node(state_->spec().node_of(d));
}

void FreeDevices::build_index() {
  const ClusterSpec& spec = state_->spec();
  const int nodes = spec.num_nodes();
  num_types_ = std::max<int>(1, static_cast<int>(spec.device_types().size()));
  max_per_node_ = 0;
  for (int k = 0; k < nodes; ++k) max_per_node_ = std::max(max_per_node_, spec.node(k).num_devices);
  const std::size_t filters = num_types_ == 1 ? 1 : static_cast<std::size_t>(num_types_) + 1;
  buckets_.assign(filters, std::vector<SummaryBitset>(static_cast<std::size_t>(max_per_node_) + 1, SummaryBitset(static_cast<std::size_t>(nodes))));
  filter_free_.assign(filters, 0);
  groups_of_ = nullptr;
  num_groups_ = 1;
  group_free_.assign(filters, std::vector<int>(1, 0));
  group_nodes_.clear();
  node_free_.assign(static_cast<std::size_t>(nodes), 0);
  index_built_ = true;
  for (int k = 0; k < nodes; ++k) set_node_free(k, state_->free_on_node(k));
  for (DeviceId d : claimed_list_) {
    const int k = spec.node_of(d);
    set_node_free(k, node_free_[static_cast<std::size_t>(k)] - 1);
  }
}

void FreeDevices::set_node_free(int node, int value) {
  const auto k = static_cast<std::size_t>(node);
  const int old = node_free_[k];
  if (old == value) return;
  const int group = groups_of_ ? (*groups_of_)[k] : 0;
  auto update = [&](std::size_t filter) {
    auto& b = buckets_[filter];
    if (old > 0) b[static_cast<std::size_t>(old)].reset(k);
    if (value > 0) b[static_cast<std::size_t>(value)].set(k);
    filter_free_[filter] += value - old;
    group_free_[filter][static_cast<std::size_t>(group)] += value - old;
  };
  update(0);
  if (num_types_ > 1) update(1 + static_cast<std::size_t>(state_->spec().node(node).type_index));
  node_free_[k] = value;
}

void FreeDevices::set_groups(const std::vector<int>* node_group) {
  if (node_group == groups_of_) return;
  groups_of_ = node_group;
  const ClusterSpec& spec = state_->spec();
  const int nodes = spec.num_nodes();
  num_groups_ = 1;
  if (groups_of_) {
    for (int k = 0; k < nodes; ++k) num_groups_ = std::max(num_groups_, (*groups_of_)[static_cast<std::size_t>(k)] + 1);
  }
  group_nodes_.assign(static_cast<std::size_t>(num_groups_), {});
  for (auto& g : group_free_) g.assign(static_cast<std::size_t>(num_groups_), 0);
  for (int k = 0; k < nodes; ++k) {
    const auto g = static_cast<std::size_t>(groups_of_ ? (*groups_of_)[static_cast<std::size_t>(k)] : 0);
    group_nodes_[g].push_back(k);
    const int f = node_free_[static_cast<std::size_t>(k)];
    group_free_[0][g] += f;
    if (num_types_ > 1) group_free_[1 + static_cast<std::size_t>(spec.node(k).type_index)][g] += f;
  }
}

void FreeDevices::take_from_node(int node, int n, std::vector<DeviceId>& out) {
  const NodeSpec& ns = state_->spec().node(node);
  for (DeviceId d = ns.first_device; n > 0 && d < ns.first_device + ns.num_devices; ++d) {
    if (!state_->is_free(d) || claimed(d)) continue;
    out.push_back(d);
    claim(d);
    --n;
  }
  if (n > 0) throw InvariantError("node free count out of step with the device map");
}

bool FreeDevices::first_fit_then(int n, std::vector<DeviceId>& released, std::vector<DeviceId>& out) {
  if (free_ + static_cast<int>(released.size()) < n) return false;
  const int from_free = std::min(n, free_);
  first_fit(from_free, out);
  for (int i = from_free; i < n; ++i) {
    out.push_back(released.back());
    released.pop_back();
  }
  return true;
}

bool FreeDevices::random(int n, Rng& rng, std::vector<DeviceId>& out, int only_type) {
  if (n > free_) return false;
  pool_.clear();
  for (DeviceId d = state_->next_free(0); d >= 0; d = state_->next_free(d + 1)) {
    if (!claimed(d) && is_of_type(d, only_type)) pool_.push_back(d);
  }
  if (only_type >= 0 && pool_.size() < static_cast<std::size_t>(n)) return false;  // draws nothing
  for (int i = 0; i < n; ++i) {  // partial Fisher-Yates
    const std::size_t k = static_cast<std::size_t>(i) + rng.below(pool_.size() - static_cast<std::size_t>(i));
    std::swap(pool_[static_cast<std::size_t>(i)], pool_[k]);
    out.push_back(pool_[static_cast<std::size_t>(i)]);
    claim(pool_[static_cast<std::size_t>(i)]);
  }
  return true;
}

bool FreeDevices::packed(int n, const std::vector<int>* node_group, std::vector<DeviceId>& out, int only_type) {
  node_free();
  set_groups(node_group);
  const auto filter = static_cast<std::size_t>(filter_of(only_type));
  if (n > filter_free_[filter]) return false;
  if (n <= 0) return true;
  // Best fit inside one node: the fewest free devices that still hold the job, the
  // lowest-numbered such node.
  const auto& buckets = buckets_[filter];
  for (int c = n; c <= max_per_node_; ++c) {
    const auto& b = buckets[static_cast<std::size_t>(c)];
    if (!b.empty()) {
      take_from_node(static_cast<int>(b.next(0)), n, out);
      return true;
    }
  }
  // Several nodes: choose the group with the least free capacity that still holds the
  // job (all nodes form one group without locality information), then its emptiest nodes.
  int chosen = -1;
  const auto& group_free = group_free_[filter];
  for (int g = 0; g < num_groups_; ++g) {
    const int f = group_free[static_cast<std::size_t>(g)];
    if (f >= n && (chosen < 0 || f < group_free[static_cast<std::size_t>(chosen)])) chosen = g;
  }
  if (chosen < 0) return packed_across_groups(n, only_type, out);
  auto usable = [&](int k) {
    return only_type < 0 || state_->spec().node(k).type_index == only_type ? node_free_[static_cast<std::size_t>(k)] : 0;
  };
  order_.clear();
  if (!groups_of_) {
    // Emptiest first, ascending node id among equals, until the job is covered.
    int covered = 0;
    for (int c = max_per_node_; c > 0 && covered < n; --c) {
      const SummaryBitset& b = buckets[static_cast<std::size_t>(c)];
      for (std::int64_t k = b.next(0); k >= 0 && covered < n; k = b.next(k + 1)) {
        order_.push_back(static_cast<int>(k));
        covered += c;
      }
    }
  } else {
    for (int k : group_nodes_[static_cast<std::size_t>(chosen)]) {
      if (usable(k) > 0) order_.push_back(k);
    }
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) { return usable(a) > usable(b); });
  }
  for (int k : order_) {
    if (n == 0) break;
    const int take = std::min(n, usable(k));
    take_from_node(k, take, out);
    n -= take;
  }
  return true;
}

// No group holds the job: fill whole groups in order of free capacity (the full scan).
bool FreeDevices::packed_across_groups(int n, int only_type, std::vector<DeviceId>& out) {
  const ClusterSpec& spec = state_->spec();
  const int nodes = static_cast<int>(node_free_.size());
  std::vector<int> nf(node_free_);
  if (only_type >= 0) {
    for (int k = 0; k < nodes; ++k) {
      if (spec.node(k).type_index != only_type) nf[static_cast<std::size_t>(k)] = 0;
    }
  }
  const std::vector<int>* node_group = groups_of_;
  std::vector<int> group_free;
  auto group_of = [&](int k) { return node_group ? (*node_group)[static_cast<std::size_t>(k)] : 0; };
  for (int k = 0; k < nodes; ++k) {
    const auto g = static_cast<std::size_t>(group_of(k));
    if (g >= group_free.size()) group_free.resize(g + 1, 0);
    group_free[g] += nf[static_cast<std::size_t>(k)];
  }
  std::vector<int> order;
  for (int k = 0; k < nodes; ++k) {
    if (nf[static_cast<std::size_t>(k)] > 0) order.push_back(k);
  }
  // Without one group large enough, fill whole groups in order of free capacity.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (group_of(a) != group_of(b)) {
      return group_free[static_cast<std::size_t>(group_of(a))] > group_free[static_cast<std::size_t>(group_of(b))];
    }
    return nf[static_cast<std::size_t>(a)] > nf[static_cast<std::size_t>(b)];
  });
  for (int k : order) {
    if (n == 0) break;
    const int take = std::min(n, nf[static_cast<std::size_t>(k)]);
    take_from_node(k, take, out);
    n -= take;
  }
  return true;
}

bool FreeDevices::node_strict(int n, std::vector<DeviceId>& out, int only_type) {
  const std::vector<int>& nf = node_free();
  const ClusterSpec& spec = state_->spec();
  const int nodes = spec.num_nodes();
  if (n <= 0) return true;
  if (n > filter_free_[static_cast<std::size_t>(filter_of(only_type))]) return false;
  auto usable = [&](int k) { return only_type < 0 || spec.node(k).type_index == only_type; };
  int largest = 0;
  for (int k = 0; k < nodes; ++k) {
    if (usable(k)) largest = std::max(largest, spec.node(k).num_devices);
  }
  if (n <= largest) {  // one node: the first with room
    for (int k = 0; k < nodes; ++k) {
      if (usable(k) && nf[static_cast<std::size_t>(k)] >= n) {
        take_from_node(k, n, out);
        return true;
      }
    }
    return false;
  }
  // Whole idle nodes first, then one node for the remainder; nothing is claimed until the
  // whole set is known.
  order_.clear();
  int left = n;
  for (int k = 0; k < nodes && left > 0; ++k) {
    const int size = spec.node(k).num_devices;
    if (usable(k) && nf[static_cast<std::size_t>(k)] == size && size <= left) {
      order_.push_back(k);
      left -= size;
    }
  }
  int rest = -1;
  if (left > 0) {
    for (int k = 0; k < nodes; ++k) {
      if (usable(k) && nf[static_cast<std::size_t>(k)] >= left && std::find(order_.begin(), order_.end(), k) == order_.end()) {
        rest = k;
        break;
      }
    }
    if (rest < 0) return false;
  }
  for (int k : order_) take_from_node(k, spec.node(k).num_devices, out);
  if (rest >= 0) take_from_node(rest, left, out);
  return true;
}

bool FreeDevices::spread(int n, std::vector<DeviceId>& out, int only_type) {
  require_claiming("spread");
  if (n > free_) return false;
  const std::vector<int>& nf = node_free();
  if (only_type >= 0 && n > filter_free_[static_cast<std::size_t>(filter_of(only_type))]) return false;
  const ClusterSpec& spec = state_->spec();
  while (n > 0) {
    std::vector<int> order;
    for (int k = 0; k < static_cast<int>(nf.size()); ++k) {
      if (nf[static_cast<std::size_t>(k)] > 0 && (only_type < 0 || spec.node(k).type_index == only_type)) order.push_back(k);
    }
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return nf[static_cast<std::size_t>(a)] > nf[static_cast<std::size_t>(b)]; });
    for (int k : order) {
      if (n == 0) break;
      take_from_node(k, 1, out);
      --n;
    }
  }
  return true;
}

namespace {

// Slurm's best-fit step over `units` (free counts by position): the unit with the fewest
// free devices that still holds `need`, else the one with the most; the lowest position
// among equals; -1 when every unit is empty.
int best_fit_unit(const std::vector<int>& free, int need) {
  int chosen = -1;
  bool sufficient = false;
  for (int u = 0; u < static_cast<int>(free.size()); ++u) {
    const int f = free[static_cast<std::size_t>(u)];
    if (f <= 0) continue;
    const bool enough = f >= need;
    const int c = chosen < 0 ? 0 : free[static_cast<std::size_t>(chosen)];
    if (chosen < 0 || (enough && !sufficient) || (enough && f < c) || (!enough && !sufficient && f > c)) {
      chosen = u;
      sufficient = enough;
    }
  }
  return chosen;
}

}  // namespace

bool FreeDevices::tree(int n, const SwitchTree& tree, std::vector<DeviceId>& out, int only_type) {
  node_free();
  const ClusterSpec& spec = state_->spec();
  const int nodes = spec.num_nodes();
  if (n <= 0) return true;
  if (n > filter_free_[static_cast<std::size_t>(filter_of(only_type))]) return false;
  std::vector<int> nf(static_cast<std::size_t>(nodes), 0);
  for (int k = 0; k < nodes; ++k) {
    if (only_type < 0 || spec.node(k).type_index == only_type) nf[static_cast<std::size_t>(k)] = node_free_[static_cast<std::size_t>(k)];
  }
  // Node level: best fit among the nodes that hold the whole job.
  int best = -1;
  for (int k = 0; k < nodes; ++k) {
    const int f = nf[static_cast<std::size_t>(k)];
    if (f >= n && (best < 0 || f < nf[static_cast<std::size_t>(best)])) best = k;
  }
  if (best >= 0) {
    take_from_node(best, n, out);
    return true;
  }
  const auto leaf_of = [&](int k) { return tree.leaf_of_node.empty() ? 0 : tree.leaf_of_node[static_cast<std::size_t>(k)]; };
  int leaves = 1;
  for (int k = 0; k < nodes; ++k) leaves = std::max(leaves, leaf_of(k) + 1);
  std::vector<int> leaf_free(static_cast<std::size_t>(leaves), 0);
  for (int k = 0; k < nodes; ++k) leaf_free[static_cast<std::size_t>(leaf_of(k))] += nf[static_cast<std::size_t>(k)];
  // The lowest switch that holds the job, by best fit: a leaf, else a pod, else the top.
  // `in` marks the leaves under it.
  std::vector<char> in(static_cast<std::size_t>(leaves), 0);
  int leaf = -1;
  for (int l = 0; l < leaves; ++l) {
    const int f = leaf_free[static_cast<std::size_t>(l)];
    if (f >= n && (leaf < 0 || f < leaf_free[static_cast<std::size_t>(leaf)])) leaf = l;
  }
  if (leaf >= 0) {
    in[static_cast<std::size_t>(leaf)] = 1;
  } else {
    int pod = -1;
    std::vector<int> pod_free;
    if (!tree.pod_of_leaf.empty()) {
      for (int l = 0; l < leaves; ++l) {
        const auto p = static_cast<std::size_t>(tree.pod_of_leaf[static_cast<std::size_t>(l)]);
        if (p >= pod_free.size()) pod_free.resize(p + 1, 0);
        pod_free[p] += leaf_free[static_cast<std::size_t>(l)];
      }
      for (int p = 0; p < static_cast<int>(pod_free.size()); ++p) {
        const int f = pod_free[static_cast<std::size_t>(p)];
        if (f >= n && (pod < 0 || f < pod_free[static_cast<std::size_t>(pod)])) pod = p;
      }
    }
    for (int l = 0; l < leaves; ++l) in[static_cast<std::size_t>(l)] = pod < 0 || tree.pod_of_leaf[static_cast<std::size_t>(l)] == pod;
  }
  // Leaves under the chosen switch by best fit in turn, nodes inside each by the same rule.
  std::vector<int> candidates(static_cast<std::size_t>(leaves), 0);
  for (int l = 0; l < leaves; ++l) candidates[static_cast<std::size_t>(l)] = in[static_cast<std::size_t>(l)] ? leaf_free[static_cast<std::size_t>(l)] : 0;
  std::vector<int> members;
  std::vector<int> member_free;
  while (n > 0) {
    const int l = best_fit_unit(candidates, n);
    if (l < 0) throw InvariantError("topology_tree: free counts out of step with the switch tree");
    candidates[static_cast<std::size_t>(l)] = 0;
    int take = std::min(n, leaf_free[static_cast<std::size_t>(l)]);
    n -= take;
    members.clear();
    member_free.clear();
    for (int k = 0; k < nodes; ++k) {
      if (leaf_of(k) == l && nf[static_cast<std::size_t>(k)] > 0) {
        members.push_back(k);
        member_free.push_back(nf[static_cast<std::size_t>(k)]);
      }
    }
    while (take > 0) {
      const int m = best_fit_unit(member_free, take);
      if (m < 0) throw InvariantError("topology_tree: a leaf's free count out of step with its nodes");
      const int t = std::min(take, member_free[static_cast<std::size_t>(m)]);
      take_from_node(members[static_cast<std::size_t>(m)], t, out);
      member_free[static_cast<std::size_t>(m)] = 0;
      take -= t;
    }
  }
  return true;
}

int FreeDevices::free_milli(DeviceId d) const {
  const auto i = static_cast<std::size_t>(d);
  if (claimed(d) && claimed_milli_[i] == 0) return 0;  // claimed whole in this decision
  return state_->free_milli(d) - claimed_milli_[i];
}

void FreeDevices::claim_share(DeviceId d, int milli) {
  if (state_->is_free(d) && !claimed(d)) claim(d);  // no longer free for whole devices
  const auto i = static_cast<std::size_t>(d);
  if (claimed_milli_[i] == 0) share_claims_.push_back(d);
  claimed_milli_[i] += milli;
}

bool FreeDevices::share(int milli, ShareRule rule, std::vector<DeviceId>& out, int only_type, Rng* rng) {
  require_claiming("share");
  const ClusterSpec& spec = state_->spec();
  DeviceId chosen = -1;
  int chosen_free = 0;
  pool_.clear();
  for (DeviceId d = 0; d < spec.num_devices(); ++d) {
    if (only_type >= 0 && spec.node(spec.node_of(d)).type_index != only_type) continue;
    const int f = free_milli(d);
    if (f < milli) continue;
    if (rule == ShareRule::kFirst) {
      chosen = d;
      break;
    }
    if (rule == ShareRule::kRandom) {
      pool_.push_back(d);
      continue;
    }
    const bool better = chosen < 0 || (rule == ShareRule::kBest ? f < chosen_free : f > chosen_free);
    if (better) {
      chosen = d;
      chosen_free = f;
    }
  }
  if (rule == ShareRule::kRandom && !pool_.empty()) chosen = pool_[rng->below(pool_.size())];
  if (chosen < 0) return false;
  out.push_back(chosen);
  claim_share(chosen, milli);
  return true;
}

bool FreeDevices::fgd(int n, int milli, const TaskMix& mix, std::vector<DeviceId>& out, int only_type) {
  require_claiming("fgd");
  const ClusterSpec& spec = state_->spec();
  const bool fractional = milli < ClusterState::kWholeMilli;
  DeviceId best_device = -1;
  int best_node = -1, best_free = 0;
  double best_delta = 0.0;
  for (int k = 0; k < spec.num_nodes(); ++k) {
    const NodeSpec& ns = spec.node(k);
    if (only_type >= 0 && ns.type_index != only_type) continue;
    if (!fractional && node_free()[static_cast<std::size_t>(k)] < n) continue;
    node_milli_.resize(static_cast<std::size_t>(ns.num_devices));
    bool any = false;
    for (int g = 0; g < ns.num_devices; ++g) {
      node_milli_[static_cast<std::size_t>(g)] = free_milli(ns.first_device + g);
      any = any || node_milli_[static_cast<std::size_t>(g)] >= milli;
    }
    if (!any) continue;
    const double before = mix.node_fragmentation_milli(node_milli_.data(), ns.num_devices);
    if (!fractional) {  // which free devices a whole job takes does not change the node's state
      int left = n;
      for (int g = 0; g < ns.num_devices && left > 0; ++g) {
        if (node_milli_[static_cast<std::size_t>(g)] == ClusterState::kWholeMilli) {
          node_milli_[static_cast<std::size_t>(g)] = 0;
          --left;
        }
      }
      const double delta = mix.node_fragmentation_milli(node_milli_.data(), ns.num_devices) - before;
      if (best_node < 0 || delta < best_delta) {
        best_node = k;
        best_delta = delta;
      }
      continue;
    }
    // A fractional job: devices with the same free capacity are equivalent, so each
    // distinct value is evaluated once (on its lowest-numbered device).
    for (int g = 0; g < ns.num_devices; ++g) {
      const int f = node_milli_[static_cast<std::size_t>(g)];
      if (f < milli) continue;
      bool seen = false;
      for (int h = 0; h < g && !seen; ++h) seen = node_milli_[static_cast<std::size_t>(h)] == f;
      if (seen) continue;
      node_milli_[static_cast<std::size_t>(g)] = f - milli;
      const double delta = mix.node_fragmentation_milli(node_milli_.data(), ns.num_devices) - before;
      node_milli_[static_cast<std::size_t>(g)] = f;
      if (best_device < 0 || delta < best_delta || (delta == best_delta && f < best_free)) {
        best_device = ns.first_device + g;
        best_delta = delta;
        best_free = f;
      }
    }
  }
  if (fractional) {
    if (best_device < 0) return false;
    out.push_back(best_device);
    claim_share(best_device, milli);
    return true;
  }
  if (best_node >= 0) {
    take_from_node(best_node, n, out);
    return true;
  }
  return packed(n, nullptr, out, only_type);
}

Placement parse_placement(const std::string& name) {
  if (name == "first_fit") return Placement::kFirstFit;
  if (name == "random") return Placement::kRandom;
  if (name == "packed") return Placement::kPacked;
  if (name == "spread") return Placement::kSpread;
  if (name == "fastest_type") return Placement::kFastestType;
  if (name == "best_fit") return Placement::kBestFit;
  if (name == "fgd") return Placement::kFgd;
  if (name == "yarn") return Placement::kYarn;
  if (name == "topology_tree") return Placement::kTopologyTree;
  throw std::invalid_argument(name);
}

const char* to_string(Placement p) {
  switch (p) {
    case Placement::kFirstFit: return "first_fit";
    case Placement::kRandom: return "random";
    case Placement::kPacked: return "packed";
    case Placement::kSpread: return "spread";
    case Placement::kFastestType: return "fastest_type";
    case Placement::kBestFit: return "best_fit";
    case Placement::kFgd: return "fgd";
    case Placement::kYarn: return "yarn";
    case Placement::kTopologyTree: return "topology_tree";
  }
  return "first_fit";
}

// The queue-tree engine's topology placements (placement.hpp, TopologyPick).
bool pick_devices(const ClusterSpec& spec, const std::vector<char>& free, const std::vector<char>& node_ok, int n, TopologyPick rule,
                  const TopologyLayout& layout, std::vector<DeviceId>& out) {
  const int nodes = spec.num_nodes();
  std::vector<int> nf(static_cast<std::size_t>(nodes), 0);
  int total = 0;
  for (int k = 0; k < nodes; ++k) {
    if (!node_ok[static_cast<std::size_t>(k)]) continue;
    const NodeSpec& node = spec.node(k);
    for (int d = 0; d < node.num_devices; ++d) nf[static_cast<std::size_t>(k)] += free[static_cast<std::size_t>(node.first_device + d)] ? 1 : 0;
    total += nf[static_cast<std::size_t>(k)];
  }
  if (n <= 0 || total < n) return false;
  int left = n;
  const auto take = [&](int k) {
    const NodeSpec& node = spec.node(k);
    for (int d = 0; d < node.num_devices && left > 0; ++d) {
      const DeviceId id = node.first_device + d;
      if (free[static_cast<std::size_t>(id)]) {
        out.push_back(id);
        --left;
      }
    }
  };
  const auto free_of = [&](int k) { return nf[static_cast<std::size_t>(k)]; };
  // Nodes of a set by (free ascending, id): the fullest first.
  const auto binpack_take = [&](std::vector<int> set) {
    std::stable_sort(set.begin(), set.end(), [&](int a, int b) { return free_of(a) < free_of(b); });
    for (int k : set) {
      if (left == 0) break;
      if (free_of(k) > 0) take(k);
    }
  };
  if (rule == TopologyPick::kFirstFit) {
    for (int k = 0; k < nodes && left > 0; ++k) take(k);
    return true;
  }
  int best = -1;  // the fullest node that holds the whole job
  for (int k = 0; k < nodes; ++k) {
    if (free_of(k) >= n && (best < 0 || free_of(k) < free_of(best))) best = k;
  }
  if (best >= 0) {
    take(best);
    return true;
  }
  std::vector<int> all(static_cast<std::size_t>(nodes));
  for (int k = 0; k < nodes; ++k) all[static_cast<std::size_t>(k)] = k;
  if (rule == TopologyPick::kBinpack) {
    binpack_take(all);
    return true;
  }
  const auto domain_of = [&](int k) { return layout.domain_of_node.empty() ? k : layout.domain_of_node[static_cast<std::size_t>(k)]; };
  const auto rack_of = [&](int k) { return layout.rack_of_node.empty() ? 0 : layout.rack_of_node[static_cast<std::size_t>(k)]; };
  int domains = 0, racks = 0;
  for (int k = 0; k < nodes; ++k) {
    domains = std::max(domains, domain_of(k) + 1);
    racks = std::max(racks, rack_of(k) + 1);
  }
  std::vector<int> domain_free(static_cast<std::size_t>(domains), 0), rack_free(static_cast<std::size_t>(racks), 0);
  std::vector<std::vector<int>> domain_nodes(static_cast<std::size_t>(domains));
  for (int k = 0; k < nodes; ++k) {
    domain_free[static_cast<std::size_t>(domain_of(k))] += free_of(k);
    rack_free[static_cast<std::size_t>(rack_of(k))] += free_of(k);
    domain_nodes[static_cast<std::size_t>(domain_of(k))].push_back(k);
  }
  int best_domain = -1;
  for (int g = 0; g < domains; ++g) {
    const int f = domain_free[static_cast<std::size_t>(g)];
    if (f >= n && (best_domain < 0 || f < domain_free[static_cast<std::size_t>(best_domain)])) best_domain = g;
  }
  if (best_domain >= 0) {
    binpack_take(domain_nodes[static_cast<std::size_t>(best_domain)]);
    return true;
  }
  // The fewest racks: the ones with the most free devices first.
  std::vector<int> rack_order(static_cast<std::size_t>(racks));
  for (int r = 0; r < racks; ++r) rack_order[static_cast<std::size_t>(r)] = r;
  std::stable_sort(rack_order.begin(), rack_order.end(), [&](int a, int b) { return rack_free[static_cast<std::size_t>(a)] > rack_free[static_cast<std::size_t>(b)]; });
  std::vector<char> rack_chosen(static_cast<std::size_t>(racks), 0);
  int covered = 0;
  for (int r : rack_order) {
    if (covered >= n) break;
    rack_chosen[static_cast<std::size_t>(r)] = 1;
    covered += rack_free[static_cast<std::size_t>(r)];
  }
  // Within the chosen racks, the emptiest domains first (fewest domains), binpack inside.
  std::vector<int> domain_order;
  for (int g = 0; g < domains; ++g) {
    if (!domain_nodes[static_cast<std::size_t>(g)].empty() && rack_chosen[static_cast<std::size_t>(rack_of(domain_nodes[static_cast<std::size_t>(g)].front()))]) domain_order.push_back(g);
  }
  std::stable_sort(domain_order.begin(), domain_order.end(), [&](int a, int b) { return domain_free[static_cast<std::size_t>(a)] > domain_free[static_cast<std::size_t>(b)]; });
  for (int g : domain_order) {
    if (left == 0) break;
    binpack_take(domain_nodes[static_cast<std::size_t>(g)]);
  }
  return true;
}

}  // namespace schedsim
