#include "policies/kubernetes.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "world/geography/datacenters.hpp"
#include "base/error.hpp"

namespace schedsim {
namespace {

// A pod's place in the active queue (PrioritySort): higher priority first, then earlier
// creation. Pods created at the same instant interleave by pod index (pod 0 of every
// job, then pod 1, ...), as job controllers reconciling side by side create them; then
// job creation order. (Kubernetes leaves that tie to timing.)
struct PodKey {
  double neg_priority = 0.0;
  std::int64_t created_us = 0;
  int pod = 0;
  std::uint64_t job_seq = 0;
  JobSlot slot = kNoJob;
  bool operator<(const PodKey& o) const {
    return std::tie(neg_priority, created_us, pod, job_seq) < std::tie(o.neg_priority, o.created_us, o.pod, o.job_seq);
  }
};

enum class PodState : std::uint8_t { kActive, kBackoff, kUnschedulable, kBound };

struct Pod {
  int gpus = 0;
  PodState state = PodState::kActive;
  std::uint32_t attempts = 0;           // failed scheduling attempts
  std::int64_t backoff_until_us = 0;    // after a failed attempt
  std::vector<DeviceId> devices;        // once bound
};

// The pods of one job in the system. Rigid whole-GPU jobs bind pod by pod; elastic and
// fractional jobs (no Kubernetes notion) are one queue entry started whole.
struct JobPods {
  double neg_priority = 0.0;
  std::int64_t created_us = 0;
  std::uint64_t seq = 0;
  bool whole = false;       // started with one start action once every pod fits
  bool started = false;     // its last pod bound (or started whole): the kernel runs it
  std::int64_t first_bind_us = -1;  // when its first pod bound (pending timeout), -1 = none bound
  int bound_gpus = 0;
  std::uint32_t restarts = 0;  // pending timeouts (and lost devices) so far: the restart backoff doubles
  std::vector<Pod> pods;
  PodKey key(int pod, JobSlot slot) const { return PodKey{neg_priority, created_us, pod, seq, slot}; }
};

void snapshot_fields(SnapshotArchive& ar, Pod& p) { ar(p.gpus, p.state, p.attempts, p.backoff_until_us, p.devices); }

class KubernetesPolicy : public Policy {
 public:
  explicit KubernetesPolicy(const KubernetesOptions& o) : o_(o) {}
  std::string name() const override { return "kubernetes"; }
  bool may_bind() const override { return true; }

  void on_job_queued(const SchedulerView& view, JobSlot slot) override {
    // New, or back after a preemption or failure (its pods are created again).
    if (jobs_.count(slot)) forget(slot);
    create_pods(view, slot);
  }
  void on_job_finished(const SchedulerView& /*view*/, JobSlot slot) override {
    forget(slot);
    event_ = true;  // its GPUs are free: unschedulable pods are worth a retry
  }

  void decide(const SchedulerView& view, ActionBatch& out) override {
    begin_decision(view);
    const std::int64_t now = view.now().us();
    // A bound device that failed or was taken back leaves the job short: its pods are
    // deleted and created again, as a job controller does.
    for (const JobSlot slot : std::vector<JobSlot>(partial_.begin(), partial_.end())) {
      if (static_cast<int>(view.bound_devices(slot).size()) != jobs_.at(slot).bound_gpus) restart(view, slot, out);
    }
    if (event_ || view.cluster_state().free_devices() > free_after_) requeue_unschedulable(now);
    event_ = false;
    cycles(view, out);
    // Pending timeouts, one job at a time: its GPUs go to the queue before the next.
    while (!deadlines_.empty() && std::get<0>(*deadlines_.begin()) <= now) {
      const JobSlot slot = std::get<2>(*deadlines_.begin());
      ++timeouts_;
      restart(view, slot, out);
      requeue_unschedulable(now);
      cycles(view, out);
    }
    if (!backoff_.empty()) out.wake_at(Tick::from_us(std::get<0>(*backoff_.begin())));
    if (!deadlines_.empty()) out.wake_at(Tick::from_us(std::get<0>(*deadlines_.begin())));
    free_after_ = view.cluster_state().free_devices() + free_delta_;
  }

