#include "policies/las.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "policies/queue_policy.hpp"

namespace schedsim {
namespace {

class LasOrder : public QueueOrder {
 public:
  explicit LasOrder(LasOptions options) : options_(std::move(options)) {}

  double queued_key(const SchedulerView& view, JobSlot job) override {
    const auto index = static_cast<std::size_t>(job);
    if (offsets_gpu_s_.size() <= index) offsets_gpu_s_.resize(index + 1, 0.0);
    if (view.job(job).preemptions() == 0) offsets_gpu_s_[index] = 0.0;  // a new job in a reused slot
    return key(service_gpu_s(view, job));
  }
  double running_key(const SchedulerView& view, JobSlot job) const override { return key(service_gpu_s(view, job)); }
  double promote_at_s(const SchedulerView& view, JobSlot job) const override {
    const double executed_s = options_.service == LasService::kTime ? service_gpu_s(view, job) : service_gpu_s(view, job) / view.job(job).num_gpus();
    if (options_.starvation_multiple <= 0 || executed_s <= 0) return std::numeric_limits<double>::infinity();
    return view.now().seconds() + options_.starvation_multiple * executed_s;
  }
  double promoted_key() const override { return 0.0; }
  void on_promoted(const SchedulerView& view, JobSlot job) override {
    offsets_gpu_s_[static_cast<std::size_t>(job)] = attained(view, view.job(job));
  }
  bool has_timers() const override { return options_.demotion == LasDemotion::kExact && options_.discretized; }
  // `job` is running, or being started in this decision (then at its last rate, or 1).
  double next_key_change_s(const SchedulerView& view, JobSlot job) const override {
    const double service = service_gpu_s(view, job);
    const auto& t = options_.thresholds;
    const auto next = std::upper_bound(t.begin(), t.end(), service);
    if (next == t.end()) return std::numeric_limits<double>::infinity();  // the last queue
    const JobView& j = view.job(job);
    const bool running = j.status() == JobStatus::kRunning;
    const double rate = running ? j.physics_rate() : j.physics_rate() > 0 ? j.physics_rate() : 1.0;
    if (rate <= 0) return std::numeric_limits<double>::infinity();
    // A checkpoint restore under way: service grows again from its end.
    const double from_s = running && j.stalled(view.now()) ? j.stall_end().seconds() : view.now().seconds();
    const double cross_s = (*next - service) / (rate * (options_.service == LasService::kTime ? 1.0 : j.num_gpus()));
    // No timer for a crossing the job will not live to see (it would only add a
    // decision point). The kernel's remaining work: this only saves an idle wake-up, it
    // does not rank jobs, so it reveals nothing about durations.
    if (cross_s >= remaining_work_now_s(view, j) / rate) return std::numeric_limits<double>::infinity();
    return from_s + cross_s;
  }
  // Both from one reading of the job's remaining work (what the two calls each compute).
  double running_key_and_next_change(const SchedulerView& view, JobSlot job, double& next_change_s) const override {
    const JobView& j = view.job(job);
    const double remaining_s = kernel_remaining_work_s(view, j);
    const double service = service_from(job, j, remaining_s);
    if (!options_.discretized) return QueueOrder::running_key_and_next_change(view, job, next_change_s);
    next_change_s = std::numeric_limits<double>::infinity();
    const auto& t = options_.thresholds;
    const auto next = std::upper_bound(t.begin(), t.end(), service);
    const double key = static_cast<double>(next - t.begin());
    if (next == t.end()) return key;
    const double rate = j.physics_rate();  // running
    if (rate <= 0) return key;
    const double from_s = j.stalled(view.now()) ? j.stall_end().seconds() : view.now().seconds();
    const double cross_s = (*next - service) / (rate * (options_.service == LasService::kTime ? 1.0 : j.num_gpus()));
    if (cross_s >= remaining_s / rate) return key;
    next_change_s = from_s + cross_s;
    return key;
  }
  // The discretized key holds until service reaches the next threshold. Computed service
  // is monotone in the instant (every step of kernel_remaining_work_at_s and service_from
  // is a monotone floating-point operation), so a key checked equal at an instant T holds
  // at every instant between now and T: T is the predicted crossing less a rounding margin,
  // then checked with the same arithmetic a later call uses.
  RunningKeyInfo running_key_info(const SchedulerView& view, JobSlot job) const override {
    if (!options_.discretized) return QueueOrder::running_key_info(view, job);
    RunningKeyInfo info;
    info.key = running_key_and_next_change(view, job, info.next_change_s);
    const Tick now = view.now();
    info.stable_until = now;
    const JobView& j = view.job(job);
    const auto& t = options_.thresholds;
    const auto queue = static_cast<std::size_t>(info.key);
    // A restore under way: the record changes when it ends (the kernel advances the job).
    const Tick limit = j.stalled(now) ? Tick::from_us(j.stall_end().us() - 1) : Tick::max();
    if (queue == t.size()) {  // the last queue: service only grows
      info.stable_until = limit;
      return info;
    }
    const double rate = j.physics_rate();
    if (rate <= 0) {  // no progress while the record holds
      info.stable_until = limit;
      return info;
    }
    const double gpus = options_.service == LasService::kTime ? 1.0 : j.num_gpus();
    const double per_s = rate * gpus;
    const double remaining_s = kernel_remaining_work_s(view, j);
    const double service = service_from(job, j, remaining_s);
    const double cross_s = (t[queue] - service) / per_s;
    const double end_s = remaining_s / rate;
    const double from_s = j.stalled(now) ? j.stall_end().seconds() : now.seconds();
    // Bound on what rounding moves between two readings of the same record: a few ulps of
    // every magnitude involved, taken a million times over.
    const double largest = std::max({t[queue], gpus * InformationModel::attained_work_from_s(j, 0.0), offset_of(job)});
    const double err_s = 1e-9 * (largest / per_s + std::fabs(cross_s) + end_s + std::fabs(from_s) + std::fabs(from_s + cross_s)) + 1e-9;
    if (std::fabs(cross_s - end_s) <= err_s) return info;  // whether it lives to cross could go either way
    info.next_change_err_s = err_s;
    Tick until = Tick::max();
    double service_then = service_from(job, j, 0.0);  // its last instant
    if (cross_s < end_s) {
      const double until_s = std::min(from_s + cross_s - err_s, 1e12);
      if (until_s <= now.seconds()) return info;
      until = Tick::from_seconds(until_s);
      if (until.seconds() > until_s) until = Tick::from_us(until.us() - 1);
      if (until <= now) return info;
      service_then = service_from(job, j, kernel_remaining_work_at_s(j, until));
    }
    if (key(service_then) != info.key) return info;  // the margin was not enough: this instant only
    info.stable_until = std::min(until, limit);
    return info;
  }
  void write(YAML::Node& resolved) const override {
    resolved["discretized"] = options_.discretized;
    YAML::Node t(YAML::NodeType::Sequence);
    for (double v : options_.thresholds) t.push_back(v);
    resolved[options_.service == LasService::kTime ? "thresholds_s" : "thresholds_gpu_s"] = t;
    resolved["starvation_multiple"] = options_.starvation_multiple;
    resolved["demotion"] = options_.demotion == LasDemotion::kExact ? "exact" : "next_event";
  }

