// The kernel's side of the compute market (docs/market.md): spot capacity that the
// provider takes back and returns. A spot offer's devices are taken back highest position
// first (positions b..a-1 of the offer's ascending device list when availability drops
// from a to b) and come back in the same order. A device taken back is failed in the
// cluster state, like a device under repair, until it returns; a job on it is preempted
// at once without a save: it rolls back to its last committed checkpoint, goes back to
// the queue and pays one checkpoint restore when it starts again (sim/simulator.cpp,
// apply_start).
#include <algorithm>

#include "base/error.hpp"
#include "world/market/market.hpp"
#include "sim/simulator.hpp"

namespace schedsim {

bool Simulator::unavailable(DeviceId d) const {
  const auto i = static_cast<std::size_t>(d);
  return (!device_down_.empty() && device_down_[i]) || (!device_reclaimed_.empty() && device_reclaimed_[i]);
}

std::string Simulator::why_failed(DeviceId d) const {
  const bool reclaimed = !device_reclaimed_.empty() && device_reclaimed_[static_cast<std::size_t>(d)];
  return "device " + std::to_string(d) + (reclaimed ? " has been taken back by its spot provider" : " has failed and is under repair");
}

void Simulator::start_market() {
  const Market& m = *options_.market;
  for (int o = 0; o < static_cast<int>(m.offers().size()); ++o) {
    if (m.offer(o).kind != PriceKind::kSpot) continue;
    if (device_reclaimed_.empty()) device_reclaimed_.assign(static_cast<std::size_t>(spec_.num_devices()), 0);
    spot_.push_back(SpotOffer{o, SpotCursor(m, o, options_.market_seed), m.offer(o).devices, SpotChange{}});
    SpotOffer& s = spot_.back();
    set_spot_available(s, s.cursor.initial());  // before any job runs: nothing to preempt
    s.next = s.cursor.next();
    if (s.next.time != Tick::max()) queue_.schedule(s.next.time, kSpotChange, static_cast<std::uint64_t>(spot_.size() - 1));
  }
}

void Simulator::handle_spot_change(const Event& e) {
  SpotOffer& s = spot_[static_cast<std::size_t>(e.arg)];
  // Once no job is coming, none is running and every spot device is back, further changes
  // cannot help a waiting job and would only take capacity away: the spot processes stop
  // (as the failure processes do), so the run ends.
  const bool all_back = std::all_of(spot_.begin(), spot_.end(), [&](const SpotOffer& o) { return o.available == options_.market->offer(o.offer).devices; });
  if (!has_next_job_ && num_running_ == 0 && !dirty_ && wakeup_ == Tick::max() && all_back) return;
  if (s.next.available < s.available) {
    ++stats_.spot_reclamations;
    stats_.spot_devices_reclaimed += static_cast<std::uint64_t>(s.available - s.next.available);
  }
  set_spot_available(s, s.next.available);
  s.next = s.cursor.next();
  if (s.next.time != Tick::max()) queue_.schedule(s.next.time, kSpotChange, e.arg);
  dirty_ = true;  // capacity changed and jobs may be back in the queue: a decision point
}

void Simulator::set_spot_available(SpotOffer& s, int available) {
  const std::vector<DeviceId>& devices = options_.market->offer_devices(s.offer);
  if (available < 0 || available > static_cast<int>(devices.size())) throw InvariantError("spot availability out of range");
  hit_jobs_.clear();
  for (int pos = available; pos < s.available; ++pos) {  // taken back
    const DeviceId d = devices[static_cast<std::size_t>(pos)];
    device_reclaimed_[static_cast<std::size_t>(d)] = 1;
    if (cluster_.is_failed(d)) continue;  // already out of service (under repair)
    if (cluster_.is_free(d)) {
      cluster_.mark_failed(d);
    } else if (cluster_.is_shared(d)) {
      for (const ClusterState::Share& sh : cluster_.shares(d)) {
        const auto owner = static_cast<JobSlot>(sh.owner);
        if (std::find(hit_jobs_.begin(), hit_jobs_.end(), owner) == hit_jobs_.end()) hit_jobs_.push_back(owner);
      }
    } else if (cluster_.owner(d) >= 0) {  // a job's device (it is reclaimed from the job)
      const auto owner = static_cast<JobSlot>(cluster_.owner(d));
      if (jobs_[static_cast<std::size_t>(owner)].status == JobStatus::kPending) {  // bound to a waiting job: it loses this one
        lose_bound_device(owner, d);
        continue;
      }
      if (std::find(hit_jobs_.begin(), hit_jobs_.end(), owner) == hit_jobs_.end()) hit_jobs_.push_back(owner);
    } else if (cluster_.owner(d) <= service_owner(0)) {  // a replica's device: the service loses it at once (the meter sees one fewer)
      take_from_service(d);
    }
  }
  for (int pos = s.available; pos < available; ++pos) {  // returned
    const DeviceId d = devices[static_cast<std::size_t>(pos)];
    device_reclaimed_[static_cast<std::size_t>(d)] = 0;
    if (cluster_.is_failed(d) && !unavailable(d)) cluster_.mark_repaired(d);  // a device under repair stays failed
  }
  s.available = available;
  // Jobs in slot order (hit_jobs_ is in device order), so the requeue order is deterministic either way.
  std::sort(hit_jobs_.begin(), hit_jobs_.end());
  const std::vector<JobSlot> hit = hit_jobs_;
  for (JobSlot slot : hit) reclaim_job(slot);
}

void Simulator::reclaim_job(JobSlot slot) {
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  advance(j);
  ++stats_.jobs_hit_by_reclaim;
  cut_stall(j);  // a checkpoint, save or restore being written is lost
  disarm_failure_timers(j);
  rollback(j, 1);
  if (j.completion_event != 0) queue_.cancel(j.completion_event);
  j.completion_event = 0;
  unplace(slot);
  // The restart reads the checkpoint back (one restore), unless there is nothing to read.
  j.has_checkpoint = j.spec.duration_s - j.remaining_work_s > 0.0;
  j.stall_end = Tick();
  requeue(slot);
}

}  // namespace schedsim
