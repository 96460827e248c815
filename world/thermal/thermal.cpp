#include "world/thermal/thermal.hpp"

#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "sim/snapshot_archive.hpp"

namespace schedsim {

namespace {
constexpr double kKelvin = 273.15;
}  // namespace

bool economizer_on(const CoolingSpec& c, double outside_c, double setpoint_c) { return outside_c <= setpoint_c - c.economizer_delta_c; }

double chiller_cop(const CoolingSpec& c, double outside_c, double setpoint_c) {
  const double lift_c = std::max(outside_c - setpoint_c + c.approach_c, c.min_lift_c);
  return c.carnot_fraction * (setpoint_c + kKelvin) / lift_c;
}

double cooling_fraction(const CoolingSpec& c, double outside_c, double setpoint_c) {
  if (economizer_on(c, outside_c, setpoint_c)) return c.fan_fraction;
  return c.fan_fraction + 1.0 / chiller_cop(c, outside_c, setpoint_c);
}

double facility_pue(const CoolingSpec& c, double outside_c, double setpoint_c) {
  return 1.0 + c.other_fraction + cooling_fraction(c, outside_c, setpoint_c);
}

double supply_temperature_c(const CoolingSpec& c, double outside_c, double setpoint_c) {
  return setpoint_c + std::max(0.0, outside_c - c.max_outside_c);
}

double device_temperature_c(const ThrottleSpec& t, double supply_c, double load_fraction) { return supply_c + t.rise_at_tdp_c * load_fraction; }

double throttle_speed(const ThrottleSpec& t, double device_c) {
  if (device_c <= t.threshold_c) return 1.0;
  return std::max(t.floor, 1.0 - t.slope_per_c * (device_c - t.threshold_c));
}

ThermalModel::ThermalModel(std::vector<ThermalSiteSpec> sites, std::int64_t origin_utc_us, std::vector<double> load_fraction,
                           std::vector<double> base_speed)
    : sites_(std::move(sites)), origin_utc_us_(origin_utc_us), load_(std::move(load_fraction)), base_speed_(std::move(base_speed)) {
  if (sites_.empty()) throw InvariantError("ThermalModel: no site");
  const std::size_t n = load_.size();
  if (base_speed_.empty()) base_speed_.assign(n, 1.0);
  if (base_speed_.size() != n) throw InvariantError("ThermalModel: one base speed per device expected");
  device_site_.assign(n, -1);
  for (std::size_t s = 0; s < sites_.size(); ++s) {
    const ThermalSiteSpec& spec = sites_[s];
    if (!spec.outside_c) throw InvariantError("ThermalModel: site '" + spec.name + "' has no outside temperature");
    for (int d = spec.first_device; d < spec.first_device + spec.num_devices; ++d) {
      if (d < 0 || static_cast<std::size_t>(d) >= n || device_site_[static_cast<std::size_t>(d)] >= 0) {
        throw InvariantError("ThermalModel: site device ranges must cover the cluster once");
      }
      device_site_[static_cast<std::size_t>(d)] = static_cast<int>(s);
    }
  }
  if (std::find(device_site_.begin(), device_site_.end(), -1) != device_site_.end()) throw InvariantError("ThermalModel: a device belongs to no site");
  speed_ = base_speed_;
  changed_.assign(n, 0);
  state_.resize(sites_.size());
  for (std::size_t s = 0; s < sites_.size(); ++s) {
    if (!setpoint_problem(static_cast<int>(s), sites_[s].setpoint_c).empty()) {
      throw InputError("thermal.setpoint_c", setpoint_problem(static_cast<int>(s), sites_[s].setpoint_c));
    }
    state_[s].setpoint_c = sites_[s].setpoint_c;
  }
  update(Tick());  // the state at time 0, before the first event (meters read it from the start)
}

bool ThermalModel::refresh(int s) {
  const ThermalSiteSpec& spec = sites_[static_cast<std::size_t>(s)];
  SiteState& st = state_[static_cast<std::size_t>(s)];
  st.pue = facility_pue(spec.cooling, st.outside_c, st.setpoint_c);
  st.cooling_fraction = schedsim::cooling_fraction(spec.cooling, st.outside_c, st.setpoint_c);
  st.supply_c = supply_temperature_c(spec.cooling, st.outside_c, st.setpoint_c);
  bool any = false;
  for (int d = spec.first_device; d < spec.first_device + spec.num_devices; ++d) {
    const auto i = static_cast<std::size_t>(d);
    const double v = base_speed_[i] * throttle_speed(spec.throttle, device_temperature_c(spec.throttle, st.supply_c, load_[i]));
    changed_[i] = v != speed_[i];
    any = any || changed_[i];
    speed_[i] = v;
  }
  return any;
}

bool ThermalModel::update(Tick t) {
  bool any = false;
  for (std::size_t s = 0; s < sites_.size(); ++s) {
    state_[s].outside_c = sites_[s].outside_c->value_at(origin_utc_us_ + t.us());
    any = refresh(static_cast<int>(s)) || any;
  }
  return any;
}

Tick ThermalModel::next_change(Tick t) const {
  std::int64_t best = INT64_MAX;
  for (const ThermalSiteSpec& spec : sites_) best = std::min(best, spec.outside_c->next_change_us(origin_utc_us_ + t.us()));
  if (best == INT64_MAX) return Tick::max();
  return Tick::from_us(best - origin_utc_us_);
}

std::string ThermalModel::setpoint_problem(int s, double setpoint_c) const {
  if (s < 0 || s >= num_sites()) return "no such datacenter (index " + std::to_string(s) + "; the run has " + std::to_string(num_sites()) + ")";
  const ThermalSiteSpec& spec = sites_[static_cast<std::size_t>(s)];
  if (!std::isfinite(setpoint_c) || setpoint_c < spec.min_setpoint_c || setpoint_c > spec.max_setpoint_c) {
    return "cooling set-point " + std::to_string(setpoint_c) + " °C is outside the allowed range [" + std::to_string(spec.min_setpoint_c) + ", " +
           std::to_string(spec.max_setpoint_c) + "] °C of " + (spec.name.empty() ? std::string("the cluster") : "datacenter '" + spec.name + "'") +
           " (thermal.setpoint_range_c)";
  }
  return "";
}

bool ThermalModel::set_setpoint(int s, double setpoint_c) {
  const std::string problem = setpoint_problem(s, setpoint_c);
  if (!problem.empty()) throw InvariantError("ThermalModel::set_setpoint: " + problem);
  SiteState& st = state_[static_cast<std::size_t>(s)];
  std::fill(changed_.begin(), changed_.end(), 0);
  if (st.setpoint_c == setpoint_c) return false;
  st.setpoint_c = setpoint_c;
  ++st.changes;
  return refresh(s);
}

double ThermalModel::highest_safe_setpoint_c(int s, double load_fraction, const std::vector<double>& candidates_c, double step_c) const {
  const ThermalSiteSpec& spec = sites_[static_cast<std::size_t>(s)];
  const double outside = state_[static_cast<std::size_t>(s)].outside_c;
  auto safe = [&](double c) {
    return device_temperature_c(spec.throttle, supply_temperature_c(spec.cooling, outside, c), load_fraction) <= spec.throttle.threshold_c;
  };
  double best = spec.min_setpoint_c;
  if (!candidates_c.empty()) {
    best = *std::min_element(candidates_c.begin(), candidates_c.end());
    for (double c : candidates_c) {
      if (safe(c) && c > best) best = c;
    }
    return best;
  }
  if (!(step_c > 0.0)) throw InvariantError("ThermalModel::highest_safe_setpoint_c: step must be positive");
  // Count steps from the bottom of the range so that every candidate is exactly representable.
  const auto steps = static_cast<long>(std::floor((spec.max_setpoint_c - spec.min_setpoint_c) / step_c + 1e-9));
  for (long k = 0; k <= steps; ++k) {
    const double c = spec.min_setpoint_c + static_cast<double>(k) * step_c;
    if (safe(c)) best = c;
  }
  return best;
}

// Snapshots (sim/snapshot_archive.hpp): moved here from sim/simulator_snapshot.cpp, which
// includes no world model.
void ThermalModel::snapshot(SnapshotArchive& ar) {
  ar.section("thermal model");
  ar(load_, base_speed_, speed_, changed_);
  ar.io_each(state_, [&](SiteState& st) { ar(st.outside_c, st.setpoint_c, st.supply_c, st.pue, st.cooling_fraction, st.changes); });
}

}  // namespace schedsim
