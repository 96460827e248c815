#include "sim/cluster_state.hpp"

#include <string>

#include "base/error.hpp"

namespace schedsim {

ClusterState::ClusterState(const ClusterSpec& spec)
    : spec_(&spec),
      free_(static_cast<std::size_t>(spec.num_devices())),
      owner_(static_cast<std::size_t>(spec.num_devices()), kNoOwner),
      node_free_(static_cast<std::size_t>(spec.num_nodes())),
      free_total_(spec.num_devices()) {
  for (DeviceId d = 0; d < spec.num_devices(); ++d) set_free_bit(static_cast<std::size_t>(d));
  for (int n = 0; n < spec.num_nodes(); ++n) node_free_[static_cast<std::size_t>(n)] = spec.node(n).num_devices;
}

DeviceId ClusterState::next_free(DeviceId from) const { return static_cast<DeviceId>(free_.next(from)); }

void ClusterState::allocate(Span<DeviceId> devices, std::int64_t owner) {
  // Check everything before changing anything: a refused allocation leaves no trace.
  for (DeviceId d : devices) {
    if (d < 0 || d >= spec_->num_devices()) throw InvariantError("allocation of device " + std::to_string(d) + " which does not exist");
    if (!is_free(d)) {
      throw InvariantError("device " + std::to_string(d) + " double-booked: held by job slot " +
                           std::to_string(owner_[static_cast<std::size_t>(d)]) + ", asked for by job slot " + std::to_string(owner));
    }
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const DeviceId d = devices[i];
    if (!is_free(d)) {  // listed twice: undo what this call did
      release(Span<DeviceId>(devices.data(), i), owner);
      throw InvariantError("device " + std::to_string(d) + " listed twice in one allocation for job slot " + std::to_string(owner));
    }
    clear_free_bit(static_cast<std::size_t>(d));
    owner_[static_cast<std::size_t>(d)] = owner;
    --node_free_[static_cast<std::size_t>(spec_->node_of(d))];
    --free_total_;
  }
}

void ClusterState::release(Span<DeviceId> devices, std::int64_t owner) {
  for (DeviceId d : devices) {
    if (d < 0 || d >= spec_->num_devices() || owner_[static_cast<std::size_t>(d)] != owner) {
      throw InvariantError("release of device " + std::to_string(d) + " by job slot " + std::to_string(owner) +
                           ", which does not hold it");
    }
    set_free_bit(static_cast<std::size_t>(d));
    owner_[static_cast<std::size_t>(d)] = kNoOwner;
    ++node_free_[static_cast<std::size_t>(spec_->node_of(d))];
    ++free_total_;
  }
}

void ClusterState::mark_failed(DeviceId d) {
  if (d < 0 || d >= spec_->num_devices() || !is_free(d)) throw InvariantError("failure of device " + std::to_string(d) + ", which is not free");
  const std::int64_t failed = kFailedOwner;
  allocate(Span<DeviceId>(&d, 1), failed);
  ++failed_total_;
}

void ClusterState::mark_repaired(DeviceId d) {
  if (d < 0 || d >= spec_->num_devices() || !is_failed(d)) throw InvariantError("repair of device " + std::to_string(d) + ", which has not failed");
  release(Span<DeviceId>(&d, 1), kFailedOwner);
  --failed_total_;
}

void ClusterState::allocate_share(DeviceId d, int milli, std::int64_t owner) {
  if (d < 0 || d >= spec_->num_devices()) throw InvariantError("share of device " + std::to_string(d) + " which does not exist");
  if (milli < 1 || milli > kWholeMilli) throw InvariantError("share of " + std::to_string(milli) + " milli asked; must be in [1, 1000]");
  if (owner < 0) throw InvariantError("share asked for by invalid job slot " + std::to_string(owner));
  const auto i = static_cast<std::size_t>(d);
  const int free = free_milli(d);
  if (milli > free) {
    throw InvariantError("device " + std::to_string(d) + " over-allocated: job slot " + std::to_string(owner) + " asks for " +
                         std::to_string(milli) + " milli, " + std::to_string(free) + " free");
  }
  if (used_milli_.empty()) {
    used_milli_.assign(static_cast<std::size_t>(spec_->num_devices()), 0);
    shares_.resize(static_cast<std::size_t>(spec_->num_devices()));
  }
  for (const Share& s : shares_[i]) {
    if (s.owner == owner) throw InvariantError("job slot " + std::to_string(owner) + " already holds a share of device " + std::to_string(d));
  }
  if (is_free(d)) {  // the first share takes the device out of the whole-device free set
    clear_free_bit(i);
    owner_[i] = kShared;
    --node_free_[static_cast<std::size_t>(spec_->node_of(d))];
    --free_total_;
    ++shared_devices_;
  }
  used_milli_[i] += milli;
  shares_[i].push_back(Share{owner, milli});
  shared_milli_total_ += milli;
}

void ClusterState::release_share(DeviceId d, std::int64_t owner) {
  if (d < 0 || d >= spec_->num_devices() || !is_shared(d)) {
    throw InvariantError("release of a share of device " + std::to_string(d) + " by job slot " + std::to_string(owner) + ", which is not shared");
  }
  const auto i = static_cast<std::size_t>(d);
  std::vector<Share>& list = shares_[i];
  auto it = list.begin();
  while (it != list.end() && it->owner != owner) ++it;
  if (it == list.end()) {
    throw InvariantError("release of a share of device " + std::to_string(d) + " by job slot " + std::to_string(owner) + ", which holds none");
  }
  used_milli_[i] -= it->milli;
  shared_milli_total_ -= it->milli;
  list.erase(it);
  if (list.empty()) {  // the last share: the device is whole and free again
    set_free_bit(i);
    owner_[i] = kNoOwner;
    ++node_free_[static_cast<std::size_t>(spec_->node_of(d))];
    ++free_total_;
    --shared_devices_;
  }
}

const std::vector<ClusterState::Share>& ClusterState::shares(DeviceId d) const {
  static const std::vector<Share> kNone;  // immutable empty list, not mutable global state
  if (shares_.empty()) return kNone;
  return shares_[static_cast<std::size_t>(d)];
}

}  // namespace schedsim
