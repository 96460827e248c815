#include "world/energy/energy.hpp"

#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "sim/simulator.hpp"
#include "world/thermal/thermal.hpp"

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

void EnergyMeter::Entries::push_back(JobSlot s, std::int32_t site_index, Tick now) {
  slot.push_back(s);
  site.push_back(site_index);
  for (std::vector<double>* v : {&power_w, &site_power_w, &idle_w, &joules, &cost_wsusd, &co2_wsg}) v->push_back(0.0);
  since_us.push_back(now.us());
}

void EnergyMeter::Entries::move_last_to(std::size_t i) {
  const std::size_t last = size() - 1;
  if (i != last) {
    slot[i] = slot[last];
    site[i] = site[last];
    for (std::vector<double>* v : {&power_w, &site_power_w, &idle_w, &joules, &cost_wsusd, &co2_wsg}) (*v)[i] = (*v)[last];
    since_us[i] = since_us[last];
  }
  slot.pop_back();
  site.pop_back();
  for (std::vector<double>* v : {&power_w, &site_power_w, &idle_w, &joules, &cost_wsusd, &co2_wsg}) v->pop_back();
  since_us.pop_back();
}

void EnergyMeter::flush(std::size_t i, Tick to) {
  const Tick since = Tick::from_us(entries_.since_us[i]);
  if (to <= since) return;
  entries_.since_us[i] = to.us();
  const double p = entries_.power_w[i];
  if (p == 0.0) return;
  ++job_integrations_;
  entries_.joules[i] += p * (to - since).seconds();
  const GridSignals* signals = sites_[static_cast<std::size_t>(entries_.site[i])].signals;
  if (has_price_) entries_.cost_wsusd[i] += p * signals->integral(SignalKind::kPrice, since, to);
  if (has_carbon_) entries_.co2_wsg[i] += p * signals->integral(SignalKind::kCarbon, since, to);
}

void EnergyMeter::on_job_end(const JobState& job) { use_of_ended(job); }

const EnergyUse& EnergyMeter::use_of_ended(const JobState& job) {
  const auto slot = static_cast<std::size_t>(&job - &sim_.job(0));
  if (static_cast<JobSlot>(slot) == settled_slot_ && job.arrival_seq == settled_seq_) return last_job_;
  settled_slot_ = static_cast<JobSlot>(slot);
  settled_seq_ = job.arrival_seq;
  if (slot >= slots_.size() || slots_[slot].pos < 0 || slots_[slot].seq != job.arrival_seq) {
    last_job_ = to_use(0.0, 0.0, 0.0, sites_[0].pue);  // never held devices while metered
    return last_job_;
  }
  const auto i = static_cast<std::size_t>(slots_[slot].pos);
  flush(i, job.end);
  last_job_ = to_use(entries_.joules[i], entries_.cost_wsusd[i], entries_.co2_wsg[i], sites_[0].pue);
  slots_[slot].seq = UINT64_MAX;
  kill(i);
  return last_job_;
}

void EnergyMeter::add_job_fields(JobFieldList& fields, EnergyMeter* meter) {
  fields.add("energy_kwh", "kWh", [meter](std::ostream& out, const JobState& j) {
    if (meter) out << format_g9(meter->use_of_ended(j).energy_kwh);
  });
  fields.add("cost_usd", "USD", [meter](std::ostream& out, const JobState& j) {
    if (!meter) return;
    const EnergyUse& e = meter->use_of_ended(j);
    if (e.cost_usd) out << format_g9(*e.cost_usd);
  });
  fields.add("co2_kg", "kg", [meter](std::ostream& out, const JobState& j) {
    if (!meter) return;
    const EnergyUse& e = meter->use_of_ended(j);
    if (e.co2_kg) out << format_g9(*e.co2_kg);
  });
}

void EnergyMeter::on_job_changed(JobSlot slot, JobChange what) {
  touched_.push_back(slot);
  if (what == JobChange::kStarted) joined_.push_back(slot);
}

