// Energy, cost and emissions of a run, integrated exactly between events.
//
// Device power (W) = idle + u x (TDP - idle), where u is the job's compute utilization:
// the compute share of its iteration time from the physics model (a communication-bound
// job draws less), 1 for jobs without a workload profile, 0 while the job saves or
// restores a checkpoint. Unallocated devices draw idle power. Facility power = IT power x
// PUE. Power is constant between events, so the meter integrates it exactly at every
// event (no sampling): energy = sum over intervals of power x length, cost and emissions
// = sum of power x the integral of the price / carbon step function over the interval.
// Units: W, J (internally), kWh, USD (price in USD/MWh), kgCO2 (carbon in gCO2/kWh).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/observer.hpp"
#include "sim/simulator.hpp"
#include "sim/signals.hpp"
#include "sim/tick.hpp"

namespace schedsim {

// Power of one device type.
struct DevicePower {
  double idle_w = 0.0;
  double tdp_w = 0.0;
};

// What one job, or the whole run, used. Cost and emissions are empty without the signal.
struct EnergyUse {
  double energy_kwh = 0.0;  // facility energy (IT x PUE)
  std::optional<double> cost_usd;
  std::optional<double> co2_kg;
};

struct EnergyTotals {
  EnergyUse facility;          // every device, allocated or idle, from t = 0 to the last event
  EnergyUse jobs;              // the part attributed to jobs (the devices they held)
  EnergyUse idle;              // the part of devices no job held
  double it_energy_kwh = 0.0;  // facility / PUE
  double duration_s = 0.0;     // integrated span: 0 to the last event
  // Several datacenters: the facility use of each (empty with one site).
  std::vector<EnergyUse> by_site;
  std::vector<std::string> site_names;
};

// One datacenter as the meter sees it: its devices [first_device, first_device +
// num_devices), PUE and signals (may be null).
struct MeteredSite {
  std::string name;
  int first_device = 0;
  int num_devices = 0;
  double pue = 1.0;
  const GridSignals* signals = nullptr;
};

class EnergyMeter : public Observer {
 public:
  // `power_by_type` is indexed like ClusterSpec::device_types(). `signals` may be null
  // (energy only). The simulator, physics (through the simulator's view) and signals must
  // outlive the meter. Add the meter before observers that read last_job() in on_job_end.
  EnergyMeter(const Simulator& sim, const std::vector<DevicePower>& power_by_type, double pue, const GridSignals* signals);
  // Several datacenters, each with its PUE and signals; `sites` cover the devices in
  // order. Price (carbon) totals need every site to have the price (carbon) signal. A job
  // is charged the PUE and signals of the site it runs in, interval by interval.
  EnergyMeter(const Simulator& sim, const std::vector<DevicePower>& power_by_type, const std::vector<MeteredSite>& sites);

  void on_job_end(const JobState& job) override;
  void after_event(const Simulator& sim) override;

  // The use of the job whose on_job_end was observed last (valid inside later observers'
  // on_job_end of the same job).
  const EnergyUse& last_job() const { return last_job_; }
  EnergyTotals totals() const;
  // Facility power (W) now, as integrated from the last event on.
  double facility_power_w() const;
  // Events after which the power of every running job was recomputed (the others reuse
  // the powers of the event before): tests check the work per event.
  std::uint64_t full_passes() const { return full_passes_; }

  // Saves or restores the state (sim/snapshot_archive.hpp).
  void snapshot(SnapshotArchive& ar) override;

 private:
  struct Acc {  // per job slot
    std::uint64_t seq = UINT64_MAX;
    int site = 0;
    double joules = 0.0, cost_wsusd = 0.0, co2_wsg = 0.0;  // IT W x s, W x s x USD/MWh, W x s x g/kWh
    double power_w = 0.0;      // IT power since the last event, in site 0's PUE units
    double site_power_w = 0.0; // the same in its own site's units (what the site's sums add)
    bool active = false;
    // cached device power sums of the current placement
    std::int64_t placed_since_us = -1;
    double idle_w = 0.0, dynamic_w = 0.0;
  };
  struct Totals {
    double joules = 0.0, cost = 0.0, co2 = 0.0;
    void add(double power_w, double dt_s, double price_int, double carbon_int) {
      joules += power_w * dt_s;
      cost += power_w * price_int;
      co2 += power_w * carbon_int;
    }
  };
  // Per site: state since the last event and running totals (one element for one cluster).
  struct Site {
    std::string name;
    double pue = 1.0;
    const GridSignals* signals = nullptr;
    double weight = 1.0;             // pue / the first site's pue: jobs' sums are kept in site 0's PUE units
    double idle_w = 0.0;             // every device idle
    double total_power_w = 0.0;      // IT power since last_
    double jobs_power_w = 0.0;       // part of it held by jobs
    double price_int = 0.0, carbon_int = 0.0;  // signal integrals over the last interval
    Totals total, jobs;
  };
  EnergyUse to_use(double joules, double cost, double co2, double pue) const;
  void integrate_job(Acc& a, Tick from, Tick to);
  // Each site's IT power from its idle power, its jobs' power and their devices' idle part.
  void set_site_totals(const std::vector<double>* jobs_idle, double jobs_idle_w0);

  const Simulator& sim_;
  std::vector<Site> sites_;
  std::vector<int> device_site_;  // empty with one site
  std::vector<double> site_jobs_idle_;  // scratch: idle power of held devices per site
  bool has_price_ = false, has_carbon_ = false;
  std::vector<double> idle_w_, dynamic_w_;  // by device
  std::vector<Acc> acc_;
  std::vector<std::int32_t> active_;  // slots integrated since the last event, in running-list order
  // The simulator's counters at the last after_event: when only arrivals and completions
  // happened since (no action, no rate change), every running job kept its power.
  SimulatorStats seen_;
  bool seen_valid_ = false;
  std::uint64_t full_passes_ = 0;
  Tick last_;
  EnergyUse last_job_;
};

}  // namespace schedsim
