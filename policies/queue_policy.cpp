#include "policies/queue_policy.hpp"

#include <algorithm>
#include <cmath>

#include "world/physics/cluster_physics.hpp"
#include "world/geography/datacenters.hpp"
#include "base/error.hpp"
#include "world/market/market.hpp"

namespace schedsim {

namespace {

const char* to_string(Backfill b) { return b == Backfill::kEasy ? "easy" : "none"; }

const char* to_string(Discipline d) { return d == Discipline::kSkip ? "skip" : d == Discipline::kRepack ? "repack" : "blocking"; }

const char* to_string(SpotPreference p) {
  switch (p) {
    case SpotPreference::kAny: return "any";
    case SpotPreference::kPrefer: return "prefer";
    case SpotPreference::kAvoid: return "avoid";
    case SpotPreference::kShort: return "short";
  }
  return "any";
}

// Estimated seconds until `job` ends: the information model's remaining work (under
// oracle its estimate, or duration, scaled by the true fraction left), at its current
// rate when it has one.
double estimated_remaining_s(const InformationModel& info, const SchedulerView& view, const JobView& job) {
  const double rate = job.physics_rate() > 0 ? job.physics_rate() : 1.0;
  return info.estimated_remaining_s(view, job) / rate;
}

}  // namespace

const std::vector<std::string>& QueuePolicyOptions::keys() {
  static const std::vector<std::string> k = {"placement", "preemption", "backfill", "backfill_depth", "discipline", "spot", "spot_short_s"};
  return k;
}

std::vector<PolicyOptionDoc> QueuePolicyOptions::docs(const QueuePolicyOptions& d) {
  return {{"placement", schedsim::to_string(d.placement), std::string("where a job goes: ") + kPlacementNames},
          {"preemption", d.preemption ? "true" : "false", "a blocked head may stop running jobs the order ranks strictly worse"},
          {"backfill", to_string(d.backfill), "none, or easy: later jobs start if they do not delay the blocked head's reservation"},
          {"backfill_depth", std::to_string(d.backfill_depth), "queued jobs one backfill pass examines at most"},
          {"discipline", to_string(d.discipline), "blocking: a queued job that does not fit stops the decision (later jobs wait, unless backfill lets them by); skip: every queued job that fits starts, in order (work-conserving; excludes backfill); repack: running and queued jobs re-admitted in key order at each decision, running ones left out preempted (needs preemption)"},
          {"spot", to_string(d.spot), "with a market: any, prefer (spot devices first), avoid (non-spot first), or short (spot first for jobs whose estimate <= spot_short_s)"},
          {"spot_short_s", "3600", "spot: short: the longest estimate (seconds) that prefers spot devices"}};
}

QueuePolicyOptions QueuePolicyOptions::parse(const ConfigNode& config, const PolicyContext& context, const QueuePolicyOptions& defaults) {
  QueuePolicyOptions o = defaults;
  o.seed = context.seed;
  o.information = context.information;
  if (auto p = config.maybe_child("placement")) o.placement = parse_placement(p->as_choice({"first_fit", "random", "packed", "spread", "fastest_type", "best_fit", "fgd", "yarn", "topology_tree"}));
  if (auto p = config.maybe_child("preemption")) o.preemption = p->as_bool();
  if (auto b = config.maybe_child("backfill")) o.backfill = b->as_choice({"none", "easy"}) == "easy" ? Backfill::kEasy : Backfill::kNone;
  if (auto d = config.maybe_child("backfill_depth")) o.backfill_depth = d->as_positive_int();
  if (auto d = config.maybe_child("discipline")) {
    const std::string v = d->as_choice({"blocking", "skip", "repack"});
    o.discipline = v == "skip" ? Discipline::kSkip : v == "repack" ? Discipline::kRepack : Discipline::kBlocking;
  }
  if (o.discipline != Discipline::kBlocking) {
    const ConfigNode& at = config.maybe_child("discipline") ? *config.maybe_child("discipline") : config;
    // Skipping already starts every job that fits: a reservation would only hold some back.
    if (o.backfill != Backfill::kNone) {
      at.fail(std::string("discipline: ") + to_string(o.discipline) + " starts every queued job that fits, so it excludes backfill: easy; use discipline: blocking with backfill, or backfill: none");
    }
    if (o.discipline == Discipline::kRepack && !o.preemption) {
      at.fail("discipline: repack preempts the running jobs it leaves out, so it needs preemption: true");
    }
  }
  if (auto p = config.maybe_child("spot")) {
    const std::string v = p->as_choice({"any", "prefer", "avoid", "short"});
    o.spot = v == "prefer" ? SpotPreference::kPrefer : v == "avoid" ? SpotPreference::kAvoid : v == "short" ? SpotPreference::kShort : SpotPreference::kAny;
  }
  if (auto t = config.maybe_child("spot_short_s")) o.spot_short_s = t->as_positive_double();
  return o;
}

void QueuePolicyOptions::write(YAML::Node& resolved) const {
  resolved["placement"] = schedsim::to_string(placement);
  resolved["preemption"] = preemption;
  resolved["backfill"] = to_string(backfill);
  resolved["backfill_depth"] = backfill_depth;
  resolved["discipline"] = to_string(discipline);
  resolved["spot"] = to_string(spot);
  resolved["spot_short_s"] = spot_short_s;
}

QueuePolicy::QueuePolicy(std::string name, std::unique_ptr<QueueOrder> order, const QueuePolicyOptions& options)
    : name_(std::move(name)), order_(std::move(order)), options_(options), rng_(options.seed, "policy.placement") {
  // Skipping walks the queue in keyed order, as backfilling does.
  grouped_ = order_->grouped() && options_.backfill == Backfill::kNone && options_.discipline == Discipline::kBlocking;
  timers_ = order_->has_timers();  // fixed by the order's options: asked once, not per start and decision
  // Devices are released only by jobs ending (on_job_finished) and by the preemptions
  // this policy asks for (on_job_queued): it reports both to free_.
  free_.use_change_hints();
  order_->inform(options_.information);
  const InformationModel& info = options_.information;
  if (!order_->needs_oracle().empty()) info.require_oracle(name_, order_->needs_oracle());
  if (!order_->needs_durations().empty()) info.require_durations(name_, order_->needs_durations());
  if (options_.backfill == Backfill::kEasy) info.require_durations(name_, "backfill: easy (reservations from running jobs' estimated ends)");
  if (options_.spot == SpotPreference::kShort) info.require_durations(name_, "spot: short (which jobs are short)");
}

bool QueuePolicy::place_share(const JobView& job, std::vector<DeviceId>& out, int only_type) {
  switch (options_.placement) {
    case Placement::kFirstFit: return free_.share(job.gpu_milli(), FreeDevices::ShareRule::kFirst, out, only_type);
    case Placement::kRandom: return free_.share(job.gpu_milli(), FreeDevices::ShareRule::kRandom, out, only_type, &rng_);
    case Placement::kSpread: return free_.share(job.gpu_milli(), FreeDevices::ShareRule::kWorst, out, only_type);
    case Placement::kFgd: return free_.fgd(1, job.gpu_milli(), mix_, out, only_type);
    case Placement::kPacked:
    case Placement::kBestFit:
    case Placement::kYarn:
    case Placement::kTopologyTree:
    case Placement::kFastestType: return free_.share(job.gpu_milli(), FreeDevices::ShareRule::kBest, out, only_type);
  }
  return false;
}

// spot: short. The estimate column (a job without one is not short), or the noisy
// estimate when the scenario declares one.
bool QueuePolicy::is_short(const JobView& job) const {
  const InformationModel& info = options_.information;
  if (info.level() == InformationLevel::kEstimates && info.source() == EstimateSource::kNoisy) return info.estimated_total_s(job) <= options_.spot_short_s;
  return job.has_estimate() && job.estimate_s() <= options_.spot_short_s;
}

bool QueuePolicy::place_by_spot(const SchedulerView& view, const JobView& job, std::vector<DeviceId>& out) {
  const Market& market = *view.market();
  const auto sites = market.sites().size();
  const auto types = view.cluster().device_types().size();
  auto list = [&](std::size_t site, bool spot, std::size_t type) -> std::vector<DeviceId>& {
    return by_class_[(site * 2 + (spot ? 1 : 0)) * types + type];
  };
  if (by_class_.empty()) {  // the market is fixed for the run: split its devices once
    by_class_.resize(sites * 2 * types);
    for (std::size_t s = 0; s < sites; ++s) {
      const MarketSite& site = market.sites()[s];
      for (DeviceId d = site.first_device; d < site.first_device + site.num_devices; ++d) {
        list(s, market.is_spot(d), static_cast<std::size_t>(view.cluster().node(view.cluster().node_of(d)).type_index)).push_back(d);
      }
    }
  }
  const bool spot = options_.spot == SpotPreference::kPrefer ||
                    (options_.spot == SpotPreference::kShort && is_short(job));
  const Geography* geo = view.geography();
  const PhysicsModel* physics = view.physics();
  // One datacenter and one device type (the kernel's and the physics model's rules), in
  // site and type order.
  for (std::size_t s = 0; s < sites; ++s) {
    if (geo && !geo->allowed(job, static_cast<int>(s))) continue;
    for (std::size_t t = 0; t < types; ++t) {
      if (physics && physics->estimated_rate(job, static_cast<int>(t), job.num_gpus()) <= 0) continue;
      if (free_.first_fit_among(job.num_gpus(), list(s, spot, t), out)) return true;
    }
  }
  return false;
}

bool QueuePolicy::place(const SchedulerView& view, const JobView& job, std::vector<DeviceId>& out) {
  const int n = job.num_gpus();
  if (options_.placement == Placement::kTopologyTree && !switch_tree_built_) build_switch_tree(view);
  // Whole-device jobs try their preferred class first (fractional ones take any device).
  if (options_.spot != SpotPreference::kAny && view.market() && !job.is_fractional() && place_by_spot(view, job, out)) return true;
  const bool fractional = job.is_fractional();
  // A fractional job takes one device, which lies in one datacenter anyway.
  if (const Geography* geo = view.geography(); geo && geo->num_sites() > 1 && !fractional) return place_in_one_datacenter(view, job, out);
  const PhysicsModel* physics = view.physics();
  if (physics && (options_.placement == Placement::kFastestType || view.cluster().device_types().size() > 1)) {
    // Device types ordered by the job's speed on them (fastest first, ties by index);
    // types where it cannot run (memory) are never used. The agnostic placements keep
    // type order; fastest_type sorts by speed.
    const int types = static_cast<int>(view.cluster().device_types().size());
    std::vector<std::pair<double, int>> order;
    for (int t = 0; t < types; ++t) {
      const double r = physics->estimated_rate(job, t, n);
      if (r > 0) order.emplace_back(options_.placement == Placement::kFastestType ? -r : 0.0, t);
    }
    std::stable_sort(order.begin(), order.end());
    // physics.mixed_types: forbid: the kernel rejects a set that spans types, so the
    // placement itself stays within one (fractional jobs take one device anyway).
    const bool one_type = !physics->allows_mixed_types() && types > 1 && !fractional;
    // estimated_rate is 0 on a type with fewer devices than the job asks for, so a job
    // larger than every type's pool has no single-type option: it spans types when the
    // physics model allows that (the kernel runs it at the slowest type's rate).
    if (order.empty() && !fractional && types > 1 && physics->allows_mixed_types()) return place_across_types(view, job, out);
    if (options_.placement == Placement::kFastestType || static_cast<int>(order.size()) < types) {
      // Greedy: the fastest type (or, when some types cannot host the job, the first
      // usable one) that has room now, consolidated within it.
      for (const auto& [unused, t] : order) {
        if (fractional ? place_share(job, out, t)
            : options_.placement == Placement::kFgd  ? free_.fgd(n, 1000, mix_, out, t)
            : options_.placement == Placement::kYarn ? free_.node_strict(n, out, t)
            : options_.placement == Placement::kTopologyTree ? free_.tree(n, switch_tree_, out, t)
                                                     : free_.packed(n, node_group_, out, t)) {
          return true;
        }
      }
      return false;
    }
    if (one_type) {
      // The agnostic placement's own rule inside each type, in type order: the first
      // type where it finds room.
      for (const auto& [unused, t] : order) {
        if (place_whole(n, out, t)) return true;
      }
      return false;
    }
  }
  if (fractional) return place_share(job, out, -1);
  return place_whole(n, out, -1);
}

// The racks and pods of the scenario's topology (sim/topology.hpp) when the physics
// model has one, else the view's racks, else no switch level above the nodes. Fixed for
// the run: built once (again after a snapshot is restored).
void QueuePolicy::build_switch_tree(const SchedulerView& view) {
  switch_tree_ = SwitchTree{};
  if (const auto* physics = dynamic_cast<const ClusterPhysics*>(view.physics())) {
    const TopologySpec& topology = physics->topology();
    for (int k = 0; k < view.cluster().num_nodes(); ++k) switch_tree_.leaf_of_node.push_back(topology.rack_of_node(k));
    if (topology.num_pods() > 0) {
      for (int r = 0; r < topology.num_racks(); ++r) switch_tree_.pod_of_leaf.push_back(topology.pod_of_rack(r));
    }
  } else if (view.node_group()) {
    switch_tree_.leaf_of_node = *view.node_group();
  }
  switch_tree_built_ = true;
}

bool QueuePolicy::place_across_types(const SchedulerView& view, const JobView& job, std::vector<DeviceId>& out) {
  const ClusterSpec& spec = view.cluster();
  const PhysicsModel& physics = *view.physics();
  const int types = static_cast<int>(spec.device_types().size());
  std::vector<int> devices_of_type(static_cast<std::size_t>(types), 0);
  for (int n = 0; n < spec.num_nodes(); ++n) devices_of_type[static_cast<std::size_t>(spec.node(n).type_index)] += spec.node(n).num_devices;
  // A type holds part of the job when the job runs on as many of its devices as it has
  // (estimated_rate is 0 only for memory there).
  std::vector<char> usable(static_cast<std::size_t>(types), 0);
  int usable_types = 0;
  for (int t = 0; t < types; ++t) {
    const int k = std::min(job.num_gpus(), devices_of_type[static_cast<std::size_t>(t)]);
    if (k > 0 && physics.estimated_rate(job, t, k) > 0) {
      usable[static_cast<std::size_t>(t)] = 1;
      ++usable_types;
    }
  }
  if (usable_types == 0) return false;
  if (usable_types == types) return place_whole(job.num_gpus(), out, -1);
  across_candidates_.clear();
  for (int n = 0; n < spec.num_nodes(); ++n) {
    const NodeSpec& node = spec.node(n);
    if (!usable[static_cast<std::size_t>(node.type_index)]) continue;
    for (int k = 0; k < node.num_devices; ++k) across_candidates_.push_back(node.first_device + k);
  }
  std::sort(across_candidates_.begin(), across_candidates_.end());
  return free_.first_fit_among(job.num_gpus(), across_candidates_, out);
}

bool QueuePolicy::place_in_one_datacenter(const SchedulerView& view, const JobView& job, std::vector<DeviceId>& out) {
  const Geography& geo = *view.geography();
  const ClusterSpec& spec = view.cluster();
  const PhysicsModel* physics = view.physics();
  const int types = static_cast<int>(spec.device_types().size());
  const int n = job.num_gpus();
  // Types in the physics model's order for this job (fastest first under fastest_type),
  // those whose memory cannot hold it left out; every type without physics.
  std::vector<std::pair<double, int>> order;
  for (int t = 0; t < types; ++t) {
    double r = 1.0;
    if (physics) {
      int of_type = 0;
      for (int k = 0; k < spec.num_nodes(); ++k)
        if (spec.node(k).type_index == t) of_type += spec.node(k).num_devices;
      r = of_type > 0 ? physics->estimated_rate(job, t, std::min(n, of_type)) : 0.0;
    }
    if (r > 0) order.emplace_back(options_.placement == Placement::kFastestType ? -r : 0.0, t);
  }
  std::stable_sort(order.begin(), order.end());
  const bool one_type = physics && !physics->allows_mixed_types() && types > 1;
  for (int s : geo.placement_order(job)) {
    const Datacenter& site = geo.site(s);
    // One type at a time under forbid; all usable types together otherwise.
    for (std::size_t k = 0; k < (one_type ? order.size() : 1); ++k) {
      across_candidates_.clear();
      for (int node = site.first_node; node < site.first_node + site.num_nodes; ++node) {
        const NodeSpec& ns = spec.node(node);
        bool usable = false;
        if (one_type) usable = ns.type_index == order[k].second;
        else for (const auto& [unused, t] : order) usable = usable || ns.type_index == t;
        if (!usable) continue;
        for (int d = 0; d < ns.num_devices; ++d) across_candidates_.push_back(ns.first_device + d);
      }
      std::sort(across_candidates_.begin(), across_candidates_.end());
      if (free_.first_fit_among(n, across_candidates_, out)) return true;
    }
  }
  return false;
}

bool QueuePolicy::place_whole(int n, std::vector<DeviceId>& out, int only_type) {
  switch (options_.placement) {
    case Placement::kFirstFit: return free_.first_fit(n, out, only_type);
    case Placement::kRandom: return free_.random(n, rng_, out, only_type);
    case Placement::kFastestType:  // without physics every type is equally fast
    case Placement::kBestFit:
    case Placement::kPacked: return free_.packed(n, node_group_, out, only_type);
    case Placement::kSpread: return free_.spread(n, out, only_type);
    case Placement::kFgd: return free_.fgd(n, 1000, mix_, out, only_type);
    case Placement::kYarn: return free_.node_strict(n, out, only_type);
    case Placement::kTopologyTree: return free_.tree(n, switch_tree_, out, only_type);
  }
  return false;
}

void QueuePolicy::stopped_running(JobSlot slot) {
  const auto index = static_cast<std::size_t>(slot);
  if (index >= started_key_.size() || std::isnan(started_key_[index])) return;
  running_keys_.erase(running_keys_.find(started_key_[index]));
  started_key_[index] = std::numeric_limits<double>::quiet_NaN();
}

void QueuePolicy::on_job_finished(const SchedulerView& view, JobSlot job) {
  free_.touch(view.job(job).devices());
  if (const auto index = static_cast<std::size_t>(job); index < stopping_devices_.size() && !stopping_devices_[index].empty()) {  // ended while stopping
    free_.touch(stopping_devices_[index]);
    stopping_count_ -= static_cast<int>(stopping_devices_[index].size());
    stopping_devices_[index].clear();
  }
  if (static_cast<std::size_t>(job) < repack_key_.size()) repack_key_[static_cast<std::size_t>(job)] = std::numeric_limits<double>::quiet_NaN();
  forget_key(job);
  unhold(job);
  stopped_running(job);
  order_->on_stopped(view, job);
  if (grouped_) relist(order_->group_of(view, job));  // its owner's key changed
}

void QueuePolicy::relist(int g) {
  if (g < 0 || static_cast<std::size_t>(g) >= groups_.size()) return;
  Group& group = groups_[static_cast<std::size_t>(g)];
  if (group.listed) group_heads_.erase({group.key, group.head_seq, g});
  group.listed = !group.jobs.empty();
  if (!group.listed) return;
  group.key = order_->group_key(g);
  group.head_seq = group.jobs.begin()->first;
  group_heads_.emplace(group.key, group.head_seq, g);
}

void QueuePolicy::hold(JobSlot slot, bool fractional) {
  const auto i = static_cast<std::size_t>(slot);
  if (held_pos_.size() <= i) held_pos_.resize(i + 1, 0);
  if (held_pos_[i] != 0) return;
  Held& h = held_.emplace_back();
  h.slot = slot;
  h.fractional = fractional;
  h.stable_until = kNoAnswer;
  h.devices = 0;
  held_pos_[i] = static_cast<std::uint32_t>(held_.size());
}

void QueuePolicy::unhold(JobSlot slot) {
  const auto i = static_cast<std::size_t>(slot);
  if (i >= held_pos_.size() || held_pos_[i] == 0) return;
  const std::size_t at = held_pos_[i] - 1;
  held_pos_[i] = 0;
  if (at + 1 != held_.size()) {  // the last one fills the hole (the pass does not depend on their order)
    held_[at] = held_.back();
    held_pos_[static_cast<std::size_t>(held_[at].slot)] = static_cast<std::uint32_t>(at + 1);
  }
  held_.pop_back();
}

void QueuePolicy::sync_held(const SchedulerView& view) {
  for (const Held& h : held_) held_pos_[static_cast<std::size_t>(h.slot)] = 0;
  held_.clear();
  for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) hold(s, view.job(s).is_fractional());
}

