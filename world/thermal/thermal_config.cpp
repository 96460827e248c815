#include "world/thermal/thermal_config.hpp"

#include <cmath>

#include "traces/signal_files.hpp"

namespace schedsim {

namespace {
// A temperature in °C within what the model is meant for.
double temperature(const ConfigNode& n) {
  const double v = n.as_double();
  if (v < -60.0 || v > 70.0) n.fail("must be a temperature in °C in [-60, 70], got " + std::to_string(v));
  return v;
}
double fraction(const ConfigNode& n, bool zero_ok) {
  const double v = n.as_double();
  if (!(zero_ok ? v >= 0.0 : v > 0.0) || v > 1.0) n.fail(std::string("must be in ") + (zero_ok ? "[0, 1]" : "(0, 1]") + ", got " + std::to_string(v));
  return v;
}
}  // namespace

ThermalConfig ThermalConfig::parse(const ConfigNode& node, double utc_offset_h, bool offset_key) {
  ThermalConfig c;
  c.utc_offset_h = utc_offset_h;
  if (offset_key) node.expect_map({"outside_c", "setpoint_c", "setpoint_range_c", "cooling", "throttle", "utc_offset_h"});
  else node.expect_map({"outside_c", "setpoint_c", "setpoint_range_c", "cooling", "throttle"});
  if (auto o = node.maybe_child("utc_offset_h")) {
    c.utc_offset_h = o->as_double();
    if (!(c.utc_offset_h >= -12.0 && c.utc_offset_h <= 14.0)) o->fail("must be an offset from UTC in hours in [-12, 14]");
  }
  const ConfigNode out = node.child("outside_c");
  if (out.is_scalar()) {
    c.outside = Outside::kConstant;
    c.constant_c = temperature(out);
  } else {
    out.expect_map({"file", "time_column", "value_column", "constant", "synthetic"});
    if (out.has("file") + out.has("constant") + out.has("synthetic") != 1) out.fail("give exactly one of file, constant or synthetic");
    if (auto k = out.maybe_child("constant")) {
      c.outside = Outside::kConstant;
      c.constant_c = temperature(*k);
    } else if (auto syn = out.maybe_child("synthetic")) {
      syn->expect_map({"mean_c", "amplitude_c", "peak_hour_local"});
      c.outside = Outside::kSynthetic;
      c.mean_c = temperature(syn->child("mean_c"));
      c.amplitude_c = syn->child("amplitude_c").as_nonnegative_double();
      if (c.amplitude_c > 50.0) syn->child("amplitude_c").fail("a daily swing of more than ±50 °C; is this a typo?");
      if (auto h = syn->maybe_child("peak_hour_local")) {
        c.peak_hour_local = h->as_double();
        if (c.peak_hour_local < 0 || c.peak_hour_local >= 24) h->fail("must be an hour in [0, 24)");
      }
    } else {
      c.outside = Outside::kFile;
      const ConfigNode f = out.child("file");
      c.file = f.as_string();
      if (auto t = out.maybe_child("time_column")) c.time_column = t->as_string();
      if (auto v = out.maybe_child("value_column")) c.value_column = v->as_string();
      c.outside_c = std::make_shared<const StepSeries>(load_step_csv(f.as_path(), "outside temperature", c.time_column, c.value_column, f.as_path()));
    }
    if (c.outside != Outside::kFile && (out.has("time_column") || out.has("value_column"))) out.fail("time_column and value_column only go with file");
  }
  if (c.outside == Outside::kConstant) c.outside_c = std::make_shared<const StepSeries>(StepSeries::constant("outside temperature", c.constant_c));
  if (c.outside == Outside::kSynthetic) {
    // Hourly steps (UTC hours): hour h holds the cosine's value at its middle, in local time.
    std::vector<double> v(24);
    for (int h = 0; h < 24; ++h) {
      v[static_cast<std::size_t>(h)] = c.mean_c + c.amplitude_c * std::cos(2 * M_PI * (h + 0.5 + c.utc_offset_h - c.peak_hour_local) / 24.0);
    }
    c.outside_c = std::make_shared<const StepSeries>(StepSeries::periodic("outside temperature", v, 3'600'000'000LL, 0));
  }
  if (auto r = node.maybe_child("setpoint_range_c")) {
    if (!r->is_sequence() || r->size() != 2) r->fail("expected [lowest, highest] set-point in °C, e.g. [18, 35]");
    c.min_setpoint_c = temperature(r->at(0));
    c.max_setpoint_c = temperature(r->at(1));
    if (!(c.min_setpoint_c <= c.max_setpoint_c)) r->fail("the lowest set-point must not exceed the highest");
  }
  if (auto sp = node.maybe_child("setpoint_c")) {
    c.setpoint_c = temperature(*sp);
  }
  if (c.setpoint_c < c.min_setpoint_c || c.setpoint_c > c.max_setpoint_c) {
    (node.has("setpoint_c") ? node.child("setpoint_c") : node)
        .fail("the initial set-point " + std::to_string(c.setpoint_c) + " °C is outside setpoint_range_c [" + std::to_string(c.min_setpoint_c) + ", " +
              std::to_string(c.max_setpoint_c) + "]");
  }
  if (auto k = node.maybe_child("cooling")) {
    k->expect_map({"carnot_fraction", "approach_c", "min_lift_c", "economizer_delta_c", "fan_fraction", "max_outside_c"});
    if (auto v = k->maybe_child("carnot_fraction")) c.cooling.carnot_fraction = fraction(*v, false);
    if (auto v = k->maybe_child("approach_c")) c.cooling.approach_c = v->as_nonnegative_double();
    if (auto v = k->maybe_child("min_lift_c")) c.cooling.min_lift_c = v->as_positive_double();
    if (auto v = k->maybe_child("economizer_delta_c")) c.cooling.economizer_delta_c = v->as_double();
    if (auto v = k->maybe_child("fan_fraction")) c.cooling.fan_fraction = fraction(*v, true);
    if (auto v = k->maybe_child("max_outside_c")) c.cooling.max_outside_c = temperature(*v);
  }
  if (auto t = node.maybe_child("throttle")) {
    t->expect_map({"rise_at_tdp_c", "threshold_c", "slope_per_c", "floor"});
    if (auto v = t->maybe_child("rise_at_tdp_c")) c.throttle.rise_at_tdp_c = v->as_nonnegative_double();
    if (auto v = t->maybe_child("threshold_c")) c.throttle.threshold_c = v->as_double();
    if (auto v = t->maybe_child("slope_per_c")) c.throttle.slope_per_c = v->as_nonnegative_double();
    if (auto v = t->maybe_child("floor")) c.throttle.floor = fraction(*v, false);
  }
  return c;
}

YAML::Node ThermalConfig::to_yaml(bool offset_key) const {
  YAML::Node n(YAML::NodeType::Map);
  switch (outside) {
    case Outside::kConstant: n["outside_c"]["constant"] = constant_c; break;
    case Outside::kSynthetic:
      n["outside_c"]["synthetic"]["mean_c"] = mean_c;
      n["outside_c"]["synthetic"]["amplitude_c"] = amplitude_c;
      n["outside_c"]["synthetic"]["peak_hour_local"] = peak_hour_local;
      break;
    case Outside::kFile:
      n["outside_c"]["file"] = file;
      n["outside_c"]["time_column"] = time_column;
      n["outside_c"]["value_column"] = value_column;
      break;
  }
  if (offset_key) n["utc_offset_h"] = utc_offset_h;
  n["setpoint_c"] = setpoint_c;
  n["setpoint_range_c"].push_back(min_setpoint_c);
  n["setpoint_range_c"].push_back(max_setpoint_c);
  n["cooling"]["carnot_fraction"] = cooling.carnot_fraction;
  n["cooling"]["approach_c"] = cooling.approach_c;
  n["cooling"]["min_lift_c"] = cooling.min_lift_c;
  n["cooling"]["economizer_delta_c"] = cooling.economizer_delta_c;
  n["cooling"]["fan_fraction"] = cooling.fan_fraction;
  n["cooling"]["max_outside_c"] = cooling.max_outside_c;
  n["throttle"]["rise_at_tdp_c"] = throttle.rise_at_tdp_c;
  n["throttle"]["threshold_c"] = throttle.threshold_c;
  n["throttle"]["slope_per_c"] = throttle.slope_per_c;
  n["throttle"]["floor"] = throttle.floor;
  return n;
}

ThermalSiteSpec ThermalConfig::site(const std::string& name, int first_device, int num_devices, double pue) const {
  ThermalSiteSpec s;
  s.name = name;
  s.first_device = first_device;
  s.num_devices = num_devices;
  s.outside_c = outside_c;
  s.cooling = cooling;
  s.cooling.other_fraction = pue - 1.0;
  s.throttle = throttle;
  s.setpoint_c = setpoint_c;
  s.min_setpoint_c = min_setpoint_c;
  s.max_setpoint_c = max_setpoint_c;
  return s;
}

}  // namespace schedsim
