#include "sim/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include <yaml-cpp/yaml.h>

#include "base/config_node.hpp"
#include "sim/simulator.hpp"

namespace schedsim {

MeasurementWindowConfig MeasurementWindowConfig::parse(const ConfigNode& metrics) {
  metrics.expect_map({"window"});
  MeasurementWindowConfig c;
  const auto window = metrics.maybe_child("window");
  if (!window) return c;
  window->expect_map({"warmup_jobs", "warmup_fraction", "end"});
  if (window->has("warmup_jobs") && window->has("warmup_fraction")) {
    window->child("warmup_fraction").fail("give either warmup_jobs (a count) or warmup_fraction (a share of the workload's jobs), not both");
  }
  if (auto n = window->maybe_child("warmup_jobs")) {
    const std::int64_t v = n->as_int();
    if (v < 0) n->fail("expected a job count >= 0, got " + std::to_string(v));
    c.warmup_jobs = static_cast<std::uint64_t>(v);
  }
  if (auto f = window->maybe_child("warmup_fraction")) {
    c.warmup_fraction = f->as_nonnegative_double();
    if (c.warmup_fraction >= 1.0) f->fail("expected a share of the jobs in [0, 1), got " + f->as_string());
  }
  if (auto e = window->maybe_child("end")) c.end = e->as_choice({"last_arrival", "last_completion"}) == "last_arrival" ? End::kLastArrival : End::kLastCompletion;
  return c;
}

YAML::Node MeasurementWindowConfig::to_yaml() const {
  YAML::Node w(YAML::NodeType::Map);
  if (warmup_jobs) w["warmup_jobs"] = *warmup_jobs;
  else w["warmup_fraction"] = warmup_fraction;
  w["end"] = end == End::kLastArrival ? "last_arrival" : "last_completion";
  YAML::Node m(YAML::NodeType::Map);
  m["window"] = w;
  return m;
}

std::uint64_t MeasurementWindowConfig::warmup_job_count(std::uint64_t expected_jobs) const {
  if (warmup_jobs) return *warmup_jobs;
  return static_cast<std::uint64_t>(std::floor(warmup_fraction * static_cast<double>(expected_jobs)));
}

double percentile_sorted(const std::vector<double>& sorted, double q) {
  const double pos = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

void MetricsCollector::on_job_arrival(const JobState& job) {
  if (!any_arrival_) first_submit_ = job.spec.submit;
  any_arrival_ = true;
  ++arrived_;
  demand_milli_s_ += static_cast<double>(job.spec.device_milli()) * job.spec.duration_s;
  last_submit_ = job.spec.submit;
}

void MetricsCollector::after_event(const Simulator& sim) {
  // The levels held since the previous event: integrate them up to now.
  const std::int64_t dt = (sim.now() - now_.at).us();
  now_.alloc_milli_us += static_cast<Wide>(alloc_milli_) * dt;
  now_.queue_us += static_cast<Wide>(queue_) * dt;
  now_.in_system_us += static_cast<Wide>(in_system_) * dt;
  now_.at = sim.now();
  // Arrivals and ends of this instant: the window opens at the arrival of the job after
  // the warm-up; the last arrival and the last end so far are remembered.
  if (arrived_ != arrived_seen_) {
    if (!window_open_ && arrived_ > warmup_jobs_) {
      window_open_ = true;
      at_open_ = now_;
      arrived_at_open_ = warmup_jobs_ + 1;
    }
    at_last_arrival_ = now_;
    arrived_seen_ = arrived_;
  }
  if (ended_ != ended_seen_) {
    at_last_end_ = now_;
    ended_seen_ = ended_;
  }
  const ClusterState& c = sim.cluster_state();
  // Devices held whole (free, failed-and-free and shared ones are not), plus the shares.
  // Devices bound to waiting jobs (non-gang placement) run nothing: not allocated here.
  const std::int64_t whole = num_devices_ - c.free_devices() - c.failed_devices() - c.shared_devices() - sim.bound_devices_total();
  alloc_milli_ = whole * ClusterState::kWholeMilli + c.shared_milli_total();
  queue_ = static_cast<std::int64_t>(sim.num_pending());
  in_system_ = static_cast<std::int64_t>(arrived_ - ended_);
}

std::optional<double> MetricsCollector::average(const Integrals& from, const Integrals& to, Wide Integrals::*field, double scale) const {
  const std::int64_t length_us = (to.at - from.at).us();
  if (length_us <= 0) return std::nullopt;
  return static_cast<double>(to.*field - from.*field) / (scale * static_cast<double>(length_us));
}

void MetricsCollector::on_job_dropped(const JobSpec& /*job*/, const std::string& reason) {
  if (reason == "oversized") ++dropped_oversized_;
}

void MetricsCollector::on_job_end(const JobState& job) {
  device_us_ += job.device_us;
  overhead_device_us_ += job.overhead_device_us;
  checkpoint_device_us_ += job.checkpoint_device_us;
  restart_device_us_ += job.restart_device_us;
  lost_device_us_ += job.lost_device_us;
  bound_idle_device_us_ += job.bound_idle_device_us;
  restarts_loss_spike_ += job.loss_spike_restarts;
  restarts_device_failure_ += job.failure_restarts;
  preemptions_ += job.preemptions;
  moves_ += job.moves;
  ++ended_;
  if (job.end > last_end_) last_end_ = job.end;
  if (job.status == JobStatus::kFailed || job.status == JobStatus::kKilled) {
    ++(job.status == JobStatus::kFailed ? failed_ : killed_);
    unsuccessful_device_us_ += job.device_us - job.overhead_device_us - job.checkpoint_device_us - job.restart_device_us - job.lost_device_us;
    return;
  }
  const double jct = (job.end - job.spec.submit).seconds();
  // Run time = time holding devices; the rest of the JCT was spent queued (before the
  // first start and after preemptions).
  const double run = Tick::from_us(job.held_us).seconds();
  if (samples_) {
    ++completed_;
  } else {
    jct_s_.push_back(jct);
    queue_delay_s_.push_back(jct - run);
  }
  sum_bounded_slowdown_ += std::max(1.0, jct / std::max(run, kSlowdownTau_s));
}

void MetricsCollector::take_samples(void (CompletedJobSamples::*which)(std::vector<double>&) const, std::vector<double>& out,
                                    std::uint64_t completed) const {
  (samples_->*which)(out);
  // A source that saw other job ends than this collector would give another summary.
  if (out.size() != completed) {
    throw std::logic_error("MetricsCollector: the sample source holds " + std::to_string(out.size()) + " completed jobs, the collector counted " +
                           std::to_string(completed));
  }
}

Summary MetricsCollector::summarize() {
  Summary s;
  s.jobs_arrived = arrived_;
  s.jobs_completed = samples_ ? completed_ : jct_s_.size();
  s.jobs_dropped_oversized = dropped_oversized_;
  s.allocated_gpu_hours = static_cast<double>(device_us_) / 1e6 / 3600.0;
  s.checkpoint_overhead_gpu_hours = static_cast<double>(overhead_device_us_) / 1e6 / 3600.0;
  s.preemptions = preemptions_;
  s.moves = moves_;
  s.jobs_failed = failed_;
  s.jobs_killed = killed_;
  s.restarts_loss_spike = restarts_loss_spike_;
  s.restarts_device_failure = restarts_device_failure_;
  constexpr double kUsPerHour = 3600e6;
  s.checkpoint_gpu_hours = static_cast<double>(checkpoint_device_us_) / kUsPerHour;
  s.restart_gpu_hours = static_cast<double>(restart_device_us_) / kUsPerHour;
  s.lost_gpu_hours = static_cast<double>(lost_device_us_) / kUsPerHour;
  if (meter_bound_idle_) s.bound_idle_gpu_hours = static_cast<double>(bound_idle_device_us_) / kUsPerHour;
  if (device_us_ > 0) {
    const auto useful = device_us_ - overhead_device_us_ - checkpoint_device_us_ - restart_device_us_ - lost_device_us_ - unsuccessful_device_us_;
    s.goodput = static_cast<double>(useful) / static_cast<double>(device_us_);
  }
  if (last_submit_ > first_submit_) {
    s.offered_load = demand_milli_s_ / ClusterState::kWholeMilli / (static_cast<double>(num_devices_) * (last_submit_ - first_submit_).seconds());
  }
  const double milli_devices = static_cast<double>(num_devices_) * ClusterState::kWholeMilli;
  s.window.warmup_jobs = warmup_jobs_;
  if (window_open_) {
    const Integrals& end = window_config_.end == MeasurementWindowConfig::End::kLastArrival ? at_last_arrival_ : at_last_end_;
    s.window.start_s = at_open_.at.seconds();
    s.window.end_s = end.at.seconds();
    // The jobs that arrived after the one that opened it (all of them before either end).
    s.window.jobs_arrived = arrived_ - arrived_at_open_;
    s.window.gpu_utilization = average(at_open_, end, &Integrals::alloc_milli_us, milli_devices);
    s.window.mean_queue_length = average(at_open_, end, &Integrals::queue_us, 1.0);
    s.window.mean_jobs_in_system = average(at_open_, end, &Integrals::in_system_us, 1.0);
  }
  if (s.jobs_completed == 0) return s;
  const auto n = static_cast<double>(s.jobs_completed);
  // Sums in completion order, which is deterministic; sorting happens afterwards. With
  // samples held elsewhere, one of the two sets is in memory at a time (8 bytes a job).
  if (samples_) take_samples(&CompletedJobSamples::queue_delay_s, queue_delay_s_, s.jobs_completed);
  s.mean_queue_delay_s = std::accumulate(queue_delay_s_.begin(), queue_delay_s_.end(), 0.0) / n;
  std::sort(queue_delay_s_.begin(), queue_delay_s_.end());
  s.p95_queue_delay_s = percentile_sorted(queue_delay_s_, 95);
  if (samples_) std::vector<double>().swap(queue_delay_s_);
  if (samples_) take_samples(&CompletedJobSamples::jct_s, jct_s_, s.jobs_completed);
  s.mean_jct_s = std::accumulate(jct_s_.begin(), jct_s_.end(), 0.0) / n;
  s.mean_bounded_slowdown = sum_bounded_slowdown_ / n;
  std::sort(jct_s_.begin(), jct_s_.end());
  s.median_jct_s = percentile_sorted(jct_s_, 50);
  s.p95_jct_s = percentile_sorted(jct_s_, 95);
  s.p99_jct_s = percentile_sorted(jct_s_, 99);
  s.makespan_s = (last_end_ - first_submit_).seconds();
  if (last_end_ > first_submit_) {
    s.gpu_utilization = static_cast<double>(device_us_) / (static_cast<double>(num_devices_) * static_cast<double>((last_end_ - first_submit_).us()));
    if (meter_bound_idle_) {
      s.bound_idle_fraction = static_cast<double>(bound_idle_device_us_) / (static_cast<double>(num_devices_) * static_cast<double>((last_end_ - first_submit_).us()));
    }
    // Before the first submit every level is 0, so the integrals there are 0 too.
    const Integrals start{first_submit_};
    s.mean_queue_length = average(start, at_last_end_, &Integrals::queue_us, 1.0);
    s.mean_jobs_in_system = average(start, at_last_end_, &Integrals::in_system_us, 1.0);
  }
  return s;
}

namespace {
template <typename Record>
ValueField<Record> count(const char* name, std::uint64_t Record::*m) {
  return {name, "", ValueField<Record>::Kind::kCount, [m](const Record& r) { return std::optional<double>(static_cast<double>(r.*m)); }, nullptr};
}
template <typename Record>
ValueField<Record> real(const char* name, const char* unit, std::optional<double> Record::*m) {
  return {name, unit, ValueField<Record>::Kind::kReal, [m](const Record& r) { return r.*m; }, nullptr};
}
template <typename Record>
ValueField<Record> real(const char* name, const char* unit, double Record::*m) {
  return {name, unit, ValueField<Record>::Kind::kReal, [m](const Record& r) { return std::optional<double>(r.*m); }, nullptr};
}
}  // namespace

const std::vector<ValueField<Summary>>& summary_fields() {
  using S = Summary;
  static const std::vector<ValueField<S>> fields = [] {
    std::vector<ValueField<S>> f = {
        count("jobs_arrived", &S::jobs_arrived),
        count("jobs_completed", &S::jobs_completed),
        count("jobs_failed", &S::jobs_failed),
        count("jobs_killed", &S::jobs_killed),
        count("jobs_dropped_oversized", &S::jobs_dropped_oversized),
        real("mean_jct_s", "s", &S::mean_jct_s),
        real("median_jct_s", "s", &S::median_jct_s),
        real("p95_jct_s", "s", &S::p95_jct_s),
        real("p99_jct_s", "s", &S::p99_jct_s),
        real("mean_queue_delay_s", "s", &S::mean_queue_delay_s),
        real("p95_queue_delay_s", "s", &S::p95_queue_delay_s),
        real("makespan_s", "s", &S::makespan_s),
        real("gpu_utilization", "", &S::gpu_utilization),
        real("mean_bounded_slowdown", "", &S::mean_bounded_slowdown),
        real("allocated_gpu_hours", "h", &S::allocated_gpu_hours),
        count("preemptions", &S::preemptions),
        count("moves", &S::moves),
        real("checkpoint_overhead_gpu_hours", "h", &S::checkpoint_overhead_gpu_hours),
        count("restarts_loss_spike", &S::restarts_loss_spike),
        count("restarts_device_failure", &S::restarts_device_failure),
        real("checkpoint_gpu_hours", "h", &S::checkpoint_gpu_hours),
        real("restart_gpu_hours", "h", &S::restart_gpu_hours),
        real("lost_gpu_hours", "h", &S::lost_gpu_hours),
        real("goodput", "", &S::goodput),
        real("bound_idle_gpu_hours", "h", &S::bound_idle_gpu_hours),
        real("bound_idle_fraction", "", &S::bound_idle_fraction),
        real("offered_load", "", &S::offered_load),
        real("mean_queue_length", "", &S::mean_queue_length),
        real("mean_jobs_in_system", "", &S::mean_jobs_in_system),
    };
    // Policies that may bind devices to waiting jobs only (MetricsCollector::meter_bound_idle).
    for (auto& field : f) {
      if (field.name.rfind("bound_idle_", 0) == 0) field.present = [](const S& s) { return s.bound_idle_gpu_hours.has_value(); };
    }
    return f;
  }();
  return fields;
}

const std::vector<ValueField<WindowSummary>>& window_fields() {
  using W = WindowSummary;
  static const std::vector<ValueField<W>> fields = {
      count("warmup_jobs", &W::warmup_jobs),
      real("start_s", "s", &W::start_s),
      real("end_s", "s", &W::end_s),
      count("jobs_arrived", &W::jobs_arrived),
      real("gpu_utilization", "", &W::gpu_utilization),
      real("mean_queue_length", "", &W::mean_queue_length),
      real("mean_jobs_in_system", "", &W::mean_jobs_in_system),
  };
  return fields;
}

}  // namespace schedsim