void QueuePolicy::start(const SchedulerView& view, JobSlot slot, const Entry& entry, ActionBatch& out) {
  out.start(slot, devices_);
  if (options_.discipline == Discipline::kRepack) hold(slot, view.job(slot).is_fractional());
  if (timers_) started_now_.push_back(slot);
  remove(slot, entry);
  if (order_->keys_change_while_queued() || grouped_) order_->on_started(view, slot);
  if (grouped_) relist(queued_[static_cast<std::size_t>(slot)].group);
  // Running keys only serve preempt_for(), which the repack discipline does not use.
  if (!options_.preemption || options_.discipline == Discipline::kRepack) return;
  const auto index = static_cast<std::size_t>(slot);
  if (started_key_.size() <= index) started_key_.resize(index + 1, std::numeric_limits<double>::quiet_NaN());
  started_key_[index] = order_->running_key(view, slot);
  running_keys_.insert(started_key_[index]);
}

void QueuePolicy::on_job_queued(const SchedulerView& view, JobSlot job) {
  const JobView& j = view.job(job);
  // FGD's workload mix: every arrival once (not the returns after preemption).
  if (options_.placement == Placement::kFgd && j.preemptions() == 0) mix_.add(j.num_gpus(), j.gpu_milli());
  const auto index = static_cast<std::size_t>(job);
  if (index < stopping_devices_.size() && !stopping_devices_[index].empty()) {  // its preemption completed
    free_.touch(stopping_devices_[index]);
    stopping_count_ -= static_cast<int>(stopping_devices_[index].size());
    stopping_devices_[index].clear();
  }
  stopped_running(job);
  order_->on_stopped(view, job);
  if (queued_.size() <= index) queued_.resize(index + 1);
  Queued& q = queued_[index];
  q.promote_at_s = order_->promote_at_s(view, job);
  if (grouped_) {
    if (std::isfinite(q.promote_at_s)) throw InvariantError("queue policy '" + name_ + "': a grouped order may not promote jobs");
    q.group = order_->group_of(view, job);
    if (static_cast<std::size_t>(q.group) >= groups_.size()) groups_.resize(static_cast<std::size_t>(q.group) + 1);
    groups_[static_cast<std::size_t>(q.group)].jobs.emplace(j.arrival_seq(), job);
    relist(q.group);
    return;
  }
  if (options_.discipline == Discipline::kRepack) {
    if (index < repack_key_.size()) repack_key_[index] = std::numeric_limits<double>::quiet_NaN();
    forget_key(job);
    unhold(job);
    // A job this policy preempted keeps the place the last decision gave it.
    if (index < keeps_stamp_.size() && keeps_stamp_[index]) keeps_stamp_[index] = 0;
    else stamp_of(job) = next_stamp_++;
  }
  q.key = order_->queued_key(view, job);
  queue_.emplace(q.key, j.arrival_seq(), job);
  if (std::isfinite(q.promote_at_s)) promotions_.emplace(q.promote_at_s, j.arrival_seq(), job);
}

