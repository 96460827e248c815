#include "world/inference/inference_service.hpp"

#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "world/inference/queueing_latency.hpp"

namespace schedsim {

RequestRate RequestRate::diurnal(double mean_rps, double amplitude_rps, double peak_hour_local, double utc_offset_h, double step_s,
                                 std::int64_t origin_utc_us) {
  const auto steps = static_cast<std::size_t>(std::llround(86400.0 / step_s));
  std::vector<double> v(steps);
  for (std::size_t k = 0; k < steps; ++k) {
    const double local_h = (static_cast<double>(k) + 0.5) * step_s / 3600.0 + utc_offset_h;
    v[k] = std::max(0.0, mean_rps + amplitude_rps * std::cos(2 * M_PI * (local_h - peak_hour_local) / 24.0));
  }
  RequestRate r;
  r.base_ = std::make_shared<const StepSeries>(StepSeries::periodic("request rate", v, static_cast<std::int64_t>(std::llround(step_s * 1e6)), 0));
  r.origin_utc_us_ = origin_utc_us;
  return r;
}

RequestRate RequestRate::series(std::shared_ptr<const StepSeries> base, std::int64_t origin_utc_us) {
  RequestRate r;
  r.base_ = std::move(base);
  r.origin_utc_us_ = origin_utc_us;
  return r;
}

double RequestRate::base_at(Tick t) const { return base_ ? base_->value_at(origin_utc_us_ + t.us()) : 0.0; }

double RequestRate::at(Tick t) const {
  double v = base_at(t);
  const double s = t.seconds();
  for (const RateEvent& e : events_) {
    if (s >= e.start_s && s < e.end_s) v *= e.factor;
  }
  return v;
}

Tick RequestRate::next_change(Tick t) const {
  std::int64_t next = INT64_MAX;
  if (base_) {
    const std::int64_t c = base_->next_change_us(origin_utc_us_ + t.us());
    if (c != INT64_MAX) next = c - origin_utc_us_;
  }
  for (const RateEvent& e : events_) {
    for (double b : {e.start_s, e.end_s}) {
      const Tick tb = Tick::from_seconds(b);
      if (tb > t) next = std::min(next, tb.us());
    }
  }
  return next == INT64_MAX ? Tick::max() : Tick::from_us(next);
}

double RequestRate::max_base(Tick a, Tick b) const {
  if (!base_) return 0.0;
  double m = base_->value_clamped(origin_utc_us_ + a.us());
  for (std::int64_t c = base_->next_change_us(origin_utc_us_ + a.us()); c <= origin_utc_us_ + b.us() && c != INT64_MAX; c = base_->next_change_us(c)) {
    m = std::max(m, base_->value_clamped(c));
  }
  return m;
}

bool meets_slo(double lambda, double mu, int replicas, double slo_p99_s) {
  if (lambda <= 0.0) return true;
  if (replicas < 1) return false;
  const MmcLatency l = mmc_latency(lambda, mu, replicas);
  return l.stable && l.p99_response_s <= slo_p99_s;
}

int replicas_for_slo(double lambda, double mu, double slo_p99_s, int max_replicas) {
  for (int c = 1; c <= max_replicas; ++c) {
    if (meets_slo(lambda, mu, c, slo_p99_s)) return c;
  }
  return max_replicas;
}

int replicas_for_utilization(double lambda, double mu, double target_utilization) {
  return std::max(1, static_cast<int>(std::ceil(lambda / (mu * target_utilization) - 1e-9)));
}

}  // namespace schedsim
