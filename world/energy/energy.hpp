// Energy, cost and emissions of a run, integrated exactly between events.
//
// Device power (W) = idle + u x (TDP - idle), where u is the job's compute utilization:
// the compute share of its iteration time from the physics model (a communication-bound
// job draws less), 1 for jobs without a workload profile, 0 while the job saves or
// restores a checkpoint. Unallocated devices draw idle power. Facility power = IT power x
// PUE. Power is constant between events, so the meter integrates it exactly (no
// sampling): a job's energy = sum over the stretches of constant power of power x length,
// cost and emissions = power x the integral of the price / carbon step function over the
// stretch. A job's sums change only with its own power, so the work per event follows the
// jobs whose state changed, and a job's numbers do not depend on other jobs' events. The
// cluster's power is an exact sum of the jobs' powers (sim/exact_sum.hpp), integrated
// over every interval between events.
// Units: W, J (internally), kWh, USD (price in USD/MWh), kgCO2 (carbon in gCO2/kWh).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/exact_sum.hpp"
#include "sim/invariant_checker.hpp"
#include "sim/observer.hpp"
#include "sim/output_fields.hpp"
#include "sim/simulator.hpp"
#include "base/signals.hpp"
#include "base/tick.hpp"

namespace schedsim {

class ThermalModel;

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
  // Thermal model (sim/thermal.hpp): the facility energy uses each interval's PUE; what
  // the cooling drew, and each site's IT and cooling energy (one element per site).
  bool thermal = false;
  double cooling_energy_kwh = 0.0;
  std::vector<double> site_it_kwh, site_cooling_kwh;
};

// results.json's "energy" numbers as field tables (sim/output_fields.hpp), in file order:
// one EnergyUse (the facility's, the jobs', the idle devices', each datacenter's); the
// totals' own fields (the facility's use first); and "energy.thermal"'s top-level fields.
// The writer nests "jobs", "idle_devices", "by_datacenter" and "thermal" after them.
const std::vector<ValueField<EnergyUse>>& energy_use_fields();
const std::vector<ValueField<EnergyTotals>>& energy_fields();
const std::vector<ValueField<EnergyTotals>>& energy_thermal_fields();

// One datacenter as the meter sees it: its devices [first_device, first_device +
// num_devices), PUE and signals (may be null).
struct MeteredSite {
  std::string name;
  int first_device = 0;
  int num_devices = 0;
  double pue = 1.0;
  const GridSignals* signals = nullptr;
  // With a thermal model the PUE is its site `thermal_site`'s, interval by interval
  // (`pue` is then unused); every site or none has one.
  const ThermalModel* thermal = nullptr;
  int thermal_site = -1;
};

class EnergyMeter : public Observer, public EnergyLedger {
 public:
  // `power_by_type` is indexed like ClusterSpec::device_types(). `signals` may be null
  // (energy only). The simulator, physics (through the simulator's view) and signals must
  // outlive the meter. Observers that need an ending job's use call use_of_ended() in
  // their on_job_end, before or after the meter's own: the order of registration does
  // not matter.
  EnergyMeter(const Simulator& sim, const std::vector<DevicePower>& power_by_type, double pue, const GridSignals* signals);
  // Several datacenters, each with its PUE and signals; `sites` cover the devices in
  // order. Price (carbon) totals need every site to have the price (carbon) signal. A job
  // is charged the PUE and signals of the site it runs in, interval by interval.
  EnergyMeter(const Simulator& sim, const std::vector<DevicePower>& power_by_type, const std::vector<MeteredSite>& sites);

  void on_job_end(const JobState& job) override;
  void on_job_changed(JobSlot slot, JobChange what) override;
  bool wants_job_changes() const override { return true; }
  void after_event(const Simulator& sim) override;

  // The use of `job`, which is ending (call it from on_job_end, the kernel's record of
  // the job): settled the first time it is asked for, by the meter's own on_job_end or
  // another observer's, whichever the kernel calls first.
  const EnergyUse& use_of_ended(const JobState& job);
  // The jobs.csv columns the meter contributes (energy_kwh, cost_usd, co2_kg; docs/metrics.md),
  // pulled from `meter` as each row is written. With no meter (null) the columns are
  // there and empty, as are cost and emissions without the price / carbon signal.
  static void add_job_fields(JobFieldList& fields, EnergyMeter* meter);
  // The use of the job settled last (use_of_ended; valid inside observers' on_job_end of
  // the same job once the meter's own on_job_end ran).
  const EnergyUse& last_job() const { return last_job_; }
  EnergyTotals totals() const;
  // EnergyLedger (what the invariant checker reads).
  double facility_kwh() const override { return totals().facility.energy_kwh; }
  double jobs_kwh() const override { return totals().jobs.energy_kwh; }
  double ended_job_kwh(const JobState& job) override { return use_of_ended(job).energy_kwh; }
  // Facility power (W) now, as integrated from the last event on.
  double facility_power_w() const;
  // Job power evaluations so far: one per job whose state changed at an event (pushed
  // by on_job_changed) and per job that started, none for the others. Tests check
  // that the work per event follows the changed jobs, not the running ones.
  std::uint64_t power_evaluations() const { return power_evaluations_; }
  // Stretches of constant power integrated into a job's sums so far: one when the job's
  // power changes, it leaves the running list or its site's PUE changes, none for the
  // other jobs at an event.
  std::uint64_t job_integrations() const { return job_integrations_; }

