#include "policies/placement.hpp"

#include <algorithm>

#include "sim/error.hpp"

namespace schedsim {

void FreeDevices::reset(const ClusterState& state) {
  const std::size_t words = (static_cast<std::size_t>(state.spec().num_devices()) + 63) / 64;
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
  state_ = &state;
  free_ = state.free_devices();
  node_free_valid_ = false;
}

void FreeDevices::claim(DeviceId d) {
  claimed_bits_[static_cast<std::size_t>(d) >> 6] |= 1ULL << (d & 63);
  claimed_list_.push_back(d);
  --free_;
  if (node_free_valid_) --node_free_[static_cast<std::size_t>(state_->spec().node_of(d))];
}

bool FreeDevices::first_fit(int n, std::vector<DeviceId>& out) {
  if (n > free_) return false;
  for (DeviceId d = state_->next_free(0); n > 0; d = state_->next_free(d + 1)) {
    if (d < 0) throw InvariantError("free-device count out of step with the free-device map");
    if (claimed(d)) continue;
    out.push_back(d);
    claim(d);
    --n;
  }
  return true;
}

}  // namespace schedsim

namespace schedsim {

const std::vector<int>& FreeDevices::node_free() {
  if (!node_free_valid_) {
    const ClusterSpec& spec = state_->spec();
    node_free_.resize(static_cast<std::size_t>(spec.num_nodes()));
    for (int n = 0; n < spec.num_nodes(); ++n) node_free_[static_cast<std::size_t>(n)] = state_->free_on_node(n);
    for (DeviceId d : claimed_list_) --node_free_[static_cast<std::size_t>(spec.node_of(d))];
    node_free_valid_ = true;
  }
  return node_free_;
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

bool FreeDevices::random(int n, Rng& rng, std::vector<DeviceId>& out) {
  if (n > free_) return false;
  pool_.clear();
  for (DeviceId d = state_->next_free(0); d >= 0; d = state_->next_free(d + 1)) {
    if (!claimed(d)) pool_.push_back(d);
  }
  for (int i = 0; i < n; ++i) {  // partial Fisher-Yates
    const std::size_t k = static_cast<std::size_t>(i) + rng.below(pool_.size() - static_cast<std::size_t>(i));
    std::swap(pool_[static_cast<std::size_t>(i)], pool_[k]);
    out.push_back(pool_[static_cast<std::size_t>(i)]);
    claim(pool_[static_cast<std::size_t>(i)]);
  }
  return true;
}

bool FreeDevices::packed(int n, const std::vector<int>* node_group, std::vector<DeviceId>& out, int only_type) {
  const ClusterSpec& spec = state_->spec();
  const std::vector<int>& all_free = node_free();
  const int nodes = static_cast<int>(all_free.size());
  // Free devices per node that this call may use (nodes of other types count as full).
  std::vector<int> nf(all_free);
  if (only_type >= 0) {
    for (int k = 0; k < nodes; ++k) {
      if (spec.node(k).type_index != only_type) nf[static_cast<std::size_t>(k)] = 0;
    }
  }
  int usable = 0;
  for (int f : nf) usable += f;
  if (n > usable) return false;
  // Best fit inside one node.
  int best = -1;
  for (int k = 0; k < nodes; ++k) {
    const int f = nf[static_cast<std::size_t>(k)];
    if (f >= n && (best < 0 || f < nf[static_cast<std::size_t>(best)])) best = k;
  }
  if (best >= 0) {
    take_from_node(best, n, out);
    return true;
  }
  // Several nodes: choose the group with the least free capacity that still holds the
  // job (all nodes form one group without locality information), then its emptiest nodes.
  std::vector<int> group_free;
  auto group_of = [&](int k) { return node_group ? (*node_group)[static_cast<std::size_t>(k)] : 0; };
  for (int k = 0; k < nodes; ++k) {
    const auto g = static_cast<std::size_t>(group_of(k));
    if (g >= group_free.size()) group_free.resize(g + 1, 0);
    group_free[g] += nf[static_cast<std::size_t>(k)];
  }
  int chosen = -1;
  for (std::size_t g = 0; g < group_free.size(); ++g) {
    if (group_free[g] >= n && (chosen < 0 || group_free[g] < group_free[static_cast<std::size_t>(chosen)])) chosen = static_cast<int>(g);
  }
  std::vector<int> order;
  for (int k = 0; k < nodes; ++k) {
    if (nf[static_cast<std::size_t>(k)] > 0 && (chosen < 0 || group_of(k) == chosen)) order.push_back(k);
  }
  // Emptiest nodes first (fewest nodes overall); without one group large enough, fill
  // whole groups in order of free capacity.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (chosen < 0 && group_of(a) != group_of(b)) {
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

bool FreeDevices::spread(int n, std::vector<DeviceId>& out) {
  if (n > free_) return false;
  const std::vector<int>& nf = node_free();
  while (n > 0) {
    std::vector<int> order;
    for (int k = 0; k < static_cast<int>(nf.size()); ++k) {
      if (nf[static_cast<std::size_t>(k)] > 0) order.push_back(k);
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
  }
  return "first_fit";
}

}  // namespace schedsim
