// spatial: routes each job to a datacenter, then places it there (first fit inside the
// datacenter). Jobs are taken in a queue order (any of compose's orders: fifo, sjf, ...);
// each goes to the datacenter, among those it is allowed in and that have room for it
// now, with the lowest forecast mean signal (carbon or price) over its estimated run
// (`route: signal`), or only to its home datacenter (`route: home`: the carbon-agnostic
// baseline in which every region runs its own jobs). A job that fits nowhere it may go
// blocks those datacenters for the jobs behind it in this decision (head-of-line
// blocking per datacenter, so no job starves behind smaller ones).
//
// Without a geography the whole cluster is one datacenter with the run's signals, so the
// policy is an ordered first-fit scheduler there.
//
// spatio-temporal: temporal shifting and spatial routing together. When a job first
// enters the queue, for every datacenter it may run in, the best start within its slack
// (as carbon-aware computes it, from that datacenter's forecast); the (datacenter, start)
// pair with the lowest mean signal wins. The job is held until that start, then routed
// with that datacenter preferred (another one with room, the cleanest, if it is full).
#pragma once

#include <memory>
#include <set>
#include <tuple>
#include <vector>

#include "policies/queue_order.hpp"
#include "policies/registry.hpp"
#include "sim/policy.hpp"
#include "base/signals.hpp"

namespace schedsim {

PolicyInfo spatial_policy_info();
PolicyInfo spatio_temporal_policy_info();

class SpatialRouter : public Policy {
 public:
  enum class Route { kSignal, kHome };
  // Refuses (InputError) what `information` cannot provide: route: signal scores each
  // datacenter over the job's estimated run, and the order may rank by size.
  SpatialRouter(std::string name, std::unique_ptr<QueueOrder> order, Route route, SignalKind kind, InformationModel information);

  std::string name() const override { return name_; }
  void on_job_queued(const SchedulerView& view, JobSlot job) override;
  void on_job_finished(const SchedulerView& view, JobSlot job) override;
  void decide(const SchedulerView& view, ActionBatch& out) override;

  // The datacenter `job` should go to when it has room (-1 = none), until it starts.
  void prefer(JobSlot job, int site);
  // The routing score of datacenter `site` for `job` now: the forecast mean of the
  // signal over [now, now + estimate]; +infinity when the site has no such signal.
  double score(const SchedulerView& view, const JobView& job, int site) const;

  void snapshot(SnapshotArchive& ar) override;
 private:
  using Entry = std::tuple<double, std::uint64_t, JobSlot>;  // (key, arrival seq, slot)
  struct Site {
    DeviceId first = 0;
    int num = 0;
    const GridSignals* signals = nullptr;
  };
  void load_sites(const SchedulerView& view);
  bool allowed(const SchedulerView& view, const JobView& job, int site) const;
  // Devices for `job` in `site` after this decision's claims (claims them), or false.
  bool place(const SchedulerView& view, const JobView& job, int site, std::vector<DeviceId>& out);

  std::string name_;
  std::unique_ptr<QueueOrder> order_;
  Route route_;
  SignalKind kind_;
  InformationModel info_;
  std::vector<Site> sites_;
  std::set<Entry> queue_;
  std::vector<Entry> entry_;       // by slot, valid while queued
  std::vector<char> queued_;       // by slot
  std::vector<int> preferred_;     // by slot
  std::vector<char> started_;      // by slot: started by this policy, not back in the queue since
  std::vector<int> claimed_milli_; // by device, this decision's claims
  std::vector<DeviceId> touched_;  // devices with claims, to reset
  std::vector<int> free_;          // by site, free whole devices after claims
  std::vector<DeviceId> devices_;
};

}  // namespace schedsim
