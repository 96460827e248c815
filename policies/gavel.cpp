#include "policies/gavel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "sim/error.hpp"

namespace schedsim {

std::vector<double> simplex_maximize(const std::vector<std::vector<double>>& A, const std::vector<double>& b, const std::vector<double>& c) {
  const std::size_t m = A.size(), n = c.size();
  const std::size_t cols = n + m + 1;  // variables, slacks, right-hand side
  constexpr double kEps = 1e-12;
  std::vector<double> t((m + 1) * cols, 0.0);
  auto at = [&](std::size_t r, std::size_t k) -> double& { return t[r * cols + k]; };
  std::vector<std::size_t> basis(m);
  for (std::size_t r = 0; r < m; ++r) {
    if (A[r].size() != n || b[r] < 0) throw InvariantError("simplex_maximize: malformed problem");
    for (std::size_t k = 0; k < n; ++k) at(r, k) = A[r][k];
    at(r, n + r) = 1.0;
    at(r, cols - 1) = b[r];
    basis[r] = n + r;
  }
  for (std::size_t k = 0; k < n; ++k) at(m, k) = -c[k];
  for (std::size_t iter = 0;; ++iter) {
    if (iter > 100000) throw InvariantError("simplex_maximize: no convergence");
    std::size_t enter = cols;
    for (std::size_t k = 0; k + 1 < cols; ++k) {
      if (at(m, k) < -kEps) {
        enter = k;
        break;
      }
    }
    if (enter == cols) break;  // optimal
    std::size_t leave = m;
    double best = 0.0;
    for (std::size_t r = 0; r < m; ++r) {
      if (at(r, enter) > kEps) {
        const double ratio = at(r, cols - 1) / at(r, enter);
        if (leave == m || ratio < best - kEps || (ratio <= best + kEps && basis[r] < basis[leave])) {
          leave = r;
          best = ratio;
        }
      }
    }
    if (leave == m) throw InvariantError("simplex_maximize: unbounded problem");
    const double p = at(leave, enter);
    for (std::size_t k = 0; k < cols; ++k) at(leave, k) /= p;
    for (std::size_t r = 0; r <= m; ++r) {
      if (r == leave) continue;
      const double f = at(r, enter);
      if (f == 0.0) continue;
      for (std::size_t k = 0; k < cols; ++k) at(r, k) -= f * at(leave, k);
    }
    basis[leave] = enter;
  }
  std::vector<double> x(n, 0.0);
  for (std::size_t r = 0; r < m; ++r) {
    if (basis[r] < n) x[basis[r]] = std::max(0.0, at(r, cols - 1));
  }
  return x;
}

std::vector<std::vector<double>> gavel_max_min_allocation(const std::vector<std::vector<double>>& normalized, const std::vector<int>& gpus,
                                                          const std::vector<int>& members, const std::vector<int>& capacity, double* level) {
  const std::size_t classes = normalized.size(), types = capacity.size();
  // Variables: X[c][t] at c * types + t, then the level lambda.
  const std::size_t n = classes * types + 1;
  const std::size_t lambda = n - 1;
  std::vector<std::vector<double>> A;
  std::vector<double> b;
  for (std::size_t c = 0; c < classes; ++c) {  // a job's shares of time sum to at most 1
    std::vector<double> row(n, 0.0);
    for (std::size_t t = 0; t < types; ++t) row[c * types + t] = 1.0;
    A.push_back(row);
    b.push_back(1.0);
  }
  for (std::size_t t = 0; t < types; ++t) {  // devices of each type
    std::vector<double> row(n, 0.0);
    for (std::size_t c = 0; c < classes; ++c) row[c * types + t] = static_cast<double>(gpus[c]) * members[c];
    A.push_back(row);
    b.push_back(capacity[t]);
  }
  for (std::size_t c = 0; c < classes; ++c) {  // lambda <= each class's normalized throughput
    std::vector<double> row(n, 0.0);
    for (std::size_t t = 0; t < types; ++t) row[c * types + t] = -normalized[c][t];
    row[lambda] = 1.0;
    A.push_back(row);
    b.push_back(0.0);
  }
  std::vector<double> obj(n, 0.0);
  obj[lambda] = 1.0;
  for (std::size_t c = 0; c < classes; ++c) {
    for (std::size_t t = 0; t < types; ++t) obj[c * types + t] = 1e-6 * members[c] * normalized[c][t];
  }
  const std::vector<double> x = simplex_maximize(A, b, obj);
  std::vector<std::vector<double>> X(classes, std::vector<double>(types, 0.0));
  for (std::size_t c = 0; c < classes; ++c) {
    for (std::size_t t = 0; t < types; ++t) X[c][t] = x[c * types + t];
  }
  if (level) *level = x[lambda];
  return X;
}

namespace {

class GavelPolicy : public Policy {
 public:
  explicit GavelPolicy(double round_s) : round_us_(static_cast<std::int64_t>(std::llround(round_s * 1e6))) {}
  std::string name() const override { return "gavel"; }

