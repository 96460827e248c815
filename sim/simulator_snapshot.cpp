// Snapshot support of the kernel's types (sim/snapshot_archive.hpp): every field that
// outlives an instant, so that a resumed run continues bit for bit. Scratch buffers that
// are cleared before each use are left out.
#include "sim/cluster_physics.hpp"
#include "sim/cluster_state.hpp"
#include "sim/comm_model.hpp"
#include "sim/energy.hpp"
#include "sim/event_queue.hpp"
#include "sim/failure_model.hpp"
#include "sim/invariant_checker.hpp"
#include "sim/market.hpp"
#include "sim/market_meter.hpp"
#include "sim/metrics.hpp"
#include "sim/rng.hpp"
#include "sim/simulator.hpp"
#include "sim/snapshot_archive.hpp"
#include "sim/summary_bitset.hpp"
#include "sim/thermal.hpp"
#include "sim/thermal_meter.hpp"

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
}

void SummaryBitset::snapshot(SnapshotArchive& ar) { ar(words_, summary_, count_); }

void snapshot_fields(SnapshotArchive& ar, ClusterState::Share& s) { ar(s.owner, s.milli); }

void ClusterState::snapshot(SnapshotArchive& ar) {
  ar.section("cluster state");
  ar(free_, owner_, node_free_, free_total_, failed_total_, used_milli_, shares_, shared_milli_total_, shared_devices_);
}

void snapshot_fields(SnapshotArchive& ar, JobSpec& j) {
  ar(j.id, j.submit, j.num_gpus, j.duration_s, j.estimate_s, j.source_line, j.user, j.group, j.model, j.gpu_type, j.gpu_milli, j.iterations,
     j.deadline_s, j.priority, j.recorded_status, j.min_gpus, j.max_gpus, j.home_region, j.allowed_regions);
}

void snapshot_fields(SnapshotArchive& ar, CheckpointMark& m) { ar(m.progress_s, m.compute_device_us); }

void snapshot_fields(SnapshotArchive& ar, JobState& j) {
  ar(j.spec, j.status, j.arrival_seq, j.start, j.end, j.devices, j.remaining_work_s, j.work_done_s, j.physics_rate, j.stall_end, j.last_update,
     j.completion_event, j.stall_event, j.has_checkpoint, j.placed_since, j.device_us, j.held_us, j.overhead_device_us, j.preemptions, j.moves);
  ar(j.stall_kind, j.checkpoints, j.pending_checkpoint, j.loss_spike_event, j.checkpoint_due_event, j.checkpoint_commit_event, j.needs_restart,
     j.lost_work_s, j.compute_device_us, j.lost_device_us, j.checkpoint_device_us, j.restart_device_us, j.loss_spike_restarts,
     j.failure_restarts, j.site, j.prev_in_list, j.next_in_list);
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
  ar(now_, queue_, cluster_, jobs_, live_, free_slots_, pending_.head, pending_.tail, running_.head, running_.tail, num_pending_, num_running_);
  ar(next_arrival_seq_, next_job_, has_next_job_, last_submit_, dirty_, started_, finished_, job_seconds_in_system_, wakeup_, changed_,
     device_down_, service_devices_, stats_, touched_, joined_running_);
  std::uint64_t read = jobs_read_;
  ar(read);
  if (ar.loading()) {
    // Reposition the source: read the jobs the saved run had read and drop them.
    JobSpec skipped;
    for (std::uint64_t i = jobs_read_; i < read; ++i) {
      if (!source_.next(skipped)) {
        throw InputError(source_name_, "the workload ends after " + std::to_string(i) + " jobs, but the snapshot had read " + std::to_string(read) +
                                           "; was the trace changed since the snapshot was written?");
      }
    }
    jobs_read_ = read;
  }
  // The models the kernel was given own state that evolves with the run.
  // The market's spot offers (where each availability stands) and the thermal model.
  if (ar.loading() && options_.market && spot_.empty()) {  // the offers' cursors; their state is read below
    const Market& m = *options_.market;
    for (int o = 0; o < static_cast<int>(m.offers().size()); ++o) {
      if (m.offer(o).kind == PriceKind::kSpot) spot_.push_back(SpotOffer{o, SpotCursor(m, o, options_.market_seed), 0, SpotChange{}});
    }
  }
  std::uint64_t spot_offers = spot_.size();
  ar(spot_offers);
  if (spot_offers != spot_.size()) throw InputError("snapshot", "the market's spot offers differ from this configuration's");
  for (SpotOffer& o : spot_) ar(o.offer, o.cursor, o.available, o.next.time, o.next.available);
  ar(device_reclaimed_, thermal_step_pending_);
  if (options_.thermal) options_.thermal->snapshot(ar);
  if (options_.physics) options_.physics->snapshot(ar);
  if (options_.failures) options_.failures->snapshot(ar);
}

void FailureModel::snapshot(SnapshotArchive& ar) {
  ar.section("failure model");
  ar(spike_rng_, unit_rng_);  // units, rates and slow nodes follow from the config and seed
}