void QueuePolicy::remove(JobSlot slot, const Entry& entry) {
  if (grouped_) {  // start() relists the group
    groups_[static_cast<std::size_t>(queued_[static_cast<std::size_t>(slot)].group)].jobs.erase({std::get<1>(entry), slot});
    return;
  }
  queue_.erase(entry);
  const Queued& q = queued_[static_cast<std::size_t>(slot)];
  if (std::isfinite(q.promote_at_s)) promotions_.erase({q.promote_at_s, std::get<1>(entry), slot});
}

void QueuePolicy::promote_due(const SchedulerView& view) {
  const double now_s = view.now().seconds();
  while (!promotions_.empty() && std::get<0>(*promotions_.begin()) <= now_s) {
    const auto [at_s, seq, slot] = *promotions_.begin();
    promotions_.erase(promotions_.begin());
    Queued& q = queued_[static_cast<std::size_t>(slot)];
    queue_.erase({q.key, seq, slot});
    q.key = order_->promoted_key();
    q.promote_at_s = std::numeric_limits<double>::infinity();
    queue_.emplace(q.key, seq, slot);
    order_->on_promoted(view, slot);
  }
}

void QueuePolicy::rekey(JobSlot slot, const Entry& entry, double key) {
  queue_.erase(entry);
  queued_[static_cast<std::size_t>(slot)].key = key;
  queue_.emplace(key, std::get<1>(entry), slot);
}

