#include "base/signals.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "base/error.hpp"

namespace schedsim {

namespace {

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Standard normal from a hash (Box-Muller on two 53-bit uniforms in (0, 1)).
double hashed_normal(std::uint64_t key) {
  const std::uint64_t a = splitmix64(key), b = splitmix64(a ^ 0x5851f42d4c957f2dULL);
  const double u1 = (static_cast<double>(a >> 11) + 0.5) / 9007199254740992.0;
  const double u2 = (static_cast<double>(b >> 11) + 0.5) / 9007199254740992.0;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace

std::string format_utc(std::int64_t utc_us) {
  const std::int64_t s = floor_div(utc_us, 1'000'000);
  const std::int64_t days = floor_div(s, 86400);
  const std::int64_t sod = s - days * 86400;
  // civil_from_days (H. Hinnant)
  const std::int64_t z = days + 719468;
  const std::int64_t era = floor_div(z, 146097);
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const std::int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const std::int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ", static_cast<long long>(y), static_cast<long long>(m),
                static_cast<long long>(d), static_cast<long long>(sod / 3600), static_cast<long long>(sod / 60 % 60),
                static_cast<long long>(sod % 60));
  return buf;
}

StepSeries StepSeries::finite(std::string name, std::vector<std::int64_t> times_us, std::vector<double> values, std::int64_t end_us) {
  if (times_us.empty() || times_us.size() != values.size()) throw InputError(name, "a time series needs at least one (time, value) point");
  for (std::size_t i = 1; i < times_us.size(); ++i) {
    if (times_us[i] <= times_us[i - 1]) throw InputError(name, "time " + format_utc(times_us[i]) + " does not follow " + format_utc(times_us[i - 1]) + "; times must increase");
  }
  if (end_us <= times_us.back()) throw InputError(name, "the series must end after its last point");
  for (double v : values) {
    if (!std::isfinite(v)) throw InputError(name, "values must be finite numbers");
  }
  StepSeries s;
  s.name_ = std::move(name);
  s.kind_ = Kind::kFinite;
  s.times_us_ = std::move(times_us);
  s.values_ = std::move(values);
  s.end_us_ = end_us;
  return s;
}

StepSeries StepSeries::constant(std::string name, double value) {
  if (!std::isfinite(value)) throw InputError(name, "a constant signal must be a finite number");
  StepSeries s;
  s.name_ = std::move(name);
  s.kind_ = Kind::kConstant;
  s.values_ = {value};
  return s;
}

StepSeries StepSeries::periodic(std::string name, std::vector<double> values, std::int64_t step_us, std::int64_t anchor_us) {
  if (values.empty() || step_us <= 0) throw InputError(name, "a periodic signal needs values and a positive step");
  for (double v : values) {
    if (!std::isfinite(v)) throw InputError(name, "values must be finite numbers");
  }
  StepSeries s;
  s.name_ = std::move(name);
  s.kind_ = Kind::kPeriodic;
  s.values_ = std::move(values);
  s.step_us_ = step_us;
  s.anchor_us_ = anchor_us;
  return s;
}

std::int64_t StepSeries::begin_us() const { return kind_ == Kind::kFinite ? times_us_.front() : kMin; }
std::int64_t StepSeries::end_us() const { return kind_ == Kind::kFinite ? end_us_ : kMax; }

void StepSeries::out_of_range(std::int64_t t_us) const {
  throw InputError(name_, "no value at " + format_utc(t_us) + ": the data cover " + format_utc(begin_us()) + " to " + format_utc(end_us()) +
                              "; set signals.origin_utc so that the simulated run falls inside them");
}

std::pair<std::size_t, std::int64_t> StepSeries::locate(std::int64_t t_us) const {
  switch (kind_) {
    case Kind::kConstant: return {0, kMax};
    case Kind::kPeriodic: {
      const std::int64_t k = floor_div(t_us - anchor_us_, step_us_);
      const auto n = static_cast<std::int64_t>(values_.size());
      const std::int64_t idx = ((k % n) + n) % n;
      return {static_cast<std::size_t>(idx), anchor_us_ + (k + 1) * step_us_};
    }
    case Kind::kFinite: break;
  }
  if (t_us < times_us_.front() || t_us >= end_us_) out_of_range(t_us);
  const auto it = std::upper_bound(times_us_.begin(), times_us_.end(), t_us);
  const auto i = static_cast<std::size_t>(it - times_us_.begin()) - 1;
  return {i, i + 1 < times_us_.size() ? times_us_[i + 1] : end_us_};
}

double StepSeries::value_at(std::int64_t t_us) const { return values_[locate(t_us).first]; }

double StepSeries::value_clamped(std::int64_t t_us) const {
  if (kind_ == Kind::kFinite) t_us = std::clamp(t_us, times_us_.front(), end_us_ - 1);
  return value_at(t_us);
}

double StepSeries::integral(std::int64_t a_us, std::int64_t b_us) const {
  if (b_us <= a_us) return 0.0;
  if (kind_ == Kind::kFinite && (a_us < times_us_.front() || b_us > end_us_)) out_of_range(a_us < times_us_.front() ? a_us : end_us_);
  double sum = 0.0;
  std::int64_t cur = a_us;
  while (cur < b_us) {
    const auto [i, step_end] = locate(cur);
    const std::int64_t seg_end = std::min(step_end, b_us);
    sum += values_[i] * (static_cast<double>(seg_end - cur) / 1e6);
    cur = seg_end;
  }
  return sum;
}

std::int64_t StepSeries::next_change_us(std::int64_t t_us) const {
  if (kind_ == Kind::kConstant) return kMax;
  if (kind_ == Kind::kFinite) {
    if (t_us < times_us_.front()) return times_us_.front();
    if (t_us >= end_us_) return kMax;
  }
  return locate(t_us).second;
}

const char* to_string(SignalKind k) { return k == SignalKind::kPrice ? "price" : "carbon"; }

GridSignals::GridSignals(std::int64_t origin_utc_us, std::optional<StepSeries> price, std::optional<StepSeries> carbon, ForecastConfig forecast)
    : origin_utc_us_(origin_utc_us), price_(std::move(price)), carbon_(std::move(carbon)), forecast_(forecast) {}

const StepSeries* GridSignals::series(SignalKind k) const {
  const auto& s = k == SignalKind::kPrice ? price_ : carbon_;
  return s ? &*s : nullptr;
}

const StepSeries& GridSignals::need(SignalKind k) const {
  const StepSeries* s = series(k);
  if (!s) throw InputError("signals", std::string("no ") + to_string(k) + " signal configured; add signals." + to_string(k) + " to the scenario");
  return *s;
}

double GridSignals::now(SignalKind k, Tick t) const { return need(k).value_at(utc_us(t)); }

double GridSignals::integral(SignalKind k, Tick a, Tick b) const { return need(k).integral(utc_us(a), utc_us(b)); }

Tick GridSignals::next_change(Tick t) const {
  std::int64_t next = std::numeric_limits<std::int64_t>::max();
  for (const auto* s : {price_ ? &*price_ : nullptr, carbon_ ? &*carbon_ : nullptr}) {
    if (s) next = std::min(next, s->next_change_us(utc_us(t)));
  }
  if (next == std::numeric_limits<std::int64_t>::max()) return Tick::max();
  return Tick::from_us(next - origin_utc_us_);
}

void GridSignals::forecast(SignalKind k, Tick t, Tick horizon, std::vector<std::pair<Tick, double>>& out) const {
  out.clear();
  const StepSeries& s = need(k);
  const std::int64_t start = utc_us(t);
  const std::int64_t stop = start + horizon.us();
  out.emplace_back(t, s.value_clamped(start));
  for (std::int64_t c = s.next_change_us(start); c < stop; c = s.next_change_us(c)) {
    double v = s.value_clamped(c);
    if (forecast_.noise > 0.0) {
      const std::uint64_t key = forecast_.seed * 0x9e3779b97f4a7c15ULL ^ (static_cast<std::uint64_t>(k) << 62) ^ static_cast<std::uint64_t>(c);
      v *= 1.0 + forecast_.noise * hashed_normal(key);
    }
    out.emplace_back(Tick::from_us(c - origin_utc_us_), v);
  }
}

}  // namespace schedsim
