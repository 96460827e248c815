#include "policies/thermal_aware.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "world/thermal/thermal.hpp"

namespace schedsim {
namespace {

struct ThermalAwareOptions {
  std::vector<double> setpoints_c;  // empty = the allowed range in step_c steps
  double step_c = 1.0;
};

class ThermalAware : public Policy {
 public:
  ThermalAware(std::unique_ptr<Policy> base, ThermalAwareOptions options) : base_(std::move(base)), options_(std::move(options)) {}
  std::string name() const override { return "thermal-aware"; }
  void on_job_queued(const SchedulerView& view, JobSlot slot) override { base_->on_job_queued(view, slot); }
  void on_job_finished(const SchedulerView& view, JobSlot slot) override { base_->on_job_finished(view, slot); }

  // load_ is scratch, refilled at every decision: only the base has state.
  void snapshot(SnapshotArchive& ar) override { base_->snapshot(ar); }

  void decide(const SchedulerView& view, ActionBatch& out) override {
    const ThermalModel* thermal = view.thermal();
    const std::size_t first_new = out.size();
    base_->decide(view, out);
    if (!thermal) return;  // nothing to cool: the base alone (like carbon-aware without signals)
    // The hottest busy device per site: devices jobs hold now, and those the base starts or moves jobs onto.
    load_.assign(static_cast<std::size_t>(thermal->num_sites()), -1.0);
    auto busy = [&](DeviceId d) {
      double& l = load_[static_cast<std::size_t>(thermal->site_of_device(d))];
      l = std::max(l, thermal->load_fraction(d));
    };
    for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
      for (DeviceId d : view.job(s).devices()) busy(d);
    }
    for (std::size_t i = first_new; i < out.size(); ++i) {
      const Action& a = out[i];
      if (a.kind == ActionKind::kStart || a.kind == ActionKind::kMove) {
        for (DeviceId d : out.devices(a)) busy(d);
      }
    }
    for (int s = 0; s < thermal->num_sites(); ++s) {
      const ThermalSiteSpec& site = thermal->site(s);
      double want = options_.setpoints_c.empty() ? site.max_setpoint_c : *std::max_element(options_.setpoints_c.begin(), options_.setpoints_c.end());
      if (load_[static_cast<std::size_t>(s)] >= 0.0) want = thermal->highest_safe_setpoint_c(s, load_[static_cast<std::size_t>(s)], options_.setpoints_c, options_.step_c);
      if (want != thermal->setpoint_c(s)) out.set_cooling_setpoint(s, want);
    }
  }

 private:
  std::unique_ptr<Policy> base_;
  ThermalAwareOptions options_;
  std::vector<double> load_;  // by site: largest busy power / TDP, -1 = no busy device
};

}  // namespace

PolicyInfo thermal_aware_policy_info() {
  std::vector<PolicyOptionDoc> options = {
      {"base", "fifo", "the policy that orders and places jobs: a name or a map, e.g. {name: compose, order: sjf}"},
      {"setpoints_c", "[] (the allowed range)", "candidate cooling set-points, °C; each must lie in every datacenter's thermal.setpoint_range_c"},
      {"step_c", "1", "without setpoints_c: candidates are the allowed range's lowest set-point + k x step_c, °C"},
  };
  return PolicyInfo{
      "thermal-aware",
      "sets each datacenter's cooling set-point as high as the busy devices allow without throttling, in front of a base policy",
      options,
      [](const ConfigNode& config, const PolicyContext& context) {
        config.expect_keys({"name", "base", "setpoints_c", "step_c"});
        ThermalAwareOptions o;
        if (auto v = config.maybe_child("setpoints_c")) {
          if (!v->is_sequence() || v->size() == 0) v->fail("expected a non-empty list of set-points in °C, e.g. [18, 22, 27, 32]");
          for (std::size_t i = 0; i < v->size(); ++i) o.setpoints_c.push_back(v->at(i).as_double());
        }
        if (auto v = config.maybe_child("step_c")) {
          o.step_c = v->as_positive_double();
          if (o.setpoints_c.size() > 0) v->fail("give setpoints_c or step_c, not both");
        }
        const PolicyRegistry registry = builtin_policies();
        PolicyInstance base = config.has("base") ? registry.create(config.child("base"), context) : registry.create("fifo", context);
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = "thermal-aware";
        resolved["base"] = base.resolved;
        YAML::Node list(YAML::NodeType::Sequence);
        for (double c : o.setpoints_c) list.push_back(c);
        resolved["setpoints_c"] = list;
        resolved["step_c"] = o.step_c;
        return PolicyInstance{std::make_unique<ThermalAware>(std::move(base.policy), o), resolved};
      },
      false,
      "",
      true,
  };
}

}  // namespace schedsim
