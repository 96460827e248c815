// The `thermal:` map (under `energy:` for one cluster, under each datacenter with
// several): outside temperature, cooling model, set-point range and device throttling
// (sim/thermal.hpp, docs/energy.md "Thermal and cooling", docs/config.md). Parsed
// strictly; a temperature file is loaded at parse time.
#pragma once

#include <memory>
#include <string>

#include <yaml-cpp/yaml.h>

#include "base/config_node.hpp"
#include "base/signals.hpp"
#include "world/thermal/thermal.hpp"

namespace schedsim {

struct ThermalConfig {
  enum class Outside { kFile, kSynthetic, kConstant } outside = Outside::kConstant;
  std::string file, time_column = "timestamp", value_column = "temp_c";
  double constant_c = 0.0;
  double mean_c = 0.0, amplitude_c = 0.0, peak_hour_local = 15.0;  // synthetic diurnal, local time
  double utc_offset_h = 0.0;  // local time of the synthetic curve (a datacenter's own offset)
  double setpoint_c = 22.0, min_setpoint_c = 18.0, max_setpoint_c = 35.0;
  CoolingSpec cooling;  // other_fraction is set from the static PUE by the caller
  ThrottleSpec throttle;
  std::shared_ptr<const StepSeries> outside_c;  // built / loaded

  // `utc_offset_h` is the datacenter's; with `offset_key` the map may set its own
  // (`energy.thermal.utc_offset_h`, one cluster).
  static ThermalConfig parse(const ConfigNode& node, double utc_offset_h, bool offset_key);
  YAML::Node to_yaml(bool offset_key) const;
  // The site spec for the thermal model, with the non-cooling overhead from `pue`.
  ThermalSiteSpec site(const std::string& name, int first_device, int num_devices, double pue) const;
};

}  // namespace schedsim
