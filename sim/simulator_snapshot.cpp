// Snapshot support of the kernel's types (sim/snapshot_archive.hpp): every field that
// outlives an instant, so that a resumed run continues bit for bit. Scratch buffers that
// are cleared before each use are left out.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>

#include "sim/cluster_state.hpp"
#include "sim/event_queue.hpp"
#include "sim/invariant_checker.hpp"
#include "sim/metrics.hpp"
#include "base/rng.hpp"
#include "sim/simulator.hpp"
#include "sim/snapshot_archive.hpp"
#include "sim/summary_bitset.hpp"

namespace schedsim {

void Rng::snapshot(SnapshotArchive& ar) { ar(s_[0], s_[1], s_[2], s_[3]); }

void snapshot_fields(SnapshotArchive& ar, Event& e) { ar(e.time, e.id, e.kind, e.arg); }

void EventQueue::snapshot(SnapshotArchive& ar) {
  ar.section("event queue");
  // The heap array as it is: its layout decides nothing (events are totally ordered by
  // time and id) but keeps the restored queue identical to the saved one.
  ar(front_.time, front_.id);
  ar.io_each(heap_, [&](Entry& e) { ar(e.time, e.id); });
  ar(events_, pos_, free_slots_, next_seq_, now_);
  if (!ar.loading()) return;
  // The queue's structure, so that pop() and cancel() can trust it: every slot free or
  // holding its own event, each pending event in the heap (or at the front) exactly once
  // at the position pos_ says, in heap order, never before the clock.
  const std::size_t slots = events_.size();
  ar.check(slots <= (std::size_t{1} << kEventSlotBits) && pos_.size() == slots, "the event queue's slot tables disagree in size");
  ar.check(now_ >= Tick(), "the event queue's clock is negative");
  ar.check(next_seq_ >= 1 && next_seq_ < (EventId{1} << (64 - kEventSlotBits)), "the event queue's next sequence number is out of range");
  std::size_t pending = 0;
  for (std::size_t slot = 0; slot < slots; ++slot) {
    const Event& e = events_[slot];
    if (e.id == 0) continue;
    ++pending;
    ar.check(slot_of(e.id) == slot, "event " + std::to_string(e.id) + " is held in slot " + std::to_string(slot) + ", not its own");
    ar.check((e.id >> kEventSlotBits) < next_seq_, "event " + std::to_string(e.id) + " has a sequence number not yet issued");
    ar.check(e.time >= now_, "event " + std::to_string(e.id) + " is at t=" + format_seconds(e.time) + " s, before the clock (" + format_seconds(now_) + " s)");
  }
  std::vector<char> seen(slots, 0);
  for (const std::uint32_t slot : free_slots_) {
    ar.check(slot < slots && events_[slot].id == 0 && !seen[slot], "the event queue's free slot " + std::to_string(slot) + " is out of range, taken or listed twice");
    seen[slot] = 1;
  }
  ar.check(free_slots_.size() + pending == slots, "the event queue's free slots do not account for its empty slots");
  const auto entry_ok = [&](const Entry& e, std::uint32_t at) {
    const std::uint32_t slot = slot_of(e.id);
    return e.id != 0 && slot < slots && events_[slot].id == e.id && events_[slot].time == e.time && pos_[slot] == at;
  };
  std::size_t queued = 0;
  if (front_.id != 0) {
    ar.check(entry_ok(front_, kAtFront), "the event queue's front entry names no pending event");
    ++queued;
  }
  for (std::size_t i = 0; i < heap_.size(); ++i) {
    ar.check(entry_ok(heap_[i], static_cast<std::uint32_t>(i)), "the event queue's entry " + std::to_string(i) + " names no pending event");
    ar.check(i == 0 || !(heap_[i].time < heap_[(i - 1) / 4].time || (heap_[i].time == heap_[(i - 1) / 4].time && heap_[i].id < heap_[(i - 1) / 4].id)),
             "the event queue is out of order at entry " + std::to_string(i));
  }
  queued += heap_.size();
  ar.check(queued == pending, "the event queue lists " + std::to_string(queued) + " events but holds " + std::to_string(pending));
  ar.check(front_.id == 0 || heap_.empty() || front_.time < heap_[0].time || (front_.time == heap_[0].time && front_.id < heap_[0].id),
           "the event queue's front entry is not its earliest");
}

void SummaryBitset::snapshot(SnapshotArchive& ar) { ar(words_, summary_, count_); }

void snapshot_fields(SnapshotArchive& ar, ClusterState::Share& s) { ar(s.owner, s.milli); }

void ClusterState::snapshot(SnapshotArchive& ar) {
  ar.section("cluster state");
  const std::size_t words = free_.words_size(), summary = free_.summary_size();
  ar(free_, owner_, node_free_, free_total_, failed_total_, used_milli_, shares_, shared_milli_total_, shared_devices_);
  if (!ar.loading()) return;
  // Sizes are the cluster's; counts and the free bitset follow from the owners. Who the
  // owners are is checked by the simulator, which knows the jobs.
  const int n = spec_->num_devices();
  const auto un = static_cast<std::size_t>(n);
  // The share tables are allocated at the first fractional placement: empty until then.
  const bool shares = !used_milli_.empty();
  ar.check(owner_.size() == un && used_milli_.size() == (shares ? un : 0) && shares_.size() == used_milli_.size() &&
               node_free_.size() == static_cast<std::size_t>(spec_->num_nodes()) &&
               free_.words_size() == words && free_.summary_size() == summary,
           "the cluster state is sized for another cluster (" + std::to_string(owner_.size()) + " devices; this scenario has " + std::to_string(n) + ")");
  std::vector<int> node_free(node_free_.size(), 0);
  int free_total = 0, failed_total = 0, shared_devices = 0;
  std::int64_t shared_milli = 0;
  for (std::size_t d = 0; d < un; ++d) {
    const std::int64_t o = owner_[d];
    const std::string dev = "device " + std::to_string(d);
    ar.check(free_.test(d) == (o == kNoOwner), dev + " is marked free in the bitset but has owner " + std::to_string(o) + ", or the reverse");
    if (o == kNoOwner) {
      ++free_total;
      ++node_free[static_cast<std::size_t>(spec_->node_of(static_cast<DeviceId>(d)))];
    }
    if (o == kFailedOwner) ++failed_total;
    if (o == kShared) {
      ar.check(shares, dev + " is shared but the cluster has no shares");
      ++shared_devices;
      int milli = 0;
      ar.check(!shares_[d].empty(), dev + " is shared but has no shares");
      for (const Share& sh : shares_[d]) {
        ar.check(sh.owner >= 0 && sh.milli > 0 && sh.milli < kWholeMilli, dev + " has a share of " + std::to_string(sh.milli) + " milli held by " + std::to_string(sh.owner));
        milli += sh.milli;
        ar.check(milli <= kWholeMilli, dev + " is shared beyond its 1000 milli");
      }
      ar.check(used_milli_[d] == milli, dev + "'s used milli (" + std::to_string(used_milli_[d]) + ") is not the sum of its shares");
      shared_milli += milli;
    } else if (shares) {
      ar.check(shares_[d].empty() && used_milli_[d] == 0, dev + " has shares but is not marked shared");
    }
  }
  for (std::size_t w = 0; w < words; ++w) {
    const std::uint64_t tail = (w + 1) * 64 > un ? (w * 64 >= un ? ~0ULL : ~0ULL << (un - w * 64)) : 0;
    ar.check((free_.word(w) & tail) == 0, "the free-device bitset marks devices beyond the cluster's " + std::to_string(n));
    ar.check(((free_.summary_word(w >> 6) >> (w & 63)) & 1U) == (free_.word(w) != 0 ? 1U : 0U), "the free-device bitset's summary disagrees with its words");
  }
  const std::size_t summary_bits = summary * 64;
  for (std::size_t w = words; w < summary_bits; ++w) ar.check(((free_.summary_word(w >> 6) >> (w & 63)) & 1U) == 0, "the free-device bitset's summary marks words it does not have");
  ar.check(free_.count() == static_cast<std::size_t>(free_total) && free_total_ == free_total && failed_total_ == failed_total && node_free_ == node_free &&
               shared_devices_ == shared_devices && shared_milli_total_ == shared_milli,
           "the cluster's free, failed or shared counts do not match its devices");
}

void snapshot_fields(SnapshotArchive& ar, JobSpec& j) {
  ar(j.id, j.submit, j.num_gpus, j.duration_s, j.estimate_s, j.source_line, j.user, j.group, j.model, j.gpu_type, j.gpu_milli, j.iterations,
     j.deadline_s, j.priority, j.recorded_status, j.min_gpus, j.max_gpus, j.home_region, j.allowed_regions);
}

namespace {
// Whether two job descriptions are the same, field by field (doubles bit for bit: NaN
// marks an absent value).
bool same_double(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool same_spec(const JobSpec& a, const JobSpec& b) {
  return a.id == b.id && a.submit == b.submit && a.num_gpus == b.num_gpus && same_double(a.duration_s, b.duration_s) && same_double(a.estimate_s, b.estimate_s) &&
         a.source_line == b.source_line && a.user == b.user && a.group == b.group && a.model == b.model && a.gpu_type == b.gpu_type &&
         a.gpu_milli == b.gpu_milli && same_double(a.iterations, b.iterations) && same_double(a.deadline_s, b.deadline_s) &&
         same_double(a.priority, b.priority) && a.recorded_status == b.recorded_status && a.min_gpus == b.min_gpus && a.max_gpus == b.max_gpus &&
         a.home_region == b.home_region && a.allowed_regions == b.allowed_regions;
}
}  // namespace

void snapshot_fields(SnapshotArchive& ar, CheckpointMark& m) { ar(m.progress_s, m.compute_device_us); }

// A job's record: its fields in the order JobState lists them (JobState::for_each_field),
// with the side-table entry of the process that keeps per-job fields (the failures
// process) where JobState had those fields; without such a process, the same bytes with
// their defaults (a loaded non-zero event id there names an event no process owns).
void Simulator::snapshot_job(SnapshotArchive& ar, JobSlot slot) {
  JobState& j = jobs_[static_cast<std::size_t>(slot)];
  j.for_each_field([&](auto& field, OnArrival) {
    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, JobSideTable>) {
      if (processes_.job_snapshot) {
        processes_.job_snapshot->snapshot_job(ar, slot);
        return;
      }
      CheckpointMark pending_checkpoint;
      EventId events[3] = {0, 0, 0};
      bool needs_restart = false;
      ar(pending_checkpoint, events[0], events[1], events[2], needs_restart);
      for (const EventId id : events) {
        ar.check(id == 0, "job slot " + std::to_string(slot) + " ('" + j.spec.id.substr(0, 40) + "')'s failures-model event " + std::to_string(id) +
                              " is not in the event queue (the scenario has no failures model)");
      }
    } else {
      ar(field);
    }
  });
}

// A new counter must be added below, or a resumed run would restart it from zero.
static_assert(sizeof(SimulatorStats) == 18 * sizeof(std::uint64_t), "SimulatorStats changed: update snapshot_fields(SimulatorStats&)");

void snapshot_fields(SnapshotArchive& ar, SimulatorStats& s) {
  ar(s.events, s.decision_points, s.actions, s.jobs_arrived, s.jobs_completed, s.jobs_dropped_oversized, s.preemptions, s.moves,
     s.rate_updates, s.rate_changes, s.loss_spikes, s.unit_failures, s.job_failure_hits, s.checkpoints,
     s.spot_reclamations, s.spot_devices_reclaimed, s.jobs_hit_by_reclaim, s.placement_changes);
}

void Simulator::set_boundary_hook(Tick every, std::function<void()> hook) {
  if (every <= Tick()) throw InvariantError("Simulator::set_boundary_hook: the period must be positive");
  boundary_every_ = every;
  boundary_hook_ = std::move(hook);
  // After a resume the next boundary follows the restored clock, as it did in the run that
  // wrote the snapshot.
  next_boundary_ = started_ && !queue_.empty() ? Tick::from_us((queue_.next_time().us() / every.us() + 1) * every.us()) : every;
}

void Simulator::snapshot(SnapshotArchive& ar) {
  if (paused_) throw InvariantError("Simulator::snapshot at a decision point; snapshots are taken between instants");
  ar.section("simulator");
  ar(now_, queue_, cluster_);
  ar.io_each(jobs_, [&](JobState& j) { snapshot_job(ar, static_cast<JobSlot>(&j - jobs_.data())); });
  ar(live_, free_slots_, pending_.head, pending_.tail, running_.head, running_.tail, num_pending_, num_running_);
  ar(next_arrival_seq_, next_job_, has_next_job_, last_submit_, dirty_, started_, finished_, job_seconds_in_system_, wakeup_, changed_);
  // The device availability reasons, one table per reason where the layout had them: the
  // failures model's down devices here, the taken-back spot devices below. A table is
  // sized once the run started with a process that uses its reason.
  const auto reason_table = [&](DeviceReasons reason) {
    std::vector<char> table;
    if (!ar.loading() && cluster_.has_reasons() && (reasons_used_ & reason)) {
      table.resize(static_cast<std::size_t>(spec_.num_devices()));
      for (DeviceId d = 0; d < spec_.num_devices(); ++d) table[static_cast<std::size_t>(d)] = (cluster_.reasons(d) & reason) != 0 ? 1 : 0;
    }
    ar(table);
    return table;
  };
  const std::vector<char> down = reason_table(device_reason::kUnderRepair);
  snapshot_held(ar);  // the inference services' devices (the holder process's table)
  // Two lists the observers now receive as pushed events (Observer::on_job_changed) keep
  // their place in the format: empty between instants, as they always were.
  std::vector<JobSlot> no_touched, no_joined;
  ar(stats_, no_touched, no_joined);
  if (ar.loading()) ar.check(no_touched.empty() && no_joined.empty(), "it lists changed jobs between instants");
  std::uint64_t read = jobs_read_;
  ar(read, bound_total_);
  if (ar.loading()) {
    ar.check(jobs_read_ == 0, "it is loaded into a simulator that has already run");
    ar.check(jobs_.size() == live_.size() && jobs_.size() <= read, "its job table holds " + std::to_string(jobs_.size()) + " slots for " + std::to_string(read) + " jobs read");
    // Reposition the source: read the jobs the saved run had read and drop them. The jobs
    // in the system must be among them, unchanged, and the next arrival the last of them.
    std::unordered_map<std::string, JobSlot> in_system;
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      if (live_[i] == 1) in_system.emplace(jobs_[i].spec.id, static_cast<JobSlot>(i));
    }
    std::vector<char> matched(jobs_.size(), 0);
    JobSpec skipped;
    for (std::uint64_t i = jobs_read_; i < read; ++i) {
      if (!source_.next(skipped)) {
        throw InputError(source_name_, "the workload ends after " + std::to_string(i) + " jobs, but the snapshot had read " + std::to_string(read) +
                                           "; was the trace changed since the snapshot was written?");
      }
      const auto it = in_system.find(skipped.id);
      if (it != in_system.end() && same_spec(skipped, jobs_[static_cast<std::size_t>(it->second)].spec)) matched[static_cast<std::size_t>(it->second)] = 1;
    }
    jobs_read_ = read;
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      ar.check(live_[i] != 1 || matched[i], "job slot " + std::to_string(i) + " holds job '" + jobs_[i].spec.id.substr(0, 40) + "', which is not one of this workload's first " +
                                                std::to_string(read) + " jobs as the workload has it");
    }
    ar.check(!has_next_job_ || (read > 0 && same_spec(skipped, next_job_)), "the next arrival is not this workload's job " + std::to_string(read));
  }
  // The models the kernel was given own state that evolves with the run: the processes at
  // their slots (sim/world_process.hpp, SnapshotSlot), the thermal and physics models.
  if (processes_.snapshot_before_devices.empty()) {  // no market: an empty list of spot offers
    std::uint64_t spot_offers = 0;
    ar(spot_offers);
    ar.check(spot_offers == 0, "the market's spot offers differ from this configuration's");
  }
  for (WorldProcess* p : processes_.snapshot_before_devices) p->snapshot(ar);
  const std::vector<char> taken_back = reason_table(device_reason::kTakenBack);
  if (ar.loading()) {
    const std::size_t un = static_cast<std::size_t>(spec_.num_devices());
    const auto sized = [&](const std::vector<char>& t, DeviceReasons reason) {
      return t.size() == (started_ && (reasons_used_ & reason) ? un : 0) && std::all_of(t.begin(), t.end(), [](char c) { return c == 0 || c == 1; });
    };
    ar.check(sized(down, device_reason::kUnderRepair) && sized(taken_back, device_reason::kTakenBack),
             "its failed-device tables are sized for another cluster or hold values other than 0 and 1");
    if (started_ && reasons_used_ != device_reason::kNone) {
      cluster_.enable_reasons();
      for (std::size_t d = 0; d < un; ++d) {
        const auto dev = static_cast<DeviceId>(d);
        if (!down.empty() && down[d]) cluster_.add_reason(dev, device_reason::kUnderRepair);
        if (!taken_back.empty() && taken_back[d]) cluster_.add_reason(dev, device_reason::kTakenBack);
      }
    }
  }
  if (processes_.snapshot_after_devices.empty()) {  // no thermal process: the step flag byte snapshots had (bytes unchanged)
    bool step_pending = false;
    ar(step_pending);
    ar.check(!step_pending, "it has an outside-temperature step pending, and this scenario has no thermal model");
  }
  for (WorldProcess* p : processes_.snapshot_after_devices) p->snapshot(ar);  // thermal: its step flag, then its model
  if (options_.physics) options_.physics->snapshot(ar);
  for (WorldProcess* p : processes_.snapshot_after_physics) p->snapshot(ar);
  if (ar.loading()) {
    check_restored(ar);
    ar.set_restored(this);
  }
}