void QueuePolicy::refresh_keys(const SchedulerView& view) {
  order_->on_decision(view);
  scratch_.assign(queue_.begin(), queue_.end());
  queue_.clear();
  for (auto& [key, seq, slot] : scratch_) {
    key = order_->queued_key(view, slot);
    queued_[static_cast<std::size_t>(slot)].key = key;
    queue_.emplace(key, seq, slot);
  }
}

// Grouped orders: the head is the first job of the group with the smallest (key, first
// arrival), which is the job with the smallest (key, arrival) overall, as in decide();
// group keys are always current, so no re-keying pass is needed.
void QueuePolicy::decide_grouped(const SchedulerView& view, ActionBatch& out) {
  if (group_heads_.empty()) return;
  free_.reset(view.cluster_state());
  node_group_ = view.node_group();
  preempted_.clear();
  bool waiting = false;
  while (!group_heads_.empty()) {
    const auto [key, seq, g] = *group_heads_.begin();
    const JobSlot slot = groups_[static_cast<std::size_t>(g)].jobs.begin()->second;
    const Entry head{key, seq, slot};
    devices_.clear();
    if (place(view, view.job(slot), devices_)) {
      start(view, slot, head, out);
      continue;
    }
    if (options_.preemption && preempt_for(view, head, out, waiting)) continue;
    break;
  }
}

void QueuePolicy::decide(const SchedulerView& view, ActionBatch& out) {
  if (grouped_) {
    decide_grouped(view, out);
    return;
  }
  if (options_.discipline == Discipline::kRepack) {
    decide_repack(view, out);
    return;
  }
  started_now_.clear();
  promote_due(view);
  if (queue_.empty()) return;
  const bool dynamic = order_->keys_change_while_queued();
  if (dynamic) refresh_keys(view);
  free_.reset(view.cluster_state());
  node_group_ = view.node_group();
  preempted_.clear();
  bool waiting = false;
  while (!queue_.empty()) {
    const Entry head = *queue_.begin();
    const JobSlot slot = std::get<2>(head);
    if (dynamic) {  // an earlier start in this decision may have made the head's key worse
      const double key = order_->queued_key(view, slot);
      if (key > std::get<0>(head)) {
        rekey(slot, head, key);
        continue;
      }
    }
    devices_.clear();
    if (place(view, view.job(slot), devices_)) {
      start(view, slot, head, out);
      continue;
    }
    if (options_.preemption && preempt_for(view, head, out, waiting)) continue;
    break;
  }
  if (options_.backfill == Backfill::kEasy && !waiting && queue_.size() > 1 && free_.count() > 0) backfill(view, out);
  if (options_.discipline == Discipline::kSkip && queue_.size() > 1) skip_pass(view, out, dynamic);
  if (timers_) request_wake(view, out);
}

