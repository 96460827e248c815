#include "policies/spatial_routing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "policies/compose.hpp"
#include "policies/temporal_shift.hpp"
#include "world/geography/datacenters.hpp"
#include "base/error.hpp"

namespace schedsim {

SpatialRouter::SpatialRouter(std::string name, std::unique_ptr<QueueOrder> order, Route route, SignalKind kind, InformationModel information)
    : name_(std::move(name)), order_(std::move(order)), route_(route), kind_(kind), info_(std::move(information)) {
  order_->inform(info_);
  if (!order_->needs_oracle().empty()) info_.require_oracle(name_, order_->needs_oracle());
  if (!order_->needs_durations().empty()) info_.require_durations(name_, order_->needs_durations());
  if (route_ == Route::kSignal) info_.require_durations(name_, "route: signal (each datacenter's forecast over the job's run)");
}

void SpatialRouter::load_sites(const SchedulerView& view) {
  if (!sites_.empty()) return;
  if (const Geography* geo = view.geography()) {
    for (int s = 0; s < geo->num_sites(); ++s) sites_.push_back(Site{geo->site(s).first_device, geo->site(s).num_devices, geo->site(s).signals});
  } else {
    sites_.push_back(Site{0, view.cluster().num_devices(), view.signals()});
  }
  claimed_milli_.assign(static_cast<std::size_t>(view.cluster().num_devices()), 0);
}

// Sites are read from the view again at the next decision; claims are per decision.
void SpatialRouter::snapshot(SnapshotArchive& ar) {
  ar.section("spatial router");
  ar(queue_, entry_, queued_, preferred_, started_);
  order_->snapshot(ar);
}

void SpatialRouter::on_job_queued(const SchedulerView& view, JobSlot slot) {
  const auto i = static_cast<std::size_t>(slot);
  if (i >= queued_.size()) {
    queued_.resize(i + 1, 0);
    entry_.resize(i + 1);
    preferred_.resize(i + 1, -1);
    started_.resize(i + 1, 0);
  }
  if (started_[i]) {  // back after a preemption or failure
    started_[i] = 0;
    order_->on_stopped(view, slot);
  }
  entry_[i] = Entry{order_->queued_key(view, slot), view.job(slot).arrival_seq(), slot};
  queued_[i] = 1;
  queue_.insert(entry_[i]);
}

void SpatialRouter::on_job_finished(const SchedulerView& view, JobSlot slot) {
  const auto i = static_cast<std::size_t>(slot);
  if (i < queued_.size() && queued_[i]) {
    queue_.erase(entry_[i]);
    queued_[i] = 0;
  }
  if (i < preferred_.size()) {
    preferred_[i] = -1;
    started_[i] = 0;
  }
  order_->on_stopped(view, slot);
}

void SpatialRouter::prefer(JobSlot slot, int site) {
  const auto i = static_cast<std::size_t>(slot);
  if (i >= preferred_.size()) {
    queued_.resize(i + 1, 0);
    entry_.resize(i + 1);
    preferred_.resize(i + 1, -1);
    started_.resize(i + 1, 0);
  }
  preferred_[i] = site;
}

bool SpatialRouter::allowed(const SchedulerView& view, const JobView& job, int site) const {
  const Geography* geo = view.geography();
  if (!geo) return true;
  if (route_ == Route::kHome) return geo->home_site(job) == site;
  return geo->allowed(job, site);
}

double SpatialRouter::score(const SchedulerView& view, const JobView& job, int site) const {
  const GridSignals* g = sites_[static_cast<std::size_t>(site)].signals;
  if (!g || !g->has(kind_)) return std::numeric_limits<double>::infinity();
  const double est = info_.estimated_total_s(job);
  return best_window(*g, kind_, view.now(), view.now(), est, est).now_mean;
}

bool SpatialRouter::place(const SchedulerView& view, const JobView& job, int site, std::vector<DeviceId>& out) {
  const ClusterState& state = view.cluster_state();
  const Site& s = sites_[static_cast<std::size_t>(site)];
  const DeviceId end = s.first + s.num;
  out.clear();
  if (job.is_fractional()) {
    for (DeviceId d = s.first; d < end; ++d) {
      if (!state.is_failed(d) && state.free_milli(d) - claimed_milli_[static_cast<std::size_t>(d)] >= job.gpu_milli()) {
        out.push_back(d);
        break;
      }
    }
  } else {
    if (free_[static_cast<std::size_t>(site)] < job.num_gpus()) return false;
    for (DeviceId d = state.next_free(s.first); d >= 0 && d < end && static_cast<int>(out.size()) < job.num_gpus(); d = state.next_free(d + 1)) {
      if (claimed_milli_[static_cast<std::size_t>(d)] == 0) out.push_back(d);
    }
    if (static_cast<int>(out.size()) < job.num_gpus()) return false;
  }
  if (out.empty()) return false;
  if (view.physics() && !view.physics()->placement_problem(job, out).empty()) return false;
  for (DeviceId d : out) {
    if (claimed_milli_[static_cast<std::size_t>(d)] == 0) touched_.push_back(d);
    const int milli = job.is_fractional() ? job.gpu_milli() : 1000;
    // A whole device claimed, or the first share of a free device, takes it out of the free count.
    if (state.is_free(d) && claimed_milli_[static_cast<std::size_t>(d)] == 0) --free_[static_cast<std::size_t>(site)];
    claimed_milli_[static_cast<std::size_t>(d)] += milli;
  }
  return true;
}

void SpatialRouter::decide(const SchedulerView& view, ActionBatch& out) {
  load_sites(view);
  const ClusterState& state = view.cluster_state();
  for (DeviceId d : touched_) claimed_milli_[static_cast<std::size_t>(d)] = 0;
  touched_.clear();
  free_.assign(sites_.size(), 0);
  for (std::size_t s = 0; s < sites_.size(); ++s) {
    const DeviceId end = sites_[s].first + sites_[s].num;
    for (DeviceId d = state.next_free(sites_[s].first); d >= 0 && d < end; d = state.next_free(d + 1)) ++free_[s];
  }
  if (order_->keys_change_while_queued()) {  // re-key the queue (O(n log n))
    order_->on_decision(view);
    std::set<Entry> rekeyed;
    for (const Entry& e : queue_) {
      const JobSlot slot = std::get<2>(e);
      entry_[static_cast<std::size_t>(slot)] = Entry{order_->queued_key(view, slot), std::get<1>(e), slot};
      rekeyed.insert(entry_[static_cast<std::size_t>(slot)]);
    }
    queue_.swap(rekeyed);
  }
  std::vector<char> blocked(sites_.size(), 0);
  std::size_t num_blocked = 0;
  for (auto it = queue_.begin(); it != queue_.end() && num_blocked < sites_.size();) {
    const JobSlot slot = std::get<2>(*it);
    const JobView& job = view.job(slot);
    const int preferred = preferred_[static_cast<std::size_t>(slot)];
    int chosen = -1;
    if (preferred >= 0 && !blocked[static_cast<std::size_t>(preferred)] && allowed(view, job, preferred) && place(view, job, preferred, devices_)) {
      chosen = preferred;
    } else {
      // Candidates by score (ties: lower index); place in the best one with room.
      std::vector<std::pair<double, int>> candidates;
      for (int s = 0; s < static_cast<int>(sites_.size()); ++s) {
        if (blocked[static_cast<std::size_t>(s)] || !allowed(view, job, s)) continue;
        candidates.emplace_back(route_ == Route::kSignal && sites_.size() > 1 ? score(view, job, s) : 0.0, s);
      }
      std::sort(candidates.begin(), candidates.end());
      for (const auto& [unused, s] : candidates) {
        if (place(view, job, s, devices_)) {
          chosen = s;
          break;
        }
      }
      if (chosen < 0) {
        for (const auto& [unused, s] : candidates) {
          blocked[static_cast<std::size_t>(s)] = 1;
          ++num_blocked;
        }
        if (candidates.empty() && view.geography()) {
          bool any = false;
          for (int s = 0; s < static_cast<int>(sites_.size()); ++s) any = any || allowed(view, job, s);
          if (!any) throw PolicyError("policy '" + name_ + "': job '" + job.id() + "' is not allowed in any datacenter");
        }
        ++it;
        continue;
      }
    }
    out.start(slot, devices_);
    queued_[static_cast<std::size_t>(slot)] = 0;
    preferred_[static_cast<std::size_t>(slot)] = -1;
    started_[static_cast<std::size_t>(slot)] = 1;
    it = queue_.erase(it);
    order_->on_started(view, slot);
  }
}

namespace {

SignalKind parse_signal(const ConfigNode& config) {
  if (auto v = config.maybe_child("signal")) {
    const std::string s = v->as_string();
    if (s == "carbon") return SignalKind::kCarbon;
    if (s == "price") return SignalKind::kPrice;
    v->fail("must be carbon or price, got '" + s + "'");
  }
  return SignalKind::kCarbon;
}

std::vector<PolicyOptionDoc> router_docs() {
  std::string names;
  for (const auto& o : builtin_orders()) names += (names.empty() ? "" : ", ") + o.name;
  return {
      {"order", "fifo", "queue order: " + names + "; or a map with the order's options"},
      {"signal", "carbon", "what routing minimises: carbon (gCO2/kWh) or price (USD/MWh), as the forecast mean over the job's estimated run"},
  };
}

// A job's datacenter and start chosen by spatio-temporal: the pair with the lowest mean
// signal over the job's run.
struct Plan {
  Tick start;
  int site = -1;
};

struct ShiftLimits {
  double slack_s = 0.0;
  double slack_factor = 1.0;
  bool use_deadlines = true;
  double horizon_s = 172800.0;
  double min_saving = 0.0;
};

// Planned device use of one datacenter over time (a step function kept as changes):
// every planned job reserves its devices over [start, start + estimate] until it ends.
class Calendar {
 public:
  void add(Tick from, Tick to, int n) {
    delta_[from] += n;
    delta_[to] -= n;
  }
  void remove(Tick from, Tick to, int n) {
    erase_if_zero(from, -n);
    erase_if_zero(to, n);
  }
  // Whether `n` more devices fit under `capacity` all over [from, to).
  bool fits(Tick from, Tick to, int n, int capacity) const {
    int use = 0;
    auto it = delta_.begin();
    for (; it != delta_.end() && it->first <= from; ++it) use += it->second;
    if (use + n > capacity) return false;
    for (; it != delta_.end() && it->first < to; ++it) {
      use += it->second;
      if (use + n > capacity) return false;
    }
    return true;
  }

