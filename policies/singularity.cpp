#include "policies/singularity.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "policies/one_type.hpp"
#include "policies/placement.hpp"
#include "policies/reservation.hpp"
#include "world/geography/datacenters.hpp"

namespace schedsim {
namespace {

class SingularityPolicy : public Policy {
 public:
  SingularityPolicy(const SingularityOptions& options, InformationModel information) : options_(options), info_(std::move(information)) {
    if (options_.migrate || options_.elastic) info_.require_durations(name(), "its migrations and resizes (whether the time saved pays for the checkpoint)");
  }
  std::string name() const override { return "singularity"; }
  void on_job_queued(const SchedulerView& view, JobSlot job) override { queue_.insert(entry(view, job)); }
  void on_job_finished(const SchedulerView& view, JobSlot job) override { queue_.erase(entry(view, job)); }

  void decide(const SchedulerView& view, ActionBatch& out) override {
    free_.reset(view.cluster_state());
    released_.clear();
    moved_.clear();
    bool blocked = false;
    // While devices are on their way to the blocked job (checkpoints being saved), later
    // jobs may take only the free devices it will not need: free + hold_extra of them.
    bool holding = false;
    int hold_extra = 0;
    int examined = 0;
    for (auto it = queue_.begin(); it != queue_.end() && examined < options_.depth; ++examined) {
      const JobSlot slot = std::get<2>(*it);
      const JobView& spec = view.job(slot);
      const int cap = holding ? free_.count() + hold_extra : std::numeric_limits<int>::max();
      bool placed = admit(view, spec, /*use_released=*/!blocked, cap);
      if (!placed && !blocked) {
        blocked = true;
        int coming = 0;
        placed = make_room(view, slot, out, coming) && admit(view, spec, true, std::numeric_limits<int>::max());
        if (!placed && coming > 0) {
          holding = true;
          hold_extra = static_cast<int>(released_.size()) + coming - need_of(spec);
        }
      }
      if (!placed) {
        ++it;
        continue;
      }
      out.start(slot, devices_);
      it = queue_.erase(it);
    }
    if (!view.physics()) return;  // without physics every placement runs at rate 1: nothing to gain
    if (!blocked && options_.migrate) migrate(view, out);
    if (queue_.empty() && options_.elastic) grow(view, out);
  }

  void snapshot(SnapshotArchive& ar) override {
    ar.section("singularity");
    ar(queue_);
    if (!ar.loading()) return;
    for (const auto& e : queue_) ar.check_job_slot(std::get<2>(e), "singularity's queue");
  }

 private:
  using Entry = std::tuple<double, std::uint64_t, JobSlot>;  // (-priority, arrival, slot)
  static Entry entry(const SchedulerView& view, JobSlot s) { return {-view.job(s).priority(), view.job(s).arrival_seq(), s}; }

  std::vector<std::pair<int, int>> classes(const SchedulerView& view, const JobView& spec, int n) const {
    std::vector<std::pair<int, int>> out;
    for (int site : placement_sites(view, spec)) {
      for (int t : placement_types(view, spec, n)) out.emplace_back(t, site);
    }
    return out;
  }
  bool in_class(const SchedulerView& view, DeviceId d, int type, int site) const {
    if (type >= 0 && device_type_of(view.cluster(), d) != type) return false;
    return site < 0 || view.geography()->site_of_device(d) == site;
  }
  // Free, unclaimed devices of a class (plus this decision's released ones when asked).
  void collect(const SchedulerView& view, int type, int site, bool use_released, std::vector<DeviceId>& out) {
    const ClusterState& state = view.cluster_state();
    out.clear();
    for (DeviceId d = state.next_free(0); d >= 0; d = state.next_free(d + 1)) {
      if (free_.free_milli(d) == ClusterState::kWholeMilli && in_class(view, d, type, site)) out.push_back(d);
    }
    if (use_released) {
      for (DeviceId d : released_) {
        if (in_class(view, d, type, site)) out.push_back(d);
      }
    }
  }
  // Claims `picked` (free ones through free_, released ones out of released_).
  void claim(const std::vector<DeviceId>& picked) {
    for (DeviceId d : picked) {
      const auto r = std::find(released_.begin(), released_.end(), d);
      if (r != released_.end()) {
        released_.erase(r);
      } else {
        one_.clear();
        free_.first_fit_among(1, {d}, one_);
      }
    }
  }

