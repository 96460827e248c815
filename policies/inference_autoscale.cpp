#include "policies/inference_autoscale.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>

#include "world/geography/datacenters.hpp"
#include "base/error.hpp"

namespace schedsim {
namespace {

using AutoscaleOptions = AutoscalerSettings;

class InferencePolicy : public Policy, public InferenceMetricsSource, public ServiceReplicaSource {
 public:
  // `owned` (may be null) is the base policy it owns; `base` the one it runs in front of.
  // `named_after_base`: the runner's default autoscaler, which reports the base's name.
  InferencePolicy(std::unique_ptr<Policy> owned, Policy& base, AutoscaleOptions options, std::shared_ptr<const std::vector<ServiceSpec>> services,
                  bool named_after_base)
      : owned_(std::move(owned)), base_(&base), options_(options), specs_(std::move(services)), named_after_base_(named_after_base) {}

  std::string name() const override { return named_after_base_ ? base_->name() : "inference"; }
  void on_run_start(const SchedulerView& view) override {
    view_ = &view;
    base_->on_run_start(view);
  }
  bool decide_again_after_actions() const override { return true; }
  void on_job_queued(const SchedulerView& view, JobSlot job) override {
    const JobView& j = view.job(job);
    const auto slot = static_cast<std::size_t>(job);
    if (j.is_elastic()) {
      if (elastic_seq_.size() <= slot) elastic_seq_.resize(slot + 1, UINT64_MAX);
      if (elastic_seq_[slot] != j.arrival_seq()) ++elastic_jobs_;
      elastic_seq_[slot] = j.arrival_seq();
    }
    base_->on_job_queued(view, job);
  }
  void on_job_finished(const SchedulerView& view, JobSlot job) override {
    const auto slot = static_cast<std::size_t>(job);
    if (slot < elastic_seq_.size() && elastic_seq_[slot] == view.job(job).arrival_seq()) {
      elastic_seq_[slot] = UINT64_MAX;
      --elastic_jobs_;
    }
    base_->on_job_finished(view, job);
  }

  void decide(const SchedulerView& view, ActionBatch& out) override {
    if (!specs_ || specs_->empty()) {
      base_->decide(view, out);
      return;
    }
    if (services_.empty()) start(view);
    // The services act first at each instant (their batch is applied, then decide() is
    // called again and the base policy sees the result).
    const bool first_call = !decided_ || view.now() != instant_;
    decided_ = true;
    instant_ = view.now();
    if (first_call) serve(view, out);
    if (out.empty()) base_->decide(view, out);
    // Wake at the next tick or rate change while training is still going on: jobs in the
    // system, or (between jobs) anything still to happen. Spot offers and the thermal
    // model go on as long as anything else is pending, a wake-up included, so with them
    // the services wake between jobs only at those events and at the next arrival
    // (decision points all): otherwise the two would keep each other going forever.
    const bool world_goes_on = view.market() || view.thermal();
    if (view.num_pending() + view.num_running() > 0 || (view.has_future_events() && !world_goes_on)) {
      Tick next = next_tick_;
      for (const Service& s : services_) next = std::min(next, s.spec->rate.next_change(view.now()));
      if (next != Tick::max()) out.wake_at(next);
    }
  }

  // Before its first decision (no replica held yet) every held device would count: none are.
  int replicas_in_service(int k) const override {
    return static_cast<std::size_t>(k) < services_.size() ? services_[static_cast<std::size_t>(k)].in_service : 0;
  }

  std::vector<ServiceMetrics> inference_metrics() const override {
    std::vector<ServiceMetrics> m;
    for (const Service& s : services_) m.push_back(s.metrics);
    return m;
  }