  // Saves or restores the state (sim/snapshot_archive.hpp).
  void snapshot(SnapshotArchive& ar) override;

 private:
  struct SlotInfo {  // per job slot
    std::uint64_t seq = UINT64_MAX;  // arrival_seq of the job the entry belongs to
    std::int32_t pos = -1;           // its entry, -1 = none
    std::uint64_t stamp = 0;         // after_event call that last visited it
    std::uint64_t joined_stamp = 0;  // after_event call whose joined_ list has it
    // cached device power sums of the current placement
    std::int64_t placed_since_us = -1;
    std::int32_t site = 0;
    double idle_w = 0.0, dynamic_w = 0.0;
    // sums of a job back in the queue (its entry is gone; they continue when it restarts)
    double joules = 0.0, cost_wsusd = 0.0, co2_wsg = 0.0;
    std::size_t last_join = 0;  // index of its last join in joined_
  };
  // The metered jobs (any order), one array per field. Each entry's sums are integrated
  // up to `since_us`; its power is constant from there on, so they are brought up to date
  // (flush) only when the power changes, the job leaves, or its site's PUE changes.
  struct Entries {
    std::vector<JobSlot> slot;
    std::vector<std::int32_t> site;
    std::vector<double> power_w;         // IT power since `since_us`, in site 0's PUE units
    std::vector<double> site_power_w;    // the same in its own site's units (what the site's sums add)
    std::vector<double> idle_w;          // idle power of its devices
    std::vector<double> joules, cost_wsusd, co2_wsg;  // IT W x s, W x s x USD/MWh, W x s x g/kWh
    std::vector<std::int64_t> since_us;  // the sums cover [.., since_us)
    std::size_t size() const { return slot.size(); }
    void push_back(JobSlot s, std::int32_t site_index, Tick now);
    // Moves the last entry into i and drops the last (the order carries no meaning).
    void move_last_to(std::size_t i);
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
    // The jobs' power and their devices' idle power, summed exactly (order-independent).
    ExactSum jobs_power, jobs_idle;
    double price_int = 0.0, carbon_int = 0.0;  // signal integrals over the last interval
    Totals total, jobs;
    // Thermal model: the PUE and cooling share since the last event; sums in IT joules.
    const ThermalModel* thermal = nullptr;
    int thermal_site = -1;
    double pue_now = 1.0, cooling_now = 0.0;
    double it_joules = 0.0, cooling_joules = 0.0;
  };
  // Reads each site's PUE from its thermal model (constant until the next event).
  void read_thermal();
  void add_thermal(EnergyTotals& t) const;
  EnergyUse to_use(double joules, double cost, double co2, double pue) const;
  // Integrates entry i's power from its `since_us` to `to`.
  void flush(std::size_t i, Tick to);
  // The power of the job in `slot` now, written to its entry.
  void evaluate(const Simulator& sim, JobSlot slot, std::size_t i);
  void kill(std::size_t i);
  // Entry i's site power and idle power join (`join`) or leave its site's exact sums.
  void count_in_site(std::size_t i, bool join);
  // Each site's jobs' power and total IT power from its exact sums (end of after_event).
  void update_site_power();

  const Simulator& sim_;
  std::vector<Site> sites_;
  std::vector<int> device_site_;  // empty with one site
  bool has_price_ = false, has_carbon_ = false;
  bool thermal_ = false;  // every site has a thermal model: sums are in facility units
  std::vector<double> thermal_weights_;  // scratch: the sites' weights before read_thermal()
  std::vector<double> idle_w_, dynamic_w_;  // by device
  Entries entries_;
  std::vector<SlotInfo> slots_;
  std::uint64_t calls_ = 0;        // after_event calls
  std::uint64_t power_evaluations_ = 0;
  std::uint64_t job_integrations_ = 0;
  Tick last_;
  EnergyUse last_job_;
  // The job last_job_ belongs to (use_of_ended settles each ending job once).
  JobSlot settled_slot_ = kNoJob;
  std::uint64_t settled_seq_ = UINT64_MAX;
  // Pushed since the last after_event: the jobs whose placement, rate, stall or status
  // changed (in order, repeats possible) and those that joined the running list (in the
  // order they joined). Empty between instants (not in the snapshot).
  std::vector<JobSlot> touched_, joined_;
};

}  // namespace schedsim