  void snapshot(SnapshotArchive& ar) override {
    ar.section("kubernetes policy");
    std::vector<JobSlot> slots;
    std::vector<JobPods> jobs;
    for (auto& [slot, j] : jobs_) {
      slots.push_back(slot);
      jobs.push_back(j);
    }
    ar(slots);
    ar.io_each(jobs, [&](JobPods& j) {
      ar(j.neg_priority, j.created_us, j.seq, j.whole, j.started, j.first_bind_us, j.bound_gpus, j.restarts);
      ar.io_each(j.pods, [&](Pod& p) { snapshot_fields(ar, p); });
    });
    ar(seq_, event_, free_after_, timeouts_);
    if (!ar.loading()) return;
    ar.check(slots.size() == jobs.size(), "the kubernetes policy's job table is inconsistent");
    jobs_.clear();
    active_.clear();
    backoff_.clear();
    unschedulable_.clear();
    deadlines_.clear();
    partial_.clear();
    for (std::size_t i = 0; i < slots.size(); ++i) {
      ar.check_job_slot(slots[i], "the kubernetes policy's job slot " + std::to_string(slots[i]));
      JobPods& j = jobs_[slots[i]] = jobs[i];
      int bound = 0;
      for (std::size_t p = 0; p < j.pods.size(); ++p) {
        const Pod& pod = j.pods[p];
        ar.check(static_cast<int>(pod.state) <= static_cast<int>(PodState::kBound) && pod.gpus > 0, "a kubernetes pod has a state or size out of range");
        for (DeviceId d : pod.devices) ar.check_device(d, "a kubernetes pod's device");
        if (pod.state == PodState::kBound) bound += static_cast<int>(pod.devices.size());
        enqueue(j, static_cast<int>(p), slots[i]);
      }
      ar.check(bound == j.bound_gpus, "a kubernetes job's bound GPUs do not match its pods");
      track(slots[i], j);
    }
  }

 private:
  // GPUs of each pod of `spec`: ceil(n / g) pods of g, the last one the rest.
  int pod_gpus(const SchedulerView& view, const JobView& spec) const {
    if (o_.gpus_per_pod > 0) return o_.gpus_per_pod;
    // One pod per node: the node size of the job's device type (largest node when untyped).
    int size = 0;
    const ClusterSpec& c = view.cluster();
    for (const NodeGroup& g : c.groups()) {
      if (spec.gpu_type().empty() || g.type == spec.gpu_type()) size = std::max(size, g.devices_per_node);
    }
    return std::max(size, 1);
  }

  void create_pods(const SchedulerView& view, JobSlot slot) {
    const JobView& spec = view.job(slot);
    JobPods j;
    j.neg_priority = -spec.priority();
    j.created_us = view.now().us();
    j.seq = seq_++;
    j.whole = spec.is_elastic() || spec.is_fractional();
    const int g = pod_gpus(view, spec);
    if (j.whole) {
      j.pods.push_back(Pod{spec.num_gpus(), PodState::kActive, 0, 0, {}});
    } else {
      for (int left = spec.num_gpus(); left > 0; left -= g) j.pods.push_back(Pod{std::min(g, left), PodState::kActive, 0, 0, {}});
    }
    JobPods& stored = jobs_[slot] = std::move(j);
    for (int p = 0; p < static_cast<int>(stored.pods.size()); ++p) active_.insert(stored.key(p, slot));
  }

  // Drops every trace of the job from the queues.
  void forget(JobSlot slot) {
    const auto it = jobs_.find(slot);
    if (it == jobs_.end()) return;
    const JobPods& j = it->second;
    for (int p = 0; p < static_cast<int>(j.pods.size()); ++p) {
      const PodKey k = j.key(p, slot);
      active_.erase(k);
      unschedulable_.erase(k);
      backoff_.erase({j.pods[static_cast<std::size_t>(p)].backoff_until_us, k});
    }
    if (j.first_bind_us >= 0) deadlines_.erase({j.first_bind_us + timeout_us(), j.seq, slot});
    partial_.erase(slot);
    jobs_.erase(it);
  }

  std::int64_t timeout_us() const { return Tick::from_seconds(o_.pending_timeout_s).us(); }