  // The services' configuration (spec, devices, capacity) is rebuilt by start(); their
  // replicas, loans and lending metrics are saved (the SLO meter saves its own).
  void snapshot(SnapshotArchive& ar) override {
    ar.section("inference services");
    std::uint64_t started = services_.size();
    ar(started);
    if (ar.loading() && started > 0 && services_.empty()) {
      if (!view_) throw InvariantError("policy 'inference': snapshot loaded before the run started");
      start(*view_);
    }
    ar.check(started == services_.size(), "the inference services differ from this configuration's");
    for (Service& s : services_) {
      ar(s.replicas, s.held, s.rate, s.in_service);
      ar(s.metrics.borrowed_device_s, s.metrics.lends, s.metrics.reclaims);
      ar.io_each(s.loans, [&](Loan& l) { ar(l.job, l.seq, l.devices); });
    }
    ar(last_, instant_, decided_, next_tick_, elastic_seq_, elastic_jobs_);
    base_->snapshot(ar);
  }
 private:
  struct Loan {
    JobSlot job = kNoJob;
    std::uint64_t seq = 0;
    std::vector<DeviceId> devices;
  };
  struct Service {
    const ServiceSpec* spec = nullptr;
    DeviceId first = 0;
    int num = 0;
    double mu = 0.0;
    int replicas = 0;  // asked for by the autoscaler
    std::vector<DeviceId> held;  // what the kernel holds for us
    std::vector<Loan> loans;
    ServiceMetrics metrics;
    double rate = 0.0;  // on [last, now)
    int in_service = 0;
    // meets_slo() by (rate, replicas): a pure function of them (mu and the SLO are the
    // service's), asked at every decision point and for every replica count at each tick,
    // of the few rates a step series takes.
    std::map<std::pair<double, int>, bool> slo_met;
    // The last answer, asked again at most decision points (the rate and the replicas in
    // service rarely change between two), without the map's tree walk.
    double last_lambda = std::numeric_limits<double>::quiet_NaN();
    int last_replicas = -1;
    bool last_met = false;
    // replicas_for_slo_memo() by rate: the predictive autoscaler's answer at each tick.
    std::map<double, int> replicas_for_rate;
  };

  static bool meets_slo_memo(Service& s, double lambda, int replicas) {
    if (lambda == s.last_lambda && replicas == s.last_replicas) return s.last_met;
    const auto [it, inserted] = s.slo_met.try_emplace({lambda, replicas}, false);
    if (inserted) it->second = meets_slo(lambda, s.mu, replicas, s.spec->slo_p99_s);
    s.last_lambda = lambda;
    s.last_replicas = replicas;
    s.last_met = it->second;
    return it->second;
  }
  // replicas_for_slo() through the memos.
  static int replicas_for_slo_memo(Service& s, double lambda) {
    const auto [it, inserted] = s.replicas_for_rate.try_emplace(lambda, s.spec->max_replicas);
    if (!inserted) return it->second;
    for (int c = 1; c <= s.spec->max_replicas; ++c) {
      if (meets_slo_memo(s, lambda, c)) return it->second = c;
    }
    return it->second;
  }

  void start(const SchedulerView& view) {
    for (std::size_t i = 0; i < specs_->size(); ++i) {
      const ServiceSpec& spec = (*specs_)[i];
      Service s;
      s.spec = &spec;
      s.metrics.name = spec.name;
      const ServiceSite site = service_site(spec, i, view.cluster(), view.geography());
      s.first = site.first;
      s.num = site.num;
      s.mu = site.mu;
      s.replicas = spec.min_replicas;
      services_.push_back(std::move(s));
    }
    last_ = view.now();
  }

  static bool holds(const JobView& j, DeviceId d) { return std::find(j.devices().begin(), j.devices().end(), d) != j.devices().end(); }