void Simulator::check_restored(SnapshotArchive& ar) const {
  const int n = spec_.num_devices();
  const std::size_t slots = jobs_.size();
  const auto slot_ok = [&](std::int64_t s) { return s >= 0 && static_cast<std::size_t>(s) < slots; };
  const auto live = [&](std::int64_t s) { return slot_ok(s) && live_[static_cast<std::size_t>(s)] == 1; };
  const auto job_name = [&](std::size_t s) { return "job slot " + std::to_string(s) + " ('" + jobs_[s].spec.id.substr(0, 40) + "')"; };
  ar.check(now_ >= Tick() && now_ >= queue_.last_popped_time() && (queue_.empty() || queue_.next_time() >= now_),
           "its clock (" + format_seconds(now_) + " s) is negative or after its next event");
  ar.check(started_ || (slots == 0 && queue_.empty()), "it was taken before the run started but holds jobs or events");
  // (The failed-device tables were checked as they were read, in snapshot().)
  // Slots: each live (1) or free (0, listed once in free_slots_).
  std::vector<char> free_seen(slots, 0);
  std::size_t live_count = 0;
  for (std::size_t i = 0; i < slots; ++i) {
    ar.check(live_[i] == 0 || live_[i] == 1, "job slot " + std::to_string(i) + " is neither live nor free");
    live_count += live_[i] == 1;
  }
  for (const JobSlot s : free_slots_) {
    ar.check(slot_ok(s) && !live(s) && !free_seen[static_cast<std::size_t>(s)], "the free job slot " + std::to_string(s) + " is out of range, live or listed twice");
    free_seen[static_cast<std::size_t>(s)] = 1;
  }
  ar.check(free_slots_.size() + live_count == slots, "its free job slots do not account for the job table");
  // The pending and running lists: each a chain of live jobs of the right status, linked
  // both ways, of the counted length.
  const auto check_list = [&](const JobList& list, std::size_t count, bool running, const char* name) {
    std::size_t length = 0;
    JobSlot prev = kNoJob;
    for (JobSlot s = list.head; s != kNoJob; s = jobs_[static_cast<std::size_t>(s)].next_in_list) {
      ar.check(live(s) && ++length <= count, std::string("the ") + name + " list links to job slot " + std::to_string(s) + ", which is free, out of range or beyond its count");
      const JobState& j = jobs_[static_cast<std::size_t>(s)];
      const bool placed = j.status == JobStatus::kRunning || j.status == JobStatus::kStopping;
      ar.check(j.prev_in_list == prev && (running ? placed : j.status == JobStatus::kPending),
               std::string("the ") + name + " list is broken at " + job_name(static_cast<std::size_t>(s)));
      prev = s;
    }
    ar.check(list.tail == prev && length == count, std::string("the ") + name + " list holds " + std::to_string(length) + " jobs, its count says " + std::to_string(count));
  };
  check_list(pending_, num_pending_, false, "pending");
  check_list(running_, num_running_, true, "running");
  ar.check(num_pending_ + num_running_ == live_count, "its job counts do not match the live job slots");
  std::size_t bound_sum = 0;
  for (std::size_t i = 0; i < slots; ++i) bound_sum += live_[i] == 1 ? jobs_[i].bound_devices.size() : 0;
  ar.check(bound_total_ >= 0 && static_cast<std::size_t>(bound_total_) == bound_sum, "its count of bound devices (" + std::to_string(bound_total_) + ") is not the jobs' " + std::to_string(bound_sum));
  // Each job: enum values, devices owned by it in the cluster state, site, events.
  const int sites = exposed_.num_sites;  // the datacenters process's, 0 for one cluster
  for (std::size_t i = 0; i < slots; ++i) {
    if (live_[i] != 1) continue;
    const JobState& j = jobs_[i];
    const std::string who = job_name(i);
    ar.check(static_cast<int>(j.status) <= static_cast<int>(JobStatus::kStopping) && static_cast<int>(j.stall_kind) <= static_cast<int>(StallKind::kRestart) &&
                 static_cast<int>(j.spec.recorded_status) <= static_cast<int>(RecordedStatus::kKilled),
             who + " has a status out of range");
    ar.check(j.site >= -1 && j.site < std::max(sites, 1), who + " is at site " + std::to_string(j.site) + " of " + std::to_string(sites));
    ar.check(std::isfinite(j.remaining_work_s) && j.remaining_work_s >= 0 && std::isfinite(j.work_done_s) && std::isfinite(j.physics_rate) && j.physics_rate >= 0 &&
                 std::isfinite(j.lost_work_s),
             who + " has a non-finite or negative amount of work or rate");
    ar.check(j.last_update <= now_ && j.spec.submit <= now_ && j.start <= now_ && j.placed_since <= now_, who + " was updated, submitted, started or placed after the snapshot's clock");
    ar.check(j.status == JobStatus::kPending || j.start >= j.spec.submit, who + " started before it was submitted");
    // The device-time accounts (held time is booked when a job gives its devices up, so
    // mid-run they are only known to be non-negative).
    ar.check(j.device_us >= 0 && j.held_us >= 0 && j.overhead_device_us >= 0 && j.checkpoint_device_us >= 0 && j.restart_device_us >= 0 &&
                 j.lost_device_us >= 0 && j.compute_device_us >= 0,
             who + " has negative device-time");
    const bool placed = j.status != JobStatus::kPending;
    ar.check(placed || j.devices.empty(), who + " is pending but holds devices");
    ar.check(j.bound_devices.empty() || (!placed && !j.spec.is_elastic() && !j.spec.is_fractional() &&
                                         j.bound_devices.size() < static_cast<std::size_t>(j.spec.num_gpus) && j.bound_since <= now_),
             who + " has " + std::to_string(j.bound_devices.size()) + " bound devices, which only a pending rigid job with more to bind may have");
    ar.check(j.bound_idle_device_us >= 0, who + " has negative bound-idle device-time");
    for (const DeviceId d : j.bound_devices) {
      ar.check(d >= 0 && d < n && cluster_.owner(d) == static_cast<std::int64_t>(i), who + " has device " + std::to_string(d) + " bound, which the cluster state does not give it");
    }
    const int held = static_cast<int>(j.devices.size());
    ar.check(!placed || (j.spec.is_elastic() ? held >= j.spec.min_gpus && held <= j.spec.max_gpus : held == j.spec.num_gpus),
             who + " holds " + std::to_string(held) + " devices, which its request does not allow");
    for (const DeviceId d : j.devices) {
      ar.check(d >= 0 && d < n, who + " holds device " + std::to_string(d) + ", which this cluster (" + std::to_string(n) + " devices) does not have");
      bool owned = cluster_.owner(d) == static_cast<std::int64_t>(i);
      if (j.spec.is_fractional() && cluster_.is_shared(d)) {
        for (const ClusterState::Share& sh : cluster_.shares(d)) owned = owned || (sh.owner == static_cast<std::int64_t>(i) && sh.milli == j.spec.gpu_milli);
      }
      ar.check(owned, who + " holds device " + std::to_string(d) + ", which the cluster state does not give it");
    }
    const struct {
      EventId id;
      EventKind kind;
      const char* what;
    } events[] = {{j.completion_event, kCompletion, "completion"}, {j.stall_event, kStallEnd, "stall end"}};
    for (const auto& e : events) {
      ar.check(e.id == 0 || queue_.holds(e.id, e.kind, static_cast<std::int64_t>(i)), who + "'s " + e.what + " event " + std::to_string(e.id) + " is not in the event queue");
    }
  }
  for (const WorldProcess* p : processes_.all) p->check_restored(world_, ar);
  // Every device's owner: nobody, failed, shared (by live jobs), a live placed job, or an
  // inference service.
  for (DeviceId d = 0; d < n; ++d) {
    const std::int64_t o = cluster_.owner(d);
    const std::string dev = "device " + std::to_string(d);
    if (o >= 0) {
      const auto holds = [&](const std::vector<DeviceId>& v) { return std::find(v.begin(), v.end(), d) != v.end(); };
      ar.check(live(o) && (jobs_[static_cast<std::size_t>(o)].status != JobStatus::kPending ? holds(jobs_[static_cast<std::size_t>(o)].devices)
                                                                                             : holds(jobs_[static_cast<std::size_t>(o)].bound_devices)),
               dev + " is owned by job slot " + std::to_string(o) + ", which does not hold it");
    } else if (o == ClusterState::kShared) {
      for (const ClusterState::Share& sh : cluster_.shares(d)) {
        ar.check(live(sh.owner) && jobs_[static_cast<std::size_t>(sh.owner)].status != JobStatus::kPending, dev + " is shared with job slot " + std::to_string(sh.owner) + ", which is not placed");
      }
    } else if (o <= service_owner(0)) {
      ar.check(-(o + 16) < static_cast<std::int64_t>(services().size()), dev + " is held by inference service " + std::to_string(-(o + 16)) + ", which does not exist");
    } else {
      ar.check(o == ClusterState::kNoOwner || o == ClusterState::kFailedOwner, dev + " has the owner code " + std::to_string(o));
    }
  }
  for (std::size_t svc = 0; svc < services().size(); ++svc) {
    for (const DeviceId d : services()[svc]) {
      ar.check(d >= 0 && d < n && cluster_.owner(d) == service_owner(static_cast<int>(svc)), "inference service " + std::to_string(svc) + " holds device " + std::to_string(d) + ", which is not marked as its");
    }
  }
  for (const auto* list : {&changed_}) {
    for (const JobSlot s : *list) ar.check(slot_ok(s), "a list of changed jobs names job slot " + std::to_string(s) + ", out of range");
  }
  // Every pending event: a known kind whose argument names what it is about; a job's
  // event is the one that job records.
  // Events of a process's kinds are checked by that process (WorldProcess::check_event);
  // the kinds of a feature this scenario lacks are refused as before it was a process.
  std::size_t arrivals = 0;
  const WorldContext& world = world_;
  queue_.for_each_pending([&](const Event& e) {
    const std::string ev = "event " + std::to_string(e.id) + " (kind " + std::to_string(e.kind) + ", t=" + format_seconds(e.time) + " s)";
    if (e.kind < processes_.event_owner.size() && processes_.event_owner[e.kind]) {
      processes_.event_owner[e.kind]->check_event(world, ar, e, ev);
      return;
    }
    switch (e.kind) {
      case kArrival: ++arrivals; break;
      case kCompletion:
      case kStallEnd: {
        ar.check(live(e.arg), ev + " is about job slot " + std::to_string(e.arg) + ", which holds no job");
        const JobState& j = jobs_[static_cast<std::size_t>(e.arg)];
        const EventId recorded = e.kind == kCompletion ? j.completion_event : j.stall_event;
        ar.check(recorded == e.id, ev + " is not the one its job records");
        ar.check(e.kind != kCompletion || j.status == JobStatus::kRunning, ev + " is about a job that is not running");
        break;
      }
      case event_kind::kLossSpike:
      case event_kind::kCheckpointDue:
      case event_kind::kCheckpointCommit: ar.reject(ev + " belongs to the failures model, which this scenario does not have");
      case kWakeup: break;
      case event_kind::kUnitFailure:
      case event_kind::kUnitRepair: ar.reject(ev + " is about failure unit " + std::to_string(e.arg) + " of 0");
      case event_kind::kSpotChange: ar.reject(ev + " is about spot offer " + std::to_string(e.arg) + " of 0");
      case event_kind::kThermalStep: ar.reject(ev + " belongs to the thermal model, which this scenario does not have");
      default: ar.reject(ev + " is of no known kind");
    }
  });
  ar.check(arrivals == (has_next_job_ ? 1U : 0U), "it has " + std::to_string(arrivals) + " arrival events and " + (has_next_job_ ? "a" : "no") + " next job");
  // Last, the invariant checker's own checks over the restored state (device accounting,
  // work conservation, counts): a violation would otherwise stop the resumed run with an
  // internal error.
  std::vector<const JobState*> in_system;
  for_each_job([&](const JobState& j) { in_system.push_back(&j); });
  InvariantChecker checker(1);
  try {
    checker.check_state(now_, cluster_, in_system, num_running_, num_pending_, options_.physics, services());
  } catch (const InvariantError& e) {
    const std::string what = e.what();
    ar.reject(what.substr(0, what.find('\n')));
  }
}


