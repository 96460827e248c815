#include "rl/env/candidates.hpp"

#include <algorithm>
#include <cmath>

#include "sim/error.hpp"
#include "sim/simulator.hpp"

namespace schedsim::rl {

void PendingQueue::on_job_queued(const SchedulerView& view, JobSlot job) {
  const JobState& j = view.job(job);
  const auto index = static_cast<std::size_t>(job);
  if (by_slot_.size() <= index) by_slot_.resize(index + 1);
  Queued& q = by_slot_[index];
  if (q.in_queue) remove(job);
  switch (order_) {
    case CandidateOrder::kArrival: q.key = 0.0; break;
    case CandidateOrder::kShortestEstimate: q.key = estimated_total_s(j.spec); break;
    case CandidateOrder::kFewestGpus: q.key = j.spec.num_gpus; break;
  }
  q.seq = j.arrival_seq;
  q.in_queue = true;
  q.gpus = j.spec.num_gpus;
  q.gpu_s = j.spec.num_gpus * estimated_total_s(j.spec);
  queue_.emplace(q.key, q.seq, job);
  queued_gpus_ += j.spec.num_gpus;
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
}

double CandidateBuilder::best_rate(const JobSpec& job) const {
  if (!physics_) return 1.0;
  double best = 0.0;
  for (int t = 0; t < static_cast<int>(cluster_.device_types().size()); ++t) best = std::max(best, physics_->estimated_rate(job, t, job.num_gpus));
  return best;
}

bool CandidateBuilder::place(PlacementOption option, const JobSpec& job, const ClusterState& state, std::vector<DeviceId>& out) {
  const int n = job.num_gpus;
  free_.reset(state);
  switch (option) {
    case PlacementOption::kPacked: return free_.packed(n, node_rack_, out);
    case PlacementOption::kFirstFit: return free_.first_fit(n, out);
    case PlacementOption::kFastestType:
    case PlacementOption::kSlowestType: {
      if (!typed_options_) return false;  // the same device set as packed
      type_order_.clear();
      const int types = static_cast<int>(cluster_.device_types().size());
      for (int t = 0; t < types; ++t) {
        const double r = physics_->estimated_rate(job, t, n);
        if (r > 0) type_order_.emplace_back(option == PlacementOption::kFastestType ? -r : r, t);
      }
      std::stable_sort(type_order_.begin(), type_order_.end());
      for (const auto& [unused, t] : type_order_) {
        if (free_.packed(n, node_rack_, out, t)) return true;
      }
      return false;
    }
  }
  return false;
}

void CandidateBuilder::describe(const Simulator& sim, const JobSpec& job, Candidate& c) const {
  const ClusterState& state = sim.cluster_state();
  c.nodes = 0;
  c.racks = 0;
  c.shares_node = false;
  c.best_rate = best_rate(job);
  const WorkloadProfile* profile = physics_ ? physics_->profile_of(job) : nullptr;
  const double need = profile ? profile->memory_per_device_bytes : 0.0;
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
  for (DeviceId d : c.devices) {  // sorted, and a node's devices are contiguous
    const int node = cluster_.node_of(d);
    if (node == last_node) continue;
    last_node = node;
    ++c.nodes;
    const NodeSpec& ns = cluster_.node(node);
    if (state.free_on_node(node) < ns.num_devices) c.shares_node = true;
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
  c.rate = physics_ ? physics_->uncontended_rate(job, c.devices) : 1.0;
  c.best_rate = std::max(c.best_rate, c.rate);
  c.memory_use = need > 0 && least_memory > 0 ? need / least_memory : 0.0;
}

int CandidateBuilder::build(const Simulator& sim, const PendingQueue& queue, std::vector<Candidate>& out) {
  const int k = config_.max_candidates;
  if (static_cast<int>(out.size()) != k) out.resize(static_cast<std::size_t>(k));
  const ClusterState& state = sim.cluster_state();
  const int free_count = state.free_devices();
  int rows = 0, blocked = 0, scanned = 0;
  for (const auto& [key, seq, slot] : queue.jobs()) {
    if (rows == k || scanned == config_.max_scan) break;
    const int rank = scanned++;
    const JobSpec& job = sim.job(slot).spec;
    bool any = false;
    seen_.clear();
    if (job.num_gpus <= free_count) {
      for (PlacementOption option : config_.placements) {
        if (rows == k) break;
        scratch_.clear();
        if (!place(option, job, state, scratch_)) continue;
        std::sort(scratch_.begin(), scratch_.end());
        if (std::find(seen_.begin(), seen_.end(), scratch_) != seen_.end()) continue;
        seen_.push_back(scratch_);
        if (physics_ && !physics_->placement_problem(job, scratch_).empty()) continue;
        Candidate& c = out[static_cast<std::size_t>(rows++)];
        c.legal = true;
        c.job = slot;
        c.rank = rank;
        c.option = option;
        c.devices.assign(scratch_.begin(), scratch_.end());
        describe(sim, job, c);
        any = true;
      }
    }
    if (!any && blocked < config_.max_blocked_rows && rows < k) {
      Candidate& c = out[static_cast<std::size_t>(rows++)];
      c.legal = false;
      c.job = slot;
      c.rank = rank;
      c.option = PlacementOption::kPacked;
      c.devices.clear();
      describe(sim, job, c);
      ++blocked;
    }
  }
  return rows;
}

}  // namespace schedsim::rl