void QueuePolicy::skip_pass(const SchedulerView& view, ActionBatch& out, bool dynamic) {
  // The head stays queued (it did not fit); every later job gets its turn, in keyed order.
  // Entries are visited once: a start removes its own entry, a re-keyed entry moves later
  // in the set and is met again there (keys only grow within a decision).
  auto it = std::next(queue_.begin());
  int min_failed_need = std::numeric_limits<int>::max();
  while (it != queue_.end()) {
    const Entry entry = *it;
    const JobSlot slot = std::get<2>(entry);
    ++it;
    const JobView& spec = view.job(slot);
    // Cheap refusal: too few devices free and no preemption (a fractional job may still
    // find a shared device).
    if (!options_.preemption && !spec.is_fractional() && spec.num_gpus() > free_.count()) continue;
    if (dynamic) {
      const double key = order_->queued_key(view, slot);
      if (key > std::get<0>(entry)) {
        rekey(slot, entry, key);
        continue;
      }
    }
    devices_.clear();
    if (place(view, spec, devices_)) {
      start(view, slot, entry, out);
      continue;
    }
    // With preemption: a job that found no victims proves that every later job as large
    // fails too (later keys are no better, so its candidates are a subset, and no more
    // devices are free): O(R) per distinct failing size, not per queued job.
    if (!options_.preemption || spec.is_fractional() || spec.num_gpus() >= min_failed_need) continue;
    bool waiting = false;
    const std::size_t victims = preempted_.size();
    if (!preempt_for(view, entry, out, waiting) && !waiting && preempted_.size() == victims) min_failed_need = spec.num_gpus();
  }
}