  void snapshot(SnapshotArchive& ar) { ar(delta_); }
 private:
  void erase_if_zero(Tick t, int change) {
    auto it = delta_.find(t);
    if (it == delta_.end()) return;
    it->second += change;
    if (it->second == 0) delta_.erase(it);
  }
  std::map<Tick, int> delta_;
};

class SpatioTemporal : public Policy {
 public:
  SpatioTemporal(std::unique_ptr<SpatialRouter> router, SignalKind kind, ShiftLimits limits, InformationModel information)
      : router_(std::move(router)), kind_(kind), limits_(limits), info_(std::move(information)) {}
  std::string name() const override { return "spatio-temporal"; }

  void on_job_queued(const SchedulerView& view, JobSlot slot) override {
    const JobView& j = view.job(slot);
    const auto i = static_cast<std::size_t>(slot);
    if (i >= seen_.size()) {
      seen_.resize(i + 1, UINT64_MAX);
      reserved_.resize(i + 1);
    }
    if (seen_[i] == j.arrival_seq()) {  // back after a preemption
      router_->on_job_queued(view, slot);
      return;
    }
    seen_[i] = j.arrival_seq();
    const Plan p = plan(view, j, reserved_[i]);
    if (p.start <= view.now()) {
      router_->prefer(slot, p.site);
      router_->on_job_queued(view, slot);
    } else {
      held_.emplace(p.start, j.arrival_seq(), slot, p.site);
    }
  }
  void on_job_finished(const SchedulerView& view, JobSlot slot) override {
    Reservation& r = reserved_[static_cast<std::size_t>(slot)];
    if (r.site >= 0) calendars_[static_cast<std::size_t>(r.site)].remove(r.from, r.to, r.n);
    r = Reservation{};
    router_->on_job_finished(view, slot);
  }
  void decide(const SchedulerView& view, ActionBatch& out) override {
    while (!held_.empty() && std::get<0>(*held_.begin()) <= view.now()) {
      const auto [t, seq, slot, site] = *held_.begin();
      held_.erase(held_.begin());
      router_->prefer(slot, site);
      router_->on_job_queued(view, slot);
    }
    router_->decide(view, out);
    if (!held_.empty()) out.wake_at(std::get<0>(*held_.begin()));
  }