  void on_job_queued(const SchedulerView& view, JobSlot job) override {
    Job& j = grow(job);
    if (view.job(job).preemptions == 0) j = Job{};  // a new arrival (slots are reused)
    j.queued_seq = next_seq_++;
    queue_.emplace(j.queued_seq, job);
  }

  void on_job_finished(const SchedulerView& /*view*/, JobSlot job) override {
    Job& j = jobs_[static_cast<std::size_t>(job)];
    queue_.erase({j.queued_seq, job});
  }

  void decide(const SchedulerView& view, ActionBatch& out) override {
    const ClusterSpec& spec = view.cluster();
    types_ = static_cast<int>(spec.device_types().size());
    capacity_.assign(static_cast<std::size_t>(types_), 0);
    for (int k = 0; k < spec.num_nodes(); ++k) capacity_[static_cast<std::size_t>(spec.node(k).type_index)] += spec.node(k).num_devices;
    const std::int64_t now_us = view.now().us();
    // This batch's view of usable devices: the cluster's free ones, minus those taken,
    // plus those released by this batch (sparse overlay: O(changes) per decision).
    state_ = &view.cluster_state();
    for (DeviceId d : marked_) mark_[static_cast<std::size_t>(d)] = 0;
    marked_.clear();
    for (int k : touched_nodes_) node_delta_[static_cast<std::size_t>(k)] = 0;
    touched_nodes_.clear();
    mark_.resize(static_cast<std::size_t>(spec.num_devices()), 0);
    node_delta_.resize(static_cast<std::size_t>(spec.num_nodes()), 0);
    avail_total_ = state_->free_devices();
    if (now_us >= round_end_us_) {
      round_end_us_ = now_us + round_us_;
      new_round(view, out);
    } else {
      fill(view, out);
    }
    // The next round boundary is a decision point even when nothing else happens then.
    if (view.num_pending() + view.num_running() > 0) out.wake_at(Tick::from_us(round_end_us_));
  }

  // The per-decision overlay (mark_, node_delta_...) is reset at the start of each decision.
  void snapshot(SnapshotArchive& ar) override {
    ar(round_end_us_, next_seq_, queue_);
    ar.io_each(jobs_, [&](Job& j) { ar(j.queued_seq, j.received_s, j.x, j.granted, j.on_type, j.since_us); });
    if (!ar.loading()) return;
    // Slots and types index jobs_ and the per-type vectors unchecked.
    for (const auto& [seq, slot] : queue_) {
      ar.check_job_slot(slot, "gavel's queue");
      ar.check(static_cast<std::size_t>(slot) < jobs_.size() && jobs_[static_cast<std::size_t>(slot)].queued_seq == seq, "gavel's queue entry for job slot " + std::to_string(slot) + " has another sequence");
    }
    for (const Job& j : jobs_) {
      const int types = static_cast<int>(j.received_s.size());
      ar.check((j.x.empty() || j.x.size() == j.received_s.size()) && j.granted >= -1 && j.granted < types && j.on_type >= -1 && j.on_type < types,
               "gavel's job record names a device type it has no entry for");
    }
  }
 private:
  struct Job {
    std::uint64_t queued_seq = 0;
    std::vector<double> received_s;  // by type: time held on it
    std::vector<double> x;           // this round's allocation by type
    int granted = -1;                // the type granted this round, -1 = none
    int on_type = -1;                // the type it runs on, -1 = not running
    std::int64_t since_us = 0;       // since when (received_s is up to date until then)
  };