void QueuePolicy::decide_repack(const SchedulerView& view, ActionBatch& out) {
  started_now_.clear();
  promote_due(view);
  const bool dynamic = order_->keys_change_while_queued();
  if (dynamic && !queue_.empty()) refresh_keys(view);
  free_.reset(view.cluster_state());
  node_group_ = view.node_group();
  preempted_.clear();
  pass_.clear();
  // The queued entries first: whether they all fit in the free devices decides whether
  // the running jobs need entries at all.
  std::int64_t queued_need = 0;
  for (const auto& [key, seq, slot] : queue_) {
    RepackEntry& e = pass_.emplace_back();
    e.key = key;
    e.stamp = stamp_of(slot);
    e.slot = slot;
    const JobView& spec = view.job(slot);
    e.need = spec.num_gpus();
    e.running = false;
    e.fractional = spec.is_fractional();
    if (!e.fractional) queued_need += spec.num_gpus();
  }
  const std::size_t queued_entries = pass_.size();
  // Every queued job fits in the free devices (an empty queue included): the walk would
  // admit them all in (key, stamp) order and preempt nobody, wherever the running jobs
  // rank (at every step what is left is at least free - queued_need >= 0). Then the
  // running jobs need no entries, only their keys (for the stamps of those whose key
  // changed) and next key changes (about three decisions in four on Tiresias' trace).
  const bool queued_only = queued_need <= free_.count();
  // Devices counted for the pass: free now, those of the jobs still stopping after an
  // earlier decision preempted them (on their way back, and promised to the jobs they
  // were preempted for: left out, the next pass would start the victims again on the
  // devices already free and preempt them again once the rest are back, a livelock when
  // checkpoints take time), plus those of the running jobs it ranks (fractional jobs are
  // left alone).
  int remaining = free_.count() + stopping_count_;
  // With timers, each running job's next key change is taken in the same call as its key,
  // and the wake-up comes from them (request_wake): the order's state cannot change before
  // request_wake() unless keys change while queued (then on_started() runs in between).
  // Then a running job's key is also reused from an earlier decision while the order
  // vouches for it (QueueOrder::running_key_info) and the kernel's progress record of the
  // job is unchanged: most decisions ask the order about none or a few running jobs.
  const bool wake_from_pass = timers_ && !dynamic;
  pass_next_change_s_ = std::numeric_limits<double>::infinity();
  const Tick now = view.now();
  rekeyed_.clear();
  runs_.clear();
  if (held_.size() != view.num_running()) sync_held(view);
  // The running jobs in held_'s order, the last full pass's (nearly sorted: see sort_pass).
  for (Held& h : held_) {
    const JobSlot s = h.slot;
    const JobView r = view.job(s);
    // A reused answer needs no look at the status: a job stopping since it was computed
    // has a later last_update (the preemption's stall advanced it).
    const bool reuse = wake_from_pass && now <= h.stable_until && h.last_update == r.progress_as_of() && h.stall_end == r.stall_end();
    if (!reuse && r.status() != JobStatus::kRunning) continue;
    if (h.fractional) {
      if (wake_from_pass) {
        const double next_s = order_->next_key_change_s(view, s);
        add_run(next_s, next_s, s, false);
      }
      continue;
    }
    const auto i = static_cast<std::size_t>(s);
    double key = 0.0;
    bool asked = true;
    if (wake_from_pass) {
      if (reuse) {
        // The key of the last decision (repack_key_ holds it: every place that clears one
        // clears the other), so not rekeyed.
        asked = false;
        ++work_.keys_reused;
        add_run(h.next_change_s - h.next_change_err_s, h.next_change_s + h.next_change_err_s, s, true);
      } else {
        ++work_.keys_asked;
        const QueueOrder::RunningKeyInfo info = order_->running_key_info(view, s);
        h.key = info.key;
        h.next_change_s = info.next_change_s;
        h.next_change_err_s = info.next_change_err_s;
        h.stable_until = r.progress_as_of() < now ? info.stable_until : kNoAnswer;
        h.last_update = r.progress_as_of();
        h.stall_end = r.stall_end();
        h.devices = static_cast<int>(r.devices().size());
        add_run(info.next_change_s, info.next_change_s, s, false);
      }
      key = h.key;
    } else {
      key = order_->running_key(view, s);
    }
    bool rekeyed = false;
    if (asked) {
      if (repack_key_.size() <= i) repack_key_.resize(i + 1, std::numeric_limits<double>::quiet_NaN());
      rekeyed = !std::isnan(repack_key_[i]) && repack_key_[i] != key;
      repack_key_[i] = key;
    }
    std::size_t index = kNotInPass;
    if (!queued_only) {
      // A reused answer's devices are those it was computed with (a move stalls the job).
      if (asked || !wake_from_pass) h.devices = static_cast<int>(r.devices().size());
      const int need = h.devices;
      remaining += need;
      // Filled in place: a temporary pushed back was stored field by field and copied with
      // wider loads, a store-forwarding stall per running job.
      RepackEntry& e = pass_.emplace_back();
      e.key = key;
      e.stamp = stamp_of(s);
      e.slot = s;
      e.need = need;
      e.running = true;
      e.fractional = false;
      index = pass_.size() - 1;
    }
    if (rekeyed) rekeyed_.push_back(Rekeyed{r.arrival_seq(), s, index});
  }
  // Running jobs whose key changed since the last decision enter their new queue now,
  // behind everything already there (several at once in arrival order; arrivals are
  // unique). Only those few are sorted; the others keep their stamps.
  if (rekeyed_.size() > 1) std::sort(rekeyed_.begin(), rekeyed_.end(), [](const Rekeyed& a, const Rekeyed& b) { return a.arrival_seq < b.arrival_seq; });
  for (const Rekeyed& k : rekeyed_) {
    stamp_of(k.slot) = next_stamp_;
    if (k.index != kNotInPass) pass_[k.index].stamp = next_stamp_;
    ++next_stamp_;
  }
  admitted_.clear();
  std::vector<JobSlot>& victims = preempted_;
  if (queued_only) {
    ++work_.queued_only;
    std::sort(pass_.begin(), pass_.begin() + static_cast<std::ptrdiff_t>(queued_entries));
    for (std::size_t i = 0; i < queued_entries; ++i) admitted_.push_back(pass_[i].slot);
  } else {
    const bool reordered = sort_pass(queued_entries);
    // The walk over the two sorted parts merged: queued [0, queued_entries), running after.
    const std::size_t n = pass_.size();
    for (std::size_t qi = 0, ri = queued_entries; qi < queued_entries || ri < n;) {
      const bool queued_next = ri == n || (qi < queued_entries && pass_[qi] < pass_[ri]);
      const RepackEntry& e = pass_[queued_next ? qi++ : ri++];
      if (e.fractional) {  // no count to take: started when a share fits
        if (!e.running) admitted_.push_back(e.slot);
        continue;
      }
      if (e.need <= remaining) {
        remaining -= e.need;
        if (!e.running) admitted_.push_back(e.slot);
      } else if (e.running) {
        victims.push_back(e.slot);
      }
    }
    if (reordered) reorder_held(queued_entries);
  }
  // Preemptions first: with free checkpoints their devices are released as the batch is
  // applied, so the jobs let in can start on them in the same batch.
  released_.clear();
  bool free_stop = true;
  const PhysicsModel* physics = view.physics();
  for (JobSlot v : victims) {
    const JobView& r = view.job(v);
    out.preempt(v);
    const auto i = static_cast<std::size_t>(v);
    if (stopping_devices_.size() <= i) stopping_devices_.resize(i + 1);
    stopping_count_ += static_cast<int>(r.devices().size()) - static_cast<int>(stopping_devices_[i].size());
    stopping_devices_[i] = r.devices();
    if (keeps_stamp_.size() <= i) keeps_stamp_.resize(i + 1, 0);
    keeps_stamp_[i] = 1;
    repack_key_[i] = std::numeric_limits<double>::quiet_NaN();
    forget_key(v);
    if (physics && Tick::from_seconds(physics->checkpoint_save_s(r, static_cast<int>(r.devices().size()))).us() > 0) free_stop = false;
    else released_.insert(released_.end(), r.devices().begin(), r.devices().end());
  }
  if (!free_stop) released_.clear();
  std::sort(released_.begin(), released_.end(), std::greater<DeviceId>());  // first_fit_then takes from the back: lowest ids first
  for (JobSlot slot : admitted_) {
    const JobView& spec = view.job(slot);
    devices_.clear();
    bool placed = place(view, spec, devices_);
    // Too few free devices: take the ones the preemptions release (first fit). When enough
    // are free and the placement still refuses, its rule stands and the job waits.
    if (!placed && !spec.is_fractional() && !released_.empty() && free_.count() < spec.num_gpus()) {
      devices_.clear();
      placed = free_.first_fit_then(spec.num_gpus(), released_, devices_) && (!physics || physics->placement_problem(spec, devices_).empty());
    }
    if (!placed) continue;  // waits for the devices still on their way
    const Queued& q = queued_[static_cast<std::size_t>(slot)];
    start(view, slot, Entry{q.key, view.job(slot).arrival_seq(), slot}, out);
    const auto i = static_cast<std::size_t>(slot);
    if (repack_key_.size() <= i) repack_key_.resize(i + 1, std::numeric_limits<double>::quiet_NaN());
    repack_key_[i] = order_->running_key(view, slot);
  }
  // The jobs left queued (and the ones just preempted) go behind all others, in order.
  // Stamps are unique (each comes from next_stamp_++), so ordering by stamp alone is the
  // order of (stamp, arrival, slot); below 2^53 the stamp as a double is exact.
  if (next_stamp_ < (std::uint64_t{1} << 53)) {
    restamp_.clear();
    for (const auto& [key, seq, slot] : queue_) restamp_.emplace_back(stamp_of(slot), slot);
    for (JobSlot v : victims) restamp_.emplace_back(stamp_of(v), v);
    std::sort(restamp_.begin(), restamp_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [stamp, slot] : restamp_) stamp_of(slot) = next_stamp_++;
  } else {
    scratch_.clear();
    for (const auto& [key, seq, slot] : queue_) scratch_.emplace_back(static_cast<double>(stamp_of(slot)), seq, slot);
    for (JobSlot v : victims) scratch_.emplace_back(static_cast<double>(stamp_of(v)), view.job(v).arrival_seq(), v);
    std::sort(scratch_.begin(), scratch_.end());
    for (const auto& [stamp, seq, slot] : scratch_) stamp_of(slot) = next_stamp_++;
  }
  if (wake_from_pass) pass_next_change_s_ = earliest_key_change(view, victims);
  if (timers_) request_wake(view, out, wake_from_pass);
}

double QueuePolicy::earliest_key_change(const SchedulerView& view, const std::vector<JobSlot>& victims) {
  const auto victim = [&](JobSlot s) { return std::find(victims.begin(), victims.end(), s) != victims.end(); };
  // A loop of its own (not a running minimum in the pass's loop, which kept it in memory).
  double min_latest_s = std::numeric_limits<double>::infinity();
  if (victims.empty()) {  // four minima, so that each step does not wait for the last
    double m[4] = {min_latest_s, min_latest_s, min_latest_s, min_latest_s};
    const std::size_t n = runs_.size();
    std::size_t i = 0;
    for (; i + 4 <= n; i += 4) {
      for (std::size_t k = 0; k < 4; ++k) m[k] = std::min(m[k], runs_[i + k].latest_s);
    }
    for (; i < n; ++i) m[0] = std::min(m[0], runs_[i].latest_s);
    min_latest_s = std::min(std::min(m[0], m[1]), std::min(m[2], m[3]));
  } else {  // the preempted jobs stop: their key changes do not count
    for (const RunChange& r : runs_) {
      if (!victim(r.slot)) min_latest_s = std::min(min_latest_s, r.latest_s);
    }
  }
  if (!(min_latest_s < std::numeric_limits<double>::infinity())) return std::numeric_limits<double>::infinity();
  // The earliest is one of the jobs whose range starts by the smallest range end; a
  // reused entry among them is asked again, for the exact value a fresh reading gives.
  double next_s = std::numeric_limits<double>::infinity();
  for (const RunChange& r : runs_) {
    if (r.earliest_s > min_latest_s || (!victims.empty() && victim(r.slot))) continue;
    if (r.reused) ++work_.wake_asked;
    next_s = std::min(next_s, r.reused ? order_->next_key_change_s(view, r.slot) : r.earliest_s);
  }
  return next_s;
}