  void snapshot(SnapshotArchive& ar) override { ar(offsets_gpu_s_); }
 private:
  // Attained service in the configured unit (GPU-seconds or seconds).
  double attained(const SchedulerView& view, const JobView& job) const {
    return options_.service == LasService::kTime ? attained_work_s(view, job) : attained_service_gpu_s(view, job);
  }
  // Attained service since the job's last promotion (named for the default unit).
  double service_gpu_s(const SchedulerView& view, JobSlot job) const {
    const auto slot = static_cast<std::size_t>(job);
    const double offset = slot < offsets_gpu_s_.size() ? offsets_gpu_s_[slot] : 0.0;
    return std::max(0.0, attained(view, view.job(job)) - offset);
  }
  double offset_of(JobSlot job) const {
    const auto slot = static_cast<std::size_t>(job);
    return slot < offsets_gpu_s_.size() ? offsets_gpu_s_[slot] : 0.0;
  }
  // service_gpu_s() given the job's kernel_remaining_work_s() (attained() computes it again).
  double service_from(JobSlot job, const JobView& j, double remaining_s) const {
    const double offset = offset_of(job);
    const double work_s = InformationModel::attained_work_from_s(j, remaining_s);  // attained_work_s()
    const double attained_s = options_.service == LasService::kTime ? work_s : j.num_gpus() * work_s;  // attained_service_gpu_s()
    return std::max(0.0, attained_s - offset);
  }
  double key(double service_gpu_s) const {
    if (!options_.discretized) return service_gpu_s;
    const auto& t = options_.thresholds;
    return static_cast<double>(std::upper_bound(t.begin(), t.end(), service_gpu_s) - t.begin());
  }