  Job& grow(JobSlot job) {
    const auto i = static_cast<std::size_t>(job);
    if (jobs_.size() <= i) jobs_.resize(i + 1);
    return jobs_[i];
  }

  int type_of(const ClusterSpec& spec, DeviceId d) const { return spec.node(spec.node_of(d)).type_index; }

  // Folds the time since the job's last placement change into its received time on its
  // type (lazily: O(1) per change, not O(running jobs) per decision).
  void account(Job& j, std::int64_t now_us) {
    j.received_s.resize(static_cast<std::size_t>(types_), 0.0);
    if (j.on_type >= 0) j.received_s[static_cast<std::size_t>(j.on_type)] += static_cast<double>(now_us - j.since_us) / 1e6;
    j.since_us = now_us;
  }

  // Rates normalized by the job's best type (1 on every type without physics); 0 on
  // types with fewer devices than the job needs.
  void normalized(const SchedulerView& view, const JobSpec& spec, std::vector<double>& out) const {
    out.assign(static_cast<std::size_t>(types_), 1.0);
    const PhysicsModel* physics = view.physics();
    double best = 0.0;
    for (int t = 0; t < types_; ++t) {
      double& r = out[static_cast<std::size_t>(t)];
      if (physics) r = physics->estimated_rate(spec, t, spec.num_gpus);
      if (spec.num_gpus > capacity_[static_cast<std::size_t>(t)]) r = 0.0;
      best = std::max(best, r);
    }
    for (double& r : out) r = best > 0 ? r / best : 0.0;
  }