  // Puts a pod into the container its state names (after a snapshot is loaded).
  void enqueue(const JobPods& j, int p, JobSlot slot) {
    const Pod& pod = j.pods[static_cast<std::size_t>(p)];
    const PodKey k = j.key(p, slot);
    if (pod.state == PodState::kActive) active_.insert(k);
    if (pod.state == PodState::kUnschedulable) unschedulable_.insert(k);
    if (pod.state == PodState::kBackoff) backoff_.insert({pod.backoff_until_us, k});
  }
  // The job's timeout and partly-bound bookkeeping, from its state.
  void track(JobSlot slot, const JobPods& j) {
    if (j.started || j.first_bind_us < 0) return;
    partial_.insert(slot);
    if (o_.pending_timeout_s > 0) deadlines_.insert({j.first_bind_us + timeout_us(), j.seq, slot});
  }

  // The job controller deletes the job's pods and creates them again, behind the queue,
  // after restart_backoff_s x 2^(restarts - 1) (Kueue requeues an evicted workload after
  // an exponential backoff too):
  // bound GPUs are released (an unbind) and, since the backoff outlasts every pod backoff,
  // the pods the job was blocking are retried before it comes back. (Without it two jobs
  // could take the same halves again at once, forever.)
  void restart(const SchedulerView& view, JobSlot slot, ActionBatch& out) {
    JobPods& j = jobs_.at(slot);
    for (const Pod& pod : j.pods) {
      for (DeviceId d : pod.devices) release(view, d);
    }
    const std::uint32_t restarts = j.restarts + 1;
    out.unbind(slot);
    forget(slot);
    create_pods(view, slot);
    JobPods& fresh = jobs_.at(slot);
    fresh.restarts = restarts;
    // Doubling with each restart of the job, without a cap: jobs that keep taking parts of
    // each other's GPUs end up out of the queue together, and one then gets all it needs.
    const double backoff_s = o_.restart_backoff_s * std::ldexp(1.0, static_cast<int>(std::min<std::uint32_t>(restarts, 40)) - 1);
    const std::int64_t until = view.now().us() + Tick::from_seconds(backoff_s).us();
    for (int p = 0; p < static_cast<int>(fresh.pods.size()); ++p) {
      const PodKey k = fresh.key(p, slot);
      active_.erase(k);
      Pod& pod = fresh.pods[static_cast<std::size_t>(p)];
      pod.state = PodState::kBackoff;
      pod.backoff_until_us = until;
      backoff_.insert({until, k});
    }
  }

  // Cluster event (GPUs freed): unschedulable pods move to the active queue, or to the
  // backoff queue while their backoff runs.
  void requeue_unschedulable(std::int64_t now) {
    for (const PodKey& k : unschedulable_) {
      Pod& pod = jobs_.at(k.slot).pods[static_cast<std::size_t>(k.pod)];
      if (pod.backoff_until_us <= now) {
        pod.state = PodState::kActive;
        active_.insert(k);
      } else {
        pod.state = PodState::kBackoff;
        backoff_.insert({pod.backoff_until_us, k});
      }
    }
    unschedulable_.clear();
  }

  // Scheduling cycles: one pod at a time, in queue order, until the active queue is empty.
  void cycles(const SchedulerView& view, ActionBatch& out) {
    const std::int64_t now = view.now().us();
    while (!backoff_.empty() && std::get<0>(*backoff_.begin()) <= now) {  // backoff over
      const PodKey k = std::get<1>(*backoff_.begin());
      backoff_.erase(backoff_.begin());
      jobs_.at(k.slot).pods[static_cast<std::size_t>(k.pod)].state = PodState::kActive;
      active_.insert(k);
    }
    while (!active_.empty()) {
      const PodKey k = *active_.begin();
      active_.erase(active_.begin());
      JobPods& j = jobs_.at(k.slot);
      Pod& pod = j.pods[static_cast<std::size_t>(k.pod)];
      if (schedule_pod(view, k.slot, j, pod, out)) continue;
      ++pod.attempts;
      const double backoff_s = std::min(o_.max_backoff_s, o_.initial_backoff_s * std::ldexp(1.0, static_cast<int>(std::min<std::uint32_t>(pod.attempts, 60)) - 1));
      pod.backoff_until_us = now + Tick::from_seconds(backoff_s).us();
      pod.state = PodState::kUnschedulable;
      unschedulable_.insert(k);
    }
  }

