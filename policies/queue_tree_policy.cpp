#include "policies/queue_tree_policy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "world/physics/catalogue_names.hpp"
#include "world/physics/cluster_physics.hpp"
#include "world/geography/datacenters.hpp"
#include "base/error.hpp"

namespace schedsim {

namespace {

// Shares are sums of whole GPUs and thousandths: a small tolerance keeps a queue exactly
// at its share from counting as over it after floating-point sums.
constexpr double kEps = 1e-9;

const char* to_string(QueueShare s) { return s == QueueShare::kDrf ? "drf" : s == QueueShare::kGuaranteed ? "guaranteed" : "proportion"; }
const char* to_string(AppSort s) { return s == AppSort::kPriority ? "priority" : s == AppSort::kFair ? "fair" : "fifo"; }
const char* to_string(GangMode g) { return g == GangMode::kPlaceholders ? "placeholders" : "all_or_nothing"; }
const char* to_string(TopologyPick p) { return p == TopologyPick::kFirstFit ? "first_fit" : p == TopologyPick::kNvlink ? "nvlink" : "binpack"; }

// The smallest count a job's gang needs: all its GPUs, or an elastic job's min_gpus.
int gang_min(const JobView& j) { return j.is_elastic() ? std::max(1, j.min_gpus()) : j.num_gpus(); }
// What a job asks for: its GPUs (an elastic job's request, within its range).
int gang_target(const JobView& j) { return j.is_elastic() ? std::clamp(j.num_gpus(), std::max(1, j.min_gpus()), j.max_gpus()) : j.num_gpus(); }
// Whole GPUs within `room` (which may be unlimited).
int whole_room(double room) { return room >= 1e9 ? 1000000000 : static_cast<int>(std::floor(room + kEps)); }
double request_gpus(const JobView& j) { return j.is_fractional() ? j.gpu_milli() / 1000.0 : gang_target(j); }

}  // namespace

const std::vector<std::string>& QueueTreeOptions::keys() {
  static const std::vector<std::string> k = {"queues", "share", "sort", "reclaim", "reclaim_delay_s", "gang", "placeholder_timeout_s", "placement"};
  return k;
}

std::vector<PolicyOptionDoc> QueueTreeOptions::docs(const QueueTreeOptions& d) {
  return {{"queues", "[]", "hierarchical queues: a list of {name, parent (default root), weight (1), guaranteed_gpus (0), max_gpus (unlimited), reclaimable (true)}; jobs go to the leaf named by their group, else their user, else `default`"},
          {"share", to_string(d.share), "proportion (Volcano: deserved = weight share, capped by max_gpus and demand, surplus water-filled; queues at their deserved share wait), drf (the same deserved shares, queues ordered by dominant share over device types / weight), or guaranteed (YuniKorn: queues under guaranteed_gpus first, by held / guaranteed)"},
          {"sort", to_string(d.sort), "order inside a leaf: fifo (arrival), priority (higher first, then arrival), or fair (the user holding the fewest GPUs in the queue first, then arrival)"},
          {"reclaim", d.reclaim ? "true" : "false", "a queue under its share (deserved, or guaranteed) preempts jobs of reclaimable queues over theirs, youngest first, never taking a victim queue below its share"},
          {"reclaim_delay_s", detail::format_number(d.reclaim_delay_s), "seconds a job waits before its queue may reclaim for it (YuniKorn's preemption.delay)"},
          {"gang", to_string(d.gang), "all_or_nothing (a job starts only when its whole gang fits: all GPUs, or an elastic job's min_gpus), or placeholders (YuniKorn: a multi-GPU job binds devices as they free up and starts when all are bound)"},
          {"placeholder_timeout_s", detail::format_number(d.placeholder_timeout_s), "gang: placeholders: seconds after its first bind at which a job's unfilled placeholders are released (then all_or_nothing)"},
          {"placement", to_string(d.placement), "first_fit, binpack (fullest nodes first), or nvlink (one node, else one NVLink domain, else the fewest racks; binpack inside)"}};
}

QueueTreeOptions QueueTreeOptions::parse(const ConfigNode& config, const QueueTreeOptions& defaults) {
  QueueTreeOptions o = defaults;
  if (auto q = config.maybe_child("queues")) o.tree = QueueTree::parse(q);
  if (auto s = config.maybe_child("share")) {
    const std::string v = s->as_choice({"proportion", "drf", "guaranteed"});
    o.share = v == "drf" ? QueueShare::kDrf : v == "guaranteed" ? QueueShare::kGuaranteed : QueueShare::kProportion;
  }
  if (auto s = config.maybe_child("sort")) {
    const std::string v = s->as_choice({"fifo", "priority", "fair"});
    o.sort = v == "priority" ? AppSort::kPriority : v == "fair" ? AppSort::kFair : AppSort::kFifo;
  }
  if (auto r = config.maybe_child("reclaim")) o.reclaim = r->as_bool();
  if (auto r = config.maybe_child("reclaim_delay_s")) o.reclaim_delay_s = r->as_nonnegative_double();
  if (auto g = config.maybe_child("gang")) o.gang = g->as_choice({"all_or_nothing", "placeholders"}) == "placeholders" ? GangMode::kPlaceholders : GangMode::kAllOrNothing;
  if (auto t = config.maybe_child("placeholder_timeout_s")) o.placeholder_timeout_s = t->as_positive_double();
  if (auto p = config.maybe_child("placement")) {
    const std::string v = p->as_choice({"first_fit", "binpack", "nvlink"});
    o.placement = v == "first_fit" ? TopologyPick::kFirstFit : v == "nvlink" ? TopologyPick::kNvlink : TopologyPick::kBinpack;
  }
  return o;
}

void QueueTreeOptions::write(YAML::Node& resolved) const {
  resolved["queues"] = tree.to_yaml();
  resolved["share"] = to_string(share);
  resolved["sort"] = to_string(sort);
  resolved["reclaim"] = reclaim;
  resolved["reclaim_delay_s"] = reclaim_delay_s;
  resolved["gang"] = to_string(gang);
  resolved["placeholder_timeout_s"] = placeholder_timeout_s;
  resolved["placement"] = to_string(placement);
}

QueueTreePolicy::QueueTreePolicy(std::string name, QueueTreeOptions options) : name_(std::move(name)), options_(std::move(options)) {}

QueueTreePolicy::Memo& QueueTreePolicy::memo(JobSlot slot) {
  const auto i = static_cast<std::size_t>(slot);
  if (memos_.size() <= i) memos_.resize(i + 1);
  return memos_[i];
}

void QueueTreePolicy::on_job_queued(const SchedulerView& view, JobSlot job) {
  const JobView& spec = view.job(job);
  const int leaf = options_.tree.leaf_for(spec);
  // A job larger than a max on its queue's path could never start: say so instead of
  // leaving it pending for ever.
  const double need = spec.is_fractional() ? spec.gpu_milli() / 1000.0 : gang_min(spec);
  for (int q = leaf; q >= 0; q = options_.tree.queue(q).parent) {
    const QueueSpec& s = options_.tree.queue(q);
    if (need > s.max_gpus + kEps) {
      throw InputError("policy '" + name_ + "': queues", "job '" + spec.id() + "' needs " + detail::format_number(need) + " GPUs, more than max_gpus " + detail::format_number(s.max_gpus) + " of its queue '" + s.name +
                                                            "'; raise that max_gpus or send the job to another queue (by its group or user)");
    }
  }
  Memo& m = memo(job);
  m = Memo{};
  m.queued_s = view.now().seconds();
}

void QueueTreePolicy::on_job_finished(const SchedulerView& /*view*/, JobSlot job) { memo(job) = Memo{}; }

void QueueTreePolicy::setup(const SchedulerView& view) {
  ready_ = true;
  const ClusterSpec& spec = view.cluster();
  spec_ = &spec;
  // NVLink domains from the cluster's topology when the run has the cluster physics;
  // racks from the view (the scenario's topology), else one rack.
  if (const auto* physics = dynamic_cast<const ClusterPhysics*>(view.physics())) {
    const TopologySpec& topo = physics->topology();
    layout_.domain_of_node.resize(static_cast<std::size_t>(spec.num_nodes()));
    layout_.rack_of_node.resize(static_cast<std::size_t>(spec.num_nodes()));
    for (int k = 0; k < spec.num_nodes(); ++k) {
      layout_.domain_of_node[static_cast<std::size_t>(k)] = topo.nvlink_domain_of_node(k);
      layout_.rack_of_node[static_cast<std::size_t>(k)] = topo.rack_of_node(k);
    }
  } else if (view.node_group()) {
    layout_.rack_of_node = *view.node_group();
  }
  one_site_ = !view.geography() || view.geography()->num_sites() <= 1;
  type_capacity_.assign(spec.device_types().size(), 0.0);
  for (int k = 0; k < spec.num_nodes(); ++k) type_capacity_[static_cast<std::size_t>(spec.node(k).type_index)] += spec.node(k).num_devices;
}

double QueueTreePolicy::job_gpus(const JobView& job) const {
  if (job.is_fractional()) return job.gpu_milli() / 1000.0;
  return static_cast<double>(job.devices().size());
}

void QueueTreePolicy::add_held(int leaf, double gpus, const std::vector<DeviceId>& devices) {
  for (int q = leaf; q >= 0; q = options_.tree.queue(q).parent) held_[static_cast<std::size_t>(q)] += gpus;
  if (options_.share != QueueShare::kDrf || devices.empty()) return;
  // drf: the GPUs by device type, split evenly over the job's devices.
  const double each = gpus / static_cast<double>(devices.size());
  for (DeviceId d : devices) {
    const auto t = static_cast<std::size_t>(spec_->node(spec_->node_of(d)).type_index);
    for (int q = leaf; q >= 0; q = options_.tree.queue(q).parent) held_by_type_[static_cast<std::size_t>(q)][t] += each;
  }
}

double QueueTreePolicy::share_of(int q) const {
  return options_.share == QueueShare::kGuaranteed ? options_.tree.queue(q).guaranteed_gpus : deserved_[static_cast<std::size_t>(q)];
}

double QueueTreePolicy::key_of(int q) const {
  const auto i = static_cast<std::size_t>(q);
  switch (options_.share) {
    case QueueShare::kProportion: return deserved_[i] > 0 ? held_[i] / deserved_[i] : (held_[i] > 0 ? std::numeric_limits<double>::infinity() : 0.0);
    case QueueShare::kDrf: return dominant_share(held_by_type_[i], type_capacity_) / options_.tree.queue(q).weight;
    case QueueShare::kGuaranteed: return guaranteed_fair_key(held_[i], options_.tree.queue(q).guaranteed_gpus, cluster_gpus_);
  }
  return 0.0;
}

bool QueueTreePolicy::overused(int q) const {
  // Volcano's proportion plugin: a queue whose allocation reached its deserved share gets
  // nothing more in this session. YuniKorn limits queues by max_gpus only.
  if (options_.share == QueueShare::kGuaranteed) return false;
  const auto i = static_cast<std::size_t>(q);
  return held_[i] >= deserved_[i] - kEps;
}

int QueueTreePolicy::pick_leaf(int q) {
  const QueueSpec& s = options_.tree.queue(q);
  if (q != 0 && overused(q)) return -1;
  if (s.is_leaf()) return cursor_[static_cast<std::size_t>(q)] < pending_[static_cast<std::size_t>(q)].size() ? q : -1;
  std::vector<std::pair<double, int>> order;
  order.reserve(s.children.size());
  for (int c : s.children) order.emplace_back(key_of(c), c);
  std::sort(order.begin(), order.end());
  for (const auto& [key, c] : order) {
    const int leaf = pick_leaf(c);
    if (leaf >= 0) return leaf;
  }
  return -1;
}

double QueueTreePolicy::room(int leaf) const {
  double r = std::numeric_limits<double>::infinity();
  for (int q = leaf; q >= 0; q = options_.tree.queue(q).parent) r = std::min(r, options_.tree.queue(q).max_gpus - held_[static_cast<std::size_t>(q)]);
  return r;
}

int QueueTreePolicy::bound_count(const SchedulerView& view, JobSlot slot) const {
  const auto i = static_cast<std::size_t>(slot);
  return static_cast<int>(view.bound_devices(slot).size()) + (i < bound_now_.size() ? bound_now_[i] : 0);
}

bool QueueTreePolicy::uses_placeholders(const JobView& job) const {
  // Placeholders bind devices one decision at a time, so the partial set must be able
  // to hold the whole job: one device type and one datacenter (else all-or-nothing).
  return options_.gang == GangMode::kPlaceholders && !job.is_fractional() && !job.is_elastic() && job.num_gpus() > 1 && type_capacity_.size() == 1 && one_site_;
}

void QueueTreePolicy::claim(const std::vector<DeviceId>& devices) {
  for (DeviceId d : devices) {
    if (avail_[static_cast<std::size_t>(d)]) {
      avail_[static_cast<std::size_t>(d)] = 0;
      --free_total_;
    }
  }
}

bool QueueTreePolicy::place(const SchedulerView& view, const JobView& job, int n, std::vector<DeviceId>& out) {
  const ClusterSpec& spec = view.cluster();
  const int nodes = spec.num_nodes();
  const PhysicsModel* physics = view.physics();
  const int types = static_cast<int>(spec.device_types().size());
  // Candidate node sets, tried in order: per datacenter (home first) and, with physics
  // and several types, per usable device type (or all usable types when they may mix).
  std::vector<int> sites;
  const Geography* geo = view.geography();
  if (geo && geo->num_sites() > 1) sites = geo->placement_order(job);
  else sites.push_back(-1);
  std::vector<std::vector<int>> type_sets;
  if (physics && types > 1) {
    std::vector<int> usable;
    for (int t = 0; t < types; ++t) {
      const int of_type = static_cast<int>(type_capacity_[static_cast<std::size_t>(t)]);
      if (of_type > 0 && physics->estimated_rate(job, t, std::min(n, of_type)) > 0) usable.push_back(t);
    }
    if (physics->allows_mixed_types()) {
      if (!usable.empty()) type_sets.push_back(usable);
    } else {
      for (int t : usable) type_sets.push_back({t});
    }
  } else {
    type_sets.push_back({});  // every type
  }
  std::vector<char> ok(static_cast<std::size_t>(nodes), 0);
  for (int s : sites) {
    for (const auto& ts : type_sets) {
      for (int k = 0; k < nodes; ++k) {
        bool in = true;
        if (s >= 0) in = k >= geo->site(s).first_node && k < geo->site(s).first_node + geo->site(s).num_nodes;
        if (in && !ts.empty()) in = std::find(ts.begin(), ts.end(), spec.node(k).type_index) != ts.end();
        ok[static_cast<std::size_t>(k)] = in ? 1 : 0;
      }
      const std::size_t before = out.size();
      if (pick_devices(spec, avail_, ok, n, options_.placement, layout_, out)) {
        if (!physics || physics->placement_problem(job, Span<DeviceId>(out.data() + before, out.size() - before)).empty()) return true;
        out.resize(before);
      }
    }
  }
  return false;
}

bool QueueTreePolicy::place_share(const SchedulerView& view, const JobView& job, std::vector<DeviceId>& out) {
  // Best fit: the device with the least free capacity that still holds the share.
  const ClusterState& st = view.cluster_state();
  const PhysicsModel* physics = view.physics();
  DeviceId best = -1;
  int best_free = 0;
  for (DeviceId d = 0; d < view.cluster().num_devices(); ++d) {
    const auto i = static_cast<std::size_t>(d);
    const bool whole_free = st.is_free(d);
    if (whole_free && !avail_[i]) continue;  // claimed whole in this decision
    if (!whole_free && !st.is_shared(d)) continue;
    const int f = st.free_milli(d) - claimed_milli_[i];
    if (f < job.gpu_milli()) continue;
    if (physics && !physics->placement_problem(job, Span<DeviceId>(&d, 1)).empty()) continue;
    if (best < 0 || f < best_free) {
      best = d;
      best_free = f;
    }
  }
  if (best < 0) return false;
  out.push_back(best);
  return true;
}

bool QueueTreePolicy::try_start(const SchedulerView& view, JobSlot slot, int leaf, ActionBatch& out) {
  const JobView& j = view.job(slot);
  const JobView& spec = j;
  const double r = room(leaf);
  devices_.clear();
  if (spec.is_fractional()) {
    const double g = spec.gpu_milli() / 1000.0;
    if (g > r + kEps || !place_share(view, spec, devices_)) return false;
    const auto d = static_cast<std::size_t>(devices_[0]);
    if (avail_[d]) {  // a whole-free device now holds a share: no longer free for gangs
      avail_[d] = 0;
      --free_total_;
    }
    claimed_milli_[d] += spec.gpu_milli();
    out.start(slot, devices_);
    add_held(leaf, g, devices_);
    return true;
  }
  Memo& m = memo(slot);
  if (uses_placeholders(spec) && !m.timed_out) {
    // YuniKorn's placeholders: bind what is free now (within the queue's max) to the job
    // (the kernel holds bound devices for it); the bind that completes its set starts it.
    const int need = spec.num_gpus() - bound_count(view, slot);
    const int k = std::min({need, free_total_, whole_room(r)});
    if (k <= 0 || !place(view, spec, k, devices_)) return false;
    claim(devices_);
    out.bind(slot, devices_);
    bound_now_[static_cast<std::size_t>(slot)] += k;
    add_held(leaf, k, devices_);
    if (k == need) {
      m.deadline_s = -1;
      return true;
    }
    if (m.deadline_s < 0) m.deadline_s = view.now().seconds() + options_.placeholder_timeout_s;
    return false;
  }
  const int lo = gang_min(spec);
  int n = gang_target(spec);
  if (spec.is_elastic()) n = std::min({n, free_total_, whole_room(r)});
  if (n < lo || n > free_total_ || n > r + kEps) return false;
  if (!place(view, spec, n, devices_)) {
    // An elastic job may still fit at a smaller count, down to its minimum.
    bool placed = false;
    for (int c = n - 1; spec.is_elastic() && c >= lo && !placed; --c) {
      devices_.clear();
      placed = place(view, spec, c, devices_);
    }
    if (!placed) return false;
  }
  claim(devices_);
  out.start(slot, devices_);
  add_held(leaf, static_cast<double>(devices_.size()), devices_);
  return true;
}

void QueueTreePolicy::decide(const SchedulerView& view, ActionBatch& out) {
  if (!ready_) setup(view);
  const ClusterSpec& spec = view.cluster();
  const ClusterState& st = view.cluster_state();
  const QueueTree& tree = options_.tree;
  const int nq = tree.size();
  const double now_s = view.now().seconds();
  const int devices = spec.num_devices();
  avail_.assign(static_cast<std::size_t>(devices), 0);
  claimed_milli_.assign(static_cast<std::size_t>(devices), 0);
  free_total_ = 0;
  for (DeviceId d = 0; d < devices; ++d) {
    if (st.is_free(d)) {
      avail_[static_cast<std::size_t>(d)] = 1;
      ++free_total_;
    }
  }
  cluster_gpus_ = devices - st.failed_devices();
  held_.assign(static_cast<std::size_t>(nq), 0.0);
  demand_.assign(static_cast<std::size_t>(nq), 0.0);
  const bool drf = options_.share == QueueShare::kDrf;
  if (drf) held_by_type_.assign(static_cast<std::size_t>(nq), std::vector<double>(type_capacity_.size(), 0.0));
  // Users' GPUs per leaf, for sort: fair.
  std::map<std::pair<int, std::string>, double> user_held;
  // Running jobs count for their queues; stopping ones are on their way out (a reclaim
  // waiting for them counts them as coming back instead).
  for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
    const JobView& r = view.job(s);
    if (r.status() != JobStatus::kRunning) continue;
    const int leaf = tree.leaf_for(r);
    const double g = job_gpus(r);
    add_held(leaf, g, r.devices());
    if (options_.sort == AppSort::kFair) user_held[{leaf, r.user()}] += g;
  }
  pending_.assign(static_cast<std::size_t>(nq), {});
  cursor_.assign(static_cast<std::size_t>(nq), 0);
  double next_wake_s = std::numeric_limits<double>::infinity();
  int fractional_pending = 0;
  for (JobSlot s = view.first_pending(); s != kNoJob; s = view.next_pending(s)) {
    const JobView& j = view.job(s);
    const int leaf = tree.leaf_for(j);
    pending_[static_cast<std::size_t>(leaf)].push_back(s);
    if (j.is_fractional()) ++fractional_pending;
    demand_[static_cast<std::size_t>(leaf)] += request_gpus(j);
    Memo& m = memo(s);
    const Span<DeviceId> bound = view.bound_devices(s);
    if (bound.empty() && m.deadline_s < 0) continue;
    // Placeholders: released at the timeout (unbound first in the batch, so their devices
    // are free for the rest of this decision). The kernel drops a bound device that fails.
    if (m.deadline_s >= 0 && now_s >= m.deadline_s) {
      if (!bound.empty()) {
        out.unbind(s);
        for (DeviceId d : bound) {
          avail_[static_cast<std::size_t>(d)] = 1;
          ++free_total_;
        }
      }
      m.deadline_s = -1;
      m.timed_out = true;
      continue;
    }
    scratch_.assign(bound.begin(), bound.end());
    add_held(leaf, static_cast<double>(scratch_.size()), scratch_);
    // Bound devices count as held, so the pending demand is the rest.
    demand_[static_cast<std::size_t>(leaf)] -= static_cast<double>(scratch_.size());
  }
  for (int q = 0; q < nq; ++q)
    if (tree.queue(q).is_leaf()) demand_[static_cast<std::size_t>(q)] += held_[static_cast<std::size_t>(q)];
  if (options_.share != QueueShare::kGuaranteed) deserved_ = proportion_deserved(tree, cluster_gpus_, demand_);
  else deserved_.assign(static_cast<std::size_t>(nq), 0.0);
  // Each leaf's order: keys computed once per job, then one sort.
  std::vector<std::tuple<double, std::uint64_t, JobSlot>> keyed;
  for (int q = 0; q < nq; ++q) {
    auto& list = pending_[static_cast<std::size_t>(q)];
    if (list.size() < 2) continue;
    keyed.clear();
    for (JobSlot s : list) {
      const JobView& j = view.job(s);
      double key = 0;
      if (options_.sort == AppSort::kPriority) key = -j.priority();
      if (options_.sort == AppSort::kFair) {
        const auto u = user_held.find({q, j.user()});
        key = u == user_held.end() ? 0.0 : u->second;
      }
      keyed.emplace_back(key, j.arrival_seq(), s);
    }
    if (!std::is_sorted(keyed.begin(), keyed.end())) std::sort(keyed.begin(), keyed.end());
    for (std::size_t i = 0; i < list.size(); ++i) list[i] = std::get<2>(keyed[i]);
  }
  started_.assign(std::max<std::size_t>(started_.size(), memos_.size()), 0);
  std::fill(started_.begin(), started_.end(), 0);
  bound_now_.assign(memos_.size(), 0);
  // Allocation: the best leaf's next job, until no leaf has one left to try.
  // Nothing whole is free: only a share could still start (binds that complete
  // start in the decision that completes them).
  for (;;) {
    if (free_total_ == 0 && fractional_pending == 0) break;
    const int leaf = pick_leaf(0);
    if (leaf < 0) break;
    const JobSlot s = pending_[static_cast<std::size_t>(leaf)][cursor_[static_cast<std::size_t>(leaf)]++];
    if (try_start(view, s, leaf, out)) {
      if (started_.size() <= static_cast<std::size_t>(s)) started_.resize(static_cast<std::size_t>(s) + 1, 0);
      started_[static_cast<std::size_t>(s)] = 1;
    }
  }
  if (options_.reclaim) reclaim_pass(view, out);
  // Wake-ups: placeholders that time out, and jobs whose reclaim delay ends.
  for (JobSlot s = view.first_pending(); s != kNoJob; s = view.next_pending(s)) {
    const Memo& m = memo(s);
    if (m.deadline_s > now_s) next_wake_s = std::min(next_wake_s, m.deadline_s);
  }
  if (std::isfinite(next_wake_s)) {
    Tick at = Tick::from_seconds(next_wake_s);
    if (at.seconds() < next_wake_s) at = Tick::from_us(at.us() + 1);
    if (at <= view.now()) at = Tick::from_us(view.now().us() + 1);
    out.wake_at(at);
  }
}

