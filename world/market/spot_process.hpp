// The compute market's spot capacity as a world process (sim/world_process.hpp,
// docs/market.md): the provider takes spot devices back and returns them. A spot offer's
// devices are taken back highest position first (positions b..a-1 of the offer's
// ascending device list when availability drops from a to b) and come back in the same
// order. A device taken back is out of service (device_reason::kTakenBack) until it
// returns; a job on it is preempted at once without a save: it rolls back to its last
// committed checkpoint, goes back to the queue and pays one checkpoint restore when it
// starts again.
//
// Event kind 10 (event_kind::kSpotChange, arg = index of the spot offer) keeps its
// number from before this was a process, so event order and snapshots are unchanged.
#pragma once

#include <cstdint>
#include <vector>

#include "world/market/market.hpp"
#include "sim/world_process.hpp"

namespace schedsim {

class SpotProcess final : public WorldProcess {
 public:
  // `seed` seeds the spot on/off model. The market must outlive the process.
  SpotProcess(const Market& market, std::uint64_t seed);

  const char* name() const override { return "spot market"; }
  // Without spot offers only the snapshot hook (an empty offer list, as before).
  std::uint32_t hooks() const override { return has_spot_ ? (kStart | kEvents | kSnapshot | kCheckpointMarks) : kSnapshot; }
  void start(WorldContext& ctx) override;
  std::vector<std::uint32_t> event_kinds() const override { return {event_kind::kSpotChange}; }
  void handle(WorldContext& ctx, const Event& e) override;
  int checkpoint_marks_kept() const override { return 1; }  // a reclamation rolls back to the last mark
  SnapshotSlot snapshot_slot() const override { return SnapshotSlot::kBeforeDeviceTable; }
  void snapshot(SnapshotArchive& ar) override;
  void check_event(const WorldContext& ctx, SnapshotArchive& ar, const Event& e, const std::string& what) const override;
  DeviceReasons device_reasons_used() const override { return has_spot_ ? device_reason::kTakenBack : device_reason::kNone; }

  // Devices of spot offer `offer` available now (its full count before the run starts).
  int available(int offer) const;

 private:
  struct SpotOffer {  // one spot offer: where its availability stands and its next change
    int offer;
    SpotCursor cursor;
    int available;
    SpotChange next;
  };
  void set_available(WorldContext& ctx, SpotOffer& s, int available);
  void reclaim_job(WorldContext& ctx, JobSlot slot);

  const Market& market_;
  std::uint64_t seed_;
  bool has_spot_ = false;
  std::vector<SpotOffer> spot_;    // filled at run start (or by a snapshot's load)
  std::vector<JobSlot> hit_jobs_;  // reused
};

}  // namespace schedsim
