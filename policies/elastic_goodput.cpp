#include "policies/elastic_goodput.hpp"

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "policies/one_type.hpp"
#include "policies/placement.hpp"
#include "policies/queue_order.hpp"

namespace schedsim {
namespace {

class ElasticGoodputPolicy : public Policy {
 public:
  ElasticGoodputPolicy(int max_resizes, InformationModel information) : max_resizes_(max_resizes), info_(std::move(information)) {
    info_.require_durations(name(), "its resizes (whether the time a resize saves pays for its checkpoint)");
  }
  std::string name() const override { return "elastic-goodput"; }

  void on_job_queued(const SchedulerView& view, JobSlot job) override { queue_.emplace(view.job(job).arrival_seq(), job); }
  void on_job_finished(const SchedulerView& view, JobSlot job) override { queue_.erase({view.job(job).arrival_seq(), job}); }

  void decide(const SchedulerView& view, ActionBatch& out) override {
    free_.reset(view.cluster_state());
    released_.clear();
    resized_.clear();
    while (!queue_.empty()) {
      const auto head = *queue_.begin();
      const JobView& spec = view.job(head.second);
      const int need = spec.is_elastic() ? fewest_runnable(view, spec) : spec.num_gpus();
      if (!take(view, spec, need) && !(shrink_for(view, spec, need, out) && take(view, spec, need))) break;
      out.start(head.second, devices_);
      queue_.erase(head);
    }
    if (queue_.empty()) grow(view, out);
  }

  // The free-device index is rebuilt from the cluster at the next decision.
  void snapshot(SnapshotArchive& ar) override {
    ar(queue_, best_type_);
    if (!ar.loading()) return;
    for (const auto& entry : queue_) ar.check_job_slot(entry.second, "elastic-goodput's queue");
    ar.check(best_type_ >= 0, "elastic-goodput's device type is negative");
  }
 private:
  // The fewest devices an elastic job can run on: min_gpus, or, when the physics model
  // admits no device type there (an LLM job whose plans need more devices: estimated_rate
  // 0), the smallest count up to max_gpus that some type admits (min_gpus when none).
  static int fewest_runnable(const SchedulerView& view, const JobView& spec) {
    const PhysicsModel* physics = view.physics();
    if (!physics) return spec.min_gpus();
    const int types = static_cast<int>(view.cluster().device_types().size());
    auto runs = [&](int n) {
      for (int t = 0; t < types; ++t)
        if (physics->estimated_rate(spec, t, n) > 0) return true;
      return false;
    };
    if (runs(spec.min_gpus())) return spec.min_gpus();
    for (int n = spec.min_gpus() + 1; n <= spec.max_gpus(); ++n)
      if (runs(n)) return n;
    return spec.min_gpus();
  }

  // The job's goodput on n devices of its current type relative to now: physics_rate x
  // estimated_rate(n) / estimated_rate(held). 0 when the physics model says it cannot run.
  static double rate_on(const SchedulerView& view, const JobView& j, int n) {
    const ClusterSpec& c = view.cluster();
    const int type = c.node(c.node_of(j.devices().front())).type_index;
    const double now_est = view.physics()->estimated_rate(j, type, static_cast<int>(j.devices().size()));
    if (!(now_est > 0)) return 0.0;
    return j.physics_rate() * view.physics()->estimated_rate(j, type, n) / now_est;
  }

  // Work left at `now`: exact at last_update, progress at physics_rate since then (or
  // since the end of a stall).
  bool resizable(const SchedulerView& view, JobSlot s) const {
    const JobView& j = view.job(s);
    return j.is_elastic() && j.status() == JobStatus::kRunning && !j.devices().empty() &&
           std::find(resized_.begin(), resized_.end(), s) == resized_.end();
  }

  // `need` devices from the free ones, then from those released in this decision, into
  // devices_; within one type under physics.mixed_types: forbid (the first that holds it),
  // inside one datacenter (home first).
  bool take(const SchedulerView& view, const JobView& spec, int need) {
    devices_.clear();
    for (int site : placement_sites(view, spec)) {
      for (int t : placement_types(view, spec, need)) {
        if (first_fit_then_in(free_, view, t, site, need, released_, devices_)) return true;
      }
    }
    return false;
  }