void QueueTreePolicy::reclaim_pass(const SchedulerView& view, ActionBatch& out) {
  const QueueTree& tree = options_.tree;
  const int nq = tree.size();
  const double now_s = view.now().seconds();
  const PhysicsModel* physics = view.physics();
  // Devices of jobs this policy preempted that are still saving: they come back soon.
  int coming = 0;
  for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
    const JobView& r = view.job(s);
    if (r.status() == JobStatus::kStopping && memo(s).reclaimed) coming += static_cast<int>(r.devices().size());
  }
  std::vector<std::pair<double, int>> leaves;
  for (int q = 0; q < nq; ++q)
    if (tree.queue(q).is_leaf() && !pending_[static_cast<std::size_t>(q)].empty()) leaves.emplace_back(key_of(q), q);
  std::sort(leaves.begin(), leaves.end());
  double wake_s = std::numeric_limits<double>::infinity();
  for (const auto& [unused, leaf] : leaves) {
    // The leaf's first job (in its order) that did not start.
    JobSlot head = kNoJob;
    for (JobSlot s : pending_[static_cast<std::size_t>(leaf)]) {
      if (static_cast<std::size_t>(s) < started_.size() && started_[static_cast<std::size_t>(s)]) continue;
      head = s;
      break;
    }
    if (head == kNoJob) continue;
    const JobView& h = view.job(head);
    if (h.is_fractional()) continue;  // shares are never reclaimed for
    const Memo& hm = memo(head);
    const double need = gang_min(h) - static_cast<double>(bound_count(view, head));
    const auto li = static_cast<std::size_t>(leaf);
    // Only within the reclaimer's own share (YuniKorn: the preemptor's queue stays within
    // its guaranteed; Volcano: a queue not overused), and past the reclaim delay.
    if (held_[li] + need > share_of(leaf) + kEps || need > room(leaf) + kEps) continue;
    if (now_s < hm.queued_s + options_.reclaim_delay_s) {
      wake_s = std::min(wake_s, hm.queued_s + options_.reclaim_delay_s);
      continue;
    }
    if (free_total_ + coming >= need) continue;  // enough is free or on its way
    // Victims: running whole-device jobs of other reclaimable leaves over their share,
    // youngest first (latest start, then latest arrival).
    std::vector<std::tuple<std::int64_t, std::uint64_t, JobSlot>> candidates;
    for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
      const JobView& r = view.job(s);
      if (r.status() != JobStatus::kRunning || r.is_fractional()) continue;
      const int v = tree.leaf_for(r);
      if (v == leaf || !tree.queue(v).reclaimable) continue;
      candidates.emplace_back(r.start().us(), r.arrival_seq(), s);
    }
    std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a > b; });
    std::vector<double> held = held_;
    std::vector<JobSlot> victims;
    double gained = free_total_ + coming;
    for (const auto& [start_us, seq, s] : candidates) {
      if (gained >= need) break;
      const JobView& r = view.job(s);
      const int v = tree.leaf_for(r);
      const double g = static_cast<double>(r.devices().size());
      // Never below the victim queue's own share, at any level of its path that the
      // reclaimer does not share.
      bool ok = true;
      for (int q = v; q >= 0 && ok; q = tree.queue(q).parent) {
        bool common = false;
        for (int a = leaf; a >= 0; a = tree.queue(a).parent) common = common || a == q;
        if (!common && held[static_cast<std::size_t>(q)] - g < share_of(q) - kEps) ok = false;
      }
      if (!ok) continue;
      for (int q = v; q >= 0; q = tree.queue(q).parent) held[static_cast<std::size_t>(q)] -= g;
      victims.push_back(s);
      gained += g;
    }
    if (gained < need || victims.empty()) continue;
    bool free_stop = true;
    for (JobSlot v : victims) {
      const JobView& r = view.job(v);
      out.preempt(v);
      memo(v).reclaimed = true;
      if (physics && Tick::from_seconds(physics->checkpoint_save_s(r, static_cast<int>(r.devices().size()))).us() > 0) free_stop = false;
    }
    held_ = held;
    if (free_stop && coming == 0) {
      // Free checkpoints: the victims' devices are released as the batch is applied, so
      // the reclaimer starts on them now (nothing else might happen before it could).
      for (JobSlot v : victims) {
        for (DeviceId d : view.job(v).devices()) {
          avail_[static_cast<std::size_t>(d)] = 1;
          ++free_total_;
        }
      }
      if (try_start(view, head, leaf, out)) {
        if (started_.size() <= static_cast<std::size_t>(head)) started_.resize(static_cast<std::size_t>(head) + 1, 0);
        started_[static_cast<std::size_t>(head)] = 1;
      } else {
        // The placement refused the freed set (e.g. device types): the victims are back in
        // the queue at once, and no event may follow; decide again a tick later.
        wake_s = std::min(wake_s, view.now().seconds());
      }
    } else {
      for (JobSlot v : victims) coming += static_cast<int>(view.job(v).devices().size());
    }
  }
  if (std::isfinite(wake_s)) {
    Tick at = Tick::from_seconds(wake_s);
    if (at.seconds() < wake_s) at = Tick::from_us(at.us() + 1);
    if (at <= view.now()) at = Tick::from_us(view.now().us() + 1);
    out.wake_at(at);
  }
}

