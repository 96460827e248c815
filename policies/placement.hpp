// Device placement helpers for policies. A decision is a batch applied after the policy
// returns, so while it builds the batch a policy must not hand out a device twice:
// FreeDevices is the cluster's free set minus what this decision already claimed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "policies/fragmentation.hpp"
#include "sim/cluster_state.hpp"
#include "sim/rng.hpp"

namespace schedsim {

class FreeDevices {
 public:
  // Starts a new decision: forgets earlier claims. O(claims of the previous decision).
  void reset(const ClusterState& state);
  int count() const { return free_; }
  // First fit: the `n` lowest-numbered free devices, appended to `out` and claimed.
  // Returns false (claiming nothing) when fewer than `n` are free.
  bool first_fit(int n, std::vector<DeviceId>& out);
  // First fit from the free devices, then the rest from `released` (devices this decision
  // freed, e.g. by a preemption with a free checkpoint), taken from its back. Returns
  // false, taking nothing, when both together hold fewer than `n`.
  bool first_fit_then(int n, std::vector<DeviceId>& released, std::vector<DeviceId>& out);
  // `n` free devices drawn uniformly at random.
  bool random(int n, Rng& rng, std::vector<DeviceId>& out);
  // Consolidated: as few nodes as possible, and inside one locality group (rack) when
  // `node_group` (node -> group, may be null) allows. A job that fits a node goes to the
  // fullest node that still fits it (best fit); larger jobs take the emptiest nodes of
  // the best-fitting group first.
  // `only_type` >= 0 restricts the placement to devices of that type (index into
  // ClusterSpec::device_types()).
  bool packed(int n, const std::vector<int>* node_group, std::vector<DeviceId>& out, int only_type = -1);
  // One device per node in turn, emptiest nodes first: spreads a job out.
  bool spread(int n, std::vector<DeviceId>& out);

  // Fractional requests: one device with at least `milli` free (counting this decision's
  // claims), appended to `out` and its share claimed. A device that gets a share is no
  // longer free for whole-device placements. `only_type` as for packed(). O(devices).
  enum class ShareRule {
    kFirst,   // lowest-numbered device that fits
    kBest,    // least free capacity that still fits (best fit), ties by lowest id
    kWorst,   // most free capacity (spreads shares out)
    kRandom,  // uniformly among the devices that fit
  };
  bool share(int milli, ShareRule rule, std::vector<DeviceId>& out, int only_type = -1, Rng* rng = nullptr);
  // Fragmentation gradient descent (FGD): the placement that raises the expected
  // fragmentation under `mix` the least (fragmentation.hpp). A fractional job takes one
  // device; a whole-GPU job of n devices takes n free devices of one node (falling back
  // to packed() when no node has room). Ties go to the fuller device, then the lower id.
  bool fgd(int n, int milli, const TaskMix& mix, std::vector<DeviceId>& out, int only_type = -1);
  // Free milli of device d after this decision's claims.
  int free_milli(DeviceId d) const;

 private:
  bool claimed(DeviceId d) const { return (claimed_bits_[static_cast<std::size_t>(d) >> 6] >> (d & 63)) & 1U; }
  void claim(DeviceId d);
  // Free, unclaimed devices per node (built on first use in a decision).
  const std::vector<int>& node_free();
  void take_from_node(int node, int n, std::vector<DeviceId>& out);
  void claim_share(DeviceId d, int milli);

  const ClusterState* state_ = nullptr;
  std::vector<std::uint64_t> claimed_bits_;
  std::vector<DeviceId> claimed_list_;
  int free_ = 0;
  std::vector<int> node_free_;
  bool node_free_valid_ = false;
  std::vector<DeviceId> pool_;
  std::vector<int> claimed_milli_;         // shares claimed in this decision, by device
  std::vector<DeviceId> share_claims_;     // devices with claimed_milli_ > 0
  std::vector<int> node_milli_;            // scratch for fgd
};

// The placement strategies a queue policy can use, by config name.
// Fractional jobs (gpu_milli < 1000): first_fit, random and spread use the ShareRule of
// the same idea; packed, best_fit and fastest_type use best fit; fgd uses FGD.
// best_fit equals packed for whole-GPU jobs.
enum class Placement { kFirstFit, kRandom, kPacked, kSpread, kFastestType, kBestFit, kFgd };
Placement parse_placement(const std::string& name);  // throws std::invalid_argument
const char* to_string(Placement p);
inline constexpr const char* kPlacementNames = "first_fit, random, packed, spread, fastest_type, best_fit, fgd";

}  // namespace schedsim
