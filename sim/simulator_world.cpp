// The kernel's side of world processes (sim/world_process.hpp): registration, the
// per-hook subscriber lists, and the WorldContext a process acts through.
// (Provisional plumbing of branch `worlds` for the hooks its processes use; helper
// `kernel` owns the interface and its full implementation.)
#include <algorithm>

#include "sim/error.hpp"
#include "sim/simulator.hpp"
#include "sim/snapshot_archive.hpp"

namespace schedsim {

void Simulator::add_process(WorldProcess& process) {
  if (started_) throw InvariantError(std::string("Simulator::add_process(") + process.name() + ") after the run started");
  processes_.push_back(&process);
  const std::uint32_t hooks = process.hooks();
  const auto subscribe = [&](WorldProcess::Hook hook, std::vector<WorldProcess*>& list) {
    if (hooks & hook) list.push_back(&process);
  };
  subscribe(WorldProcess::kStart, start_procs_);
  subscribe(WorldProcess::kRateFactor, rate_procs_);
  subscribe(WorldProcess::kPlacementVeto, veto_procs_);
  subscribe(WorldProcess::kStartOverhead, overhead_procs_);
  subscribe(WorldProcess::kEndOfInstant, end_instant_procs_);
  subscribe(WorldProcess::kSnapshot, snapshot_procs_);
  if (hooks & WorldProcess::kEvents) {
    for (std::uint32_t kind : process.event_kinds()) {
      for (const auto& e : event_procs_) {
        if (e.first == kind) throw InvariantError("world processes '" + std::string(e.second->name()) + "' and '" + process.name() + "' both claim event kind " + std::to_string(kind));
      }
      event_procs_.emplace_back(kind, &process);
    }
  }
  if (hooks & WorldProcess::kActions) {
    for (ActionKind kind : process.action_kinds()) {
      for (const auto& a : action_procs_) {
        if (a.first == kind) throw InvariantError("world processes '" + std::string(a.second->name()) + "' and '" + process.name() + "' both claim action kind " + to_string(kind));
      }
      action_procs_.emplace_back(kind, &process);
    }
  }
  if (hooks & WorldProcess::kHeldDevices) {
    if (held_proc_) throw InvariantError("world processes '" + std::string(held_proc_->name()) + "' and '" + process.name() + "' both hold service devices");
    held_proc_ = &process;
  }
  process.expose(exposed_);
  if (exposed_.service_devices) view_.service_devices_ = exposed_.service_devices;
  view_.thermal_ = exposed_.thermal;
  view_.geography_ = exposed_.geography;
}

WorldProcess* Simulator::event_owner(std::uint32_t kind) const {
  for (const auto& e : event_procs_) {
    if (e.first == kind) return e.second;
  }
  return nullptr;
}

// Actions of a kind no kernel branch applies: handed to the process that claims the kind.
void Simulator::apply_world_action(const Action& a, Span<DeviceId> devices, std::size_t index) {
  for (const auto& p : action_procs_) {
    if (p.first != a.kind) continue;
    const std::string problem = p.second->apply_action(ctx_, a, devices);
    if (!problem.empty()) reject(index, a, problem);
    return;
  }
  // No process for it: the feature is not in this scenario.
  switch (a.kind) {
    case ActionKind::kSetCooling: reject(index, a, "the scenario has no thermal model (add `thermal:` under `energy:` or under each datacenter)");
    case ActionKind::kHold: reject(index, a, "no inference process holds devices for services in this simulation (world/inference/inference_process.hpp)");
    default: reject(index, a, "no world model of this scenario handles it");
  }
}

Tick WorldContext::now() const { return sim_->now_; }
EventId WorldContext::schedule(Tick at, std::uint32_t kind, std::int64_t arg) { return sim_->queue_.schedule(at, kind, arg); }
void WorldContext::cancel(EventId id) { sim_->queue_.cancel(id); }
bool WorldContext::queue_empty() const { return sim_->queue_.empty(); }
Tick WorldContext::next_event_time() const { return sim_->queue_.next_time(); }
const ClusterSpec& WorldContext::spec() const { return sim_->spec_; }
const ClusterState& WorldContext::cluster() const { return sim_->cluster_; }
const JobState& WorldContext::job(JobSlot slot) const { return sim_->jobs_[static_cast<std::size_t>(slot)]; }
bool WorldContext::is_live(JobSlot slot) const { return sim_->is_live(slot); }
JobSlot WorldContext::first_running() const { return sim_->running_.head; }
JobSlot WorldContext::next_running(JobSlot slot) const { return sim_->jobs_[static_cast<std::size_t>(slot)].next_in_list; }
std::size_t WorldContext::num_running() const { return sim_->num_running_; }
std::size_t WorldContext::num_pending() const { return sim_->num_pending_; }
SimulatorStats& WorldContext::stats() { return sim_->stats_; }
void WorldContext::mark_decision_point() { sim_->dirty_ = true; }

JobState& WorldContext::job_record(JobSlot slot) { return sim_->jobs_[static_cast<std::size_t>(slot)]; }

void WorldContext::hold_devices(Span<DeviceId> devices, std::int64_t owner) { sim_->cluster_.allocate(devices, owner); }

void WorldContext::release_held(Span<DeviceId> devices, std::int64_t owner) {
  sim_->cluster_.release(devices, owner);
  for (DeviceId d : devices) {
    if (sim_->unavailable(d)) sim_->cluster_.mark_failed(d);  // out of service: failed, not free
  }
}

DeviceReasons WorldContext::reasons(DeviceId d) const {
  const auto i = static_cast<std::size_t>(d);
  DeviceReasons r = device_reason::kNone;
  if (!sim_->device_down_.empty() && sim_->device_down_[i]) r |= device_reason::kUnderRepair;
  if (!sim_->device_reclaimed_.empty() && sim_->device_reclaimed_[i]) r |= device_reason::kTakenBack;
  return r;
}

void Simulator::snapshot_held(SnapshotArchive& ar) {
  if (held_proc_) {
    held_proc_->snapshot(ar);
    return;
  }
  ar(no_services_);  // an empty table, as the kernel wrote before holds were a process's
  ar.check(no_services_.empty(), "it holds devices for inference services, and this simulation has no inference process");
}

void WorldContext::rate_factor_changed(JobSlot slot) {
  if (sim_->options_.physics) sim_->changed_.push_back(slot);  // the rate update at the instant's end applies the new factor
  else sim_->set_rate(slot, sim_->rate_factor(sim_->jobs_[static_cast<std::size_t>(slot)]));
}

}  // namespace schedsim
