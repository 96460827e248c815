#include "policies/rounds.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "policies/queue_order.hpp"
#include "world/geography/datacenters.hpp"
#include "base/error.hpp"
#include "base/tick.hpp"

namespace schedsim {
namespace {

// Gavel's fifo_perf allocation (scheduler/policies/fifo.py at c4fa400) as a policy that
// only starts jobs, the base of round_fifo and gavel-fifo-perf: queued jobs in arrival
// order, each on the type where its estimated rate is highest among the types with
// enough free devices (ties: the first type by name, case-insensitive, as Gavel sorts
// 'k80' < 'p100' < 'v100'), on that type's lowest free devices; a job whose best such
// type gives rate 0 is passed over; the first job for which no type has room ends the
// pass (FIFO). A job larger than every type's devices is never started and does not end
// the pass. {fifo, placement: fastest_type} differs only in those two passes-over: it
// never uses a type where a job's rate is 0, and stops at any job it cannot place.
class GavelFifoAllocation : public Policy {
 public:
  std::string name() const override { return "gavel fifo_perf allocation"; }
  void on_job_queued(const SchedulerView& /*view*/, JobSlot /*job*/) override {}
  void snapshot(SnapshotArchive& /*ar*/) override {}  // keeps nothing between decisions

  void decide(const SchedulerView& view, ActionBatch& out) override {
    const ClusterSpec& spec = view.cluster();
    const int types = static_cast<int>(spec.device_types().size());
    std::vector<int> by_name(static_cast<std::size_t>(types)), capacity(static_cast<std::size_t>(types), 0);
    std::iota(by_name.begin(), by_name.end(), 0);
    auto lower = [&](int t) {
      std::string s = spec.device_types()[static_cast<std::size_t>(t)];
      for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    };
    std::stable_sort(by_name.begin(), by_name.end(), [&](int a, int b) { return lower(a) < lower(b); });
    for (int k = 0; k < spec.num_nodes(); ++k) capacity[static_cast<std::size_t>(spec.node(k).type_index)] += spec.node(k).num_devices;
    std::vector<std::vector<DeviceId>> free(static_cast<std::size_t>(types));  // ascending ids
    const ClusterState& state = view.cluster_state();
    for (DeviceId d = state.next_free(0); d >= 0; d = state.next_free(d + 1)) free[static_cast<std::size_t>(spec.node(spec.node_of(d)).type_index)].push_back(d);
    std::vector<std::size_t> used(static_cast<std::size_t>(types), 0);
    std::vector<std::pair<std::uint64_t, JobSlot>> jobs;
    for (JobSlot s = view.first_pending(); s != kNoJob; s = view.next_pending(s)) jobs.emplace_back(view.job(s).arrival_seq(), s);
    std::sort(jobs.begin(), jobs.end());
    const PhysicsModel* physics = view.physics();
    std::vector<DeviceId> devices;
    for (const auto& [seq, s] : jobs) {
      const JobView& js = view.job(s);
      // Allocations are per type: a job larger than every type's devices never gets one.
      if (std::none_of(capacity.begin(), capacity.end(), [&](int c) { return c >= js.num_gpus(); })) continue;
      int best = -1, room = 0;
      double best_rate = -1.0;
      for (int t : by_name) {
        const auto ti = static_cast<std::size_t>(t);
        if (free[ti].size() - used[ti] < static_cast<std::size_t>(js.num_gpus())) continue;
        ++room;
        const double r = physics ? physics->estimated_rate(js, t, js.num_gpus()) : 1.0;
        if (r > best_rate) {
          best_rate = r;
          best = t;
        }
      }
      if (room == 0) break;            // FIFO: the pass ends at the first job that does not fit
      if (!(best_rate > 0)) continue;  // runs on none of the types with room
      const auto bi = static_cast<std::size_t>(best);
      devices.assign(free[bi].begin() + static_cast<std::ptrdiff_t>(used[bi]), free[bi].begin() + static_cast<std::ptrdiff_t>(used[bi]) + js.num_gpus());
      used[bi] += static_cast<std::size_t>(js.num_gpus());
      out.start(s, devices);
    }
  }
};

}  // namespace

// The view a base policy decides on at a re-allocation: the live view with every running
// job of `queue` queued again (its progress up to now folded in, its devices free), the
// pending list being `queue` in that order; `running` (stopping jobs, fractional ones)
// keep their devices and stay listed as running.
class HypotheticalView {
 public:
  const SchedulerView& build(const SchedulerView& live, const std::vector<JobSlot>& queue, const std::vector<JobSlot>& running) {
    jobs_ = *live.jobs_;
    state_.reset();
    state_.emplace(*live.state_);
    now_ = live.now();
    for (JobSlot s : queue) {
      JobState& j = jobs_[static_cast<std::size_t>(s)];
      if (j.status != JobStatus::kRunning) continue;
      state_->release(j.devices, s);
      j.remaining_work_s = remaining_work_now_s(live, live.job(s));
      j.last_update = now_;
      j.stall_end = Tick();
      j.physics_rate = 0.0;
      j.devices.clear();
      j.status = JobStatus::kPending;
    }
    pending_head_ = link(queue);
    running_head_ = link(running);
    num_pending_ = queue.size();
    num_running_ = running.size();
    view_ = live;
    view_.now_ = &now_;
    view_.state_ = &*state_;
    view_.jobs_ = &jobs_;
    view_.pending_head_ = &pending_head_;
    view_.running_head_ = &running_head_;
    view_.num_pending_ = &num_pending_;
    view_.num_running_ = &num_running_;
    return view_;
  }