void MetricsCollector::snapshot(SnapshotArchive& ar) {
  if (samples_) throw std::logic_error("MetricsCollector::snapshot: the JCT samples are held by take_samples_from's source, not saved here");
  ar.section("metrics");
  ar(arrived_, dropped_oversized_, any_arrival_, first_submit_, last_end_, jct_s_, queue_delay_s_, sum_bounded_slowdown_, device_us_,
     overhead_device_us_, preemptions_, moves_, failed_, killed_, restarts_loss_spike_, restarts_device_failure_, checkpoint_device_us_,
     restart_device_us_, lost_device_us_, unsuccessful_device_us_);
  ar(bound_idle_device_us_);
  // Time averages, measurement window, offered load.
  ar(ended_, alloc_milli_, queue_, in_system_, now_.at, now_.alloc_milli_us, now_.queue_us, now_.in_system_us, arrived_seen_, ended_seen_, window_open_,
     arrived_at_open_, demand_milli_s_, last_submit_);
  for (Integrals* i : {&at_open_, &at_last_arrival_, &at_last_end_}) ar(i->at, i->alloc_milli_us, i->queue_us, i->in_system_us);
}


void InvariantChecker::snapshot(SnapshotArchive& ar) {
  ar.section("invariant checker");
  ar(last_time_, checks_, seen_owner_, seen_milli_);
  ar.io_each(log_, [&](Entry& e) { ar(e.time, e.seq, e.kind, e.job, e.a, e.b); });
  ar(log_next_, log_size_, ended_jobs_kwh_, last_facility_kwh_, last_jobs_kwh_);
  if (ar.loading()) {
    ar.check(log_next_ < log_.size() && log_size_ <= log_.size(), "the invariant checker's event log position is out of range");
    ar.check(std::isfinite(ended_jobs_kwh_) && std::isfinite(last_facility_kwh_) && std::isfinite(last_jobs_kwh_), "the invariant checker's energy sums are not finite");
    for (const Entry& e : log_) ar.check(std::string("asedx").find(e.kind) != std::string::npos || e.kind == 0, "the invariant checker's event log holds an unknown entry");
  }
}


}  // namespace schedsim
