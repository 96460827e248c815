#include "sim/energy.hpp"

#include <cmath>

#include "sim/error.hpp"
#include "sim/simulator.hpp"

namespace schedsim {

namespace {
constexpr double kJoulesPerKwh = 3.6e6;
// W x s x (USD/MWh) -> USD, and W x s x (g/kWh) -> kg: both divide by 3.6e9.
constexpr double kWsPerMwh = 3.6e9;
}  // namespace

EnergyMeter::EnergyMeter(const Simulator& sim, const std::vector<DevicePower>& power_by_type, double pue, const GridSignals* signals)
    : sim_(sim), pue_(pue), signals_(signals) {
  if (!(pue >= 1.0) || !std::isfinite(pue)) throw InputError("energy.pue", "must be a finite number >= 1");
  has_price_ = signals && signals->has(SignalKind::kPrice);
  has_carbon_ = signals && signals->has(SignalKind::kCarbon);
  const ClusterSpec& cluster = sim.view().cluster();
  if (power_by_type.size() != cluster.device_types().size()) throw InvariantError("EnergyMeter: one DevicePower per device type expected");
  idle_w_.resize(static_cast<std::size_t>(cluster.num_devices()));
  dynamic_w_.resize(idle_w_.size());
  for (DeviceId d = 0; d < cluster.num_devices(); ++d) {
    const DevicePower& p = power_by_type[static_cast<std::size_t>(cluster.node(cluster.node_of(d)).type_index)];
    idle_w_[static_cast<std::size_t>(d)] = p.idle_w;
    dynamic_w_[static_cast<std::size_t>(d)] = p.tdp_w - p.idle_w;
    cluster_idle_w_ += p.idle_w;
  }
  total_power_w_ = cluster_idle_w_;
}

void EnergyMeter::integrate_job(Acc& a, Tick from, Tick to) {
  if (to <= from || a.power_w == 0.0) return;
  const double dt = (to - from).seconds();
  a.joules += a.power_w * dt;
  if (has_price_) a.cost_wsusd += a.power_w * signals_->integral(SignalKind::kPrice, from, to);
  if (has_carbon_) a.co2_wsg += a.power_w * signals_->integral(SignalKind::kCarbon, from, to);
}

void EnergyMeter::on_job_end(const JobState& job) {
  const auto slot = static_cast<std::size_t>(&job - &sim_.job(0));
  if (slot >= acc_.size() || acc_[slot].seq != job.arrival_seq) {
    last_job_ = to_use(0.0, 0.0, 0.0);  // never held devices while metered
    return;
  }
  Acc& a = acc_[slot];
  integrate_job(a, last_, job.end);
  a.active = false;
  a.seq = UINT64_MAX;
  last_job_ = to_use(a.joules, a.cost_wsusd, a.co2_wsg);
}

void EnergyMeter::after_event(const Simulator& sim) {
  const Tick now = sim.now();
  if (now > last_) {
    const double dt = (now - last_).seconds();
    const double price_int = has_price_ ? signals_->integral(SignalKind::kPrice, last_, now) : 0.0;
    const double carbon_int = has_carbon_ ? signals_->integral(SignalKind::kCarbon, last_, now) : 0.0;
    total_.add(total_power_w_, dt, price_int, carbon_int);
    jobs_.add(jobs_power_w_, dt, price_int, carbon_int);
    for (std::int32_t s : active_) {
      Acc& a = acc_[static_cast<std::size_t>(s)];
      if (!a.active || a.power_w == 0.0) continue;
      a.joules += a.power_w * dt;
      a.cost_wsusd += a.power_w * price_int;
      a.co2_wsg += a.power_w * carbon_int;
    }
  }
  last_ = now;
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
  jobs_power_w_ = 0.0;
  double jobs_idle_w = 0.0;
  if (unchanged) {
    std::size_t kept = 0;
    for (std::int32_t s : active_) {
      const Acc& a = acc_[static_cast<std::size_t>(s)];
      if (!a.active) continue;  // ended (on_job_end)
      active_[kept++] = s;
      jobs_power_w_ += a.power_w;
      jobs_idle_w += a.idle_w;
    }
    active_.resize(kept);
    total_power_w_ = cluster_idle_w_ - jobs_idle_w + jobs_power_w_;
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
    }
    double u = 0.0;
    if (j.status == JobStatus::kRunning && j.rate(now) > 0.0) u = physics ? physics->compute_utilization(slot) : 1.0;
    a.power_w = a.idle_w + u * a.dynamic_w;
    a.active = true;
    active_.push_back(slot);
    jobs_power_w_ += a.power_w;
    jobs_idle_w += a.idle_w;
  }
  total_power_w_ = cluster_idle_w_ - jobs_idle_w + jobs_power_w_;
}

EnergyUse EnergyMeter::to_use(double joules, double cost, double co2) const {
  EnergyUse u;
  u.energy_kwh = joules * pue_ / kJoulesPerKwh;
  if (has_price_) u.cost_usd = cost * pue_ / kWsPerMwh;
  if (has_carbon_) u.co2_kg = co2 * pue_ / kWsPerMwh;
  return u;
}

EnergyTotals EnergyMeter::totals() const {
  EnergyTotals t;
  t.facility = to_use(total_.joules, total_.cost, total_.co2);
  t.jobs = to_use(jobs_.joules, jobs_.cost, jobs_.co2);
  t.idle = to_use(total_.joules - jobs_.joules, total_.cost - jobs_.cost, total_.co2 - jobs_.co2);
  t.it_energy_kwh = total_.joules / kJoulesPerKwh;
  t.duration_s = last_.seconds();
  return t;
}

}  // namespace schedsim