void QueueTreePolicy::snapshot(SnapshotArchive& ar) {
  ar.section("queue tree policy");
  // Bound devices are the kernel's (it snapshots them); the policy keeps its timers.
  ar.io_each(memos_, [&](Memo& m) { ar(m.deadline_s, m.timed_out, m.reclaimed, m.queued_s); });
}

PolicyInfo queue_tree_policy_info(const std::string& name, const std::string& description, const QueueTreeOptions& defaults) {
  return PolicyInfo{
      name,
      description,
      QueueTreeOptions::docs(defaults),
      [name, defaults](const ConfigNode& config, const PolicyContext& /*context*/) {
        std::vector<std::string> keys = {"name"};
        for (const auto& k : QueueTreeOptions::keys()) keys.push_back(k);
        config.expect_keys(keys);
        QueueTreeOptions options = QueueTreeOptions::parse(config, defaults);
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = name;
        options.write(resolved);
        return PolicyInstance{std::make_unique<QueueTreePolicy>(name, std::move(options)), resolved};
      },
  };
}

PolicyInfo queue_tree_generic_policy_info() {
  return queue_tree_policy_info("queue-tree", "hierarchical queues (weights, guaranteed/max GPUs) with proportion, DRF or guaranteed shares, gang modes, reclaim and topology placement; volcano and yunikorn are presets of it",
                                QueueTreeOptions{});
}

PolicyInfo volcano_policy_info() {
  QueueTreeOptions d;
  d.share = QueueShare::kProportion;
  d.sort = AppSort::kPriority;
  d.reclaim = true;
  d.gang = GangMode::kAllOrNothing;
  d.placement = TopologyPick::kNvlink;
  return queue_tree_policy_info("volcano", "Volcano: gang (minAvailable), proportion shares over weighted queues (or drf), reclaim between queues, binpack and NVLink-/topology-aware placement", d);
}

PolicyInfo yunikorn_policy_info() {
  QueueTreeOptions d;
  d.share = QueueShare::kGuaranteed;
  d.sort = AppSort::kFair;
  d.reclaim = true;
  d.reclaim_delay_s = 30.0;  // YuniKorn's preemption.delay default
  d.gang = GangMode::kPlaceholders;
  d.placeholder_timeout_s = 900.0;
  d.placement = TopologyPick::kBinpack;
  return queue_tree_policy_info("yunikorn", "Apache YuniKorn: hierarchical queues with guaranteed/max GPUs, fair queue and application sorting, preemption across queues, gang through placeholders with a timeout", d);
}

}  // namespace schedsim
