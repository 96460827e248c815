// Several datacenters (sim/datacenters.hpp) as a world process: a placement must stay
// inside one datacenter the job may run in (its veto), and a job that starts or moves
// away from the datacenter holding its checkpoint pays the WAN transfer plus a restart
// (its start overhead). JobState::site records where the job's state lives (the market
// meter reads it too); the process sets it through WorldContext::job_record.
#pragma once

#include "sim/world_process.hpp"

namespace schedsim {

class Geography;

class GeographyProcess final : public WorldProcess {
 public:
  // `geography` must outlive the process.
  explicit GeographyProcess(const Geography& geography) : geo_(geography) {}

  const char* name() const override { return "datacenters"; }
  std::uint32_t hooks() const override { return kPlacementVeto | kStartOverhead; }
  const Geography& geography() const { return geo_; }

  std::string placement_problem(const JobSpec& spec, Span<DeviceId> devices) const override;
  void start_overhead(WorldContext& ctx, JobSlot slot, Span<DeviceId> devices, bool moving, StartOverhead& out) override;
  // No state of its own: JobState::site is the kernel's (the kernel checks restored
  // sites against ExposedModels::num_sites).
  void expose(ExposedModels& m) const override;

 private:
  const Geography& geo_;
};

}  // namespace schedsim