  // A placement of `spec` into devices_: num_gpus, or for an elastic job the most that fit
  // down to min_gpus; compact.
  // At most `cap` devices are taken from the free ones (released ones do not count).
  bool admit(const SchedulerView& view, const JobView& spec, bool use_released, int cap) {
    devices_.clear();
    if (spec.is_fractional()) return cap >= 1 && free_.share(spec.gpu_milli(), FreeDevices::ShareRule::kBest, devices_);
    const int low = need_of(spec);
    for (int n = std::min(spec.num_gpus(), use_released ? std::numeric_limits<int>::max() : cap); n >= low; --n) {
      for (const auto& [type, site] : classes(view, spec, n)) {
        collect(view, type, site, use_released, candidates_);
        picked_.clear();
        if (!compact_pick(view.cluster(), view.node_group(), candidates_, n, picked_)) continue;
        if (view.physics() && !view.physics()->placement_problem(spec, picked_).empty()) continue;
        claim(picked_);
        devices_ = picked_;
        return true;
      }
    }
    return false;
  }

  // Frees devices for the blocked job `slot`: shrinks elastic jobs, then preempts lower
  // priority ones. True when devices were released in this batch (so it may start now).
  // Sets `coming` to the devices that will be free for it once checkpoints are saved.
  bool make_room(const SchedulerView& view, JobSlot slot, ActionBatch& out, int& coming) {
    const JobView& spec = view.job(slot);
    if (spec.is_fractional()) return false;
    const int need = need_of(spec);
    int missing = need - free_.count() - static_cast<int>(released_.size());
    if (missing <= 0) return false;  // enough devices, the placement refused them
    // Victims: (priority, -arrival) ascending = lowest priority, latest arrival first.
    victims_.clear();
    int stopping = 0;
    for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
      const JobView& r = view.job(s);
      if (r.status() == JobStatus::kStopping) stopping += static_cast<int>(r.devices().size());
      if (r.status() != JobStatus::kRunning || r.is_fractional() || r.devices().empty()) continue;
      victims_.emplace_back(r.priority(), -static_cast<std::int64_t>(r.arrival_seq()), s);
    }
    if (stopping >= missing) {  // devices are on their way: wait for them
      coming = stopping;
      return false;
    }
    std::sort(victims_.begin(), victims_.end());
    bool released = false;
    if (options_.elastic) {
      for (const auto& [priority, neg_arrival, s] : victims_) {
        if (missing <= 0 || static_cast<int>(moved_.size()) >= options_.max_moves) break;
        const JobView& r = view.job(s);
        const int spare = static_cast<int>(r.devices().size()) - std::max(1, r.min_gpus());
        if (!r.is_elastic() || spare <= 0 || r.priority() > spec.priority()) continue;  // never for a less important job
        const int give = std::min(spare, missing);
        const int keep = static_cast<int>(r.devices().size()) - give;
        kept_.assign(r.devices().begin(), r.devices().begin() + keep);
        released_.insert(released_.end(), r.devices().begin() + keep, r.devices().end());
        out.move(s, kept_);
        moved_.push_back(s);
        missing -= give;
        released = true;
      }
    }
    if (missing <= 0 || !options_.preemption) return released;
    // Preemption: strictly lower priority only, all or nothing.
    int frees = 0;
    std::size_t k = 0;
    while (k < victims_.size() && frees < missing && std::get<0>(victims_[k]) < spec.priority()) {
      const JobSlot s = std::get<2>(victims_[k]);
      if (std::find(moved_.begin(), moved_.end(), s) == moved_.end()) frees += static_cast<int>(view.job(s).devices().size());
      ++k;
    }
    if (frees < missing) return released;
    const PhysicsModel* physics = view.physics();
    for (std::size_t i = 0; i < k; ++i) {
      const JobSlot s = std::get<2>(victims_[i]);
      if (std::find(moved_.begin(), moved_.end(), s) != moved_.end()) continue;
      const JobView& r = view.job(s);
      out.preempt(s);
      // A checkpoint that rounds to no time releases the devices as the batch is applied.
      if (!physics || Tick::from_seconds(physics->checkpoint_save_s(r, static_cast<int>(r.devices().size()))).us() == 0) {
        released_.insert(released_.end(), r.devices().begin(), r.devices().end());
        released = true;
      } else {
        coming += static_cast<int>(r.devices().size());
      }
    }
    if (coming > 0) coming += stopping;
    return released;
  }

