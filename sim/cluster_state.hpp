// Mutable occupancy of a cluster: which device is free, which job holds which device.
// Allocation and release check ownership on every call (always on): a device can never
// be double-booked or released by a job that does not hold it.
//
// Fractional sharing (additive to the whole-device API): a device may instead be shared by
// jobs that each hold a share of it in thousandths (milli; 1000 = the whole device). A
// shared device is not free for whole-device use until its last share is released; its
// owner() is kShared. The whole-device fast path (bitmap, counts) is unchanged.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cluster_spec.hpp"
#include "sim/summary_bitset.hpp"
#include "base/span.hpp"

namespace schedsim {

class SnapshotArchive;

class ClusterState {
 public:
  static constexpr std::int64_t kNoOwner = -1;
  // Owner of a failed device (failures model): neither free nor held by a job, so no
  // policy can be handed it until it is repaired.
  static constexpr std::int64_t kFailedOwner = -2;
  static constexpr std::int64_t kShared = -3;  // owner() of a device held in shares
  static constexpr int kWholeMilli = 1000;

  struct Share {
    std::int64_t owner;
    int milli;
  };

  explicit ClusterState(const ClusterSpec& spec);

  const ClusterSpec& spec() const { return *spec_; }
  int free_devices() const { return free_total_; }
  int free_on_node(int node) const { return node_free_[static_cast<std::size_t>(node)]; }
  bool is_free(DeviceId d) const {
    return free_.test(static_cast<std::size_t>(d));
  }
  std::int64_t owner(DeviceId d) const { return owner_[static_cast<std::size_t>(d)]; }
  // The lowest free device with id >= from, or -1 when there is none. Scans 64 devices
  // per word, so first-fit placement costs O(devices/64) at worst.
  DeviceId next_free(DeviceId from) const;

  // Throws InvariantError when a device is out of range, already allocated, or (release)
  // not held by `owner`.
  void allocate(Span<DeviceId> devices, std::int64_t owner);
  void release(Span<DeviceId> devices, std::int64_t owner);

  // Failures: a free device becomes failed, a failed one free again. Throws
  // InvariantError for a device that is held (mark_failed) or not failed (mark_repaired).
  bool is_failed(DeviceId d) const { return owner_[static_cast<std::size_t>(d)] == kFailedOwner; }
  int failed_devices() const { return failed_total_; }
  void mark_failed(DeviceId d);
  void mark_repaired(DeviceId d);
  // Fractional shares. free_milli(d): 1000 when free, 0 when held whole, else 1000 minus
  // the shares held. allocate_share throws InvariantError when `milli` is outside
  // [1, 1000], exceeds the device's free milli, or `owner` already holds a share of it.
  int free_milli(DeviceId d) const {
    if (is_free(d)) return kWholeMilli;
    return owner(d) == kShared ? kWholeMilli - used_milli_[static_cast<std::size_t>(d)] : 0;
  }
  bool is_shared(DeviceId d) const { return owner(d) == kShared; }
  void allocate_share(DeviceId d, int milli, std::int64_t owner);
  void release_share(DeviceId d, std::int64_t owner);
  // The shares of device d (empty unless it is shared), in allocation order.
  const std::vector<Share>& shares(DeviceId d) const;
  // Milli held in shares on all shared devices (shared devices count as not free).
  std::int64_t shared_milli_total() const { return shared_milli_total_; }
  int shared_devices() const { return shared_devices_; }

  // Saves or restores the state (sim/snapshot_archive.hpp).
  void snapshot(SnapshotArchive& ar);

 private:
  const ClusterSpec* spec_;
  // The whole free devices; next_free() skips 4,096 devices per summary word, so finding
  // a free device is not linear in the cluster.
  SummaryBitset free_;
  void set_free_bit(std::size_t d) { free_.set(d); }
  void clear_free_bit(std::size_t d) { free_.reset(d); }
  std::vector<std::int64_t> owner_;
  std::vector<int> node_free_;
  int free_total_ = 0;
  int failed_total_ = 0;
  // Fractional state, sized on the first share (whole-device runs never touch it).
  std::vector<int> used_milli_;
  std::vector<std::vector<Share>> shares_;
  std::int64_t shared_milli_total_ = 0;
  int shared_devices_ = 0;
};

}  // namespace schedsim