  // Filter + score + bind for one pod; false when no node fits (unschedulable).
  bool schedule_pod(const SchedulerView& view, JobSlot slot, JobPods& j, Pod& pod, ActionBatch& out) {
    const JobView& spec = view.job(slot);
    if (spec.is_fractional()) return start_fractional(view, slot, j, pod, out);
    placed_.clear();
    for (const Pod& p : j.pods) placed_.insert(placed_.end(), p.devices.begin(), p.devices.end());
    const std::size_t before = placed_.size();
    // An elastic job's entry is its pods together: each placed in turn, all or none.
    const int g = j.whole ? pod_gpus(view, spec) : pod.gpus;
    for (int left = pod.gpus; left > 0; left -= g) {
      if (!place_chunk(view, spec, std::min(g, left), left <= g && (j.whole || j.bound_gpus + pod.gpus == spec.num_gpus()))) {
        for (std::size_t i = before; i < placed_.size(); ++i) unclaim(view, placed_[i]);
        return false;
      }
    }
    const Span<DeviceId> fresh(placed_.data() + before, placed_.size() - before);
    if (j.whole) {
      out.start(slot, fresh);
      j.started = true;
      return true;
    }
    pod.devices.assign(fresh.begin(), fresh.end());
    pod.state = PodState::kBound;
    out.bind(slot, fresh);
    j.bound_gpus += pod.gpus;
    if (j.first_bind_us < 0) {
      j.first_bind_us = view.now().us();
      track(slot, j);
    }
    if (j.bound_gpus == spec.num_gpus()) {  // the last pod: the kernel starts the job
      j.started = true;
      partial_.erase(slot);
      deadlines_.erase({j.first_bind_us + timeout_us(), j.seq, slot});
    }
    return true;
  }

  // NodeResourcesFit filter (enough free GPUs, the job's type, the job's datacenter) and
  // LeastAllocated score (free fraction left after the pod; ties: lowest node id); the
  // pod takes the node's lowest free devices, appended to placed_ and claimed. `last`:
  // the job's set is then complete, so the hardware model must accept it too.
  bool place_chunk(const SchedulerView& view, const JobView& spec, int gpus, bool last) {
    const ClusterSpec& c = view.cluster();
    order_.clear();
    for (int n = 0; n < c.num_nodes(); ++n) {
      const NodeSpec& node = c.node(n);
      if (avail_[static_cast<std::size_t>(n)] < gpus) continue;
      if (!spec.gpu_type().empty() && c.device_types()[static_cast<std::size_t>(node.type_index)] != spec.gpu_type()) continue;
      const double score = static_cast<double>(avail_[static_cast<std::size_t>(n)] - gpus) / node.num_devices;
      order_.push_back({-score, n});
    }
    std::sort(order_.begin(), order_.end());
    const std::size_t before = placed_.size();
    for (const auto& [neg_score, n] : order_) {
      const NodeSpec& node = c.node(n);
      for (DeviceId d = node.first_device; d < node.first_device + node.num_devices && static_cast<int>(placed_.size() - before) < gpus; ++d) {
        if (available(view, d)) placed_.push_back(d);
      }
      bool ok = static_cast<int>(placed_.size() - before) == gpus;
      if (ok && view.geography()) ok = view.geography()->placement_problem(spec, placed_).empty();
      if (ok && last && view.physics()) ok = view.physics()->placement_problem(spec, placed_).empty();
      if (ok) {
        for (std::size_t i = before; i < placed_.size(); ++i) claim(view, placed_[i]);
        return true;
      }
      placed_.resize(before);
    }
    return false;
  }

