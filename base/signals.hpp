// Grid signals: electricity price (USD/MWh) and carbon intensity (gCO2/kWh) of a region
// as step functions of UTC time, and the view policies get of them (the value now and a
// forecast window). Simulated time t maps to the UTC instant origin + t, so a trace's
// time zero can be placed anywhere in a year of real data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/tick.hpp"

namespace schedsim {

// A right-continuous step function of UTC time in microseconds since the Unix epoch:
// value[i] holds on [time[i], time[i+1]), the last value on [time.back(), end). Three
// kinds: finite (loaded data; reading outside [begin, end) is an error naming the series),
// constant (one value everywhere) and periodic (value[i] on step i of a repeating period,
// e.g. a synthetic diurnal curve).
class StepSeries {
 public:
  StepSeries() = default;
  // Finite series; times strictly increasing, end > last time. Throws InputError naming
  // `name` otherwise.
  static StepSeries finite(std::string name, std::vector<std::int64_t> times_us, std::vector<double> values, std::int64_t end_us);
  static StepSeries constant(std::string name, double value);
  // values[k] holds on [anchor + k*step + n*period, anchor + (k+1)*step + n*period) for
  // every integer n, with period = values.size() * step.
  static StepSeries periodic(std::string name, std::vector<double> values, std::int64_t step_us, std::int64_t anchor_us);

  const std::string& name() const { return name_; }
  bool is_finite() const { return kind_ == Kind::kFinite; }
  std::int64_t begin_us() const;  // first covered instant (INT64_MIN when unbounded)
  std::int64_t end_us() const;    // first instant past the data (INT64_MAX when unbounded)

  // Value at `t_us`; throws InputError when a finite series does not cover it.
  double value_at(std::int64_t t_us) const;
  // The value at t_us clamped into the covered range (for forecasts near the data's end).
  double value_clamped(std::int64_t t_us) const;
  // Integral of the value over [a_us, b_us], in value x seconds (a_us <= b_us); summed
  // step by step, so a job crossing a step boundary is split exactly there. Throws like
  // value_at() when the interval leaves the data.
  double integral(std::int64_t a_us, std::int64_t b_us) const;
  // The first step boundary strictly after t_us (INT64_MAX when none).
  std::int64_t next_change_us(std::int64_t t_us) const;

 private:
  enum class Kind { kFinite, kConstant, kPeriodic };
  // Index of the step holding t_us (finite/periodic) and the end of that step.
  std::pair<std::size_t, std::int64_t> locate(std::int64_t t_us) const;
  [[noreturn]] void out_of_range(std::int64_t t_us) const;

  std::string name_;
  Kind kind_ = Kind::kConstant;
  std::vector<std::int64_t> times_us_;
  std::vector<double> values_ = {0.0};
  std::int64_t end_us_ = 0;
  std::int64_t step_us_ = 0, anchor_us_ = 0;  // periodic
};

// "2023-01-01T00:00:00Z" for a UTC instant in microseconds.
std::string format_utc(std::int64_t utc_us);

enum class SignalKind { kPrice, kCarbon };
const char* to_string(SignalKind k);

// Forecast errors: a forecast of the value at a future step is value x (1 + noise x z),
// z standard normal, drawn from a hash of (seed, kind, step start): the same target step
// always gets the same error, whatever the query order, so runs stay deterministic.
struct ForecastConfig {
  double noise = 0.0;          // relative standard deviation; 0 = perfect forecast
  std::uint64_t seed = 0;
};

// The signals of one region, in simulated time.
class GridSignals {
 public:
  GridSignals(std::int64_t origin_utc_us, std::optional<StepSeries> price_usd_per_mwh, std::optional<StepSeries> carbon_g_per_kwh,
              ForecastConfig forecast = {});

  std::int64_t origin_utc_us() const { return origin_utc_us_; }
  std::int64_t utc_us(Tick t) const { return origin_utc_us_ + t.us(); }
  bool has(SignalKind k) const { return series(k) != nullptr; }
  const StepSeries* series(SignalKind k) const;

  // Value now (observed, exact). Throws InputError when the signal is absent or the
  // data do not cover `t`.
  double now(SignalKind k, Tick t) const;
  // Integral over simulated [a, b] in value x seconds (exact step sums).
  double integral(SignalKind k, Tick a, Tick b) const;
  // The forecast issued at `t` for [t, t + horizon): step points (simulated time, value),
  // the first at t with the observed value, then one per step boundary, with the
  // configured noise. Beyond the data's end the last value is assumed to persist.
  void forecast(SignalKind k, Tick t, Tick horizon, std::vector<std::pair<Tick, double>>& out) const;
  const ForecastConfig& forecast_config() const { return forecast_; }
  // The first instant after `t` at which a present signal changes value (Tick::max() when
  // none does): where a scheduler waiting for a cheaper or cleaner period looks again.
  Tick next_change(Tick t) const;

 private:
  const StepSeries& need(SignalKind k) const;
  std::int64_t origin_utc_us_;
  std::optional<StepSeries> price_, carbon_;
  ForecastConfig forecast_;
};

}  // namespace schedsim