  void serve(const SchedulerView& view, ActionBatch& out) {
    const Tick now = view.now();
    // A last wake-up after the training ended: the metrics cover the run up to its last job.
    const bool over = view.num_pending() + view.num_running() == 0 && !view.has_future_events();
    const double dt = over ? 0.0 : (now - last_).seconds();
    for (Service& s : services_) {  // lending over [last, now): the loans were constant
      std::size_t lent = 0;
      for (const Loan& l : s.loans) lent += l.devices.size();
      s.metrics.borrowed_device_s += static_cast<double>(lent) * dt;
    }
    last_ = now;
    const bool tick = now >= next_tick_ || next_tick_ == Tick::max();
    if (tick) next_tick_ = now + Tick::from_seconds(options_.interval_s);
    const ClusterState& state = view.cluster_state();
    // Devices taken by a service this call (marks cleared at the end, not the whole array).
    std::vector<char>& claimed = claimed_;
    claimed.resize(static_cast<std::size_t>(view.cluster().num_devices()), 0);
    claimed_list_.clear();
    for (std::size_t k = 0; k < services_.size(); ++k) {
      Service& s = services_[k];
      const ServiceSpec& spec = *s.spec;
      // The kernel takes a device that fails or that its spot provider takes back from the
      // service at once: the pool is what it still holds.
      if (view.service_devices(static_cast<int>(k)).size() != s.held.size()) s.held = view.service_devices(static_cast<int>(k));
      s.rate = spec.rate.at(now);
      if (tick) {
        // A request-level service has no M/M/c SLO: predictive applies the reactive rule to
        // the forecast peak (docs/energy.md#inference-services).
        const auto forecast_peak = [&] { return spec.rate.max_base(now, now + Tick::from_seconds(options_.interval_s + options_.lead_s)); };
        const int want = !options_.predictive      ? replicas_for_utilization(s.rate, s.mu, options_.target_utilization)
                         : spec.is_request_level() ? replicas_for_utilization(forecast_peak(), s.mu, options_.target_utilization)
                                                   : replicas_for_slo_memo(s, forecast_peak());
        s.replicas = std::clamp(want, spec.min_replicas, spec.max_replicas);
      }
      // Loans whose job ended, stopped or dropped the device: the device is back (free) or gone.
      for (auto it = s.loans.begin(); it != s.loans.end();) {
        const JobView& j = view.job(it->job);
        const bool alive = j.arrival_seq() == it->seq && (j.status() == JobStatus::kRunning || j.status() == JobStatus::kStopping);
        it->devices.erase(std::remove_if(it->devices.begin(), it->devices.end(), [&](DeviceId d) { return !alive || !holds(j, d); }),
                          it->devices.end());
        it = it->devices.empty() ? s.loans.erase(it) : it + 1;
      }
      const int pool = spec.max_replicas * spec.gpus_per_replica;
      std::size_t lent = 0;
      for (const Loan& l : s.loans) lent += l.devices.size();
      std::vector<DeviceId> held = s.held;
      // Top the pool up from free devices of the datacenter (first provisioning, or
      // devices that came back free).
      for (DeviceId d = state.next_free(s.first); d >= 0 && d < s.first + s.num && static_cast<int>(held.size() + lent) < pool;
           d = state.next_free(d + 1)) {
        if (!claimed[static_cast<std::size_t>(d)]) {
          claimed[static_cast<std::size_t>(d)] = 1;
          claimed_list_.push_back(d);
          held.push_back(d);
        }
      }
      const int need = s.replicas * spec.gpus_per_replica;
      // Short of devices for the active replicas: take loans back (the job shrinks).
      const bool short_of_devices = static_cast<int>(held.size()) < need && !s.loans.empty();
      while (static_cast<int>(held.size()) < need && !s.loans.empty()) {
        Loan loan = std::move(s.loans.back());
        s.loans.pop_back();
        const JobView& j = view.job(loan.job);
        std::vector<DeviceId> keep;
        for (DeviceId d : j.devices()) {
          if (std::find(loan.devices.begin(), loan.devices.end(), d) == loan.devices.end()) keep.push_back(d);
        }
        if (j.status() == JobStatus::kRunning && static_cast<int>(keep.size()) >= j.min_gpus()) {
          out.move(loan.job, keep);  // the devices it leaves are free at once
          held.insert(held.end(), loan.devices.begin(), loan.devices.end());
        } else if (j.status() == JobStatus::kRunning) {
          out.preempt(loan.job);  // cannot shrink below its minimum: stop it; the devices return when its save ends
        }
        ++s.metrics.reclaims;
      }
      s.in_service = std::min(s.replicas, static_cast<int>(held.size()) / spec.gpus_per_replica);
      // Idle pool devices: lend them to running elastic jobs of the datacenter.
      std::vector<std::pair<JobSlot, std::vector<DeviceId>>> grow;
      // (After a reclaim the view still shows the shrunk jobs' old devices.) Without an
      // elastic job in the system the walk of the running jobs would find none.
      if (options_.lend && !short_of_devices && elastic_jobs_ > 0) {
        if (!std::is_sorted(held.begin(), held.end())) std::sort(held.begin(), held.end());
        for (JobSlot slot = view.first_running(); slot != kNoJob && static_cast<int>(held.size()) > need; slot = view.next_running(slot)) {
          const JobView& j = view.job(slot);
          if (!j.is_elastic() || j.status() != JobStatus::kRunning || j.stalled(now) || j.devices().empty()) continue;
          if (j.devices()[0] < s.first || j.devices()[0] >= s.first + s.num) continue;
          int room = std::min(j.max_gpus() - static_cast<int>(j.devices().size()), static_cast<int>(held.size()) - need);
          // A job under a parallelism plan runs only on device counts that some plan splits
          // (estimated_rate 0 otherwise, e.g. 80 devices for a global batch of 1024): lend
          // the most devices that leave it runnable.
          if (const PhysicsModel* physics = view.physics(); physics && room > 0) {
            const ClusterSpec& c = view.cluster();
            const int type = c.node(c.node_of(j.devices().front())).type_index;
            while (room > 0 && !(physics->estimated_rate(j, type, static_cast<int>(j.devices().size()) + room) > 0)) --room;
          }
          if (room <= 0) continue;
          const std::vector<DeviceId> lent_now(held.end() - room, held.end());
          held.resize(held.size() - static_cast<std::size_t>(room));
          std::vector<DeviceId> devices = j.devices();
          devices.insert(devices.end(), lent_now.begin(), lent_now.end());
          grow.emplace_back(slot, devices);
          // One loan per job: a reclaim then gives back everything the job borrowed.
          auto loan = std::find_if(s.loans.begin(), s.loans.end(), [&](const Loan& l) { return l.job == slot && l.seq == j.arrival_seq(); });
          if (loan == s.loans.end()) s.loans.push_back(Loan{slot, j.arrival_seq(), lent_now});
          else loan->devices.insert(loan->devices.end(), lent_now.begin(), lent_now.end());
          ++s.metrics.lends;
        }
      }
      if (!std::is_sorted(held.begin(), held.end())) std::sort(held.begin(), held.end());
      if (held != s.held) {
        out.hold(static_cast<int>(k), held);
        s.held = held;
      }
      for (const auto& [slot, devices] : grow) out.move(slot, devices);
    }
    for (DeviceId d : claimed_list_) claimed[static_cast<std::size_t>(d)] = 0;
  }