bool QueuePolicy::sort_pass(std::size_t queued) {
  // (key, stamp) pairs are unique (every stamp comes from next_stamp_++), so every sort
  // gives the same order. pass_ holds the queued entries (few), then the running ones in
  // held_'s order, which is the last full pass's order with the jobs started since
  // appended: most keep their key and stamp, so that part is nearly sorted, and an
  // insertion sort finishes it in about one comparison an entry (past a budget of moves
  // std::sort takes over). The walk merges the two sorted parts.
  const std::size_t n = pass_.size();
  const auto running = pass_.begin() + static_cast<std::ptrdiff_t>(queued);
  std::sort(pass_.begin(), running);
  const std::size_t budget_start = 4 * (n - queued) + 64;
  std::size_t budget = budget_start;
  bool sorted = true;
  for (std::size_t i = queued + 1; i < n && sorted; ++i) {
    if (!(pass_[i] < pass_[i - 1])) continue;
    const RepackEntry e = pass_[i];
    std::size_t j = i;
    for (; j > queued && e < pass_[j - 1]; --j) {
      pass_[j] = pass_[j - 1];
      if (--budget == 0) break;
    }
    pass_[j] = e;
    sorted = budget > 0;
  }
  ++work_.passes;
  work_.entries += n;
  work_.moves += budget_start - budget;
  if (!sorted) {
    ++work_.full_sorts;
    std::sort(running, pass_.end());
  }
  return budget != budget_start || !sorted;
}

void QueuePolicy::reorder_held(std::size_t queued) {
  // held_ in the order of this pass's running entries, the jobs it left out (stopping,
  // fractional) after them: the next pass starts from this order.
  held_scratch_.clear();
  for (std::size_t i = queued; i < pass_.size(); ++i) {
    const RepackEntry& e = pass_[i];
    auto& pos = held_pos_[static_cast<std::size_t>(e.slot)];
    held_scratch_.push_back(held_[pos - 1]);
    pos = 0;  // listed
  }
  for (const Held& h : held_) {
    if (held_pos_[static_cast<std::size_t>(h.slot)] != 0) held_scratch_.push_back(h);
  }
  held_.swap(held_scratch_);
  for (std::size_t i = 0; i < held_.size(); ++i) held_pos_[static_cast<std::size_t>(held_[i].slot)] = static_cast<std::uint32_t>(i + 1);
}

void QueuePolicy::request_wake(const SchedulerView& view, ActionBatch& out, bool from_pass) {
  double next_s = std::numeric_limits<double>::infinity();
  if (from_pass) {  // decide_repack() took every running job's that it did not preempt
    next_s = pass_next_change_s_;
  } else {
    for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
      if (view.job(s).status() != JobStatus::kRunning) continue;  // stopping
      if (std::find(preempted_.begin(), preempted_.end(), s) != preempted_.end()) continue;
      next_s = std::min(next_s, order_->next_key_change_s(view, s));
    }
  }
  // The jobs this decision starts run from now on.
  for (JobSlot s : started_now_) next_s = std::min(next_s, order_->next_key_change_s(view, s));
  started_now_.clear();
  // The starvation guard's next promotion is a key change too.
  if (!promotions_.empty()) next_s = std::min(next_s, std::get<0>(*promotions_.begin()));
  if (!std::isfinite(next_s)) return;
  // Rounded up to the next tick, so that at the wake-up the crossing has happened; never
  // the current instant (a wake-up must lie ahead).
  const Tick now = view.now();
  Tick at = Tick::from_seconds(next_s);
  if (at.seconds() < next_s) at = Tick::from_us(at.us() + 1);
  if (at <= now) at = Tick::from_us(now.us() + 1);
  out.wake_at(at);
}

bool QueuePolicy::preempt_for(const SchedulerView& view, const Entry& head, ActionBatch& out, bool& waiting) {
  const auto [head_key, head_seq, head_slot] = head;
  const JobView& spec = view.job(head_slot);
  const int need = spec.num_gpus();
  // Preemption works in whole devices: a fractional head never preempts, and fractional
  // jobs are never victims (their device frees only when every share has left).
  if (spec.is_fractional()) return false;
  // No running job can rank worse than the head: nothing to examine.
  if (order_->running_keys_only_improve() && (running_keys_.empty() || *running_keys_.rbegin() <= head_key)) return false;
  int coming = free_.count();  // free now, plus what stopping jobs will release
  scratch_.clear();
  for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
    const JobView& r = view.job(s);
    if (std::find(preempted_.begin(), preempted_.end(), s) != preempted_.end()) continue;
    if (r.is_fractional()) continue;
    if (r.status() == JobStatus::kStopping) {
      coming += static_cast<int>(r.devices().size());
      continue;
    }
    const double key = order_->running_key(view, s);
    if (key > head_key) scratch_.emplace_back(key, r.arrival_seq(), s);
  }
  if (coming >= need) {  // devices are on their way: wait for them, preempt nothing more
    waiting = coming > free_.count();
    return false;
  }
  if (scratch_.empty()) return false;
  // Worst key first; among equals the latest arrival first.
  std::sort(scratch_.begin(), scratch_.end(), [](const auto& a, const auto& b) { return a > b; });
  std::size_t victims = 0;
  while (victims < scratch_.size() && coming < need) {
    coming += static_cast<int>(view.job(std::get<2>(scratch_[victims])).devices().size());
    ++victims;
  }
  if (coming < need) return false;
  // Checkpoints are free when there is no physics or every save rounds to zero: the
  // victims release their devices as the batch is applied, so the head can start in the
  // same batch (otherwise nothing might be left to happen before it could).
  bool free_stop = true;
  int victim_devices = 0;
  const PhysicsModel* physics = view.physics();
  for (std::size_t i = 0; i < victims; ++i) {
    const JobView& v = view.job(std::get<2>(scratch_[i]));
    victim_devices += static_cast<int>(v.devices().size());
    if (physics && Tick::from_seconds(physics->checkpoint_save_s(v, static_cast<int>(v.devices().size()))).us() > 0) free_stop = false;
  }
  // Stopping jobs counted above make the head wait in any case.
  if (coming - victim_devices > free_.count()) free_stop = false;
  for (std::size_t i = 0; i < victims; ++i) {
    const JobSlot v = std::get<2>(scratch_[i]);
    out.preempt(v);
    preempted_.push_back(v);
    if (stopping_devices_.size() <= static_cast<std::size_t>(v)) stopping_devices_.resize(static_cast<std::size_t>(v) + 1);
    stopping_count_ += static_cast<int>(view.job(v).devices().size()) - static_cast<int>(stopping_devices_[static_cast<std::size_t>(v)].size());
    stopping_devices_[static_cast<std::size_t>(v)] = view.job(v).devices();
  }
  if (free_stop) {
    devices_.clear();
    for (std::size_t i = 0; i < victims && static_cast<int>(devices_.size()) < need; ++i) {
      for (DeviceId d : view.job(std::get<2>(scratch_[i])).devices()) {
        if (static_cast<int>(devices_.size()) < need) devices_.push_back(d);
      }
    }
    const int rest = need - static_cast<int>(devices_.size());
    if ((rest == 0 || free_.first_fit(rest, devices_)) && (!physics || physics->placement_problem(spec, devices_).empty())) {
      start(view, head_slot, head, out);
      return true;
    }
  }
  waiting = true;
  return false;
}