 std::size_t slots() const { return jobs_.size(); }

 private:
  JobSlot link(const std::vector<JobSlot>& slots) {
    JobSlot prev = kNoJob;
    for (JobSlot s : slots) {
      jobs_[static_cast<std::size_t>(s)].prev_in_list = prev;
      if (prev != kNoJob) jobs_[static_cast<std::size_t>(prev)].next_in_list = s;
      prev = s;
    }
    if (prev != kNoJob) jobs_[static_cast<std::size_t>(prev)].next_in_list = kNoJob;
    return slots.empty() ? kNoJob : slots.front();
  }

  std::vector<JobState> jobs_;
  std::optional<ClusterState> state_;
  Tick now_;
  JobSlot pending_head_ = kNoJob, running_head_ = kNoJob;
  std::size_t num_pending_ = 0, num_running_ = 0;
  SchedulerView view_;
};

namespace {

// When a running job keeps its devices at a re-allocation: kType when the base gives it
// as many devices of each type as it holds (where on them does not matter), kDevices
// only when the base chose exactly its devices.
enum class Keep : std::uint8_t { kType, kDevices };

struct RoundsOptions {
  double round_s = 360.0;
  double reallocate_every_s = 1920.0;
  Keep keep = Keep::kType;
};

// The `rounds` mechanism around any base policy that only starts jobs (rounds.hpp).
class RoundsPolicy : public Policy {
 public:
  RoundsPolicy(std::string name, const RoundsOptions& o, std::string base_name, std::function<std::unique_ptr<Policy>()> make_base)
      : name_(std::move(name)),
        base_name_(std::move(base_name)),
        make_base_(std::move(make_base)),
        keep_(o.keep),
        round_us_(static_cast<std::int64_t>(std::llround(o.round_s * 1e6))),
        every_us_(static_cast<std::int64_t>(std::llround(o.reallocate_every_s * 1e6))) {}
  std::string name() const override { return name_; }

  void on_job_queued(const SchedulerView& view, JobSlot job) override {
    if (view.job(job).preemptions() == 0) {  // a new arrival (slots are reused)
      forget(job);
      dirty_ = true;
    }
  }
  void on_job_finished(const SchedulerView& /*view*/, JobSlot job) override {
    forget(job);
    dirty_ = true;
  }