  void new_round(const SchedulerView& view, ActionBatch& out) {
    const ClusterSpec& spec = view.cluster();
    // Jobs in the system (pending and running; stopping ones are on their way back).
    live_.clear();
    for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
      if (view.job(s).status == JobStatus::kRunning) live_.push_back(s);
    }
    for (const auto& [seq, s] : queue_) live_.push_back(s);
    // Classes of equal (GPUs, normalized throughputs), in first-seen order.
    std::map<std::pair<int, std::vector<double>>, int> class_of;
    std::vector<std::vector<double>> norm;
    std::vector<int> gpus, members, job_class(live_.size());
    std::vector<double> a;
    for (std::size_t i = 0; i < live_.size(); ++i) {
      const JobSpec& js = view.job(live_[i]).spec;
      normalized(view, js, a);
      auto [it, added] = class_of.emplace(std::make_pair(js.num_gpus, a), static_cast<int>(norm.size()));
      if (added) {
        norm.push_back(a);
        gpus.push_back(js.num_gpus);
        members.push_back(0);
      }
      ++members[static_cast<std::size_t>(it->second)];
      job_class[i] = it->second;
    }
    const std::vector<int>& capacity = capacity_;
    const auto X = norm.empty() ? std::vector<std::vector<double>>{} : gavel_max_min_allocation(norm, gpus, members, capacity);
    // Gavel's priorities: allocation over the share of its time the job received on the type.
    std::vector<std::tuple<double, double, std::uint64_t, JobSlot, int>> cand;  // (-priority, -x, seq, slot, type)
    const std::int64_t now_us = view.now().us();
    for (std::size_t i = 0; i < live_.size(); ++i) {
      Job& j = jobs_[static_cast<std::size_t>(live_[i])];
      account(j, now_us);
      j.x = X[static_cast<std::size_t>(job_class[i])];
      j.granted = -1;
      j.received_s.resize(static_cast<std::size_t>(types_), 0.0);
      for (int t = 0; t < types_; ++t) {
        const double x = j.x[static_cast<std::size_t>(t)];
        if (x <= 1e-9) continue;
        const double in_system_s = (view.now() - view.job(live_[i]).spec.submit).seconds();
        const double got = in_system_s > 0 ? j.received_s[static_cast<std::size_t>(t)] / in_system_s : 0.0;
        const double priority = got > 0 ? x / got : std::numeric_limits<double>::infinity();
        cand.emplace_back(-priority, -x, view.job(live_[i]).arrival_seq, live_[i], t);
      }
    }
    std::sort(cand.begin(), cand.end());
    std::vector<int> left = capacity;
    for (const auto& [np, nx, seq, s, t] : cand) {
      Job& j = jobs_[static_cast<std::size_t>(s)];
      const int n = view.job(s).spec.num_gpus;
      if (j.granted >= 0 || left[static_cast<std::size_t>(t)] < n) continue;
      j.granted = t;
      left[static_cast<std::size_t>(t)] -= n;
    }
    // Running jobs that lost their grant stop; with free checkpoints their devices serve
    // this same batch.
    const PhysicsModel* physics = view.physics();
    for (JobSlot s : live_) {
      const JobState& r = view.job(s);
      if (r.status != JobStatus::kRunning || jobs_[static_cast<std::size_t>(s)].granted >= 0) continue;
      out.preempt(s);
      account(jobs_[static_cast<std::size_t>(s)], now_us);
      jobs_[static_cast<std::size_t>(s)].on_type = -1;
      if (!physics || Tick::from_seconds(physics->checkpoint_save_s(r.spec, static_cast<int>(r.devices.size()))).us() == 0) {
        release(spec, r.devices);
      }
    }
    // Granted running jobs on another type move (their old devices free at once), granted
    // pending jobs start; in priority order.
    for (const auto& [np, nx, seq, s, t] : cand) {
      const JobState& r = view.job(s);
      if (jobs_[static_cast<std::size_t>(s)].granted != t || r.status != JobStatus::kRunning) continue;
      if (type_of(spec, r.devices.front()) == t) continue;  // stays where it is
      devices_.clear();
      if (!take(spec, r.spec.num_gpus, t)) continue;
      out.move(s, devices_);
      account(jobs_[static_cast<std::size_t>(s)], now_us);
      jobs_[static_cast<std::size_t>(s)].on_type = t;
      release(spec, r.devices);
    }
    fill(view, out);
  }

  // Starts pending jobs: granted ones on their type first, then the rest in queue order on
  // the type where they are fastest with room (work conservation).
  void fill(const SchedulerView& view, ActionBatch& out) {
    const ClusterSpec& spec = view.cluster();
    started_.clear();
    for (int pass = 0; pass < 2; ++pass) {
      for (const auto& [seq, s] : queue_) {
        if (avail_total_ == 0) break;
        if (std::find(started_.begin(), started_.end(), s) != started_.end()) continue;
        const JobSpec& js = view.job(s).spec;
        const int granted = jobs_[static_cast<std::size_t>(s)].granted;
        devices_.clear();
        bool placed = false;
        if (pass == 0) {
          placed = granted >= 0 && take(spec, js.num_gpus, granted);
        } else {
          normalized(view, js, a_);
          order_.clear();
          for (int t = 0; t < types_; ++t) {
            if (a_[static_cast<std::size_t>(t)] > 0) order_.emplace_back(-a_[static_cast<std::size_t>(t)], t);
          }
          std::sort(order_.begin(), order_.end());
          for (const auto& [na, t] : order_) {
            if ((placed = take(spec, js.num_gpus, t))) break;
          }
          // Larger than every type (or runs on none alone): any devices, types mixed.
          if (order_.empty()) placed = take(spec, js.num_gpus, -1);
        }
        if (!placed) continue;
        out.start(s, devices_);
        started_.push_back(s);
        Job& j = jobs_[static_cast<std::size_t>(s)];
        account(j, view.now().us());
        j.on_type = type_of(spec, devices_.front());
      }
    }
    for (JobSlot s : started_) queue_.erase({jobs_[static_cast<std::size_t>(s)].queued_seq, s});
  }

