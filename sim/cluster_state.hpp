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

// Why a device is out of service: one reason-set (bit flags) per device. World processes
// add and clear reasons through the kernel (sim/world_process.hpp, WorldContext); a device
// with any reason is out of service until its last reason clears.
using DeviceReasons = std::uint8_t;
namespace device_reason {
inline constexpr DeviceReasons kNone = 0;
inline constexpr DeviceReasons kUnderRepair = 1U << 0;  // failures: its unit failed
inline constexpr DeviceReasons kTakenBack = 1U << 1;    // market: its spot provider took it back
// Bits 2..7 are free for further processes.
}  // namespace device_reason

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
  // Availability reasons (DeviceReasons). The table is sized by enable_reasons() (at run
  // start, when a world process uses reasons); until then every device has none. A device
  // with a reason is failed (owner kFailedOwner) once no job or service holds it: the
  // kernel marks it failed when it is free or released, and repaired when its last reason
  // clears (the reasons say why; the owner says whether anyone can be given it).
  bool has_reasons() const { return !reasons_.empty(); }
  void enable_reasons() { reasons_.assign(static_cast<std::size_t>(spec_->num_devices()), device_reason::kNone); }
  DeviceReasons reasons(DeviceId d) const { return reasons_.empty() ? device_reason::kNone : reasons_[static_cast<std::size_t>(d)]; }
  bool out_of_service(DeviceId d) const { return reasons(d) != device_reason::kNone; }
  // Adds / removes reason bits (requires enable_reasons()); the owner is not changed.
  void add_reason(DeviceId d, DeviceReasons r) { reasons_.at(static_cast<std::size_t>(d)) |= r; }
  void clear_reason(DeviceId d, DeviceReasons r) { reasons_.at(static_cast<std::size_t>(d)) &= static_cast<DeviceReasons>(~r); }
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
  // Availability reasons by device; empty until enable_reasons(). Saved by the simulator
  // (one table per reason, where the snapshot layout had them), not by snapshot().
  std::vector<DeviceReasons> reasons_;
  // Fractional state, sized on the first share (whole-device runs never touch it).
  std::vector<int> used_milli_;
  std::vector<std::vector<Share>> shares_;
  std::int64_t shared_milli_total_ = 0;
  int shared_devices_ = 0;
};

}  // namespace schedsim