  // A fractional pod (GPU sharing, which needs a device plugin on Kubernetes): the lowest
  // device of the job's type with enough free share.
  bool start_fractional(const SchedulerView& view, JobSlot slot, JobPods& j, Pod& /*pod*/, ActionBatch& out) {
    const JobView& spec = view.job(slot);
    const ClusterSpec& c = view.cluster();
    const ClusterState& s = view.cluster_state();
    for (DeviceId d = 0; d < c.num_devices(); ++d) {
      if (!spec.gpu_type().empty() && c.device_type_of(d) != spec.gpu_type()) continue;
      if (claimed_[static_cast<std::size_t>(d)] || released_[static_cast<std::size_t>(d)] || s.is_failed(d)) continue;
      const auto used = claimed_milli_.find(d);
      const int free_milli = s.free_milli(d) - (used == claimed_milli_.end() ? 0 : used->second);
      if (free_milli < spec.gpu_milli()) continue;
      const DeviceId one[] = {d};
      if (view.geography() && !view.geography()->placement_problem(spec, Span<DeviceId>(one, 1)).empty()) continue;
      if (view.physics() && !view.physics()->placement_problem(spec, Span<DeviceId>(one, 1)).empty()) continue;
      if (s.is_free(d) && used == claimed_milli_.end()) {
        --avail_[static_cast<std::size_t>(c.node_of(d))];
        --free_delta_;
      }
      claimed_milli_[d] += spec.gpu_milli();
      out.start(slot, Span<DeviceId>(one, 1));
      j.started = true;
      return true;
    }
    return false;
  }

  // This decision's view of free devices: the cluster's, minus what it claimed, plus what
  // it released (unbound earlier in the same batch).
  void begin_decision(const SchedulerView& view) {
    const ClusterSpec& c = view.cluster();
    const auto n = static_cast<std::size_t>(c.num_devices());
    if (claimed_.size() != n) {
      claimed_.assign(n, 0);
      released_.assign(n, 0);
    }
    for (DeviceId d : touched_) claimed_[static_cast<std::size_t>(d)] = released_[static_cast<std::size_t>(d)] = 0;
    touched_.clear();
    claimed_milli_.clear();
    avail_.resize(static_cast<std::size_t>(c.num_nodes()));
    for (int node = 0; node < c.num_nodes(); ++node) avail_[static_cast<std::size_t>(node)] = view.cluster_state().free_on_node(node);
    free_delta_ = 0;
  }
  bool available(const SchedulerView& view, DeviceId d) const {
    const auto i = static_cast<std::size_t>(d);
    return !claimed_[i] && (released_[i] || view.cluster_state().is_free(d)) && claimed_milli_.find(d) == claimed_milli_.end();
  }
  void claim(const SchedulerView& view, DeviceId d) {
    claimed_[static_cast<std::size_t>(d)] = 1;
    touched_.push_back(d);
    --avail_[static_cast<std::size_t>(view.cluster().node_of(d))];
    --free_delta_;
  }
  void unclaim(const SchedulerView& view, DeviceId d) {
    claimed_[static_cast<std::size_t>(d)] = 0;
    ++avail_[static_cast<std::size_t>(view.cluster().node_of(d))];
    ++free_delta_;
  }
  // A device bound to a restarted job is free again for the rest of the batch.
  void release(const SchedulerView& view, DeviceId d) {
    if (claimed_[static_cast<std::size_t>(d)]) {
      unclaim(view, d);
      return;
    }
    if (!view.cluster_state().is_failed(d)) {  // a bound device the kernel has taken away is not ours to give
      released_[static_cast<std::size_t>(d)] = 1;
      touched_.push_back(d);
      ++avail_[static_cast<std::size_t>(view.cluster().node_of(d))];
      ++free_delta_;
    }
  }

