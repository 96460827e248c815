#include "policies/rounds.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/error.hpp"

namespace schedsim {
namespace {

struct RoundOptions {
  double round_s = 360.0;
  double reallocate_every_s = 1920.0;
};

class RoundFifoPolicy : public Policy {
 public:
  RoundFifoPolicy(std::string name, const RoundOptions& o)
      : name_(std::move(name)),
        round_us_(static_cast<std::int64_t>(std::llround(o.round_s * 1e6))),
        every_us_(static_cast<std::int64_t>(std::llround(o.reallocate_every_s * 1e6))) {}
  std::string name() const override { return name_; }

  void on_job_queued(const SchedulerView& view, JobSlot job) override {
    if (view.job(job).preemptions == 0) {  // a new arrival (slots are reused)
      type_of_job(job) = -1;
      dirty_ = true;
    }
  }
  void on_job_finished(const SchedulerView& /*view*/, JobSlot job) override {
    type_of_job(job) = -1;
    dirty_ = true;
  }

  void decide(const SchedulerView& view, ActionBatch& out) override {
    const std::int64_t now_us = view.now().us();
    setup(view);
    bool any_running = false;
    for (JobSlot s = view.first_running(); s != kNoJob && !any_running; s = view.next_running(s)) any_running = true;
    // A round ends on time, or when its last job ended (Gavel's round lasts until its
    // longest micro-task ends).
    if (now_us >= round_end_us_ || !any_running) {
      round_end_us_ = now_us + round_us_;
      if (dirty_ && (!has_reset_ || now_us - last_reset_us_ >= every_us_)) {
        reallocate(view, out);
        has_reset_ = true;
        last_reset_us_ = now_us;
        dirty_ = false;
      }
    }
    start_owed(view, out);
    if (any_running || out.size() > 0) {
      out.wake_at(Tick::from_us(round_end_us_));
    } else if (dirty_) {  // nothing runs and the allocation may not change yet: wake when it may
      out.wake_at(Tick::from_us(std::max(round_end_us_, last_reset_us_ + every_us_)));
    }
  }

  void snapshot(SnapshotArchive& ar) override { ar(round_end_us_, last_reset_us_, has_reset_, dirty_, type_); }

 private:
  int& type_of_job(JobSlot s) {
    const auto i = static_cast<std::size_t>(s);
    if (type_.size() <= i) type_.resize(i + 1, -1);
    return type_[i];
  }

  // This batch's free devices by type (from the cluster state, then the batch's changes).
  void setup(const SchedulerView& view) {
    const ClusterSpec& spec = view.cluster();
    const int types = static_cast<int>(spec.device_types().size());
    free_.assign(static_cast<std::size_t>(types), {});
    capacity_.assign(static_cast<std::size_t>(types), 0);
    for (int k = 0; k < spec.num_nodes(); ++k) {
      const NodeSpec& ns = spec.node(k);
      capacity_[static_cast<std::size_t>(ns.type_index)] += ns.num_devices;
      for (DeviceId d = ns.first_device; d < ns.first_device + ns.num_devices; ++d) {
        if (view.cluster_state().is_free(d)) free_[static_cast<std::size_t>(ns.type_index)].insert(d);
      }
    }
    by_name_.resize(static_cast<std::size_t>(types));
    std::iota(by_name_.begin(), by_name_.end(), 0);
    auto lower = [&](int t) {
      std::string s = spec.device_types()[static_cast<std::size_t>(t)];
      for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    };
    std::stable_sort(by_name_.begin(), by_name_.end(), [&](int a, int b) { return lower(a) < lower(b); });
  }

  int device_type(const ClusterSpec& spec, DeviceId d) const { return spec.node(spec.node_of(d)).type_index; }

  bool take(int t, int n, std::vector<DeviceId>& out) {
    auto& f = free_[static_cast<std::size_t>(t)];
    if (static_cast<int>(f.size()) < n) return false;
    out.clear();
    for (auto it = f.begin(); static_cast<int>(out.size()) < n;) {
      out.push_back(*it);
      it = f.erase(it);
    }
    return true;
  }
  void release(const ClusterSpec& spec, const std::vector<DeviceId>& devices) {
    for (DeviceId d : devices) free_[static_cast<std::size_t>(device_type(spec, d))].insert(d);
  }

