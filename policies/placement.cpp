#include "policies/placement.hpp"

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
  state_ = &state;
  free_ = state.free_devices();
}

void FreeDevices::claim(DeviceId d) {
  claimed_bits_[static_cast<std::size_t>(d) >> 6] |= 1ULL << (d & 63);
  claimed_list_.push_back(d);
  --free_;
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
