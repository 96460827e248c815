// The scenario's `energy:` and `signals:` maps (docs/energy.md, docs/config.md), parsed
// strictly; signal files are loaded at parse time so that their errors surface before a
// run and several runs of one scenario share the data.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "world/physics/accelerator_catalogue.hpp"
#include "sim/cluster_spec.hpp"
#include "base/config_node.hpp"
#include "world/energy/energy.hpp"
#include "world/power_caps/power_cap.hpp"
#include "base/signals.hpp"
#include "world/thermal/thermal_config.hpp"
#include "traces/power_sweep_file.hpp"

namespace schedsim {

// A power cap on one device type (`energy.power_caps`).
struct PowerCapConfig {
  std::string type;
  double fraction = 1.0;  // of the type's TDP
  std::string file;       // zeus-style sweep, as written ("" = inline points)
  PowerSweepFilter filter;
  std::shared_ptr<const PowerCurve> curve;
  CappedDevice capped;    // speed and busy power at the cap
};

struct EnergyConfig {
  double pue = 1.0;  // facility / IT power, >= 1
  std::vector<DevicePower> power_by_type;  // by ClusterSpec::device_types() order, from the catalogue (busy power capped)
  std::vector<PowerCapConfig> power_caps;
  std::vector<double> speed_by_type;       // by device type: 1, or the cap's speed
  std::vector<double> load_by_type;        // by device type: busy power / TDP (1, or the cap's)
  std::optional<ThermalConfig> thermal;    // one cluster's outside temperature and cooling

  static EnergyConfig parse(const ConfigNode& node, const std::vector<NodeGroup>& cluster, const AcceleratorCatalogue& catalogue);
  YAML::Node to_yaml() const;
};

// One signal as written: a file, a constant or a synthetic diurnal curve.
struct SignalSpec {
  enum class Kind { kFile, kConstant, kDiurnal } kind = Kind::kConstant;
  std::string file;                 // as written
  std::string time_column, value_column;  // "" = the defaults of traces/signal_files.hpp
  double constant = 0.0;
  double mean = 0.0, amplitude = 0.0, peak_hour_utc = 0.0;  // diurnal
  std::shared_ptr<const StepSeries> series;  // built / loaded

  static SignalSpec parse(const ConfigNode& node, SignalKind kind);
  YAML::Node to_yaml() const;
};

struct SignalsConfig {
  std::string origin_utc = "2023-01-01T00:00:00Z";  // the UTC instant of simulated time 0
  std::int64_t origin_utc_us = 0;
  std::optional<SignalSpec> price, carbon;
  double forecast_noise = 0.0;
  std::optional<std::uint64_t> forecast_seed;  // default: the run's seed

  static SignalsConfig parse(const ConfigNode& node);
  YAML::Node to_yaml() const;
  GridSignals build(std::uint64_t run_seed) const;
};

}  // namespace schedsim
