// Thermal and cooling: outside temperature per datacenter, a chiller whose efficiency
// follows the outside temperature and the cooling set-point (so the PUE varies in time),
// and device thermal throttling when the supply air is too warm (docs/energy.md,
// "Thermal and cooling").
//
// Cooling (per watt of IT power; T in °C, Kelvin = T + 273.15):
//   economizer (free cooling) when T_out <= T_set - economizer_delta_c: only the fans run,
//     P_cool / P_IT = fan_fraction
//   otherwise the chiller runs too, with a Carnot-fraction COP:
//     lift = max(T_out - T_set + approach_c, min_lift_c)
//     COP  = carnot_fraction x (T_set + 273.15) / lift
//     P_cool / P_IT = fan_fraction + 1 / COP
//   PUE = 1 + other_fraction + P_cool / P_IT     (other = lighting, power distribution)
// Devices: the supply air is at the set-point, or warmer when the outside is hotter than
// the chiller's design temperature (it cannot hold the set-point there):
//   T_supply = T_set + max(0, T_out - max_outside_c)
//   T_device = T_supply + rise_at_tdp_c x busy_power / TDP
//   speed    = 1 when T_device <= threshold_c, else max(floor, 1 - slope_per_c x (T_device - threshold_c))
// The throttle is evaluated at the device's busy power (a held device is taken as fully
// loaded), so it is a per-device speed like a power cap's, constant between changes of
// the outside temperature (its steps) and of the set-point (policy actions).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/cluster_spec.hpp"
#include "base/signals.hpp"
#include "base/tick.hpp"

namespace schedsim {

class SnapshotArchive;

struct CoolingSpec {
  double carnot_fraction = 0.5;     // chiller COP / Carnot COP, in (0, 1]
  double approach_c = 15.0;         // condenser + evaporator approach added to the lift, °C
  double min_lift_c = 5.0;          // smallest lift the COP is computed with, °C (> 0)
  double economizer_delta_c = 5.0;  // free cooling when T_out <= T_set - this, °C
  double fan_fraction = 0.05;       // fan power / IT power (always drawn)
  double max_outside_c = 45.0;      // design outside temperature: above, the supply warms 1:1
  double other_fraction = 0.0;      // non-cooling overhead / IT power (the static PUE - 1)
};

struct ThrottleSpec {
  double rise_at_tdp_c = 55.0;  // device temperature above the supply air at full TDP, °C
  double threshold_c = 85.0;    // throttling starts above this device temperature, °C
  double slope_per_c = 0.05;    // speed lost per °C above the threshold
  double floor = 0.5;           // lowest speed, in (0, 1]
};

// The formulas above, one by one (tests check them at chosen points).
bool economizer_on(const CoolingSpec& c, double outside_c, double setpoint_c);
double chiller_cop(const CoolingSpec& c, double outside_c, double setpoint_c);
double cooling_fraction(const CoolingSpec& c, double outside_c, double setpoint_c);  // P_cool / P_IT
double facility_pue(const CoolingSpec& c, double outside_c, double setpoint_c);
double supply_temperature_c(const CoolingSpec& c, double outside_c, double setpoint_c);
double device_temperature_c(const ThrottleSpec& t, double supply_c, double load_fraction);
double throttle_speed(const ThrottleSpec& t, double device_c);

// One datacenter's thermal setting (the whole cluster for a single site).
struct ThermalSiteSpec {
  std::string name;
  int first_device = 0;
  int num_devices = 0;
  std::shared_ptr<const StepSeries> outside_c;  // °C, a step function of UTC time
  CoolingSpec cooling;
  ThrottleSpec throttle;
  double setpoint_c = 22.0;  // initial supply set-point
  double min_setpoint_c = 18.0, max_setpoint_c = 35.0;
};

// The mutable thermal state of a run: each site's outside temperature and set-point and
// the resulting per-device speed (power-cap speed x throttle). The kernel updates it at
// outside-temperature steps and set-point actions; the energy meter reads the PUE.
class ThermalModel {
 public:
  // `load_fraction` and `base_speed` are by device: busy power / TDP (1 uncapped) and the
  // power-cap speed (empty = 1 everywhere). Sites cover the devices once, in order.
  ThermalModel(std::vector<ThermalSiteSpec> sites, std::int64_t origin_utc_us, std::vector<double> load_fraction, std::vector<double> base_speed);

  int num_sites() const { return static_cast<int>(sites_.size()); }
  const ThermalSiteSpec& site(int s) const { return sites_[static_cast<std::size_t>(s)]; }
  int site_of_device(DeviceId d) const { return device_site_[static_cast<std::size_t>(d)]; }

  // Reads every site's outside temperature at `t`; true when a device's speed changed
  // (speed_changed() tells which).
  bool update(Tick t);
  // The first instant after `t` at which an outside temperature steps (Tick::max() when none).
  Tick next_change(Tick t) const;
  // Why set-point `setpoint_c` is not allowed at site `s`, "" when it is.
  std::string setpoint_problem(int s, double setpoint_c) const;
  // Sets it (must be allowed); true when a device's speed changed.
  bool set_setpoint(int s, double setpoint_c);

  const std::vector<double>& device_speed() const { return speed_; }
  bool speed_changed(DeviceId d) const { return changed_[static_cast<std::size_t>(d)] != 0; }
  // Whether device `d` runs below its power-cap speed because it is too hot.
  bool throttled(DeviceId d) const { return speed_[static_cast<std::size_t>(d)] < base_speed_[static_cast<std::size_t>(d)]; }
  double outside_c(int s) const { return state_[static_cast<std::size_t>(s)].outside_c; }
  double setpoint_c(int s) const { return state_[static_cast<std::size_t>(s)].setpoint_c; }
  double pue(int s) const { return state_[static_cast<std::size_t>(s)].pue; }
  double cooling_fraction(int s) const { return state_[static_cast<std::size_t>(s)].cooling_fraction; }
  double supply_c(int s) const { return state_[static_cast<std::size_t>(s)].supply_c; }
  double load_fraction(DeviceId d) const { return load_[static_cast<std::size_t>(d)]; }
  // The highest set-point of site `s` (from `candidates_c`, or the allowed range in
  // `step_c` steps when empty) at which a device of `load_fraction` stays at or below the
  // throttle threshold at the current outside temperature; the lowest allowed when none does.
  double highest_safe_setpoint_c(int s, double load_fraction, const std::vector<double>& candidates_c, double step_c) const;
  std::uint64_t setpoint_changes(int s) const { return state_[static_cast<std::size_t>(s)].changes; }

  // Saves or restores the set-points, outside temperatures and speeds (snapshots).
  void snapshot(SnapshotArchive& ar);

 private:
  struct SiteState {
    double outside_c = 0.0, setpoint_c = 0.0, supply_c = 0.0, pue = 1.0, cooling_fraction = 0.0;
    std::uint64_t changes = 0;
  };
  bool refresh(int s);  // recompute the site's derived values and device speeds

  std::vector<ThermalSiteSpec> sites_;
  std::int64_t origin_utc_us_;
  std::vector<double> load_, base_speed_, speed_;
  std::vector<char> changed_;
  std::vector<int> device_site_;
  std::vector<SiteState> state_;
};

}  // namespace schedsim