void EnergyMeter::count_in_site(std::size_t i, bool join) {
  Site& site = sites_[static_cast<std::size_t>(entries_.site[i])];
  if (join) {
    site.jobs_power.add(entries_.site_power_w[i]);
    site.jobs_idle.add(entries_.idle_w[i]);
  } else {
    site.jobs_power.remove(entries_.site_power_w[i]);
    site.jobs_idle.remove(entries_.idle_w[i]);
  }
}

void EnergyMeter::kill(std::size_t i) {
  flush(i, last_);
  count_in_site(i, false);
  const JobSlot slot = entries_.slot[i];
  SlotInfo& info = slots_[static_cast<std::size_t>(slot)];
  // A job back in the queue keeps its sums for its next start.
  info.joules = entries_.joules[i];
  info.cost_wsusd = entries_.cost_wsusd[i];
  info.co2_wsg = entries_.co2_wsg[i];
  info.pos = -1;
  entries_.move_last_to(i);
  if (i < entries_.size()) slots_[static_cast<std::size_t>(entries_.slot[i])].pos = static_cast<std::int32_t>(i);
}

void EnergyMeter::evaluate(const Simulator& sim, JobSlot slot, std::size_t i) {
  ++power_evaluations_;
  const JobState& j = sim.job(slot);
  SlotInfo& info = slots_[static_cast<std::size_t>(slot)];
  if (info.placed_since_us != j.placed_since.us()) {
    info.placed_since_us = j.placed_since.us();
    info.idle_w = info.dynamic_w = 0.0;
    for (DeviceId d : j.devices) {
      info.idle_w += idle_w_[static_cast<std::size_t>(d)];
      info.dynamic_w += dynamic_w_[static_cast<std::size_t>(d)];
    }
    info.site = device_site_.empty() || j.devices.empty() ? 0 : device_site_[static_cast<std::size_t>(j.devices[0])];
  }
  double u = 0.0;
  if (j.status == JobStatus::kRunning && j.rate(sim.now()) > 0.0) {
    const PhysicsModel* physics = sim.view().physics();
    u = physics ? physics->compute_utilization(slot) : 1.0;
  }
  const double power_w = info.idle_w + u * info.dynamic_w;
  flush(i, sim.now());  // the stretch at the old power ends here
  count_in_site(i, false);
  entries_.site[i] = info.site;
  entries_.site_power_w[i] = power_w;
  entries_.power_w[i] = power_w * sites_[static_cast<std::size_t>(info.site)].weight;
  entries_.idle_w[i] = info.idle_w;
  count_in_site(i, true);
}

namespace {
bool in_running_list(const JobState& j) { return j.status == JobStatus::kRunning || j.status == JobStatus::kStopping; }
}  // namespace

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
  }
  last_ = now;
  // The state is constant until the next event. Only the jobs the simulator touched since
  // the last call can have a new power, and only those that joined the running list are
  // new entries.
  ++calls_;
  const std::vector<JobSlot>& joined = joined_;
  for (std::size_t k = 0; k < joined.size(); ++k) {
    const auto s = static_cast<std::size_t>(joined[k]);
    if (s >= slots_.size()) slots_.resize(s + 1);
    slots_[s].joined_stamp = calls_;
    slots_[s].last_join = k;
  }
  for (JobSlot slot : touched_) {
    const auto s = static_cast<std::size_t>(slot);
    if (s >= slots_.size()) slots_.resize(s + 1);
    SlotInfo& info = slots_[s];
    if (info.stamp == calls_) continue;
    info.stamp = calls_;
    if (info.pos < 0) continue;
    const JobState& j = sim.job(slot);
    // A job that left the list, or rejoined it, loses its entry (a rejoined one gets a new one below).
    if (sim.is_live(slot) && j.arrival_seq == info.seq && in_running_list(j) && info.joined_stamp != calls_) {
      evaluate(sim, slot, static_cast<std::size_t>(info.pos));
    } else {
      kill(static_cast<std::size_t>(info.pos));
    }
  }
  for (std::size_t k = 0; k < joined.size(); ++k) {
    const JobSlot slot = joined[k];
    SlotInfo& info = slots_[static_cast<std::size_t>(slot)];
    if (info.last_join != k || !sim.is_live(slot)) continue;  // a later join of the same job counts
    const JobState& j = sim.job(slot);
    if (!in_running_list(j)) continue;
    if (info.pos >= 0) kill(static_cast<std::size_t>(info.pos));
    if (info.seq != j.arrival_seq) {  // a new job in this slot
      info.seq = j.arrival_seq;
      info.placed_since_us = -1;
      info.joules = info.cost_wsusd = info.co2_wsg = 0.0;
    }
    const std::size_t i = entries_.size();
    entries_.push_back(slot, info.site, now);
    entries_.joules[i] = info.joules;
    entries_.cost_wsusd[i] = info.cost_wsusd;
    entries_.co2_wsg[i] = info.co2_wsg;
    info.pos = static_cast<std::int32_t>(i);
    evaluate(sim, slot, i);
  }
  touched_.clear();
  joined_.clear();
  // A PUE change (an outside temperature step, a set-point action) re-weights the running
  // jobs of that site: their facility power is their IT power times the PUE, so their
  // stretch at the old weight ends here.
  if (thermal_) {
    thermal_weights_.clear();
    for (const Site& site : sites_) thermal_weights_.push_back(site.weight);
    read_thermal();
    bool changed = false;
    for (std::size_t s = 0; s < sites_.size(); ++s) changed = changed || sites_[s].weight != thermal_weights_[s];
    for (std::size_t i = 0; changed && i < entries_.size(); ++i) {
      const auto site = static_cast<std::size_t>(entries_.site[i]);
      if (sites_[site].weight == thermal_weights_[site]) continue;
      flush(i, now);
      entries_.power_w[i] = entries_.site_power_w[i] * sites_[site].weight;
    }
  }
  update_site_power();
}