  // Shrinks running elastic jobs toward min_gpus, smallest goodput loss per device first,
  // until the head's `need` devices are free. All or nothing, within max_resizes. Under
  // physics.mixed_types: forbid within one type: the first where shrinking frees enough.
  bool shrink_for(const SchedulerView& view, const JobView& spec, int need, ActionBatch& out) {
    if (static_cast<int>(resized_.size()) >= max_resizes_) return false;
    for (int t : placement_types(view, spec, need)) {
      const int verdict = shrink_for(view, need, t, out);
      if (verdict >= 0) return verdict == 1;
    }
    return false;
  }
  // For devices of type `type` (-1 = any): 1 when it shrank jobs, 0 when enough devices
  // are free already, -1 when shrinking cannot free enough of this type.
  int shrink_for(const SchedulerView& view, int need, int type, ActionBatch& out) {
    const ClusterSpec& c = view.cluster();
    auto of_type = [&](DeviceId d) { return type < 0 || device_type_of(c, d) == type; };
    int missing = need - (type < 0 ? free_.count() : free_of_type(view, type, out));
    for (DeviceId d : released_) missing -= of_type(d) ? 1 : 0;
    if (missing <= 0) return 0;
    shrink_.clear();
    int spare = 0;
    for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
      if (!resizable(view, s) || !of_type(view.job(s).devices().front())) continue;
      const JobView& j = view.job(s);
      const int floor = fewest_runnable(view, j);
      const int extra = static_cast<int>(j.devices().size()) - floor;
      if (extra <= 0) continue;
      double loss = 0;  // goodput lost per device given back
      if (view.physics()) loss = (j.physics_rate() - rate_on(view, j, floor)) / extra;
      shrink_.emplace_back(loss, s);
      spare += extra;
    }
    if (spare < missing) return -1;
    std::stable_sort(shrink_.begin(), shrink_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    int planned = 0;
    std::size_t k = 0;
    while (planned < missing) {
      const JobView& j = view.job(shrink_[k++].second);
      planned += static_cast<int>(j.devices().size()) - fewest_runnable(view, j);
    }
    if (static_cast<int>(resized_.size() + k) > max_resizes_) return -1;
    int left = missing;
    for (std::size_t i = 0; i < k; ++i) {
      const JobSlot s = shrink_[i].second;
      const JobView& j = view.job(s);
      // A job whose fewest runnable count is above min_gpus (an LLM plan) shrinks to that
      // count, where it is known to run, not to any count in between.
      const int floor = fewest_runnable(view, j);
      const int extra = static_cast<int>(j.devices().size()) - floor;
      const int give = floor != j.min_gpus() ? extra : std::min(left, extra);
      left -= give;
      const int keep = static_cast<int>(j.devices().size()) - give;
      kept_.assign(j.devices().begin(), j.devices().begin() + keep);
      for (int d = static_cast<int>(j.devices().size()) - 1; d >= keep; --d) released_.push_back(j.devices()[static_cast<std::size_t>(d)]);
      out.move(s, kept_);
      resized_.push_back(s);
    }
    return 1;
  }

  // Gives spare devices to running elastic jobs: each round, the job whose growth by
  // min(spare, max_gpus - held) devices gains the most goodput per added device, among
  // the resizes that pay: remaining time saved > checkpoint save + restore.
  void grow(const SchedulerView& view, ActionBatch& out) {
    if (!view.physics()) return;  // without physics every placement runs at rate 1: nothing to gain
    while (static_cast<int>(resized_.size()) < max_resizes_ && free_.count() > 0) {
      JobSlot best = kNoJob;
      int best_add = 0;
      double best_gain = 0;
      for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
        if (!resizable(view, s)) continue;
        const JobView& j = view.job(s);
        const int held = static_cast<int>(j.devices().size());
        if (held >= j.max_gpus() || j.stalled(view.now()) || !(j.physics_rate() > 0)) continue;
        const ClusterSpec& c = view.cluster();
        const int type = c.node(c.node_of(j.devices().front())).type_index;
        const int add = std::min(j.max_gpus() - held, free_.count());
        const double r_new = rate_on(view, j, held + add);
        if (!(r_new > j.physics_rate())) continue;
        const double work_s = info_.remaining_work_s(view, j);
        const double saved_s = work_s / j.physics_rate() - work_s / r_new;
        const double cost_s = view.physics()->checkpoint_save_s(j, held + add) + view.physics()->checkpoint_restore_s(j, held + add);
        if (!(saved_s > cost_s)) continue;
        const double gain = (r_new - j.physics_rate()) / add;
        if (gain > best_gain) {
          best = s;
          best_add = add;
          best_gain = gain;
          best_type_ = type;
        }
      }
      if (best == kNoJob) return;
      const JobView& j = view.job(best);
      devices_.assign(j.devices().begin(), j.devices().end());
      // Several datacenters: it grows inside its own (first fit there).
      const Geography* geo = view.geography();
      const bool grown = geo && geo->num_sites() > 1
                             ? free_.first_fit_among(best_add, devices_in(view, best_type_, geo->site_of_device(j.devices().front())), devices_)
                             : free_.packed(best_add, nullptr, devices_, best_type_);
      if (!grown) {
        resized_.push_back(best);  // not enough free devices of its type: leave it as it is
        continue;
      }
      out.move(best, devices_);
      resized_.push_back(best);
    }
  }

  int max_resizes_;
  InformationModel info_;
  std::set<std::pair<std::uint64_t, JobSlot>> queue_;  // (arrival sequence, slot): FIFO
  FreeDevices free_;
  std::vector<DeviceId> devices_, released_, kept_;
  std::vector<JobSlot> resized_;  // jobs resized in this decision (one resize per job)
  std::vector<std::pair<double, JobSlot>> shrink_;
  int best_type_ = 0;
};

}  // namespace

PolicyInfo elastic_goodput_policy_info() {
  return PolicyInfo{
      "elastic-goodput",
      "FIFO admission; elastic jobs start on min_gpus and grow into spare devices by goodput gain per device, shrink to admit waiting jobs",
      {{"max_resizes", "4", "most resizes (grow or shrink moves) per decision point; bounds the work of a decision"}},
      [](const ConfigNode& config, const PolicyContext& context) {
        config.expect_keys({"name", "max_resizes"});
        std::int64_t max_resizes = 4;
        if (auto v = config.maybe_child("max_resizes")) {
          max_resizes = v->as_positive_int();
          if (max_resizes > 1'000'000) v->fail("must be at most 1000000");
        }
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = "elastic-goodput";
        resolved["max_resizes"] = max_resizes;
        return PolicyInstance{std::make_unique<ElasticGoodputPolicy>(static_cast<int>(max_resizes), context.information), resolved};
      },
  };
}

}  // namespace schedsim
