#include "policies/temporal_shift.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include "world/geography/datacenters.hpp"
#include "base/error.hpp"

namespace schedsim {
namespace {

struct ShiftOptions {
  double slack_s = 0.0;
  double slack_factor = 1.0;
  bool use_deadlines = true;
  std::vector<std::string> groups;  // empty = every job is deferrable
  double horizon_s = 172800.0;
  double min_saving = 0.0;
};

// Integral over [a, b] of the step function given by `points` (sorted, the last value
// persisting), in value x seconds.
double step_integral(const std::vector<std::pair<Tick, double>>& points, Tick a, Tick b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Tick lo = std::max(a, points[i].first);
    const Tick hi = i + 1 < points.size() ? std::min(b, points[i + 1].first) : b;
    if (hi > lo) sum += points[i].second * (hi - lo).seconds();
  }
  return sum;
}

class TemporalShift : public Policy {
 public:
  TemporalShift(std::string name, SignalKind kind, std::unique_ptr<Policy> base, ShiftOptions options, InformationModel information)
      : name_(std::move(name)), kind_(kind), base_(std::move(base)), options_(std::move(options)), info_(std::move(information)) {
    info_.require_durations(name_, "its shift (each job's start window over its estimated run)");
  }

  std::string name() const override { return name_; }

  void on_job_queued(const SchedulerView& view, JobSlot slot) override {
    const JobView& j = view.job(slot);
    if (static_cast<std::size_t>(slot) >= seen_.size()) seen_.resize(static_cast<std::size_t>(slot) + 1, UINT64_MAX);
    if (seen_[static_cast<std::size_t>(slot)] == j.arrival_seq()) {  // back after a preemption
      base_->on_job_queued(view, slot);
      return;
    }
    seen_[static_cast<std::size_t>(slot)] = j.arrival_seq();
    const Tick release = plan(view, j);
    if (release <= view.now()) {
      base_->on_job_queued(view, slot);
    } else {
      held_.emplace(release, j.arrival_seq(), slot);
    }
  }

  void on_job_finished(const SchedulerView& view, JobSlot slot) override { base_->on_job_finished(view, slot); }

  void decide(const SchedulerView& view, ActionBatch& out) override {
    while (!held_.empty() && std::get<0>(*held_.begin()) <= view.now()) {
      const JobSlot slot = std::get<2>(*held_.begin());
      held_.erase(held_.begin());
      base_->on_job_queued(view, slot);
    }
    base_->decide(view, out);
    if (!held_.empty()) out.wake_at(std::get<0>(*held_.begin()));
  }

  void snapshot(SnapshotArchive& ar) override {
    ar.section("temporal shift");
    ar(seen_, held_);
    base_->snapshot(ar);
  }
 private:
  Tick plan(const SchedulerView& view, const JobView& j) {
    const GridSignals* signals = job_signals(view, j);
    if (!signals || !signals->has(kind_)) {
      throw PolicyError("policy '" + name_ + "' needs a " + to_string(kind_) + " signal: add signals." + to_string(kind_) +
                        " to the scenario (docs/energy.md)");
    }
    const JobView& s = j;
    const double est = info_.estimated_total_s(s);
    double latest_s;
    if (options_.use_deadlines && !std::isnan(s.deadline_s())) {
      latest_s = s.deadline_s() - est;
    } else {
      if (!options_.groups.empty() && std::find(options_.groups.begin(), options_.groups.end(), s.group()) == options_.groups.end()) return view.now();
      latest_s = s.submit().seconds() + options_.slack_s + options_.slack_factor * est;
    }
    const Tick latest = Tick::from_seconds(std::min(latest_s, view.now().seconds() + options_.horizon_s));
    if (latest <= view.now()) return view.now();
    return best_start(*signals, kind_, view.now(), latest, est, options_.horizon_s, options_.min_saving);
  }