void QueuePolicy::backfill(const SchedulerView& view, ActionBatch& out) {
  const auto [head_key, head_seq, head_slot] = *queue_.begin();
  const int need = view.job(head_slot).num_gpus();
  // The head's reservation: walk running jobs by estimated end until enough devices
  // would be free (count-based, as in Slurm's EASY backfill).
  scratch_.clear();
  for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
    if (std::find(preempted_.begin(), preempted_.end(), s) != preempted_.end()) continue;
    const JobView& r = view.job(s);
    scratch_.emplace_back(view.now().seconds() + estimated_remaining_s(options_.information, view, r), r.arrival_seq(), s);
  }
  std::sort(scratch_.begin(), scratch_.end());
  int available = free_.count();
  double shadow_s = std::numeric_limits<double>::infinity();
  for (const auto& [end_s, seq, s] : scratch_) {
    available += static_cast<int>(view.job(s).devices().size());
    if (available >= need) {
      shadow_s = end_s;
      break;
    }
  }
  // Devices free at the reservation beyond what the head needs: later jobs may use them
  // even if they run past it.
  int extra = available >= need ? available - need : 0;
  const double now_s = view.now().seconds();
  std::int64_t examined = 0;
  for (auto it = std::next(queue_.begin()); it != queue_.end() && examined < options_.backfill_depth && free_.count() > 0; ++examined) {
    const JobSlot slot = std::get<2>(*it);
    const JobView& j = view.job(slot);
    const int n = j.num_gpus();
    const bool ends_in_time = now_s + estimated_remaining_s(options_.information, view, j) <= shadow_s;
    // A fractional job may fit a shared device when no device is free; against the
    // reservation it counts as one device (conservative).
    if ((n > free_.count() && !j.is_fractional()) || (!ends_in_time && n > extra)) {
      ++it;
      continue;
    }
    devices_.clear();
    if (!place(view, j, devices_)) {
      ++it;
      continue;
    }
    if (!ends_in_time) extra -= n;
    const Entry entry = *it;
    ++it;
    start(view, slot, entry, out);
  }
}

PolicyInfo queue_policy_info(const std::string& name, const std::string& description, const OrderKind& order, QueuePolicyOptions defaults) {
  defaults.preemption = defaults.preemption || order.preemptive_by_default;
  std::vector<PolicyOptionDoc> options = order.options;
  for (auto& d : QueuePolicyOptions::docs(defaults)) options.push_back(d);
  return PolicyInfo{
      name,
      description,
      options,
      [name, order, defaults](const ConfigNode& config, const PolicyContext& context) {
        std::vector<std::string> keys = {"name"};
        for (const auto& k : order.keys()) keys.push_back(k);
        for (const auto& k : QueuePolicyOptions::keys()) keys.push_back(k);
        config.expect_keys(keys);
        const QueuePolicyOptions options = QueuePolicyOptions::parse(config, context, defaults);
        std::unique_ptr<QueueOrder> queue_order = order.make(config);
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = name;
        queue_order->write(resolved);
        options.write(resolved);
        return PolicyInstance{std::make_unique<QueuePolicy>(name, std::move(queue_order), options), resolved};
      },
  };
}

// The free-device index (free_) is rebuilt from the cluster state at the next decision;
// everything else the engine keeps between decisions is saved.
void QueuePolicy::snapshot(SnapshotArchive& ar) {
  ar.section("queue policy");
  ar(rng_, mix_, queue_, group_heads_, promotions_, running_keys_, started_key_, stopping_devices_);
  if (options_.discipline == Discipline::kRepack) ar(stamps_, next_stamp_, repack_key_, keeps_stamp_);
  ar.io_each(groups_, [&](Group& g) { ar(g.jobs, g.listed, g.key, g.head_seq); });
  ar.io_each(queued_, [&](Queued& q) { ar(q.key, q.promote_at_s, q.group); });
  order_->snapshot(ar);
  if (ar.loading()) {  // the running set and the order's answers it keeps: rebuilt after a restore
    for (const Held& h : held_) held_pos_[static_cast<std::size_t>(h.slot)] = 0;
    held_.clear();
    stopping_count_ = 0;
    for (const auto& devices : stopping_devices_) stopping_count_ += static_cast<int>(devices.size());
  }
  if (ar.loading()) check_restored(ar);
}

// Every job slot, group and device the restored engine holds must exist (the simulator
// is restored before the policy), and the running keys must match: the engine indexes
// by them without checks.
void QueuePolicy::check_restored(SnapshotArchive& ar) const {
  const auto queued = [&](JobSlot slot, const char* where) {
    ar.check_job_slot(slot, std::string("the queue policy's ") + where);
    ar.check(static_cast<std::size_t>(slot) < queued_.size(), std::string("the queue policy's ") + where + " names job slot " + std::to_string(slot) + ", which it has no entry for");
    const int g = queued_[static_cast<std::size_t>(slot)].group;
    ar.check(!grouped_ || (g >= 0 && static_cast<std::size_t>(g) < groups_.size()), "the queue policy's job slot " + std::to_string(slot) + " is in group " + std::to_string(g) + ", which does not exist");
  };
  for (const Entry& e : queue_) queued(std::get<2>(e), "queue");
  for (const auto& p : promotions_) queued(std::get<2>(p), "promotions");
  for (const Group& g : groups_) {
    for (const auto& j : g.jobs) queued(j.second, "groups");
  }
  for (const Entry& e : group_heads_) {
    const JobSlot g = std::get<2>(e);
    ar.check(g >= 0 && static_cast<std::size_t>(g) < groups_.size() && !groups_[static_cast<std::size_t>(g)].jobs.empty(), "the queue policy lists group " + std::to_string(g) + ", which holds no jobs");
  }
  for (const auto& devices : stopping_devices_) {
    for (const DeviceId d : devices) ar.check_device(d, "the queue policy's preempted devices");
  }
  std::multiset<double> started;
  for (const double k : started_key_) {
    if (!std::isnan(k)) started.insert(k);
  }
  ar.check(started == running_keys_, "the queue policy's running keys do not match the keys its running jobs started with");
}

}  // namespace schedsim