void MaxMinFairShare::snapshot(SnapshotArchive& ar) {
  ar(capacity_Bps_);
  ar.io_each(flows_, [&](Flow& f) { ar(f.links, f.pos, f.cap_Bps, f.demand_Bps, f.rate_Bps, f.active); });
  ar(free_ids_, num_active_, stale_, link_start_, link_flows_, unfrozen_, remaining_Bps_, frozen_);
  ar.io_each(heap_, [&](Level& l) { ar(l.level_Bps, l.kind, l.index); });
  ar(members_, dirty_links_, dirty_flows_, link_dirty_, link_seen_, flow_seen_, demand_sum_Bps_, unbounded_, was_contended_, comp_links_,
     solved_flows_);
}

void ClusterPhysics::snapshot(SnapshotArchive& ar) {
  ar.section("cluster physics");
  ar(fair_share_);
  ar.io_each(placed_, [&](Placed& p) {
    ar(p.arrival_seq, p.placed, p.devices, p.flow, p.t_ref_s, p.compute_s, p.fixed_bw_Bps, p.latency_s, p.wire_bytes, p.alone_s, p.demand_Bps,
       p.share_Bps, p.utilization);
    // The profile by name: pointers into the catalogue are not saved.
    std::string profile = p.profile ? p.profile->name : "";
    ar(profile);
    if (ar.loading()) p.profile = profile.empty() ? nullptr : profiles_.find(profile);
  });
  ar(node_jobs_, mark_, flow_slot_);
}

void MetricsCollector::snapshot(SnapshotArchive& ar) {
  ar.section("metrics");
  ar(arrived_, dropped_oversized_, any_arrival_, first_submit_, last_end_, jct_s_, queue_delay_s_, sum_bounded_slowdown_, device_us_,
     overhead_device_us_, preemptions_, moves_, failed_, killed_, restarts_loss_spike_, restarts_device_failure_, checkpoint_device_us_,
     restart_device_us_, lost_device_us_, unsuccessful_device_us_);
}

void EnergyMeter::snapshot(SnapshotArchive& ar) {
  ar.section("energy meter");
  ar.io_each(sites_, [&](Site& s) {
    ar(s.idle_w, s.total_power_w, s.jobs_power_w, s.jobs_power.raw(), s.jobs_idle.raw(), s.price_int, s.carbon_int, s.total.joules, s.total.cost,
       s.total.co2, s.jobs.joules, s.jobs.cost, s.jobs.co2);
    ar(s.weight, s.pue_now, s.cooling_now, s.it_joules, s.cooling_joules);  // the thermal model's PUE and sums
  });
  ar.io_each(slots_, [&](SlotInfo& i) {
    ar(i.seq, i.pos, i.stamp, i.joined_stamp, i.placed_since_us, i.site, i.idle_w, i.dynamic_w, i.joules, i.cost_wsusd, i.co2_wsg, i.last_join);
  });
  ar(entries_.slot, entries_.site, entries_.power_w, entries_.site_power_w, entries_.idle_w, entries_.joules, entries_.cost_wsusd, entries_.co2_wsg,
     entries_.since_us);
  ar(calls_, power_evaluations_, job_integrations_, last_, last_job_.energy_kwh, last_job_.cost_usd, last_job_.co2_kg);
}

void InvariantChecker::snapshot(SnapshotArchive& ar) {
  ar.section("invariant checker");
  ar(last_time_, checks_, seen_owner_, seen_milli_);
  ar.io_each(log_, [&](Entry& e) { ar(e.time, e.seq, e.kind, e.job, e.a, e.b); });
  ar(log_next_, log_size_, ended_jobs_kwh_, last_facility_kwh_, last_jobs_kwh_);
}

void SpotCursor::snapshot(SnapshotArchive& ar) { ar(rng_, initial_, current_, t_, up_); }

void ThermalModel::snapshot(SnapshotArchive& ar) {
  ar.section("thermal model");
  ar(load_, base_speed_, speed_, changed_);
  ar.io_each(state_, [&](SiteState& st) { ar(st.outside_c, st.setpoint_c, st.supply_c, st.pue, st.cooling_fraction, st.changes); });
}

void ThermalMeter::snapshot(SnapshotArchive& ar) {
  ar.section("thermal meter");
  ar.io_each(sites_, [&](Site& st) {
    ar(st.pue, st.outside_c, st.setpoint_c, st.throttled_busy, st.max_pue, st.outside_cs, st.setpoint_cs, st.throttled_device_s);
  });
  ar(last_);
}

void MarketMeter::snapshot(SnapshotArchive& ar) {
  ar.section("market meter");
  ar(tenant_names_);
  ar.io_each(accounts_, [&](Account& a) { ar(a.use.device_h, a.use.compute_usd, a.energy_kwh, a.electricity_usd, a.co2_kg, a.touched); });
  ar.io_each(held_, [&](Held& h) {
    ar(h.tenant);
    ar.io_each(h.offers, [&](Held::Part& p) { ar(p.key, p.milli, p.holding); });
    ar(h.seq, h.placed_since_us, h.num_devices, h.first, h.last);
  });
  ar.io_each(holdings_, [&](Holding& h) { ar(h.tenant, h.key, h.milli); });
  ar(holding_index_, offer_cost_, cost_until_);
  for (MarketUse& u : by_kind_) ar(u.device_h, u.compute_usd);
  ar(has_price_, has_carbon_, seen_, seen_valid_, last_);
}

}  // namespace schedsim
