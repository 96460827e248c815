#include "world/thermal/thermal_meter.hpp"

#include <algorithm>

#include "sim/simulator.hpp"
#include "sim/snapshot_archive.hpp"

namespace schedsim {

ThermalMeter::ThermalMeter(const ThermalModel& model) : model_(model), sites_(static_cast<std::size_t>(model.num_sites())) {
  read(nullptr);
}

void ThermalMeter::read(const Simulator* sim) {
  for (std::size_t i = 0; i < sites_.size(); ++i) {
    Site& s = sites_[i];
    s.pue = model_.pue(static_cast<int>(i));
    s.outside_c = model_.outside_c(static_cast<int>(i));
    s.setpoint_c = model_.setpoint_c(static_cast<int>(i));
    s.throttled_busy = 0;
  }
  if (!sim) return;
  for (JobSlot slot = sim->first_running(); slot != kNoJob; slot = sim->job(slot).next_in_list) {
    const JobState& j = sim->job(slot);
    for (DeviceId d : j.devices) {
      if (model_.throttled(d)) ++sites_[static_cast<std::size_t>(model_.site_of_device(d))].throttled_busy;
    }
  }
}

void ThermalMeter::after_event(const Simulator& sim) {
  const Tick now = sim.now();
  if (now > last_) {
    const double dt = (now - last_).seconds();
    for (Site& s : sites_) {
      s.max_pue = std::max(s.max_pue, s.pue);
      s.outside_cs += s.outside_c * dt;
      s.setpoint_cs += s.setpoint_c * dt;
      s.throttled_device_s += s.throttled_busy * dt;
    }
  }
  last_ = now;
  read(&sim);
}

std::vector<ThermalSiteTotals> ThermalMeter::totals() const {
  std::vector<ThermalSiteTotals> out;
  const double span_s = last_.seconds();
  for (std::size_t i = 0; i < sites_.size(); ++i) {
    const Site& s = sites_[i];
    ThermalSiteTotals t;
    t.name = model_.site(static_cast<int>(i)).name;
    t.max_pue = span_s > 0 ? s.max_pue : s.pue;
    t.mean_outside_c = span_s > 0 ? s.outside_cs / span_s : s.outside_c;
    t.mean_setpoint_c = span_s > 0 ? s.setpoint_cs / span_s : s.setpoint_c;
    t.setpoint_changes = model_.setpoint_changes(static_cast<int>(i));
    t.throttled_device_hours = s.throttled_device_s / 3600.0;
    out.push_back(t);
  }
  return out;
}

// Snapshots (sim/snapshot_archive.hpp): moved here from sim/simulator_snapshot.cpp, which
// includes no world model.
void ThermalMeter::snapshot(SnapshotArchive& ar) {
  ar.section("thermal meter");
  ar.io_each(sites_, [&](Site& st) {
    ar(st.pue, st.outside_c, st.setpoint_c, st.throttled_busy, st.max_pue, st.outside_cs, st.setpoint_cs, st.throttled_device_s);
  });
  ar(last_);
}

const std::vector<ValueField<ThermalSiteReport>>& thermal_site_fields() {
  using F = ValueField<ThermalSiteReport>;
  using R = ThermalSiteReport;
  auto real = [](double v) { return std::optional<double>(v); };
  static const std::vector<F> fields = {
      {"it_energy_kwh", "kWh", F::Kind::kReal, [real](const R& r) { return real(r.it_energy_kwh); }, nullptr},
      {"cooling_energy_kwh", "kWh", F::Kind::kReal, [real](const R& r) { return real(r.cooling_energy_kwh); }, nullptr},
      // Facility over IT energy; null before the site drew any IT energy.
      {"mean_pue", "", F::Kind::kReal,
       [](const R& r) { return r.it_energy_kwh > 0 ? std::optional<double>(r.facility_energy_kwh / r.it_energy_kwh) : std::nullopt; }, nullptr},
      {"max_pue", "", F::Kind::kReal, [real](const R& r) { return real(r.thermal->max_pue); }, nullptr},
      {"mean_outside_c", "C", F::Kind::kReal, [real](const R& r) { return real(r.thermal->mean_outside_c); }, nullptr},
      {"mean_setpoint_c", "C", F::Kind::kReal, [real](const R& r) { return real(r.thermal->mean_setpoint_c); }, nullptr},
      {"setpoint_changes", "", F::Kind::kCount,
       [](const R& r) { return std::optional<double>(static_cast<double>(r.thermal->setpoint_changes)); }, nullptr},
      {"throttled_device_hours", "h", F::Kind::kReal, [real](const R& r) { return real(r.thermal->throttled_device_hours); }, nullptr},
  };
  return fields;
}

}  // namespace schedsim