  void snapshot(SnapshotArchive& ar) override {
    ar.section("spatio-temporal");
    ar(seen_, calendars_, held_);
    ar.io_each(reserved_, [&](Reservation& r) { ar(r.site, r.from, r.to, r.n); });
    router_->snapshot(ar);
  }
 private:
  struct Reservation {
    int site = -1;
    Tick from, to;
    int n = 0;
  };

  // The (datacenter, start) with the lowest forecast mean over the job's run among those
  // where the calendar has room for it; reserves it.
  Plan plan(const SchedulerView& view, const JobView& j, Reservation& reservation) {
    const JobView& s = j;
    const double est = info_.estimated_total_s(s);
    const double latest_s = limits_.use_deadlines && !std::isnan(s.deadline_s()) ? s.deadline_s() - est
                                                                               : s.submit().seconds() + limits_.slack_s + limits_.slack_factor * est;
    const Tick latest = std::max(view.now(), Tick::from_seconds(std::min(latest_s, view.now().seconds() + limits_.horizon_s)));
    const Tick run = Tick::from_seconds(std::max(est, 1e-6));
    const Geography* geo = view.geography();
    const int sites = geo ? geo->num_sites() : 1;
    if (calendars_.empty()) calendars_.resize(static_cast<std::size_t>(sites));
    Plan best{view.now(), -1};
    double best_mean = std::numeric_limits<double>::infinity();
    double best_now = std::numeric_limits<double>::infinity();
    for (int site = 0; site < sites; ++site) {
      if (geo && !geo->allowed(s, site)) continue;
      const GridSignals* g = geo ? geo->site(site).signals : view.signals();
      if (!g || !g->has(kind_)) {
        throw PolicyError("policy 'spatio-temporal' needs a " + std::string(to_string(kind_)) + " signal in every datacenter (docs/energy.md)");
      }
      const int capacity = geo ? geo->site(site).num_devices : view.cluster().num_devices();
      const Calendar& cal = calendars_[static_cast<std::size_t>(site)];
      const ShiftWindow w = best_window(*g, kind_, view.now(), latest, est, limits_.horizon_s,
                                        [&](Tick t) { return cal.fits(t, t + run, s.num_gpus(), capacity); });
      best_now = std::min(best_now, w.now_mean);
      if (w.found && (w.mean < best_mean || (w.mean == best_mean && w.start < best.start))) {
        best_mean = w.mean;
        best = Plan{w.start, site};
      }
    }
    // No room planned anywhere within the slack, or deferring does not beat the best
    // datacenter now by min_saving: route now, unplanned.
    if (best.site < 0 || (best.start > view.now() && !(best_mean < best_now - limits_.min_saving * std::fabs(best_now)))) {
      return Plan{view.now(), -1};
    }
    reservation = Reservation{best.site, best.start, best.start + run, s.num_gpus()};
    calendars_[static_cast<std::size_t>(best.site)].add(reservation.from, reservation.to, reservation.n);
    return best;
  }