  std::unique_ptr<Policy> owned_;
  Policy* base_;
  AutoscaleOptions options_;
  std::shared_ptr<const std::vector<ServiceSpec>> specs_;
  bool named_after_base_ = false;
  const SchedulerView* view_ = nullptr;  // the run's (on_run_start): a snapshot is loaded without one
  std::vector<Service> services_;
  Tick last_;
  Tick instant_;
  bool decided_ = false;
  Tick next_tick_ = Tick::max();
  std::vector<char> claimed_;                // reused by serve(): devices taken this call
  std::vector<DeviceId> claimed_list_;
  std::vector<std::uint64_t> elastic_seq_;   // by slot: arrival_seq of an elastic job in the system
  int elastic_jobs_ = 0;
};

}  // namespace

PolicyInfo inference_policy_info() {
  return PolicyInfo{
      "inference",
      "runs the scenario's inference services (autoscaled replicas, SLO) in front of a training policy; idle replica devices are lent to elastic jobs",
      {
          {"base", "fifo", "the training policy: a name or a map"},
          {"autoscaler", "reactive", "reactive: ceil(rate now / (capacity x target_utilization)); predictive: the fewest replicas meeting the p99 SLO at the forecast peak of the next interval + lead"},
          {"target_utilization", "0.6", "reactive autoscaler's target replica utilization, (0, 1]"},
          {"interval_s", "300", "seconds between autoscaling decisions"},
          {"lead_s", "300", "predictive autoscaler: how far past the next interval it looks"},
          {"lend", "true", "lend idle pool devices to running elastic training jobs and take them back when load returns"},
      },
      [](const ConfigNode& config, const PolicyContext& context) {
        config.expect_keys({"name", "base", "autoscaler", "target_utilization", "interval_s", "lead_s", "lend"});
        const AutoscaleOptions o = parse_autoscaler_settings(config, "autoscaler");
        const PolicyRegistry registry = builtin_policies();
        PolicyInstance base = config.has("base") ? registry.create(config.child("base"), context) : registry.create("fifo", context);
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = "inference";
        resolved["base"] = base.resolved;
        resolved["autoscaler"] = o.predictive ? "predictive" : "reactive";
        resolved["target_utilization"] = o.target_utilization;
        resolved["interval_s"] = o.interval_s;
        resolved["lead_s"] = o.lead_s;
        resolved["lend"] = o.lend;
        Policy& base_policy = *base.policy;
        return PolicyInstance{std::make_unique<InferencePolicy>(std::move(base.policy), base_policy, o, context.services, false), resolved};
      },
  };
}

AutoscalerSettings parse_autoscaler_settings(const ConfigNode& config, const std::string& kind_key) {
  AutoscalerSettings o;
  if (auto v = config.maybe_child(kind_key)) {
    const std::string a = v->as_string();
    if (a != "reactive" && a != "predictive") v->fail("must be reactive or predictive, got '" + a + "'");
    o.predictive = a == "predictive";
  }
  if (auto v = config.maybe_child("target_utilization")) {
    o.target_utilization = v->as_positive_double();
    if (o.target_utilization > 1.0) v->fail("must be in (0, 1]");
  }
  if (auto v = config.maybe_child("interval_s")) o.interval_s = v->as_positive_double();
  if (auto v = config.maybe_child("lead_s")) o.lead_s = v->as_nonnegative_double();
  if (auto v = config.maybe_child("lend")) o.lend = v->as_bool();
  return o;
}

AutoscalerSettings parse_scenario_autoscaler(const ConfigNode& node) {
  if (node.is_scalar()) {
    AutoscalerSettings o;
    const std::string a = node.as_string();
    if (a != "reactive" && a != "predictive") node.fail("must be reactive or predictive (or a map {name, target_utilization, interval_s, lead_s, lend}), got '" + a + "'");
    o.predictive = a == "predictive";
    return o;
  }
  node.expect_map({"name", "target_utilization", "interval_s", "lead_s", "lend"});
  return parse_autoscaler_settings(node, "name");
}

namespace {
bool names_inference(const YAML::Node& n) {
  if (n.IsMap()) {
    if (n["name"] && n["name"].IsScalar() && n["name"].Scalar() == "inference") return true;
    for (const auto& kv : n) {
      if (names_inference(kv.second)) return true;
    }
  } else if (n.IsSequence()) {
    for (const auto& e : n) {
      if (names_inference(e)) return true;
    }
  }
  return false;
}
}  // namespace

bool scales_services(const Policy& policy, const YAML::Node& resolved) {
  return dynamic_cast<const InferenceMetricsSource*>(&policy) != nullptr || (resolved.IsScalar() && resolved.Scalar() == "inference") ||
         names_inference(resolved);
}

std::unique_ptr<Policy> default_autoscaler(Policy& base, const AutoscalerSettings& settings, std::shared_ptr<const std::vector<ServiceSpec>> services) {
  return std::make_unique<InferencePolicy>(nullptr, base, settings, std::move(services), true);
}

YAML::Node autoscaler_yaml(const AutoscalerSettings& o) {
  YAML::Node n(YAML::NodeType::Map);
  n["name"] = o.predictive ? "predictive" : "reactive";
  n["target_utilization"] = o.target_utilization;
  n["interval_s"] = o.interval_s;
  n["lead_s"] = o.lead_s;
  n["lend"] = o.lend;
  return n;
}

}  // namespace schedsim
