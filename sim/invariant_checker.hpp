// An observer that verifies the kernel's invariants after every event: no device held
// by two jobs or by a job that is not running, fractional shares within each device's
// 1000 milli and equal to the cluster's count, free counts that match the device map,
// time that never goes backwards, jobs that start after they arrive and end after they
// start, work conserved (a job's run time equals its work at its rate), the physics
// model's own state (link loads equal the sum of their flows, within capacity, max-min
// fair), and, with watch_energy(), energy conserved (the energy attributed to jobs is
// the sum of the jobs' own, never more than the facility's, and never decreases).
// A violation throws InvariantError whose message ends with the last events seen, so
// the run stops there with the context of the bug. O(devices + jobs) per event: for
// tests and `--check-invariants`, not for production sweeps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/observer.hpp"
#include "base/tick.hpp"

namespace schedsim {

class ClusterState;
class PhysicsModel;

// What the checker reads of an energy meter (world/energy/energy.hpp's EnergyMeter
// implements it), so that the kernel's checker knows no world model.
class EnergyLedger {
 public:
  virtual ~EnergyLedger() = default;
  virtual double facility_kwh() const = 0;  // the whole facility's energy so far
  virtual double jobs_kwh() const = 0;      // the part attributed to jobs so far
  // The ending job's own energy (settled once; called from on_job_end).
  virtual double ended_job_kwh(const JobState& job) = 0;
};

class InvariantChecker : public Observer {
 public:
  // `log_events`: how many of the last events a violation message lists.
  explicit InvariantChecker(std::size_t log_events = 20);

  // Also checks the meter's energy accounts after every event. Add the meter to the
  // simulator before the checker (the checker reads each ended job's use).
  void watch_energy(EnergyLedger& meter) { meter_ = &meter; }
  // It reads the energy meter's totals in after_event: after every meter.
  ObserverStage stage() const override { return ObserverStage::kReader; }

  void on_job_arrival(const JobState& job) override;
  void on_job_start(const JobState& job) override;
  void on_job_end(const JobState& job) override;
  void on_job_dropped(const JobSpec& job, const std::string& reason) override;
  void after_event(const Simulator& sim) override;

  // The per-event checks on explicit state (what after_event runs on the simulator's):
  // `jobs` are the jobs in the system, `running` and `pending` the counts the kernel
  // keeps, `service_devices` the devices each inference service holds (service s owns
  // them as Simulator::service_owner(s)). Public so that tests can hand it a broken state.
  void check_state(Tick now, const ClusterState& state, const std::vector<const JobState*>& jobs, std::size_t running, std::size_t pending,
                   const PhysicsModel* physics, const std::vector<std::vector<DeviceId>>& service_devices = {});

  std::uint64_t checks() const { return checks_; }
  // The last events, oldest first, one line each ("t=12.5 s start job 'a' on 2 devices").
  std::vector<std::string> recent_events() const;

  // Saves or restores the state (sim/snapshot_archive.hpp).
  void snapshot(SnapshotArchive& ar) override;

 private:
  struct Entry {
    Tick time;
    std::uint64_t seq = 0;  // event number (after_event count) it belongs to
    char kind = 0;          // a(rrival), s(tart), e(nd), d(ropped), x (after an event)
    std::string job;
    std::int64_t a = 0, b = 0;  // kind-specific: devices / status / counts
  };
  void log(Entry e);
  [[noreturn]] void fail(const std::string& what) const;
  [[noreturn]] void fail_job(const JobState& job, const std::string& what) const;
  void check_energy(const Simulator& sim);

  Tick last_time_;
  std::uint64_t checks_ = 0;
  std::vector<std::int64_t> seen_owner_;
  std::vector<int> seen_milli_;  // shares held by running jobs, by device
  std::vector<const JobState*> jobs_;  // scratch
  std::vector<std::vector<DeviceId>> services_;  // scratch: devices held by each inference service
  // Ring buffer of the last events.
  std::vector<Entry> log_;
  std::size_t log_next_ = 0, log_size_ = 0;
  // Energy.
  EnergyLedger* meter_ = nullptr;
  double ended_jobs_kwh_ = 0.0;  // sum of ended jobs' own energy
  double last_facility_kwh_ = 0.0, last_jobs_kwh_ = 0.0;
};

}  // namespace schedsim
