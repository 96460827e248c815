#include "policies/gandiva.hpp"

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "policies/one_type.hpp"
#include "policies/placement.hpp"

namespace schedsim {
namespace {

class GandivaPolicy : public Policy {
 public:
  explicit GandivaPolicy(double quantum_s) : quantum_us_(static_cast<std::int64_t>(quantum_s * 1e6)) {}
  std::string name() const override { return "gandiva"; }

  void on_job_queued(const SchedulerView& /*view*/, JobSlot job) override {
    grow(job);
    seq_[static_cast<std::size_t>(job)] = next_seq_++;
    queue_.emplace(seq_[static_cast<std::size_t>(job)], job);  // arrivals and preempted jobs join the back
  }

  void on_job_finished(const SchedulerView& /*view*/, JobSlot job) override {
    grow(job);
    queue_.erase({seq_[static_cast<std::size_t>(job)], job});
  }

  void decide(const SchedulerView& view, ActionBatch& out) override {
    free_.reset(view.cluster_state());
    released_.clear();
    chosen_.clear();
    while (!queue_.empty()) {
      const auto head = *queue_.begin();
      const JobSlot slot = head.second;
      const JobView& spec = view.job(slot);
      if (!take(view, spec)) {
        if (!preempt_for(view, spec, out)) break;  // nothing to slice: the head blocks the queue
        if (!take(view, spec)) break;               // checkpoints cost time: start when the saves end
      }
      out.start(slot, devices_);
      slice_start_us_[static_cast<std::size_t>(slot)] = view.now().us();
      queue_.erase(head);
    }
  }

  // The free-device index is rebuilt from the cluster at the next decision.
  void snapshot(SnapshotArchive& ar) override {
    ar(next_seq_, queue_, seq_, slice_start_us_);
    if (!ar.loading()) return;
    // Slots index seq_ unchecked: each queued one must exist, with its own sequence.
    ar.check(slice_start_us_.size() == seq_.size(), "gandiva's per-slot tables differ in length");
    for (const auto& [seq, slot] : queue_) {
      ar.check_job_slot(slot, "gandiva's queue");
      ar.check(static_cast<std::size_t>(slot) < seq_.size() && seq_[static_cast<std::size_t>(slot)] == seq, "gandiva's queue entry for job slot " + std::to_string(slot) + " has another sequence");
    }
  }
 private:
  void grow(JobSlot job) {
    const auto n = static_cast<std::size_t>(job) + 1;
    if (seq_.size() < n) {
      seq_.resize(n, 0);
      slice_start_us_.resize(n, 0);
    }
  }

  // The job's devices from the free ones, then from those preempted in this decision at
  // no checkpoint cost, into devices_; within one type under physics.mixed_types: forbid
  // (the first, by index, that holds it), and inside one datacenter (home first).
  bool take(const SchedulerView& view, const JobView& spec) {
    devices_.clear();
    for (int site : placement_sites(view, spec)) {
      for (int t : placement_types(view, spec, spec.num_gpus())) {
        if (first_fit_then_in(free_, view, t, site, spec.num_gpus(), released_, devices_)) return true;
      }
    }
    return false;
  }

  // Preempts running jobs past their quantum (oldest slice first) when that frees enough
  // devices for the head. Returns true when it preempted; the devices of victims with a
  // free checkpoint save (no physics, or a zero save time) are usable in this same batch,
  // the others when their saves end. Under physics.mixed_types: forbid the devices are
  // counted, and victims chosen, within one type, the first where enough would be free.
  bool preempt_for(const SchedulerView& view, const JobView& spec, ActionBatch& out) {
    for (int t : placement_types(view, spec, spec.num_gpus())) {
      const int verdict = preempt_for(view, spec.num_gpus(), t, out);
      if (verdict >= 0) return verdict == 1;
    }
    return false;
  }
  // For devices of type `type` (-1 = any): 1 when it preempted, 0 when saves under way
  // will free enough (wait), -1 when this type cannot hold the head.
  int preempt_for(const SchedulerView& view, int need, int type, ActionBatch& out) {
    const ClusterSpec& spec = view.cluster();
    auto of_type = [&](DeviceId d) { return type < 0 || device_type_of(spec, d) == type; };
    int soon = type < 0 ? free_.count() : free_of_type(view, type, out);
    for (DeviceId d : released_) soon += of_type(d) ? 1 : 0;
    candidates_.clear();
    const std::int64_t now_us = view.now().us();
    for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
      const JobView& j = view.job(s);
      if (j.devices().empty() || !of_type(j.devices().front())) continue;  // one type each under the rule
      if (j.status() == JobStatus::kStopping) {
        soon += static_cast<int>(j.devices().size());
      } else if (now_us - slice_start_us_[static_cast<std::size_t>(s)] >= quantum_us_ &&
                 std::find(chosen_.begin(), chosen_.end(), s) == chosen_.end()) {
        candidates_.emplace_back(slice_start_us_[static_cast<std::size_t>(s)], s);
      }
    }
    if (soon >= need) return 0;  // saves under way will free enough: wait for them
    std::stable_sort(candidates_.begin(), candidates_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::size_t k = 0;
    int freed = soon;
    while (k < candidates_.size() && freed < need) freed += static_cast<int>(view.job(candidates_[k++].second).devices().size());
    if (freed < need) return -1;
    for (std::size_t i = 0; i < k; ++i) {
      const JobSlot v = candidates_[i].second;
      out.preempt(v);
      chosen_.push_back(v);
      const auto& d = view.job(v).devices();
      if (!view.physics() || view.physics()->checkpoint_save_s(view.job(v), static_cast<int>(d.size())) <= 0) {
        released_.insert(released_.end(), d.rbegin(), d.rend());
      }
    }
    return 1;
  }

  std::int64_t quantum_us_;
  std::uint64_t next_seq_ = 0;
  std::set<std::pair<std::uint64_t, JobSlot>> queue_;  // (queue sequence, slot)
  std::vector<std::uint64_t> seq_;                    // by slot, while queued
  std::vector<std::int64_t> slice_start_us_;          // by slot, while running
  FreeDevices free_;
  std::vector<DeviceId> devices_, released_;
  std::vector<JobSlot> chosen_;
  std::vector<std::pair<std::int64_t, JobSlot>> candidates_;
};

}  // namespace

PolicyInfo gandiva_policy_info() {
  return PolicyInfo{
      "gandiva",
      "time slicing (Gandiva, simplified): FIFO; when the head does not fit, jobs past their quantum are preempted round robin",
      {{"quantum_s", "600", "seconds a job runs before it may be preempted for a waiting job; the slice ends at the next decision point"}},
      [](const ConfigNode& config, const PolicyContext& /*context*/) {
        config.expect_keys({"name", "quantum_s"});
        double quantum_s = 600;
        if (auto v = config.maybe_child("quantum_s")) quantum_s = v->as_positive_double();
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = "gandiva";
        resolved["quantum_s"] = quantum_s;
        return PolicyInstance{std::make_unique<GandivaPolicy>(quantum_s), resolved};
      },
  };
}

}  // namespace schedsim