  KubernetesOptions o_;
  std::map<JobSlot, JobPods> jobs_;
  std::set<PodKey> active_, unschedulable_;
  std::set<std::pair<std::int64_t, PodKey>> backoff_;                  // (backoff end, pod)
  std::set<std::tuple<std::int64_t, std::uint64_t, JobSlot>> deadlines_;  // (timeout, job seq, job)
  std::set<JobSlot> partial_;  // jobs with some pods bound, not all
  std::uint64_t seq_ = 0;
  bool event_ = false;
  int free_after_ = 0;     // free devices once the last batch is applied
  std::uint64_t timeouts_ = 0;
  // Per decision.
  std::vector<char> claimed_, released_;
  std::vector<DeviceId> touched_;
  std::map<DeviceId, int> claimed_milli_;
  std::vector<int> avail_;  // free devices per node
  int free_delta_ = 0;
  std::vector<DeviceId> placed_;
  std::vector<std::pair<double, int>> order_;
};

}  // namespace

PolicyInfo kubernetes_policy_info() {
  const KubernetesOptions d;
  return PolicyInfo{
      "kubernetes",
      "the Kubernetes default scheduler: pods bound one by one (no gang), PrioritySort queue with backoff, NodeResourcesFit + LeastAllocated (spread)",
      {{"gpus_per_pod", "node", "GPUs per pod (a job of n GPUs is ceil(n / gpus_per_pod) pods); node = the node size of the job's device type (one worker per node)"},
       {"initial_backoff_s", "1", "backoff of a pod after its first unschedulable attempt, seconds (podInitialBackoffSeconds); doubles with each attempt"},
       {"max_backoff_s", "10", "largest backoff, seconds (podMaxBackoffSeconds)"},
       {"pending_timeout_s", "300", "a job whose pods are not all bound this many seconds after its first pod bound is restarted: its pods are deleted (GPUs released) and created again behind the queue; 0 = never (deadlocks stay, as in Kubernetes)"},
       {"restart_backoff_s", "60", "seconds a restarted job's new pods wait before they enter the queue, doubling with each restart of the job; at least max_backoff_s, so that the pods it blocked are retried first"}},
      [d](const ConfigNode& config, const PolicyContext& /*context*/) {
        config.expect_keys({"name", "gpus_per_pod", "initial_backoff_s", "max_backoff_s", "pending_timeout_s", "restart_backoff_s"});
        KubernetesOptions o = d;
        if (auto v = config.maybe_child("gpus_per_pod")) {
          if (!(v->is_scalar() && v->as_string() == "node")) {
            const std::int64_t g = v->as_positive_int();
            if (g > 1'000'000) v->fail("must be 'node' or a positive number of GPUs up to 1000000, got " + std::to_string(g));
            o.gpus_per_pod = static_cast<int>(g);
          }
        }
        if (auto v = config.maybe_child("initial_backoff_s")) o.initial_backoff_s = v->as_positive_double();
        if (auto v = config.maybe_child("max_backoff_s")) o.max_backoff_s = v->as_positive_double();
        if (o.max_backoff_s < o.initial_backoff_s) {
          config.child(config.has("max_backoff_s") ? "max_backoff_s" : "initial_backoff_s")
              .fail("max_backoff_s (" + format_seconds(Tick::from_seconds(o.max_backoff_s)) + " s) must be at least initial_backoff_s (" +
                    format_seconds(Tick::from_seconds(o.initial_backoff_s)) + " s)");
        }
        if (auto v = config.maybe_child("pending_timeout_s")) o.pending_timeout_s = v->as_nonnegative_double();
        if (auto v = config.maybe_child("restart_backoff_s")) o.restart_backoff_s = v->as_positive_double();
        if (o.restart_backoff_s < o.max_backoff_s) {
          config.child(config.has("restart_backoff_s") ? "restart_backoff_s" : "max_backoff_s")
              .fail("restart_backoff_s (" + format_seconds(Tick::from_seconds(o.restart_backoff_s)) + " s) must be at least max_backoff_s (" +
                    format_seconds(Tick::from_seconds(o.max_backoff_s)) + " s), so that the pods a restarted job blocked are retried before it comes back");
        }
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = "kubernetes";
        if (o.gpus_per_pod > 0) resolved["gpus_per_pod"] = o.gpus_per_pod;
        else resolved["gpus_per_pod"] = "node";
        resolved["initial_backoff_s"] = o.initial_backoff_s;
        resolved["max_backoff_s"] = o.max_backoff_s;
        resolved["pending_timeout_s"] = o.pending_timeout_s;
        resolved["restart_backoff_s"] = o.restart_backoff_s;
        return PolicyInstance{std::make_unique<KubernetesPolicy>(o), resolved};
      },
  };
}

}  // namespace schedsim
