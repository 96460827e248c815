// What the thermal model did over a run, per datacenter: the highest PUE, the time-mean
// outside temperature and set-point, set-point changes, and the device-hours that jobs
// ran on throttled devices. Integrated exactly between events like the energy meter
// (the state is constant between them); the energy and cooling energy are the energy
// meter's (sim/energy.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/observer.hpp"
#include "sim/output_fields.hpp"
#include "world/thermal/thermal.hpp"
#include "base/tick.hpp"

namespace schedsim {

struct ThermalSiteTotals {
  std::string name;
  double max_pue = 1.0;                 // over the metered span (time 0 to the last event)
  double mean_outside_c = 0.0;          // time-mean
  double mean_setpoint_c = 0.0;         // time-mean
  std::uint64_t setpoint_changes = 0;   // set-point actions that changed it
  double throttled_device_hours = 0.0;  // devices held by running jobs while throttled x time
};

// One datacenter of results.json's energy.thermal.by_datacenter: the thermal meter's
// totals and the site's energies from the energy meter.
struct ThermalSiteReport {
  const ThermalSiteTotals* thermal = nullptr;
  double facility_energy_kwh = 0.0;
  double it_energy_kwh = 0.0;
  double cooling_energy_kwh = 0.0;
};
// Its numbers as a field table (sim/output_fields.hpp), in file order after the site's "name".
const std::vector<ValueField<ThermalSiteReport>>& thermal_site_fields();

class ThermalMeter : public Observer {
 public:
  explicit ThermalMeter(const ThermalModel& model);
  void after_event(const Simulator& sim) override;
  std::vector<ThermalSiteTotals> totals() const;

  void snapshot(SnapshotArchive& ar) override;

 private:
  struct Site {
    double pue = 1.0, outside_c = 0.0, setpoint_c = 0.0;  // since the last event
    int throttled_busy = 0;
    double max_pue = 0.0, outside_cs = 0.0, setpoint_cs = 0.0, throttled_device_s = 0.0;
  };
  void read(const Simulator* sim);

  const ThermalModel& model_;
  std::vector<Site> sites_;
  Tick last_;
};

}  // namespace schedsim