  // The fewest devices the job starts on.
  int need_of(const JobView& spec) const { return spec.is_elastic() && options_.elastic ? std::max(1, spec.min_gpus()) : spec.num_gpus(); }

  bool movable(const SchedulerView& view, JobSlot s) const {
    const JobView& j = view.job(s);
    return j.status() == JobStatus::kRunning && !j.is_fractional() && !j.devices().empty() && !j.stalled(view.now()) && j.physics_rate() > 0 &&
           std::find(moved_.begin(), moved_.end(), s) == moved_.end();
  }
  static int nodes_of(const ClusterSpec& c, const std::vector<DeviceId>& ds) {
    std::set<int> nodes;
    for (DeviceId d : ds) nodes.insert(c.node_of(d));
    return static_cast<int>(nodes.size());
  }
  // Whether moving `j` to `n` devices at rate `rate` saves more time than save + restore.
  bool pays(const SchedulerView& view, const JobView& j, int n, double rate) const {
    if (!(rate > j.physics_rate())) return false;
    const double work_s = info_.remaining_work_s(view, j);
    const double saved_s = work_s / j.physics_rate() - work_s / rate;
    const double cost_s = view.physics()->checkpoint_save_s(j, n) + view.physics()->checkpoint_restore_s(j, n);
    return saved_s > cost_s;
  }

  // Defragmentation: a job spread over more nodes than a compact placement of its own and
  // the free devices needs moves there when that pays.
  void migrate(const SchedulerView& view, ActionBatch& out) {
    const ClusterSpec& c = view.cluster();
    for (JobSlot s = view.first_running(); s != kNoJob && static_cast<int>(moved_.size()) < options_.max_moves; s = view.next_running(s)) {
      if (!movable(view, s)) continue;
      const JobView& j = view.job(s);
      const int n = static_cast<int>(j.devices().size());
      const int type = device_type_of(c, j.devices().front());
      const int site = view.geography() && view.geography()->num_sites() > 1 ? view.geography()->site_of_device(j.devices().front()) : -1;
      collect(view, type, site, false, candidates_);
      if (candidates_.empty()) continue;
      candidates_.insert(candidates_.end(), j.devices().begin(), j.devices().end());
      picked_.clear();
      compact_pick(c, view.node_group(), candidates_, n, picked_);
      if (nodes_of(c, picked_) >= nodes_of(c, j.devices())) continue;
      if (!pays(view, j, n, view.physics()->estimated_rate(j, type, n))) continue;
      if (!view.physics()->placement_problem(j, picked_).empty()) continue;
      for (DeviceId d : picked_) {
        if (std::find(j.devices().begin(), j.devices().end(), d) == j.devices().end()) claim({d});
      }
      out.move(s, picked_);
      moved_.push_back(s);
    }
  }

