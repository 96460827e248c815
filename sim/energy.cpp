#include "sim/energy.hpp"

#include <cmath>

#include "sim/error.hpp"
#include "sim/simulator.hpp"
#include "sim/thermal.hpp"

namespace schedsim {

namespace {
constexpr double kJoulesPerKwh = 3.6e6;
// W x s x (USD/MWh) -> USD, and W x s x (g/kWh) -> kg: both divide by 3.6e9.
constexpr double kWsPerMwh = 3.6e9;
}  // namespace

EnergyMeter::EnergyMeter(const Simulator& sim, const std::vector<DevicePower>& power_by_type, double pue, const GridSignals* signals)
    : EnergyMeter(sim, power_by_type, {MeteredSite{"", 0, sim.view().cluster().num_devices(), pue, signals}}) {}

EnergyMeter::EnergyMeter(const Simulator& sim, const std::vector<DevicePower>& power_by_type, const std::vector<MeteredSite>& sites)
    : sim_(sim) {
  if (sites.empty()) throw InvariantError("EnergyMeter: no site");
  has_price_ = has_carbon_ = true;
  for (const MeteredSite& m : sites) {
    if (!(m.pue >= 1.0) || !std::isfinite(m.pue)) throw InputError("energy.pue", "must be a finite number >= 1");
    has_price_ = has_price_ && m.signals && m.signals->has(SignalKind::kPrice);
    has_carbon_ = has_carbon_ && m.signals && m.signals->has(SignalKind::kCarbon);
    Site site;
    site.name = m.name;
    site.pue = m.pue;
    site.signals = m.signals;
    site.weight = m.pue / sites[0].pue;
    if ((m.thermal != nullptr) != (sites[0].thermal != nullptr)) throw InvariantError("EnergyMeter: every site or none has a thermal model");
    if (m.thermal) {  // sums are kept in facility units (each interval's PUE applied as it is integrated)
      thermal_ = true;
      site.thermal = m.thermal;
      site.thermal_site = m.thermal_site;
      site.pue = 1.0;
    }
    sites_.push_back(site);
  }
  const ClusterSpec& cluster = sim.view().cluster();
  if (power_by_type.size() != cluster.device_types().size()) throw InvariantError("EnergyMeter: one DevicePower per device type expected");
  idle_w_.resize(static_cast<std::size_t>(cluster.num_devices()));
  dynamic_w_.resize(idle_w_.size());
  if (sites.size() > 1) device_site_.assign(idle_w_.size(), -1);
  for (std::size_t s = 0; s < sites.size(); ++s) {
    for (DeviceId d = sites[s].first_device; d < sites[s].first_device + sites[s].num_devices; ++d) {
      if (d < 0 || d >= cluster.num_devices() || (sites.size() > 1 && device_site_[static_cast<std::size_t>(d)] >= 0)) {
        throw InvariantError("EnergyMeter: site device ranges must cover the cluster once");
      }
      const DevicePower& p = power_by_type[static_cast<std::size_t>(cluster.node(cluster.node_of(d)).type_index)];
      idle_w_[static_cast<std::size_t>(d)] = p.idle_w;
      dynamic_w_[static_cast<std::size_t>(d)] = p.tdp_w - p.idle_w;
      sites_[s].idle_w += p.idle_w;
      if (sites.size() > 1) device_site_[static_cast<std::size_t>(d)] = static_cast<int>(s);
    }
  }
  for (Site& site : sites_) site.total_power_w = site.idle_w;
  if (thermal_) read_thermal();
}

void EnergyMeter::read_thermal() {
  for (Site& site : sites_) {
    site.pue_now = site.thermal->pue(site.thermal_site);
    site.cooling_now = site.thermal->cooling_fraction(site.thermal_site);
    site.weight = site.pue_now;
  }
}

void EnergyMeter::integrate_job(Acc& a, Tick from, Tick to) {
  if (to <= from || a.power_w == 0.0) return;
  const double dt = (to - from).seconds();
  const GridSignals* signals = sites_[static_cast<std::size_t>(a.site)].signals;
  a.joules += a.power_w * dt;
  if (has_price_) a.cost_wsusd += a.power_w * signals->integral(SignalKind::kPrice, from, to);
  if (has_carbon_) a.co2_wsg += a.power_w * signals->integral(SignalKind::kCarbon, from, to);
}

void EnergyMeter::on_job_end(const JobState& job) {
  const auto slot = static_cast<std::size_t>(&job - &sim_.job(0));
  if (slot >= acc_.size() || acc_[slot].seq != job.arrival_seq) {
    last_job_ = to_use(0.0, 0.0, 0.0, sites_[0].pue);  // never held devices while metered
    return;
  }
  Acc& a = acc_[slot];
  integrate_job(a, last_, job.end);
  a.active = false;
  a.seq = UINT64_MAX;
  last_job_ = to_use(a.joules, a.cost_wsusd, a.co2_wsg, sites_[0].pue);
}

void EnergyMeter::after_event(const Simulator& sim) {
  const Tick now = sim.now();
  if (now > last_) {
    const double dt = (now - last_).seconds();
    for (Site& site : sites_) {
      site.price_int = has_price_ ? site.signals->integral(SignalKind::kPrice, last_, now) : 0.0;
      site.carbon_int = has_carbon_ ? site.signals->integral(SignalKind::kCarbon, last_, now) : 0.0;
      if (thermal_) {
        site.total.add(site.total_power_w * site.pue_now, dt, site.price_int, site.carbon_int);
        site.jobs.add(site.jobs_power_w * site.pue_now, dt, site.price_int, site.carbon_int);
        site.it_joules += site.total_power_w * dt;
        site.cooling_joules += site.total_power_w * site.cooling_now * dt;
      } else {
        site.total.add(site.total_power_w, dt, site.price_int, site.carbon_int);
        site.jobs.add(site.jobs_power_w, dt, site.price_int, site.carbon_int);
      }
    }
    for (std::int32_t s : active_) {
      Acc& a = acc_[static_cast<std::size_t>(s)];
      if (!a.active || a.power_w == 0.0) continue;
      const Site& site = sites_[static_cast<std::size_t>(a.site)];
      a.joules += a.power_w * dt;
      a.cost_wsusd += a.power_w * site.price_int;
      a.co2_wsg += a.power_w * site.carbon_int;
    }
  }
  last_ = now;
  // A PUE change comes with an event other than an arrival or a completion (an outside
  // temperature step, a set-point action), so the full pass below re-weights every job.
  if (thermal_) read_thermal();
  double jobs_idle_w0 = 0.0;  // site 0's, kept in a local as before sites existed
  for (Site& site : sites_) site.jobs_power_w = 0.0;
  std::vector<double>* jobs_idle = nullptr;
  if (sites_.size() > 1) {
    site_jobs_idle_.assign(sites_.size(), 0.0);
    jobs_idle = &site_jobs_idle_;
  }
  // The state is constant until the next event. When only arrivals and completions
  // happened since the last event (no action, no rate change, no other event), the jobs
  // still running kept their power: drop the ended ones and re-add the same powers in
  // the same (running-list) order, which gives bit-identical sums without walking the
  // jobs. Otherwise recompute the power of every job that holds devices.
  const SimulatorStats& st = sim.stats();
  const bool unchanged = seen_valid_ && st.actions == seen_.actions && st.rate_changes == seen_.rate_changes &&
                         st.events - seen_.events == (st.jobs_arrived - seen_.jobs_arrived) + (st.jobs_completed - seen_.jobs_completed);
  seen_ = st;
  seen_valid_ = true;
  if (unchanged) {
    std::size_t kept = 0;
    for (std::int32_t s : active_) {
      const Acc& a = acc_[static_cast<std::size_t>(s)];
      if (!a.active) continue;  // ended (on_job_end)
      active_[kept++] = s;
      sites_[static_cast<std::size_t>(a.site)].jobs_power_w += a.site_power_w;
      if (jobs_idle) (*jobs_idle)[static_cast<std::size_t>(a.site)] += a.idle_w;
      else jobs_idle_w0 += a.idle_w;
    }
    active_.resize(kept);
    set_site_totals(jobs_idle, jobs_idle_w0);
    return;
  }
  ++full_passes_;
  for (std::int32_t s : active_) acc_[static_cast<std::size_t>(s)].active = false;
  active_.clear();
  const PhysicsModel* physics = sim.view().physics();
  for (JobSlot slot = sim.first_running(); slot != kNoJob; slot = sim.job(slot).next_in_list) {
    const JobState& j = sim.job(slot);
    if (static_cast<std::size_t>(slot) >= acc_.size()) acc_.resize(static_cast<std::size_t>(slot) + 1);
    Acc& a = acc_[static_cast<std::size_t>(slot)];
    if (a.seq != j.arrival_seq) a = Acc{j.arrival_seq};
    if (a.placed_since_us != j.placed_since.us()) {
      a.placed_since_us = j.placed_since.us();
      a.idle_w = a.dynamic_w = 0.0;
      for (DeviceId d : j.devices) {
        a.idle_w += idle_w_[static_cast<std::size_t>(d)];
        a.dynamic_w += dynamic_w_[static_cast<std::size_t>(d)];
      }
      a.site = device_site_.empty() || j.devices.empty() ? 0 : device_site_[static_cast<std::size_t>(j.devices[0])];
    }
    double u = 0.0;
    if (j.status == JobStatus::kRunning && j.rate(now) > 0.0) u = physics ? physics->compute_utilization(slot) : 1.0;
    Site& site = sites_[static_cast<std::size_t>(a.site)];
    const double power_w = a.idle_w + u * a.dynamic_w;
    a.site_power_w = power_w;
    a.power_w = power_w * site.weight;
    a.active = true;
    active_.push_back(slot);
    site.jobs_power_w += power_w;
    if (jobs_idle) (*jobs_idle)[static_cast<std::size_t>(a.site)] += a.idle_w;
    else jobs_idle_w0 += a.idle_w;
  }
  set_site_totals(jobs_idle, jobs_idle_w0);
}

void EnergyMeter::set_site_totals(const std::vector<double>* jobs_idle, double jobs_idle_w0) {
  for (std::size_t s = 0; s < sites_.size(); ++s) {
    Site& site = sites_[s];
    site.total_power_w = site.idle_w - (jobs_idle ? (*jobs_idle)[s] : jobs_idle_w0) + site.jobs_power_w;
  }
}

double EnergyMeter::facility_power_w() const {
  double w = 0.0;
  for (const Site& site : sites_) w += site.total_power_w * (thermal_ ? site.pue_now : site.pue);
  return w;
}

EnergyUse EnergyMeter::to_use(double joules, double cost, double co2, double pue) const {
  EnergyUse u;
  u.energy_kwh = joules * pue / kJoulesPerKwh;
  if (has_price_) u.cost_usd = cost * pue / kWsPerMwh;
  if (has_carbon_) u.co2_kg = co2 * pue / kWsPerMwh;
  return u;
}

namespace {
void add_use(EnergyUse& into, const EnergyUse& u) {
  into.energy_kwh += u.energy_kwh;
  if (u.cost_usd) into.cost_usd = into.cost_usd.value_or(0.0) + *u.cost_usd;
  if (u.co2_kg) into.co2_kg = into.co2_kg.value_or(0.0) + *u.co2_kg;
}
}  // namespace

EnergyTotals EnergyMeter::totals() const {
  EnergyTotals t;
  t.duration_s = last_.seconds();
  if (sites_.size() == 1) {
    const Site& s = sites_[0];
    t.facility = to_use(s.total.joules, s.total.cost, s.total.co2, s.pue);
    t.jobs = to_use(s.jobs.joules, s.jobs.cost, s.jobs.co2, s.pue);
    t.idle = to_use(s.total.joules - s.jobs.joules, s.total.cost - s.jobs.cost, s.total.co2 - s.jobs.co2, s.pue);
    t.it_energy_kwh = s.total.joules / kJoulesPerKwh;
    if (thermal_) add_thermal(t);
    return t;
  }
  double it_joules = 0.0;
  for (const Site& s : sites_) {
    const EnergyUse facility = to_use(s.total.joules, s.total.cost, s.total.co2, s.pue);
    add_use(t.facility, facility);
    add_use(t.jobs, to_use(s.jobs.joules, s.jobs.cost, s.jobs.co2, s.pue));
    add_use(t.idle, to_use(s.total.joules - s.jobs.joules, s.total.cost - s.jobs.cost, s.total.co2 - s.jobs.co2, s.pue));
    t.by_site.push_back(facility);
    t.site_names.push_back(s.name);
    it_joules += s.total.joules;
  }
  t.it_energy_kwh = it_joules / kJoulesPerKwh;
  if (thermal_) add_thermal(t);
  return t;
}

void EnergyMeter::add_thermal(EnergyTotals& t) const {
  t.thermal = true;
  t.it_energy_kwh = 0.0;
  for (const Site& s : sites_) {
    t.it_energy_kwh += s.it_joules / kJoulesPerKwh;
    t.cooling_energy_kwh += s.cooling_joules / kJoulesPerKwh;
    t.site_it_kwh.push_back(s.it_joules / kJoulesPerKwh);
    t.site_cooling_kwh.push_back(s.cooling_joules / kJoulesPerKwh);
  }
}

}  // namespace schedsim