  std::unique_ptr<SpatialRouter> router_;
  SignalKind kind_;
  ShiftLimits limits_;
  std::vector<std::uint64_t> seen_;
  InformationModel info_;
  std::vector<Reservation> reserved_;  // by slot
  std::vector<Calendar> calendars_;    // by datacenter
  std::set<std::tuple<Tick, std::uint64_t, JobSlot, int>> held_;  // (release, arrival seq, slot, site)
};

}  // namespace

PolicyInfo spatial_policy_info() {
  std::vector<PolicyOptionDoc> options = router_docs();
  options.push_back({"route", "signal", "signal: the allowed datacenter with room and the lowest signal; home: only the job's home datacenter (carbon-agnostic)"});
  return PolicyInfo{
      "spatial",
      "routes each job, in queue order, to the allowed datacenter with room and the lowest forecast carbon (or price) over its run, or to its home",
      options,
      [](const ConfigNode& config, const PolicyContext& context) {
        config.expect_keys({"name", "order", "signal", "route"});
        ParsedOrder order = parse_order(config);
        const SignalKind kind = parse_signal(config);
        SpatialRouter::Route route = SpatialRouter::Route::kSignal;
        if (auto r = config.maybe_child("route")) {
          const std::string v = r->as_string();
          if (v == "home") route = SpatialRouter::Route::kHome;
          else if (v != "signal") r->fail("must be signal or home, got '" + v + "'");
        }
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = "spatial";
        resolved["order"] = order.resolved;
        resolved["signal"] = to_string(kind);
        resolved["route"] = route == SpatialRouter::Route::kHome ? "home" : "signal";
        return PolicyInstance{std::make_unique<SpatialRouter>("spatial", std::move(order.order), route, kind, context.information), resolved};
      },
  };
}

PolicyInfo spatio_temporal_policy_info() {
  std::vector<PolicyOptionDoc> options = router_docs();
  options.push_back({"slack_s", "0", "seconds every job may start late, beyond slack_factor x its estimate"});
  options.push_back({"slack_factor", "1", "a job may start up to slack_s + slack_factor x estimate after submission"});
  options.push_back({"use_deadlines", "true", "jobs with a deadline may start as late as deadline - estimate"});
  options.push_back({"horizon_s", "172800", "the longest look-ahead into the forecast, seconds"});
  options.push_back({"min_saving", "0", "defer only when the best (datacenter, start) beats the best datacenter now by this fraction, [0, 1)"});
  return PolicyInfo{
      "spatio-temporal",
      "picks for each job the (datacenter, start within its slack) with the lowest forecast carbon (or price) over its run, holds it until then and routes it there",
      options,
      [](const ConfigNode& config, const PolicyContext& context) {
        config.expect_keys({"name", "order", "signal", "slack_s", "slack_factor", "use_deadlines", "horizon_s", "min_saving"});
        ParsedOrder order = parse_order(config);
        const SignalKind kind = parse_signal(config);
        ShiftLimits l;
        if (auto v = config.maybe_child("slack_s")) l.slack_s = v->as_nonnegative_double();
        if (auto v = config.maybe_child("slack_factor")) l.slack_factor = v->as_nonnegative_double();
        if (auto v = config.maybe_child("use_deadlines")) l.use_deadlines = v->as_bool();
        if (auto v = config.maybe_child("horizon_s")) l.horizon_s = v->as_positive_double();
        if (auto v = config.maybe_child("min_saving")) {
          l.min_saving = v->as_nonnegative_double();
          if (l.min_saving >= 1.0) v->fail("must be in [0, 1)");
        }
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = "spatio-temporal";
        resolved["order"] = order.resolved;
        resolved["signal"] = to_string(kind);
        resolved["slack_s"] = l.slack_s;
        resolved["slack_factor"] = l.slack_factor;
        resolved["use_deadlines"] = l.use_deadlines;
        resolved["horizon_s"] = l.horizon_s;
        resolved["min_saving"] = l.min_saving;
        // Named by what spatio-temporal needs, before the router's own check (route: signal).
        context.information.require_durations("spatio-temporal", "its plan (each job's start and datacenter over its estimated run)");
        auto router = std::make_unique<SpatialRouter>("spatio-temporal", std::move(order.order), SpatialRouter::Route::kSignal, kind, context.information);
        return PolicyInstance{std::make_unique<SpatioTemporal>(std::move(router), kind, l, context.information), resolved};
      },
      true,
  };
}

}  // namespace schedsim