  void decide(const SchedulerView& view, ActionBatch& out) override {
    const std::int64_t now_us = view.now().us();
    setup(view);
    const bool any_running = view.first_running() != kNoJob;
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

  void snapshot(SnapshotArchive& ar) override {
    ar.section("rounds");
    ar(round_end_us_, last_reset_us_, has_reset_, dirty_, next_rank_, rank_, target_);
    if (!ar.loading()) return;
    // The policy indexes both tables by slot unchecked: they must match, and name live
    // jobs and existing devices.
    ar.check(rank_.size() == target_.size(), "the rounds policy's per-slot tables differ in length");
    for (std::size_t i = 0; i < rank_.size(); ++i) {
      if (rank_[i] >= 0) ar.check_job_slot(static_cast<std::int64_t>(i), "the rounds policy's allocation");
    }
    for (const auto& devices : target_) {
      for (const DeviceId d : devices) ar.check_device(d, "the rounds policy's allocation");
    }
  }

 private:
  std::int64_t& rank_of(JobSlot s) {
    const auto i = static_cast<std::size_t>(s);
    if (rank_.size() <= i) {
      rank_.resize(i + 1, -1);
      target_.resize(i + 1);
    }
    return rank_[i];
  }
  void forget(JobSlot s) {
    rank_of(s) = -1;
    target_[static_cast<std::size_t>(s)].clear();
  }

  // A device's class: its type, and its datacenter when there are several (a job's
  // devices may not span them), so that a fallback placement stays where the base put it.
  int class_of(DeviceId d) const {
    const int type = spec_->node(spec_->node_of(d)).type_index;
    return geo_ ? geo_->site_of_device(d) * static_cast<int>(spec_->device_types().size()) + type : type;
  }

  // This batch's free devices by class (from the cluster state, then the batch's changes).
  void setup(const SchedulerView& view) {
    spec_ = &view.cluster();
    state_ = &view.cluster_state();
    geo_ = view.geography();
    free_.assign(spec_->device_types().size() * static_cast<std::size_t>(geo_ ? geo_->num_sites() : 1), {});
    for (DeviceId d = state_->next_free(0); d >= 0; d = state_->next_free(d + 1)) free_[static_cast<std::size_t>(class_of(d))].insert(d);
    batch_milli_.clear();
  }
  bool is_free(DeviceId d) const { return free_[static_cast<std::size_t>(class_of(d))].count(d) > 0; }
  void release(Span<DeviceId> devices) {
    for (DeviceId d : devices) free_[static_cast<std::size_t>(class_of(d))].insert(d);
  }
  // Thousandths of device d still free in this batch (for fractional jobs).
  int milli_left(DeviceId d) const {
    const auto it = batch_milli_.find(d);
    const int added = it == batch_milli_.end() ? 0 : it->second;
    if (is_free(d)) return ClusterState::kWholeMilli;
    if (state_->is_free(d)) return added > 0 ? ClusterState::kWholeMilli - added : 0;  // taken in this batch
    return state_->free_milli(d) - added;
  }
  static bool free_checkpoint(const SchedulerView& view, const JobView& r) {
    const PhysicsModel* physics = view.physics();
    return !physics || Tick::from_seconds(physics->checkpoint_save_s(r, static_cast<int>(r.devices().size()))).us() == 0;
  }

  bool kept(const JobView& r, const std::vector<DeviceId>& target) const {
    if (r.is_fractional()) return true;  // never re-queued (see reallocate)
    if (keep_ == Keep::kDevices) {
      std::vector<DeviceId> a = r.devices(), b = target;
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      return a == b;
    }
    return class_counts(r.devices()) == class_counts(target);
  }
  std::vector<int> class_counts(const std::vector<DeviceId>& devices) const {
    std::vector<int> n(free_.size(), 0);
    for (DeviceId d : devices) ++n[static_cast<std::size_t>(class_of(d))];
    return n;
  }

  // Devices for job `s` to start on (or move to, `own` = the devices it holds) following
  // its allocated `target`: the target itself when every device is free (or its own);
  // otherwise (keep: type) as many devices of each type, its own first, then the lowest
  // free ids. False when there is no room yet. Takes the devices from this batch's pool.
  bool take(const JobView& j, const std::vector<DeviceId>& target, const std::vector<DeviceId>* own, std::vector<DeviceId>& out) {
    out.clear();
    auto owned = [&](DeviceId d) { return own && std::find(own->begin(), own->end(), d) != own->end(); };
    if (j.is_fractional()) {
      if (target.size() != 1 || milli_left(target.front()) < j.gpu_milli()) return false;
      const DeviceId d = target.front();
      free_[static_cast<std::size_t>(class_of(d))].erase(d);
      batch_milli_[d] += j.gpu_milli();
      out.push_back(d);
      return true;
    }
    if (std::all_of(target.begin(), target.end(), [&](DeviceId d) { return is_free(d) || owned(d); })) {
      out = target;
    } else if (keep_ == Keep::kType) {
      const std::vector<int> need = class_counts(target);
      for (std::size_t t = 0; t < need.size(); ++t) {
        int left = need[t];
        if (own) {
          for (DeviceId d : *own) {
            if (left > 0 && static_cast<std::size_t>(class_of(d)) == t) {
              out.push_back(d);
              --left;
            }
          }
        }
        for (auto it = free_[t].begin(); left > 0 && it != free_[t].end(); ++it, --left) out.push_back(*it);
        if (left > 0) {
          out.clear();
          return false;
        }
      }
    } else {
      return false;
    }
    for (DeviceId d : out) {
      if (!owned(d)) free_[static_cast<std::size_t>(class_of(d))].erase(d);
    }
    if (own) {
      for (DeviceId d : *own) {
        if (std::find(out.begin(), out.end(), d) == out.end()) free_[static_cast<std::size_t>(class_of(d))].insert(d);
      }
    }
    return true;
  }

  [[noreturn]] void base_refused(const SchedulerView& view, const std::string& what) const {
    throw PolicyError("policy '" + name_ + "' at t=" + format_seconds(view.now()) + " s: its base policy '" + base_name_ + "' " + what +
                      " at a re-allocation, where every running job is queued again on a cluster without them; rounds wraps policies that only start jobs");
  }

  // The base decides on every job in the system, as if all were queued (in arrival order)
  // on the cluster without the running ones; its starts are the new allocation, applied
  // here: running jobs left out stop, running jobs given other devices move, queued jobs
  // given devices start (start_owed).
  void reallocate(const SchedulerView& view, ActionBatch& out) {
    jobs_.clear();
    stay_.clear();
    for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
      const JobView& r = view.job(s);
      // A stopping job is on its way back to the queue, and a fractional job's share is
      // left where it is: both keep their devices in the base's view.
      if (r.status() == JobStatus::kRunning && !r.is_fractional()) jobs_.emplace_back(r.arrival_seq(), s);
      else stay_.push_back(s);
    }
    for (JobSlot s = view.first_pending(); s != kNoJob; s = view.next_pending(s)) jobs_.emplace_back(view.job(s).arrival_seq(), s);
    std::sort(jobs_.begin(), jobs_.end());
    for (std::size_t i = 0; i < rank_.size(); ++i) {
      rank_[i] = -1;
      target_[i].clear();
    }
    if (jobs_.empty()) return;
    queue_.clear();
    for (const auto& [seq, s] : jobs_) queue_.push_back(s);
    const SchedulerView& world = world_.build(view, queue_, stay_);
    std::unique_ptr<Policy> base = make_base_();
    for (JobSlot s : queue_) base->on_job_queued(world, s);
    plan_.clear();
    base->decide(world, plan_);
    for (std::size_t i = 0; i < plan_.size(); ++i) {
      const Action& a = plan_[i];
      if (a.kind != ActionKind::kStart) {
        const bool known = a.kind != ActionKind::kSetCooling && a.kind != ActionKind::kHold && a.job >= 0 && static_cast<std::size_t>(a.job) < world_.slots();
        base_refused(view, std::string("asked to ") + to_string(a.kind) + (known ? " job '" + world.job(a.job).id() + "'" : " (target " + std::to_string(a.job) + ")"));
      }
      if (a.job < 0 || static_cast<std::size_t>(a.job) >= world_.slots() || world.job(a.job).status() != JobStatus::kPending || rank_of(a.job) >= 0) {
        base_refused(view, "started job slot " + std::to_string(a.job) + ", which is not queued in its view (or twice)");
      }
      rank_of(a.job) = next_rank_++;
      const Span<DeviceId> d = plan_.devices(a);
      target_[static_cast<std::size_t>(a.job)].assign(d.begin(), d.end());
    }
    // Running jobs left out stop, in arrival order; a free checkpoint frees their devices
    // for this batch.
    for (JobSlot s : queue_) {
      const JobView& r = view.job(s);
      if (r.status() != JobStatus::kRunning || rank_of(s) >= 0) continue;
      out.preempt(s);
      if (free_checkpoint(view, r)) release(r.devices());
    }
    // Running jobs given other devices move, in the base's order, repeatedly while one can
    // (a move frees the devices another waits for).
    moves_.clear();
    for (JobSlot s : queue_) {
      const JobView& r = view.job(s);
      if (r.status() == JobStatus::kRunning && rank_of(s) >= 0 && !kept(r, target_[static_cast<std::size_t>(s)])) moves_.emplace_back(rank_of(s), s);
    }
    std::sort(moves_.begin(), moves_.end());
    for (bool progress = true; progress && !moves_.empty();) {
      progress = false;
      for (std::size_t i = 0; i < moves_.size();) {
        const JobSlot s = moves_[i].second;
        const JobView& r = view.job(s);
        if (!take(r, target_[static_cast<std::size_t>(s)], &r.devices(), devices_)) {
          ++i;
          continue;
        }
        out.move(s, devices_);
        moves_.erase(moves_.begin() + static_cast<std::ptrdiff_t>(i));
        progress = true;
      }
    }
    // Moves in a cycle over full devices: each stops and starts on its allocation when
    // there is room (start_owed, at this or a later decision).
    restart_.clear();
    for (const auto& [rank, s] : moves_) {
      const JobView& r = view.job(s);
      out.preempt(s);
      if (free_checkpoint(view, r)) {
        release(r.devices());
        restart_.push_back(s);  // back in the queue at once: may start in this batch
      }
    }
  }