  // `n` available devices of type `t` (-1: any type) into devices_: the fullest node that
  // holds them all, else the emptiest nodes first. Marks them taken.
  bool usable(DeviceId d) const {
    const char m = mark_[static_cast<std::size_t>(d)];
    return m == kReleased || (m == kAsCluster && state_->is_free(d));
  }
  void set_mark(const ClusterSpec& spec, DeviceId d, char m, int delta) {
    if (mark_[static_cast<std::size_t>(d)] == kAsCluster) marked_.push_back(d);
    mark_[static_cast<std::size_t>(d)] = m;
    const int k = spec.node_of(d);
    if (node_delta_[static_cast<std::size_t>(k)] == 0) touched_nodes_.push_back(k);  // may repeat: harmless
    node_delta_[static_cast<std::size_t>(k)] += delta;
    avail_total_ += delta;
  }
  void release(const ClusterSpec& spec, const std::vector<DeviceId>& devices) {
    for (DeviceId d : devices) set_mark(spec, d, kReleased, +1);
  }

  bool take(const ClusterSpec& spec, int n, int t) {
    if (n > avail_total_) return false;
    node_avail_.clear();
    int total = 0;
    for (int k = 0; k < spec.num_nodes(); ++k) {
      const NodeSpec& ns = spec.node(k);
      if (t >= 0 && ns.type_index != t) continue;
      const int f = state_->free_on_node(k) + node_delta_[static_cast<std::size_t>(k)];
      if (f > 0) node_avail_.emplace_back(f, k);
      total += f;
    }
    if (total < n) return false;
    int best = -1, best_free = 0;
    for (const auto& [f, k] : node_avail_) {
      if (f >= n && (best < 0 || f < best_free)) {
        best = k;
        best_free = f;
      }
    }
    if (best < 0) std::stable_sort(node_avail_.begin(), node_avail_.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    for (const auto& [f, k] : node_avail_) {
      if (best >= 0 && k != best) continue;
      const NodeSpec& ns = spec.node(k);
      for (DeviceId d = ns.first_device; d < ns.first_device + ns.num_devices && n > 0; ++d) {
        if (!usable(d)) continue;
        set_mark(spec, d, kTaken, -1);
        devices_.push_back(d);
        --n;
      }
      if (n == 0) break;
    }
    return true;
  }

  std::int64_t round_us_;
  std::int64_t round_end_us_ = std::numeric_limits<std::int64_t>::min();
  int types_ = 1;
  std::vector<int> capacity_;                         // devices by type
  std::uint64_t next_seq_ = 0;
  std::set<std::pair<std::uint64_t, JobSlot>> queue_;  // pending jobs in queue order
  std::vector<Job> jobs_;                             // by slot
  static constexpr char kAsCluster = 0, kTaken = 1, kReleased = 2;
  const ClusterState* state_ = nullptr;
  std::vector<char> mark_;                            // by device: this batch's change
  std::vector<DeviceId> marked_;
  std::vector<int> node_delta_;                       // usable devices by node minus the cluster's free count
  std::vector<int> touched_nodes_;
  int avail_total_ = 0;
  std::vector<JobSlot> live_, started_;
  std::vector<DeviceId> devices_;
  std::vector<std::pair<int, int>> node_avail_;
  std::vector<std::pair<double, int>> order_;
  std::vector<double> a_;
};

}  // namespace

PolicyInfo gavel_policy_info() {
  return PolicyInfo{
      "gavel",
      "Gavel: max-min fairness over throughput normalized by each job's best device type (LP), realized in rounds",
      {{"round_s", "360", "seconds per scheduling round (Gavel's default is 6 min): allocation, preemptions and moves happen at round boundaries"}},
      [](const ConfigNode& config, const PolicyContext& /*context*/) {
        config.expect_keys({"name", "round_s"});
        double round_s = 360;
        if (auto v = config.maybe_child("round_s")) round_s = v->as_positive_double();
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = "gavel";
        resolved["round_s"] = round_s;
        return PolicyInstance{std::make_unique<GavelPolicy>(round_s), resolved};
      },
  };
}

}  // namespace schedsim
