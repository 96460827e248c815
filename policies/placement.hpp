// Device placement helpers for policies. A decision is a batch applied after the policy
// returns, so while it builds the batch a policy must not hand out a device twice:
// FreeDevices is the cluster's free set minus what this decision already claimed.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cluster_state.hpp"

namespace schedsim {

class FreeDevices {
 public:
  // Starts a new decision: forgets earlier claims. O(claims of the previous decision).
  void reset(const ClusterState& state);
  int count() const { return free_; }
  // First fit: the `n` lowest-numbered free devices, appended to `out` and claimed.
  // Returns false (claiming nothing) when fewer than `n` are free.
  bool first_fit(int n, std::vector<DeviceId>& out);

 private:
  bool claimed(DeviceId d) const { return (claimed_bits_[static_cast<std::size_t>(d) >> 6] >> (d & 63)) & 1U; }
  void claim(DeviceId d);

  const ClusterState* state_ = nullptr;
  std::vector<std::uint64_t> claimed_bits_;
  std::vector<DeviceId> claimed_list_;
  int free_ = 0;
};

}  // namespace schedsim