  std::string name_;
  SignalKind kind_;
  std::unique_ptr<Policy> base_;
  ShiftOptions options_;
  InformationModel info_;
  std::vector<std::uint64_t> seen_;  // by slot: arrival_seq of the job already planned
  std::set<std::tuple<Tick, std::uint64_t, JobSlot>> held_;  // (release, arrival seq, slot)
};

PolicyInfo shift_info(const std::string& name, SignalKind kind, const std::string& description) {
  const ShiftOptions d;
  std::vector<PolicyOptionDoc> options = {
      {"base", "fifo", "the policy that orders and places released jobs: a name or a map, e.g. {name: compose, order: sjf}"},
      {"slack_s", "0", "seconds every deferrable job may start late, beyond slack_factor x its estimate"},
      {"slack_factor", "1", "a deferrable job may start up to slack_s + slack_factor x estimate after submission"},
      {"use_deadlines", "true", "jobs with a deadline may start as late as deadline - estimate (instead of the slack)"},
      {"groups", "[] (all)", "job groups that may be deferred; empty = every group"},
      {"horizon_s", "172800", "the longest look-ahead into the forecast, seconds"},
      {"min_saving", "0", "defer only when the best window's mean is at least this fraction below starting now, [0, 1)"},
  };
  return PolicyInfo{
      name, description, options,
      [name, kind](const ConfigNode& config, const PolicyContext& context) {
        config.expect_keys({"name", "base", "slack_s", "slack_factor", "use_deadlines", "groups", "horizon_s", "min_saving"});
        ShiftOptions o;
        if (auto v = config.maybe_child("slack_s")) o.slack_s = v->as_nonnegative_double();
        if (auto v = config.maybe_child("slack_factor")) o.slack_factor = v->as_nonnegative_double();
        if (auto v = config.maybe_child("use_deadlines")) o.use_deadlines = v->as_bool();
        if (auto v = config.maybe_child("horizon_s")) o.horizon_s = v->as_positive_double();
        if (auto v = config.maybe_child("min_saving")) {
          o.min_saving = v->as_nonnegative_double();
          if (o.min_saving >= 1.0) v->fail("must be in [0, 1)");
        }
        if (auto g = config.maybe_child("groups")) {
          if (!g->is_sequence()) g->fail("expected a list of group names, e.g. [batch, research]");
          for (std::size_t i = 0; i < g->size(); ++i) o.groups.push_back(g->at(i).as_string());
        }
        const PolicyRegistry registry = builtin_policies();
        PolicyInstance base = config.has("base") ? registry.create(config.child("base"), context) : registry.create("fifo", context);
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = name;
        resolved["base"] = base.resolved;
        resolved["slack_s"] = o.slack_s;
        resolved["slack_factor"] = o.slack_factor;
        resolved["use_deadlines"] = o.use_deadlines;
        YAML::Node groups(YAML::NodeType::Sequence);
        for (const auto& g : o.groups) groups.push_back(g);
        resolved["groups"] = groups;
        resolved["horizon_s"] = o.horizon_s;
        resolved["min_saving"] = o.min_saving;
        return PolicyInstance{std::make_unique<TemporalShift>(name, kind, std::move(base.policy), o, context.information), resolved};
      },
      true,
  };
}

}  // namespace

ShiftWindow best_window(const GridSignals& signals, SignalKind kind, Tick now, Tick latest, double estimate_s, double horizon_s,
                        const std::function<bool(Tick)>& feasible) {
  const Tick run = Tick::from_seconds(std::max(estimate_s, 1e-6));
  std::vector<std::pair<Tick, double>> points;
  const Tick horizon = std::min(latest - now + run, Tick::from_seconds(horizon_s) + run);
  signals.forecast(kind, now, horizon, points);
  const double run_s = run.seconds();
  const double now_mean = step_integral(points, now, now + run) / run_s;
  ShiftWindow w{now, now_mean, now_mean, true};
  if (feasible && !feasible(now)) {
    w.found = false;
    w.mean = std::numeric_limits<double>::infinity();
  }
  for (std::size_t i = 1; i < points.size() && points[i].first <= latest; ++i) {
    const Tick t = points[i].first;
    const double mean = step_integral(points, t, t + run) / run_s;
    if (mean < w.mean && (!feasible || feasible(t))) {
      w.mean = mean;
      w.start = t;
      w.found = true;
    }
  }
  return w;
}

Tick best_start(const GridSignals& signals, SignalKind kind, Tick now, Tick latest, double estimate_s, double horizon_s, double min_saving) {
  const ShiftWindow w = best_window(signals, kind, now, latest, estimate_s, horizon_s);
  // min_saving compares magnitudes: with negative prices any lower mean is a saving.
  if (w.start != now && !(w.mean < w.now_mean - min_saving * std::fabs(w.now_mean))) return now;
  return w.start;
}

const GridSignals* job_signals(const SchedulerView& view, const JobView& job) {
  if (const Geography* geo = view.geography()) return geo->site(geo->home_site(job)).signals;
  return view.signals();
}

PolicyInfo carbon_aware_policy_info() {
  return shift_info("carbon-aware", SignalKind::kCarbon,
                    "defers jobs within their slack to the start that minimises forecast carbon intensity over their run, then hands them to a base policy");
}

PolicyInfo price_aware_policy_info() {
  return shift_info("price-aware", SignalKind::kPrice,
                    "defers jobs within their slack to the start that minimises the forecast electricity price over their run, then hands them to a base policy");
}

}  // namespace schedsim