void EnergyMeter::update_site_power() {
  for (Site& site : sites_) {
    site.jobs_power_w = site.jobs_power.value();
    site.total_power_w = ExactSum::to_double(ExactSum::to_fixed(site.idle_w) - site.jobs_idle.fixed() + site.jobs_power.fixed());
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

const std::vector<ValueField<EnergyUse>>& energy_use_fields() {
  using F = ValueField<EnergyUse>;
  static const std::vector<F> fields = {
      {"energy_kwh", "kWh", F::Kind::kReal, [](const EnergyUse& u) { return std::optional<double>(u.energy_kwh); }, nullptr},
      {"cost_usd", "USD", F::Kind::kReal, [](const EnergyUse& u) { return u.cost_usd; }, nullptr},
      {"co2_kg", "kg", F::Kind::kReal, [](const EnergyUse& u) { return u.co2_kg; }, nullptr},
  };
  return fields;
}

const std::vector<ValueField<EnergyTotals>>& energy_fields() {
  using F = ValueField<EnergyTotals>;
  static const std::vector<F> fields = [] {
    std::vector<F> f;
    // The facility's use is the object's own energy_kwh, cost_usd and co2_kg.
    for (const ValueField<EnergyUse>& use : energy_use_fields()) {
      const std::function<std::optional<double>(const EnergyUse&)> value = use.value;
      f.push_back({use.name, use.unit, F::Kind::kReal, [value](const EnergyTotals& e) { return value(e.facility); }, nullptr});
    }
    f.push_back({"it_energy_kwh", "kWh", F::Kind::kReal, [](const EnergyTotals& e) { return std::optional<double>(e.it_energy_kwh); }, nullptr});
    f.push_back({"metered_s", "s", F::Kind::kReal, [](const EnergyTotals& e) { return std::optional<double>(e.duration_s); }, nullptr});
    return f;
  }();
  return fields;
}

const std::vector<ValueField<EnergyTotals>>& energy_thermal_fields() {
  using F = ValueField<EnergyTotals>;
  static const std::vector<F> fields = {
      {"cooling_energy_kwh", "kWh", F::Kind::kReal, [](const EnergyTotals& e) { return std::optional<double>(e.cooling_energy_kwh); }, nullptr},
      // Facility over IT energy; null before any IT energy was drawn.
      {"mean_pue", "", F::Kind::kReal,
       [](const EnergyTotals& e) { return e.it_energy_kwh > 0 ? std::optional<double>(e.facility.energy_kwh / e.it_energy_kwh) : std::nullopt; },
       nullptr},
  };
  return fields;
}

}  // namespace schedsim