  // Gavel's fifo_perf allocation over every job in the system, in arrival order.
  void reallocate(const SchedulerView& view, ActionBatch& out) {
    const ClusterSpec& spec = view.cluster();
    jobs_.clear();
    for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
      if (view.job(s).status == JobStatus::kRunning) jobs_.emplace_back(view.job(s).arrival_seq, s);
    }
    for (JobSlot s = view.first_pending(); s != kNoJob; s = view.next_pending(s)) jobs_.emplace_back(view.job(s).arrival_seq, s);
    std::sort(jobs_.begin(), jobs_.end());
    std::vector<int> left = capacity_;
    const PhysicsModel* physics = view.physics();
    bool full = false;
    for (const auto& [seq, s] : jobs_) {
      int& type = type_of_job(s);
      type = -1;
      if (full) continue;
      const JobSpec& js = view.job(s).spec;
      // A job larger than every type's devices is never allocated (allocations are per
      // type); it does not hold up the jobs behind it.
      if (std::none_of(capacity_.begin(), capacity_.end(), [&](int c) { return c >= js.num_gpus; })) continue;
      int best = -1, room = 0;
      double best_rate = -1.0;
      for (int t : by_name_) {
        if (left[static_cast<std::size_t>(t)] < js.num_gpus) continue;
        ++room;
        const double r = physics ? physics->estimated_rate(js, t, js.num_gpus) : 1.0;
        if (r > best_rate) {
          best_rate = r;
          best = t;
        }
      }
      if (room == 0) {
        full = true;  // FIFO: the pass ends at the first job that does not fit
        continue;
      }
      if (!(best_rate > 0)) continue;  // runs on none of the types with room
      type = best;
      left[static_cast<std::size_t>(best)] -= js.num_gpus;
    }
    // Running jobs left out stop; a free checkpoint frees their devices for this batch.
    for (const auto& [seq, s] : jobs_) {
      const JobState& r = view.job(s);
      if (r.status != JobStatus::kRunning || type_of_job(s) >= 0) continue;
      out.preempt(s);
      if (!physics || Tick::from_seconds(physics->checkpoint_save_s(r.spec, static_cast<int>(r.devices.size()))).us() == 0) release(spec, r.devices);
    }
    // Running jobs given another type move, in arrival order, repeatedly while one can
    // (a move frees the devices another waits for).
    pending_moves_.clear();
    for (const auto& [seq, s] : jobs_) {
      const JobState& r = view.job(s);
      if (r.status == JobStatus::kRunning && type_of_job(s) >= 0 && type_of_job(s) != device_type(spec, r.devices.front())) pending_moves_.push_back(s);
    }
    for (bool progress = true; progress && !pending_moves_.empty();) {
      progress = false;
      for (std::size_t i = 0; i < pending_moves_.size();) {
        const JobSlot s = pending_moves_[i];
        const JobState& r = view.job(s);
        if (!take(type_of_job(s), r.spec.num_gpus, devices_)) {
          ++i;
          continue;
        }
        out.move(s, devices_);
        release(spec, r.devices);
        pending_moves_.erase(pending_moves_.begin() + static_cast<std::ptrdiff_t>(i));
        progress = true;
      }
    }
    // Moves in a cycle over full types: the first stops and starts on its type when it has
    // room (start_owed, at this or a later decision).
    restart_.clear();
    for (JobSlot s : pending_moves_) {
      const JobState& r = view.job(s);
      out.preempt(s);
      if (!physics || Tick::from_seconds(physics->checkpoint_save_s(r.spec, static_cast<int>(r.devices.size()))).us() == 0) {
        release(spec, r.devices);
        restart_.push_back(s);  // back in the queue at once: may start in this batch
      }
    }
  }

  // Queued jobs that have a type start on it, in arrival order, while it has room.
  void start_owed(const SchedulerView& view, ActionBatch& out) {
    owed_.clear();
    for (JobSlot s = view.first_pending(); s != kNoJob; s = view.next_pending(s)) {
      if (type_of_job(s) >= 0) owed_.emplace_back(view.job(s).arrival_seq, s);
    }
    for (JobSlot s : restart_) owed_.emplace_back(view.job(s).arrival_seq, s);
    restart_.clear();
    std::sort(owed_.begin(), owed_.end());
    for (const auto& [seq, s] : owed_) {
      if (view.job(s).status != JobStatus::kPending && view.job(s).status != JobStatus::kRunning) continue;
      if (take(type_of_job(s), view.job(s).spec.num_gpus, devices_)) out.start(s, devices_);
    }
  }

  std::string name_;
  std::int64_t round_us_, every_us_;
  std::int64_t round_end_us_ = std::numeric_limits<std::int64_t>::min();
  std::int64_t last_reset_us_ = 0;
  bool has_reset_ = false;
  bool dirty_ = false;
  std::vector<int> type_;  // by slot: the allocated device type, -1 = none
  std::vector<int> capacity_, by_name_;
  std::vector<std::set<DeviceId>> free_;
  std::vector<std::pair<std::uint64_t, JobSlot>> jobs_, owed_;
  std::vector<JobSlot> pending_moves_, restart_;
  std::vector<DeviceId> devices_;
};

PolicyInfo round_info(const std::string& name, const std::string& description, const RoundOptions& d) {
  return PolicyInfo{
      name,
      description,
      {{"round_s", std::to_string(static_cast<int>(d.round_s)), "seconds per round: the allocation is applied only at round boundaries"},
       {"reallocate_every_s", std::to_string(static_cast<int>(d.reallocate_every_s)),
        "least seconds between two recomputations of the allocation (Gavel's minimum_time_between_allocation_resets); 0 = at every round boundary after a change"}},
      [name, d](const ConfigNode& config, const PolicyContext& /*context*/) {
        config.expect_keys({"name", "round_s", "reallocate_every_s"});
        RoundOptions o = d;
        if (auto v = config.maybe_child("round_s")) o.round_s = v->as_positive_double();
        if (auto v = config.maybe_child("reallocate_every_s")) o.reallocate_every_s = v->as_nonnegative_double();
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = name;
        resolved["round_s"] = o.round_s;
        resolved["reallocate_every_s"] = o.reallocate_every_s;
        return PolicyInstance{std::make_unique<RoundFifoPolicy>(name, o), resolved};
      },
  };
}

}  // namespace

PolicyInfo round_fifo_policy_info() {
  return round_info("round_fifo", "FIFO on each job's fastest device type, allocated in rounds and recomputed from scratch (moving jobs between types) at most every reallocate_every_s, as Gavel's simulator runs fifo_perf",
                    RoundOptions{});
}

PolicyInfo gavel_fifo_perf_policy_info() {
  return round_info("gavel-fifo-perf", "Gavel's simulator, fifo_perf: round_fifo with rounds of 360 s and the allocation recomputed at most every 1,920 s", RoundOptions{});
}

}  // namespace schedsim