  LasOptions options_;
  std::vector<double> offsets_gpu_s_;  // service before the last promotion, by slot
};

}  // namespace

namespace {
std::string list_text(const std::vector<double>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::ostringstream os;
    os << v[i];
    out += (i ? ", " : "") + os.str();
  }
  return out + "]";
}
std::string number_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
}  // namespace

OrderKind las_order(const LasOptions& d) {
  const bool time = d.service == LasService::kTime;
  return OrderKind{
      "las",
      {{"discretized", d.discretized ? "true" : "false", "Tiresias' discretized 2D-LAS (queues by thresholds, FIFO inside a queue); false = continuous LAS"},
       {"thresholds_gpu_s", time ? "none" : list_text(d.thresholds), "increasing queue boundaries in GPU-seconds of attained service (GPUs x executed time)"},
       {"thresholds_s", time ? list_text(d.thresholds) : "none", "instead of thresholds_gpu_s: increasing queue boundaries in seconds of executed time (service counts time, not GPUs x time)"},
       {"starvation_multiple", number_text(d.starvation_multiple), "promote a queued job to the first queue after waiting this multiple of its executed time; 0 = off"},
       {"demotion", d.demotion == LasDemotion::kExact ? "exact" : "next_event", "when a running job that crossed a threshold moves down: next_event (at the next decision point) or exact (a timer at the crossing)"}},
      true,
      [d](const ConfigNode& config) {
        LasOptions o = d;
        if (auto v = config.maybe_child("discretized")) o.discretized = v->as_bool();
        auto gpu = config.maybe_child("thresholds_gpu_s");
        auto time = config.maybe_child("thresholds_s");
        if (gpu && time) time->fail("give thresholds_gpu_s (service in GPU-seconds) or thresholds_s (service in seconds), not both");
        if (gpu) o.service = LasService::kGpuTime;
        if (time) o.service = LasService::kTime;
        if (auto v = gpu ? gpu : time) {
          const char* unit = time ? "second" : "GPU-second";
          if (!v->is_sequence() || v->size() == 0) v->fail(std::string("expected a non-empty list of increasing ") + unit + " thresholds, e.g. [3600, 36000]");
          o.thresholds.clear();
          for (std::size_t i = 0; i < v->size(); ++i) {
            const double t = v->at(i).as_positive_double();
            if (!o.thresholds.empty() && t <= o.thresholds.back()) v->at(i).fail("thresholds must increase");
            o.thresholds.push_back(t);
          }
        }
        if (auto v = config.maybe_child("demotion")) o.demotion = v->as_choice({"next_event", "exact"}) == "exact" ? LasDemotion::kExact : LasDemotion::kNextEvent;
        if (auto v = config.maybe_child("starvation_multiple")) o.starvation_multiple = v->as_nonnegative_double();
        return std::make_unique<LasOrder>(std::move(o));
      },
  };
}

PolicyInfo las_policy_info() {
  return queue_policy_info("las", "least attained service (GPUs x executed time) first, Tiresias-style discretized queues; preemptive", las_order());
}

}  // namespace schedsim