  // Queued jobs that have an allocation start on it, in the base's order, when there is room.
  void start_owed(const SchedulerView& view, ActionBatch& out) {
    owed_.clear();
    for (JobSlot s = view.first_pending(); s != kNoJob; s = view.next_pending(s)) {
      if (rank_of(s) >= 0) owed_.emplace_back(rank_of(s), s);
    }
    for (JobSlot s : restart_) owed_.emplace_back(rank_of(s), s);
    restart_.clear();
    std::sort(owed_.begin(), owed_.end());
    for (const auto& [rank, s] : owed_) {
      const JobView& j = view.job(s);
      if (j.status() != JobStatus::kPending && j.status() != JobStatus::kRunning) continue;
      if (take(j, target_[static_cast<std::size_t>(s)], nullptr, devices_)) out.start(s, devices_);
    }
  }

  std::string name_, base_name_;
  std::function<std::unique_ptr<Policy>()> make_base_;
  Keep keep_;
  std::int64_t round_us_, every_us_;
  std::int64_t round_end_us_ = std::numeric_limits<std::int64_t>::min();
  std::int64_t last_reset_us_ = 0;
  bool has_reset_ = false;
  bool dirty_ = false;
  std::int64_t next_rank_ = 0;
  std::vector<std::int64_t> rank_;  // by slot: the job's place in the base's allocation, -1 = none
  std::vector<std::vector<DeviceId>> target_;  // by slot: the devices the base gave it
  const ClusterSpec* spec_ = nullptr;
  const ClusterState* state_ = nullptr;
  const Geography* geo_ = nullptr;
  std::vector<std::set<DeviceId>> free_;  // by class_of()
  std::map<DeviceId, int> batch_milli_;
  HypotheticalView world_;
  ActionBatch plan_;
  std::vector<std::pair<std::uint64_t, JobSlot>> jobs_;
  std::vector<std::pair<std::int64_t, JobSlot>> moves_, owed_;
  std::vector<JobSlot> queue_, stay_, restart_;
  std::vector<DeviceId> devices_;
};

// Base policies whose own mechanism acts on running jobs (or that decide against the
// live simulator): a re-allocation would undo or bypass what they do.
std::string refusal(const std::string& base) {
  if (base == "gavel" || base == "gavel-las") return "it moves and preempts running jobs in rounds of its own (set its round_s and reallocate_every_s)";
  if (base == "round_fifo" || base == "gavel-fifo-perf" || base == "rounds") return "it re-allocates in rounds already";
  if (base == "gandiva" || base == "elastic-goodput" || base == "singularity") return "it moves, resizes or time-slices running jobs itself";
  if (base == "inference") return "it holds devices for inference services";
  if (base == "thermal-aware") return "it sets cooling set-points";
  if (base == "kubernetes") return "it binds devices to waiting jobs pod by pod (non-gang)";
  if (base == "rl") return "it decides one action at a time against the live simulator";
  return "";
}

PolicyInfo rounds_info(const std::string& name, const std::string& description, const RoundsOptions& d, const std::string& default_base) {
  return PolicyInfo{
      name,
      description,
      {{"base", default_base, "the policy that decides the allocation at each re-allocation: a name or a map, e.g. {name: sjf} or {name: fifo, placement: fastest_type}; one that only starts jobs"},
       {"round_s", std::to_string(static_cast<int>(d.round_s)), "seconds per round: the allocation is recomputed and applied only at round boundaries"},
       {"reallocate_every_s", std::to_string(static_cast<int>(d.reallocate_every_s)),
        "least seconds between two recomputations of the allocation (Gavel's minimum_time_between_allocation_resets); 0 = at every round boundary after a change"},
       {"keep", d.keep == Keep::kType ? "type" : "devices",
        "when a running job keeps its devices: type (the base gives it as many devices of each type) or devices (exactly its devices); otherwise it moves"}},
      [name, d, default_base](const ConfigNode& config, const PolicyContext& context) {
        config.expect_keys({"name", "base", "round_s", "reallocate_every_s", "keep"});
        RoundsOptions o = d;
        if (auto v = config.maybe_child("round_s")) o.round_s = v->as_positive_double();
        if (auto v = config.maybe_child("reallocate_every_s")) o.reallocate_every_s = v->as_nonnegative_double();
        if (auto v = config.maybe_child("keep")) o.keep = v->as_choice({"type", "devices"}) == "devices" ? Keep::kDevices : Keep::kType;
        std::optional<ConfigNode> base_node = config.maybe_child("base");
        if (!base_node) base_node = ConfigNode::load_string(default_base, "the default base of policy '" + name + "'");
        std::string base_name;
        if (base_node->is_map() && base_node->has("name")) base_name = base_node->child("name").as_string();
        else if (base_node->is_scalar()) base_name = base_node->as_string().substr(0, base_node->as_string().find(':'));
        const std::string why = refusal(base_name);
        if (!why.empty()) {
          (base_node->is_map() ? base_node->child("name") : *base_node)
              .fail(name + " cannot wrap '" + base_name + "': " + why + "; rounds wraps policies that only start jobs, e.g. fifo, sjf, las, tiresias, fair-share, compose");
        }
        auto registry = std::make_shared<const PolicyRegistry>(builtin_policies());
        PolicyInstance base = registry->create(*base_node, context);  // bad base options fail here
        // Binding devices to waiting jobs depends on options (queue-tree's gang: placeholders).
        if (base.policy->may_bind()) {
          (base_node->is_map() ? base_node->child("name") : *base_node)
              .fail(name + " cannot wrap '" + base_name + "': it binds devices to waiting jobs (gang: placeholders); rounds wraps policies that only start jobs, e.g. fifo, sjf, las, tiresias, fair-share, compose");
        }
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = name;
        resolved["base"] = base.resolved;
        resolved["round_s"] = o.round_s;
        resolved["reallocate_every_s"] = o.reallocate_every_s;
        resolved["keep"] = o.keep == Keep::kType ? "type" : "devices";
        const ConfigNode node = *base_node;
        auto make_base = [registry, node, context]() { return registry->create(node, context).policy; };
        return PolicyInstance{std::make_unique<RoundsPolicy>(name, o, base.policy->name(), make_base), resolved};
      },
  };
}

// round_fifo and gavel-fifo-perf: rounds with Gavel's fifo_perf allocation as the base,
// configured by the two round options only (their resolved config is that, too).
PolicyInfo gavel_fifo_info(const std::string& name, const std::string& description) {
  const RoundsOptions d;
  return PolicyInfo{
      name,
      description,
      {{"round_s", std::to_string(static_cast<int>(d.round_s)), "seconds per round: the allocation is recomputed and applied only at round boundaries"},
       {"reallocate_every_s", std::to_string(static_cast<int>(d.reallocate_every_s)),
        "least seconds between two recomputations of the allocation (Gavel's minimum_time_between_allocation_resets); 0 = at every round boundary after a change"}},
      [name, d](const ConfigNode& config, const PolicyContext& /*context*/) {
        config.expect_keys({"name", "round_s", "reallocate_every_s"});
        RoundsOptions o = d;
        if (auto v = config.maybe_child("round_s")) o.round_s = v->as_positive_double();
        if (auto v = config.maybe_child("reallocate_every_s")) o.reallocate_every_s = v->as_nonnegative_double();
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = name;
        resolved["round_s"] = o.round_s;
        resolved["reallocate_every_s"] = o.reallocate_every_s;
        auto make_base = [] { return std::unique_ptr<Policy>(std::make_unique<GavelFifoAllocation>()); };
        return PolicyInstance{std::make_unique<RoundsPolicy>(name, o, "gavel fifo_perf allocation", make_base), resolved};
      },
  };
}

}  // namespace

std::unique_ptr<Policy> make_rounds_policy(const std::string& name, double round_s, double reallocate_every_s, bool keep_devices,
                                           const std::string& base_name, std::function<std::unique_ptr<Policy>()> make_base) {
  RoundsOptions o;
  o.round_s = round_s;
  o.reallocate_every_s = reallocate_every_s;
  o.keep = keep_devices ? Keep::kDevices : Keep::kType;
  return std::make_unique<RoundsPolicy>(name, o, base_name, std::move(make_base));
}

PolicyInfo rounds_policy_info() {
  return rounds_info("rounds", "any policy that only starts jobs, run in rounds: at most every reallocate_every_s it re-decides from scratch over every job in the system, moving and preempting running jobs to match",
                     RoundsOptions{}, "fifo");
}

PolicyInfo round_fifo_policy_info() {
  return gavel_fifo_info("round_fifo", "FIFO on each job's fastest device type, allocated in rounds and recomputed from scratch (moving jobs between types) at most every reallocate_every_s, as Gavel's simulator runs fifo_perf");
}

PolicyInfo gavel_fifo_perf_policy_info() {
  return gavel_fifo_info("gavel-fifo-perf", "Gavel's simulator, fifo_perf: round_fifo with rounds of 360 s and the allocation recomputed at most every 1,920 s");
}

}  // namespace schedsim
