#include "world/energy/energy_config.hpp"

#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "traces/signal_files.hpp"
#include "traces/time_parse.hpp"

namespace schedsim {

EnergyConfig EnergyConfig::parse(const ConfigNode& node, const std::vector<NodeGroup>& cluster, const AcceleratorCatalogue& catalogue) {
  EnergyConfig c;
  if (!node.is_null()) {
    node.expect_map({"pue", "power_caps", "thermal"});
    if (auto p = node.maybe_child("pue")) {
      c.pue = p->as_double();
      if (!(c.pue >= 1.0) || c.pue > 10.0) p->fail("the PUE (facility power / IT power) must be in [1, 10], got " + std::to_string(c.pue));
    }
  }
  const ClusterSpec spec(cluster);
  for (const std::string& type : spec.device_types()) {
    const AcceleratorSpec* a = catalogue.find(type);
    if (!a) {
      std::string known;
      for (const auto& n : catalogue.names()) known += (known.empty() ? "" : ", ") + n;
      node.fail("the energy model needs the power of device type '" + type + "', which is not in the accelerator catalogue (" + known +
                "); add it under `accelerators:` with tdp_w and idle_w");
    }
    c.power_by_type.push_back(DevicePower{a->idle_w, a->tdp_w});
    c.speed_by_type.push_back(1.0);
    c.load_by_type.push_back(1.0);
  }
  if (auto caps = node.is_null() ? std::nullopt : node.maybe_child("power_caps")) {
    if (!caps->is_map()) caps->fail("expected a map from device type to {fraction, curve}");
    for (const std::string& type : caps->keys()) {
      const ConfigNode cn = caps->child(type);
      cn.expect_map({"fraction", "curve"});
      const auto& types = spec.device_types();
      const auto it = std::find(types.begin(), types.end(), type);
      if (it == types.end()) caps->child(type).fail("no node group of the cluster has device type '" + type + "'");
      const auto t = static_cast<std::size_t>(it - types.begin());
      PowerCapConfig cap;
      cap.type = type;
      const ConfigNode curve = cn.child("curve");
      curve.expect_map({"file", "dataset", "network", "batch_size", "optimizer", "points"});
      if (curve.has("file") == curve.has("points")) curve.fail("give exactly one of file (a zeus-style sweep) or points");
      if (auto f = curve.maybe_child("file")) {
        cap.file = f->as_string();
        if (auto v = curve.maybe_child("dataset")) cap.filter.dataset = v->as_string();
        if (auto v = curve.maybe_child("network")) cap.filter.network = v->as_string();
        if (auto v = curve.maybe_child("batch_size")) cap.filter.batch_size = v->as_string();
        if (auto v = curve.maybe_child("optimizer")) cap.filter.optimizer = v->as_string();
        cap.curve = std::make_shared<const PowerCurve>(load_power_sweep_csv(f->as_path(), cap.filter));
      } else {
        const ConfigNode pts = curve.child("points");
        if (!pts.is_sequence()) pts.fail("expected a list of {limit_w, time_s, power_w}");
        std::vector<PowerPoint> points;
        for (std::size_t i = 0; i < pts.size(); ++i) {
          const ConfigNode p = pts.at(i);
          p.expect_map({"limit_w", "time_s", "power_w"});
          points.push_back(PowerPoint{p.child("limit_w").as_positive_double(), p.child("time_s").as_positive_double(), p.child("power_w").as_positive_double()});
        }
        cap.curve = std::make_shared<const PowerCurve>(points, pts.where());
      }
      const ConfigNode fr = cn.child("fraction");
      cap.fraction = fr.as_positive_double();
      const double lowest = cap.curve->points().front().limit_w / cap.curve->max_limit_w();
      if (cap.fraction > 1.0 || cap.fraction < lowest - 1e-12) {
        fr.fail("must be in [" + std::to_string(lowest) + ", 1]: the curve's smallest limit over its largest, up to the full TDP");
      }
      cap.capped = cap.curve->capped(c.power_by_type[t].tdp_w, cap.fraction);
      if (cap.capped.busy_power_w < c.power_by_type[t].idle_w) fr.fail("the capped busy power is below the type's idle power; raise the cap");
      c.load_by_type[t] = cap.capped.busy_power_w / c.power_by_type[t].tdp_w;
      c.power_by_type[t].tdp_w = cap.capped.busy_power_w;
      c.speed_by_type[t] = cap.capped.speed;
      c.power_caps.push_back(cap);
    }
  }
  if (auto th = node.is_null() ? std::nullopt : node.maybe_child("thermal")) c.thermal = ThermalConfig::parse(*th, 0.0, true);
  return c;
}

YAML::Node EnergyConfig::to_yaml() const {
  YAML::Node n(YAML::NodeType::Map);
  n["pue"] = pue;
  for (const PowerCapConfig& cap : power_caps) {
    YAML::Node c(YAML::NodeType::Map);
    c["fraction"] = cap.fraction;
    if (!cap.file.empty()) {
      c["curve"]["file"] = cap.file;
      c["curve"]["dataset"] = cap.filter.dataset;
      c["curve"]["network"] = cap.filter.network;
      c["curve"]["batch_size"] = cap.filter.batch_size;
      c["curve"]["optimizer"] = cap.filter.optimizer;
    } else {
      for (const PowerPoint& p : cap.curve->points()) {
        YAML::Node pn(YAML::NodeType::Map);
        pn["limit_w"] = p.limit_w;
        pn["time_s"] = p.time_s;
        pn["power_w"] = p.power_w;
        c["curve"]["points"].push_back(pn);
      }
    }
    c["speed"] = cap.capped.speed;
    c["busy_power_w"] = cap.capped.busy_power_w;
    n["power_caps"][cap.type] = c;
  }
  if (thermal) n["thermal"] = thermal->to_yaml(true);
  return n;
}

SignalSpec SignalSpec::parse(const ConfigNode& node, SignalKind kind) {
  SignalSpec s;
  const std::string name = std::string("signals.") + to_string(kind);
  if (node.is_scalar()) {  // a bare number: constant
    s.kind = Kind::kConstant;
    s.constant = node.as_double();
  } else {
    node.expect_map({"file", "time_column", "value_column", "constant", "diurnal"});
    const int forms = node.has("file") + node.has("constant") + node.has("diurnal");
    if (forms != 1) node.fail("give exactly one of file, constant or diurnal");
    if (auto c = node.maybe_child("constant")) {
      s.kind = Kind::kConstant;
      s.constant = c->as_double();
    } else if (auto d = node.maybe_child("diurnal")) {
      d->expect_map({"mean", "amplitude", "peak_hour_utc"});
      s.kind = Kind::kDiurnal;
      s.mean = d->child("mean").as_double();
      s.amplitude = d->child("amplitude").as_nonnegative_double();
      if (auto h = d->maybe_child("peak_hour_utc")) {
        s.peak_hour_utc = h->as_double();
        if (s.peak_hour_utc < 0 || s.peak_hour_utc >= 24) h->fail("must be an hour in [0, 24)");
      }
    } else {
      s.kind = Kind::kFile;
      const ConfigNode f = node.child("file");
      s.file = f.as_string();
      if (auto t = node.maybe_child("time_column")) s.time_column = t->as_string();
      if (auto v = node.maybe_child("value_column")) s.value_column = v->as_string();
      s.series = std::make_shared<const StepSeries>(load_signal_csv(f.as_path(), kind, {s.time_column, s.value_column}, f.as_path()));
    }
    if (s.kind != Kind::kFile && (node.has("time_column") || node.has("value_column"))) node.fail("time_column and value_column only go with file");
  }
  if (s.kind == Kind::kConstant) s.series = std::make_shared<const StepSeries>(StepSeries::constant(name, s.constant));
  if (s.kind == Kind::kDiurnal) {
    // Hourly steps: hour h (UTC) holds the cosine's value at its middle.
    std::vector<double> v(24);
    for (int h = 0; h < 24; ++h) v[static_cast<std::size_t>(h)] = s.mean + s.amplitude * std::cos(2 * M_PI * (h + 0.5 - s.peak_hour_utc) / 24.0);
    s.series = std::make_shared<const StepSeries>(StepSeries::periodic(name, v, 3'600'000'000LL, 0));
  }
  return s;
}

YAML::Node SignalSpec::to_yaml() const {
  YAML::Node n(YAML::NodeType::Map);
  switch (kind) {
    case Kind::kConstant: n["constant"] = constant; break;
    case Kind::kDiurnal:
      n["diurnal"]["mean"] = mean;
      n["diurnal"]["amplitude"] = amplitude;
      n["diurnal"]["peak_hour_utc"] = peak_hour_utc;
      break;
    case Kind::kFile:
      n["file"] = file;
      if (!time_column.empty()) n["time_column"] = time_column;
      if (!value_column.empty()) n["value_column"] = value_column;
      break;
  }
  return n;
}

SignalsConfig SignalsConfig::parse(const ConfigNode& node) {
  SignalsConfig c;
  node.expect_map({"origin_utc", "price", "carbon", "forecast"});
  if (auto o = node.maybe_child("origin_utc")) c.origin_utc = o->as_string();
  double unix_s = 0;
  if (!parse_datetime(c.origin_utc, TimeZone::utc(), unix_s)) {
    (node.has("origin_utc") ? node.child("origin_utc") : node).fail("expected a UTC date-time such as 2023-06-01T00:00:00Z, got '" + c.origin_utc + "'");
  }
  c.origin_utc_us = static_cast<std::int64_t>(std::llround(unix_s * 1e6));
  if (auto p = node.maybe_child("price")) c.price = SignalSpec::parse(*p, SignalKind::kPrice);
  if (auto p = node.maybe_child("carbon")) c.carbon = SignalSpec::parse(*p, SignalKind::kCarbon);
  if (!c.price && !c.carbon) node.fail("give at least one of price (USD/MWh) or carbon (gCO2/kWh)");
  if (auto f = node.maybe_child("forecast")) {
    f->expect_map({"noise", "seed"});
    if (auto n = f->maybe_child("noise")) {
      c.forecast_noise = n->as_nonnegative_double();
      if (c.forecast_noise > 1.0) n->fail("the relative forecast noise must be in [0, 1]");
    }
    if (auto s = f->maybe_child("seed")) {
      const std::int64_t v = s->as_int();
      if (v < 0) s->fail("must be a non-negative integer");
      c.forecast_seed = static_cast<std::uint64_t>(v);
    }
  }
  return c;
}

YAML::Node SignalsConfig::to_yaml() const {
  YAML::Node n(YAML::NodeType::Map);
  n["origin_utc"] = format_utc(origin_utc_us);
  if (price) n["price"] = price->to_yaml();
  if (carbon) n["carbon"] = carbon->to_yaml();
  n["forecast"]["noise"] = forecast_noise;
  if (forecast_seed) n["forecast"]["seed"] = *forecast_seed;
  return n;
}

GridSignals SignalsConfig::build(std::uint64_t run_seed) const {
  std::optional<StepSeries> p, k;
  if (price) p = *price->series;
  if (carbon) k = *carbon->series;
  return GridSignals(origin_utc_us, std::move(p), std::move(k), ForecastConfig{forecast_noise, forecast_seed.value_or(run_seed)});
}

}  // namespace schedsim