  // Idle devices to elastic jobs: the job whose growth gains the most rate per device,
  // among the growths that pay; its own devices kept, the new ones compact.
  void grow(const SchedulerView& view, ActionBatch& out) {
    const ClusterSpec& c = view.cluster();
    while (static_cast<int>(moved_.size()) < options_.max_moves && free_.count() > 0) {
      JobSlot best = kNoJob;
      double best_gain = 0;
      std::vector<DeviceId> best_add;
      for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
        if (!movable(view, s) || !view.job(s).is_elastic()) continue;
        const JobView& j = view.job(s);
        const int held = static_cast<int>(j.devices().size());
        if (held >= j.max_gpus()) continue;
        const int type = device_type_of(c, j.devices().front());
        const int site = view.geography() && view.geography()->num_sites() > 1 ? view.geography()->site_of_device(j.devices().front()) : -1;
        collect(view, type, site, false, candidates_);
        const int add = std::min(j.max_gpus() - held, static_cast<int>(candidates_.size()));
        if (add <= 0) continue;
        const double now_est = view.physics()->estimated_rate(j, type, held);
        if (!(now_est > 0)) continue;
        const double rate = j.physics_rate() * view.physics()->estimated_rate(j, type, held + add) / now_est;
        if (!pays(view, j, held + add, rate)) continue;
        const double gain = (rate - j.physics_rate()) / add;
        if (gain > best_gain) {
          best = s;
          best_gain = gain;
          picked_.clear();
          compact_pick(c, view.node_group(), candidates_, add, picked_);
          best_add = picked_;
        }
      }
      if (best == kNoJob) return;
      const JobView& j = view.job(best);
      std::vector<DeviceId> all(j.devices().begin(), j.devices().end());
      all.insert(all.end(), best_add.begin(), best_add.end());
      if (!view.physics()->placement_problem(j, all).empty()) {
        moved_.push_back(best);  // leave it as it is
        continue;
      }
      claim(best_add);
      out.move(best, all);
      moved_.push_back(best);
    }
  }

  SingularityOptions options_;
  InformationModel info_;
  std::set<Entry> queue_;
  FreeDevices free_;
  std::vector<DeviceId> devices_, released_, candidates_, picked_, kept_, one_;
  std::vector<JobSlot> moved_;  // resized or migrated in this decision (one move per job)
  std::vector<std::tuple<double, std::int64_t, JobSlot>> victims_;
};

}  // namespace

PolicyInfo singularity_policy_info() {
  const SingularityOptions d;
  return PolicyInfo{
      "singularity",
      "Singularity-style: priority admission with compact placement; blocked jobs shrink elastic jobs and preempt lower-priority ones; running jobs migrate onto fewer nodes and elastic jobs grow into idle devices when the checkpoint pays",
      {{"preemption", "true", "a blocked job may preempt running jobs of strictly lower priority"},
       {"migrate", "true", "move running jobs onto fewer nodes when the consolidated rate saves more than the move's checkpoint save + restore (needs physics)"},
       {"elastic", "true", "start elastic jobs on as many devices as fit (down to min_gpus), shrink them for blocked jobs and grow them into idle devices"},
       {"max_moves", std::to_string(d.max_moves), "most resizes and migrations per decision point"},
       {"depth", std::to_string(d.depth), "queued jobs one decision examines at most"}},
      [](const ConfigNode& config, const PolicyContext& context) {
        config.expect_keys({"name", "preemption", "migrate", "elastic", "max_moves", "depth"});
        SingularityOptions o;
        if (auto v = config.maybe_child("preemption")) o.preemption = v->as_bool();
        if (auto v = config.maybe_child("migrate")) o.migrate = v->as_bool();
        if (auto v = config.maybe_child("elastic")) o.elastic = v->as_bool();
        if (auto v = config.maybe_child("max_moves")) o.max_moves = policy_count_option(*v);
        if (auto v = config.maybe_child("depth")) o.depth = policy_count_option(*v);
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = "singularity";
        resolved["preemption"] = o.preemption;
        resolved["migrate"] = o.migrate;
        resolved["elastic"] = o.elastic;
        resolved["max_moves"] = o.max_moves;
        resolved["depth"] = o.depth;
        return PolicyInstance{std::make_unique<SingularityPolicy>(o, context.information), resolved};
      },
  };
}

}  // namespace schedsim
