#include "rl/env/candidates.hpp"

#include <algorithm>
#include <cmath>

#include "policies/queue_order.hpp"
#include "world/geography/datacenters.hpp"
#include "base/error.hpp"
#include "sim/simulator.hpp"
#include "world/thermal/thermal.hpp"

namespace schedsim::rl {

void PendingQueue::on_job_queued(const SchedulerView& view, JobSlot job) {
  const JobView& j = view.job(job);
  const auto index = static_cast<std::size_t>(job);
  if (by_slot_.size() <= index) by_slot_.resize(index + 1);
  Queued& q = by_slot_[index];
  if (q.in_queue) remove(job);
  switch (order_) {
    case CandidateOrder::kArrival: q.key = 0.0; break;
    case CandidateOrder::kShortestEstimate: q.key = observed_total_s(info_, j); break;
    case CandidateOrder::kFewestGpus: q.key = j.num_gpus(); break;
    // A waiting job's attained service does not change, so the key set here holds until it starts.
    case CandidateOrder::kLeastAttained: q.key = j.num_gpus() * attained_work_s(view, j); break;
  }
  q.seq = j.arrival_seq();
  q.in_queue = true;
  q.gpus = j.num_gpus();
  q.gpu_s = j.num_gpus() * observed_total_s(info_, j);
  queue_.emplace(q.key, q.seq, job);
  queued_gpus_ += j.num_gpus();
  queued_gpu_s_ += q.gpu_s;
}

void PendingQueue::remove(JobSlot job) {
  Queued& q = by_slot_[static_cast<std::size_t>(job)];
  if (!q.in_queue) return;
  queue_.erase({q.key, q.seq, job});
  q.in_queue = false;
  queued_gpus_ -= q.gpus;
  queued_gpu_s_ -= q.gpu_s;
  if (queue_.empty()) {  // no drift from floating-point sums over a long episode
    queued_gpus_ = 0;
    queued_gpu_s_ = 0.0;
  }
}

void PendingQueue::on_job_finished(const SchedulerView& /*view*/, JobSlot job) {
  if (static_cast<std::size_t>(job) < by_slot_.size()) remove(job);
}

void PendingQueue::decide(const SchedulerView& /*view*/, ActionBatch& /*out*/) {
  throw InvariantError("the RL environment's queue tracker was asked to decide: drive the simulator with advance()/apply()");
}

void PendingQueue::started(JobSlot job) { remove(job); }

void PendingQueue::clear() {
  queue_.clear();
  by_slot_.clear();
  queued_gpus_ = 0;
  queued_gpu_s_ = 0.0;
}

CandidateBuilder::CandidateBuilder(const EnvConfig& config, const ClusterSpec& cluster, const ClusterPhysics* physics,
                                   const std::vector<int>* node_rack, const AcceleratorCatalogue& accelerators)
    : config_(config),
      cluster_(cluster),
      physics_(physics),
      node_rack_(node_rack),
      typed_options_(physics != nullptr && cluster.device_types().size() > 1) {
  for (const auto& type : cluster.device_types()) {
    const AcceleratorSpec* a = accelerators.find(type);
    type_memory_bytes_.push_back(a ? a->memory_bytes : 0.0);
  }
  free_.set_claiming(false);
}

CandidateBuilder::Rates& CandidateBuilder::rates_of(JobSlot slot, const JobView& job) {
  const auto index = static_cast<std::size_t>(slot);
  if (rates_.size() <= index) rates_.resize(index + 1);
  Rates& r = rates_[index];
  if (r.arrival_seq != job.arrival_seq()) {  // a new job in this slot
    r.arrival_seq = job.arrival_seq();
    const int types = static_cast<int>(cluster_.device_types().size());
    r.by_type.assign(static_cast<std::size_t>(types), 1.0);
    r.best = physics_ ? 0.0 : 1.0;
    for (int t = 0; physics_ && t < types; ++t) {
      r.by_type[static_cast<std::size_t>(t)] = physics_->PhysicsModel::estimated_rate(job, t, job.num_gpus());
      r.best = std::max(r.best, r.by_type[static_cast<std::size_t>(t)]);
    }
    r.by_type.push_back(r.best);  // last entry: the best
    if (typed_options_) {
      type_order(r.by_type, types, true, r.fastest_first);
      type_order(r.by_type, types, false, r.slowest_first);
    }
    const WorkloadProfile* profile = physics_ ? SchedulerView::profile_of(*physics_, job) : nullptr;
    r.memory_per_device_bytes = profile ? profile->memory_per_device_bytes : 0.0;
    for (RowEstimate& e : r.rows) e.valid = false;
  }
  return r;
}

void CandidateBuilder::type_order(const std::vector<double>& rates, int types, bool fastest, std::vector<int>& out) {
  type_order_.clear();
  for (int t = 0; t < types; ++t) {
    const double r = rates[static_cast<std::size_t>(t)];
    if (r > 0) type_order_.emplace_back(fastest ? -r : r, t);
  }
  // Stable insertion sort: a handful of types (std::stable_sort would allocate a buffer).
  for (std::size_t i = 1; i < type_order_.size(); ++i) {
    for (std::size_t j = i; j > 0 && type_order_[j] < type_order_[j - 1]; --j) std::swap(type_order_[j], type_order_[j - 1]);
  }
  out.clear();
  for (const auto& [unused, t] : type_order_) out.push_back(t);
}

int CandidateBuilder::query(bool packed, int n, int only_type) {
  ++stats_.placement_lookups;
  for (std::size_t i = 0; i < query_count_; ++i) {
    const Query& q = queries_[i];
    if (q.packed == packed && q.n == n && q.only_type == only_type) return q.fits ? static_cast<int>(i) : -1;
  }
  ++stats_.placement_queries;
  if (query_count_ == queries_.size()) queries_.emplace_back();
  Query& q = queries_[query_count_];
  q.packed = packed;
  q.n = n;
  q.only_type = only_type;
  q.devices.clear();
  q.fits = packed ? free_.packed(n, node_rack_, q.devices, only_type) : free_.first_fit(n, q.devices);
  std::sort(q.devices.begin(), q.devices.end());
  const int index = static_cast<int>(query_count_++);
  return q.fits ? index : -1;
}

int CandidateBuilder::place(PlacementOption option, JobSlot slot, const JobView& job) {
  const int n = job.num_gpus();
  switch (option) {
    case PlacementOption::kPacked: return query(true, n, -1);
    case PlacementOption::kFirstFit: return query(false, n, -1);
    case PlacementOption::kFastestType:
    case PlacementOption::kSlowestType: {
      if (!typed_options_) return -1;  // the same device set as packed
      const Rates& r = rates_of(slot, job);
      for (int t : option == PlacementOption::kFastestType ? r.fastest_first : r.slowest_first) {
        const int q = query(true, n, t);
        if (q >= 0) return q;
      }
      return -1;
    }
  }
  return -1;
}

void CandidateBuilder::describe(const SchedulerView& view, JobSlot slot, const JobView& state_of_job, Candidate& c) {
  const JobView& job = state_of_job;
  const ClusterState& state = view.cluster_state();
  c.nodes = 0;
  c.racks = 0;
  c.shares_node = false;
  Rates& estimates = rates_of(slot, state_of_job);
  c.best_rate = estimates.by_type.back();
  const double need = estimates.memory_per_device_bytes;
  if (!c.legal) {
    c.rate = 0.0;
    double most = 0.0;
    for (double m : type_memory_bytes_) most = std::max(most, m);
    c.memory_use = need > 0 && most > 0 ? need / most : 0.0;
    return;
  }
  int last_node = -1;
  int racks_seen[8];
  double least_memory = 0.0;
  for (std::size_t i = 0; i < c.devices.size(); ++i) {  // sorted, and a node's devices are contiguous
    const int node = cluster_.node_of(c.devices[i]);
    if (node == last_node) continue;
    last_node = node;
    ++c.nodes;
    const NodeSpec& ns = cluster_.node(node);
    // Devices busy on the node besides the row's own (a running job holds its devices).
    int own = 0;
    if (c.preempt) {
      for (std::size_t k = i; k < c.devices.size() && cluster_.node_of(c.devices[k]) == node; ++k) ++own;
    }
    if (state.free_on_node(node) + own < ns.num_devices) c.shares_node = true;
    const double mem = type_memory_bytes_[static_cast<std::size_t>(ns.type_index)];
    if (least_memory == 0.0 || mem < least_memory) least_memory = mem;
    const int rack = node_rack_ ? (*node_rack_)[static_cast<std::size_t>(node)] : 0;
    bool seen = false;
    for (int i = 0; i < std::min(c.racks, 8); ++i) seen = seen || racks_seen[i] == rack;
    if (!seen) {
      if (c.racks < 8) racks_seen[c.racks] = rack;
      ++c.racks;
    }
  }
  // A running job's rate is the one it gets now (contention included); 1 without physics.
  if (c.preempt) {
    c.rate = state_of_job.physics_rate() > 0 ? state_of_job.physics_rate() : 1.0;
  } else if (c.migrate) {
    // The rate on the devices it would move to; add_migrate_rows computed it (the start
    // rows' cache belongs to the job's own placement options, not to a move).
  } else if (!physics_) {
    c.rate = 1.0;
  } else {  // a start row: build_starts left the option's physics answers for these devices
    RowEstimate& e = estimates.rows[static_cast<int>(c.option)];
    if (!e.rate_known) {
      e.rate = SchedulerView::uncontended_rate(*physics_, job, c.devices);
      e.rate_known = true;
    }
    c.rate = e.rate;
  }
  c.best_rate = std::max(c.best_rate, c.rate);
  c.memory_use = need > 0 && least_memory > 0 ? need / least_memory : 0.0;
}

int CandidateBuilder::add_preempt_rows(const SchedulerView& view, std::vector<Candidate>& out, int rows) {
  victims_.clear();
  for (JobSlot r = view.first_running(); r != kNoJob; r = view.next_running(r)) {
    const JobView& j = view.job(r);
    if (j.status() != JobStatus::kRunning) continue;  // already stopping
    if ((view.now() - j.placed_since()).seconds() < config_.preempt_min_run_s) continue;
    const double rate = j.physics_rate() > 0 ? j.physics_rate() : 1.0;
    // Longest estimated remaining run time first; without duration information (every
    // remaining time 0) the most attained service first, the victim LAS would choose.
    const double key = config_.information.knows_durations() ? -observed_remaining_s(config_.information, view, j) / rate : -attained_work_s(view, j);
    victims_.emplace_back(key, j.arrival_seq(), r);
  }
  const int k = config_.max_candidates;
  const int take = std::min<int>(std::min(config_.preempt_rows, k - rows), static_cast<int>(victims_.size()));
  std::partial_sort(victims_.begin(), victims_.begin() + take, victims_.end());
  for (int i = 0; i < take; ++i) {
    const JobSlot slot = std::get<2>(victims_[static_cast<std::size_t>(i)]);
    const JobView& js = view.job(slot);
    Candidate& c = out[static_cast<std::size_t>(rows++)];
    c.legal = true;
    c.preempt = true;
    c.cooling = false;
    c.migrate = false;
    c.job = slot;
    c.rank = i;
    c.option = PlacementOption::kPacked;
    c.devices.assign(js.devices().begin(), js.devices().end());
    std::sort(c.devices.begin(), c.devices.end());
    describe(view, slot, js, c);
  }
  return rows;
}

int CandidateBuilder::add_migrate_rows(const SchedulerView& view, std::vector<Candidate>& out, int rows) {
  moves_.clear();
  if (!physics_) return rows;  // every placement runs at rate 1: nothing to gain
  for (JobSlot r = view.first_running(); r != kNoJob; r = view.next_running(r)) {
    const JobView& j = view.job(r);
    if (j.status() != JobStatus::kRunning || j.stall_end() > view.now()) continue;  // stopping, or saving/restoring
    if ((view.now() - j.placed_since()).seconds() < config_.preempt_min_run_s) continue;
    const double now_rate = SchedulerView::uncontended_rate(*physics_, j, j.devices());
    if (!(now_rate > 0)) continue;
    Move best;
    for (const PlacementOption option : {PlacementOption::kFastestType, PlacementOption::kPacked}) {
      const int q = place(option, r, j);
      if (q < 0) continue;
      const std::vector<DeviceId>& devices = queries_[static_cast<std::size_t>(q)].devices;
      if (!physics_->PhysicsModel::placement_problem(j, Span<DeviceId>(devices.data(), devices.size())).empty()) continue;
      const Geography* geo = view.geography();  // a job runs inside one datacenter it may use
      if (geo && !geo->placement_problem(j, devices).empty()) continue;
      const double rate = SchedulerView::uncontended_rate(*physics_, j, Span<DeviceId>(devices.data(), devices.size()));
      if (rate > best.rate) {
        best.rate = rate;
        best.query = q;
      }
    }
    if (best.query < 0 || best.rate < now_rate * (1.0 + config_.migrate_min_gain)) continue;
    best.neg_gain = -best.rate / now_rate;
    best.seq = j.arrival_seq();
    best.job = r;
    moves_.push_back(best);
  }
  const int take = std::min<int>(std::min(config_.migrate_rows, config_.max_candidates - rows), static_cast<int>(moves_.size()));
  std::partial_sort(moves_.begin(), moves_.begin() + take, moves_.end(),
                    [](const Move& a, const Move& b) { return a.neg_gain != b.neg_gain ? a.neg_gain < b.neg_gain : a.seq < b.seq; });
  for (int i = 0; i < take; ++i) {
    const Move& m = moves_[static_cast<std::size_t>(i)];
    const JobView& js = view.job(m.job);
    Candidate& c = out[static_cast<std::size_t>(rows++)];
    c.legal = true;
    c.preempt = false;
    c.cooling = false;
    c.migrate = true;
    c.job = m.job;
    c.rank = i;
    c.option = PlacementOption::kPacked;
    c.devices = queries_[static_cast<std::size_t>(m.query)].devices;
    c.rate = m.rate;
    c.gain = -m.neg_gain;
    describe(view, m.job, js, c);
  }
  return rows;
}

int CandidateBuilder::build(const SchedulerView& view, const PendingQueue& queue, std::vector<Candidate>& out) {
  ++stats_.builds;
  const int k_all = config_.max_candidates;
  if (static_cast<int>(out.size()) != k_all) out.resize(static_cast<std::size_t>(k_all));
  const int cooling = static_cast<int>(config_.cooling_setpoints_c.size());
  int rows = build_starts(view, queue, out, k_all - config_.preempt_rows - config_.migrate_rows - cooling);
  if (config_.preempt_rows > 0) rows = add_preempt_rows(view, out, rows);
  if (config_.migrate_rows > 0) rows = add_migrate_rows(view, out, rows);
  return cooling > 0 ? add_cooling_rows(view, out, rows) : rows;
}

int CandidateBuilder::add_cooling_rows(const SchedulerView& view, std::vector<Candidate>& out, int rows) {
  const ThermalModel* thermal = view.thermal();
  for (double setpoint : config_.cooling_setpoints_c) {
    Candidate& c = out[static_cast<std::size_t>(rows++)];
    bool differs = false;
    if (thermal) {
      for (int s = 0; s < thermal->num_sites(); ++s) differs = differs || thermal->setpoint_c(s) != setpoint;
    }
    c.legal = differs && view.now() != cooling_at_;
    c.preempt = false;
    c.cooling = true;
    c.migrate = false;
    c.setpoint_c = setpoint;
    c.job = kNoJob;
    c.rank = 0;
    c.option = PlacementOption::kPacked;
    c.devices.clear();
  }
  return rows;
}

bool CandidateBuilder::first_fit_in_one_datacenter(const Geography& geo, const JobView& job, std::vector<DeviceId>& out) {
  for (int s : geo.placement_order(job)) {
    const Datacenter& site = geo.site(s);
    site_scratch_.clear();
    for (DeviceId d = site.first_device; d < site.first_device + site.num_devices; ++d) site_scratch_.push_back(d);
    out.clear();
    if (free_.first_fit_among(job.num_gpus(), site_scratch_, out)) return true;
  }
  return false;
}

int CandidateBuilder::build_starts(const SchedulerView& view, const PendingQueue& queue, std::vector<Candidate>& out, int k) {
  const ClusterState& state = view.cluster_state();
  const int free_count = state.free_devices();
  // One read-only view of the free devices for the whole build: the queries claim nothing.
  free_.reset(state);
  query_count_ = 0;
  int rows = 0, blocked = 0, scanned = 0;
  for (const auto& [key, seq, slot] : queue.jobs()) {
    if (rows == k || scanned == config_.max_scan) break;
    const int rank = scanned++;
    const JobView& js = view.job(slot);
    const JobView& job = js;
    bool any = false;
    seen_.clear();
    site_row_seen_ = false;
    if (job.num_gpus() <= free_count) {
      for (PlacementOption option : config_.placements) {
        if (rows == k) break;
        const int q = place(option, slot, js);
        if (q < 0) continue;
        const std::vector<DeviceId>* set = &queries_[static_cast<std::size_t>(q)].devices;
        // The kernel runs a job inside one datacenter it may run in.
        const Geography* geo = view.geography();
        const bool in_site = geo && !geo->placement_problem(job, *set).empty();
        if (in_site) {
          if (site_row_seen_ || !first_fit_in_one_datacenter(*geo, job, site_devices_)) continue;
          set = &site_devices_;
        }
        const std::vector<DeviceId>& devices = *set;
        bool duplicate = false;
        for (int s : seen_) duplicate = duplicate || queries_[static_cast<std::size_t>(s)].devices == devices;
        if (!in_site && site_row_seen_) duplicate = duplicate || site_devices_ == devices;
        if (duplicate) continue;
        if (in_site) site_row_seen_ = true;
        else seen_.push_back(q);
        if (physics_) {
          RowEstimate& e = rates_of(slot, js).rows[static_cast<int>(option)];
          if (e.valid && e.devices == devices) {
            ++stats_.physics_reused;
          } else {
            ++stats_.physics_evaluations;
            e.valid = true;
            e.devices.assign(devices.begin(), devices.end());
            e.problem = !physics_->PhysicsModel::placement_problem(job, devices).empty();
            e.rate_known = false;
          }
          if (e.problem) continue;
        }
        Candidate& c = out[static_cast<std::size_t>(rows++)];
        c.legal = true;
        c.preempt = false;
        c.cooling = false;
        c.migrate = false;
        c.job = slot;
        c.rank = rank;
        c.option = option;
        c.devices.assign(devices.begin(), devices.end());
        describe(view, slot, js, c);
        ++stats_.start_rows;
        any = true;
      }
    }
    if (!any && blocked < config_.max_blocked_rows && rows < k) {
      Candidate& c = out[static_cast<std::size_t>(rows++)];
      c.legal = false;
      c.preempt = false;
      c.cooling = false;
      c.migrate = false;
      c.job = slot;
      c.rank = rank;
      c.option = PlacementOption::kPacked;
      c.devices.clear();
      describe(view, slot, js, c);
      ++blocked;
    }
  }
  return rows;
}

}  // namespace schedsim::rl
