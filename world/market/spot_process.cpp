#include "world/market/spot_process.hpp"

#include <algorithm>

#include "base/error.hpp"
#include "sim/simulator.hpp"
#include "sim/snapshot_archive.hpp"

namespace schedsim {

SpotProcess::SpotProcess(const Market& market, std::uint64_t seed) : market_(market), seed_(seed) {
  for (const Offer& o : market_.offers()) has_spot_ = has_spot_ || o.kind == PriceKind::kSpot;
}

int SpotProcess::available(int offer) const {
  for (const SpotOffer& s : spot_) {
    if (s.offer == offer) return s.available;
  }
  return market_.offer(offer).devices;
}

void SpotProcess::start(WorldContext& ctx) {
  for (int o = 0; o < static_cast<int>(market_.offers().size()); ++o) {
    if (market_.offer(o).kind != PriceKind::kSpot) continue;
    spot_.push_back(SpotOffer{o, SpotCursor(market_, o, seed_), market_.offer(o).devices, SpotChange{}});
    SpotOffer& s = spot_.back();
    set_available(ctx, s, s.cursor.initial());  // before any job runs: nothing to preempt
    s.next = s.cursor.next();
    if (s.next.time != Tick::max()) ctx.schedule(s.next.time, event_kind::kSpotChange, static_cast<std::int64_t>(spot_.size() - 1));
  }
}

void SpotProcess::handle(WorldContext& ctx, const Event& e) {
  SpotOffer& s = spot_[static_cast<std::size_t>(e.arg)];
  // Once no job is coming, none is running and every spot device is back, further changes
  // cannot help a waiting job and would only take capacity away: the spot processes stop
  // (as the failure processes do), so the run ends.
  const bool all_back = std::all_of(spot_.begin(), spot_.end(), [&](const SpotOffer& o) { return o.available == market_.offer(o.offer).devices; });
  if (ctx.world_idle() && all_back) return;
  if (s.next.available < s.available) {
    ++ctx.stats().spot_reclamations;
    ctx.stats().spot_devices_reclaimed += static_cast<std::uint64_t>(s.available - s.next.available);
  }
  set_available(ctx, s, s.next.available);
  s.next = s.cursor.next();
  if (s.next.time != Tick::max()) ctx.schedule(s.next.time, event_kind::kSpotChange, e.arg);
  ctx.mark_decision_point();  // capacity changed and jobs may be back in the queue
}

void SpotProcess::set_available(WorldContext& ctx, SpotOffer& s, int available) {
  const std::vector<DeviceId>& devices = market_.offer_devices(s.offer);
  if (available < 0 || available > static_cast<int>(devices.size())) throw InvariantError("spot availability out of range");
  hit_jobs_.clear();
  const auto hit = [&](JobSlot slot) {
    if (std::find(hit_jobs_.begin(), hit_jobs_.end(), slot) == hit_jobs_.end()) hit_jobs_.push_back(slot);
  };
  for (int pos = available; pos < s.available; ++pos) {  // taken back
    const DeviceId d = devices[static_cast<std::size_t>(pos)];
    // Bound devices and a service's devices are taken by the kernel.
    const DeviceTaken taken = ctx.add_reason(d, device_reason::kTakenBack);
    if (taken.holder == DeviceTaken::kPlacedJob) {
      hit(taken.job);
    } else if (taken.holder == DeviceTaken::kSharedJobs) {
      for (const ClusterState::Share& sh : ctx.cluster().shares(d)) hit(static_cast<JobSlot>(sh.owner));
    }
  }
  for (int pos = s.available; pos < available; ++pos) {  // returned (a device under repair stays failed)
    ctx.clear_reason(devices[static_cast<std::size_t>(pos)], device_reason::kTakenBack);
  }
  s.available = available;
  // Jobs in slot order (hit_jobs_ is in device order), so the requeue order is deterministic either way.
  std::sort(hit_jobs_.begin(), hit_jobs_.end());
  const std::vector<JobSlot> jobs = hit_jobs_;
  for (JobSlot slot : jobs) reclaim_job(ctx, slot);
}

void SpotProcess::reclaim_job(WorldContext& ctx, JobSlot slot) {
  ctx.advance_job(slot);
  ++ctx.stats().jobs_hit_by_reclaim;
  ctx.cut_stall(slot);  // a checkpoint, save or restore being written is lost
  ctx.interrupt_progress(slot);  // other processes' timers (periodic checkpoints, loss spikes)
  ctx.rollback(slot, 1);
  ctx.evict(slot, EvictRestart::kRestore);
}

void SpotProcess::snapshot(SnapshotArchive& ar) {
  if (ar.loading() && has_spot_ && spot_.empty()) {  // the offers' cursors; their state is read below
    for (int o = 0; o < static_cast<int>(market_.offers().size()); ++o) {
      if (market_.offer(o).kind == PriceKind::kSpot) spot_.push_back(SpotOffer{o, SpotCursor(market_, o, seed_), 0, SpotChange{}});
    }
  }
  std::uint64_t spot_offers = spot_.size();
  ar(spot_offers);
  ar.check(spot_offers == spot_.size(), "the market's spot offers differ from this configuration's");
  for (SpotOffer& o : spot_) {
    const int offer = o.offer;
    ar(o.offer, o.cursor, o.available, o.next.time, o.next.available);
    if (ar.loading()) {
      ar.check(o.offer == offer, "its spot offers are not this market's");
      const int devices = market_.offer(offer).devices;
      ar.check(o.available >= 0 && o.available <= devices && o.next.available >= 0 && o.next.available <= devices,
               "spot offer " + std::to_string(offer) + " has " + std::to_string(o.available) + " devices available of " + std::to_string(devices));
    }
  }
}

void SpotProcess::check_event(const WorldContext&, SnapshotArchive& ar, const Event& e, const std::string& what) const {
  ar.check(e.arg >= 0 && static_cast<std::size_t>(e.arg) < spot_.size(), what + " is about spot offer " + std::to_string(e.arg) + " of " + std::to_string(spot_.size()));
}

}  // namespace schedsim
