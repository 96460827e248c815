#include "world/geography/geography_process.hpp"

#include "world/geography/datacenters.hpp"
#include "sim/simulator.hpp"  // WorldContext's inline accessors

namespace schedsim {

std::string GeographyProcess::placement_problem(const JobSpec& spec, Span<DeviceId> devices) const { return geo_.placement_problem(spec, devices); }

// A job that ran before keeps its state (checkpoint, data) in the site it last ran in:
// another site costs the relocation, and the job's state is there from now on.
void GeographyProcess::start_overhead(WorldContext& ctx, JobSlot slot, Span<DeviceId> devices, bool, StartOverhead& out) {
  const int to = geo_.site_of_device(devices[0]);
  out.extra_s += geo_.relocation_s(ctx.job(slot).site, to);
  ctx.job_record(slot).site = to;  // JobState::site: the market meter reads it too
}

void GeographyProcess::expose(ExposedModels& m) const {
  m.geography = &geo_;
  m.num_sites = geo_.num_sites();
}

}  // namespace schedsim
