// What the kernel asks about hardware: may a job run on these devices, how fast does each
// running job progress, and what do checkpoints cost. With no model (nullptr) every job
// runs at rate 1 and checkpoints are free: the pure queueing model.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/job.hpp"
#include "sim/job_view.hpp"
#include "sim/snapshot_archive.hpp"
#include "base/span.hpp"

namespace schedsim {

class Simulator;

class PhysicsModel {
 public:
  virtual ~PhysicsModel() = default;

  // Why `job` cannot run on `devices` (memory does not fit, forbidden mix of types...),
  // or "" when it can. Called while validating start and move actions.
  virtual std::string placement_problem(const JobSpec& job, Span<DeviceId> devices) const = 0;

  // Called at the end of an instant in which placements changed. `changed` lists the
  // jobs whose devices changed (started, moved, stopped or ended; ended ones are no longer
  // in the system). Appends (slot, rate) for every running job whose rate may differ now;
  // rates are work-seconds per second (1 = as fast as on the job's reference placement).
  virtual void update_rates(const Simulator& sim, const std::vector<JobSlot>& changed, std::vector<std::pair<JobSlot, double>>& rates) = 0;

  // For placement policies: the job's rate on `num_devices` devices of device type
  // `type_index` (ClusterSpec::device_types()), consolidated and uncontended; 0 when the
  // job cannot run there at all (e.g. its memory does not fit).
  virtual double estimated_rate(const JobSpec& job, int type_index, int num_devices) const = 0;

  // False when no job may span device types (physics.mixed_types: forbid): placement
  // policies then choose devices of one type instead of having the set rejected.
  virtual bool allows_mixed_types() const { return true; }

  // Seconds to write / read back the job's checkpoint (preemption, migration, resize).
  virtual double checkpoint_save_s(const JobSpec& job, int num_devices) const = 0;
  virtual double checkpoint_restore_s(const JobSpec& job, int num_devices) const = 0;

  // Compute share of the running job's iteration time on its current placement, in
  // [0, 1], as of the last rate update (for the energy model: a communication-bound job
  // leaves its devices partly idle). 1 when the model does not know.
  virtual double compute_utilization(JobSlot /*slot*/) const { return 1.0; }

  // For the invariant checker: the first inconsistency in the model's own state (e.g.
  // link loads that are not the sum of their flows), "" when none.
  virtual std::string invariant_problem() const { return ""; }

  // Saves or restores the model's state between instants (link loads, flows, per-job
  // caches) for schedsim run --snapshot-every / --resume. The default refuses.
  virtual void snapshot(SnapshotArchive& /*ar*/) { throw SnapshotUnsupported("the physics model"); }

  // The per-job queries for policies, which see a job only through its JobView: the same
  // answers, the request handed over by the model's side (the view gives no JobSpec).
  std::string placement_problem(const JobView& job, Span<DeviceId> devices) const { return placement_problem(job.request(), devices); }
  double estimated_rate(const JobView& job, int type_index, int num_devices) const { return estimated_rate(job.request(), type_index, num_devices); }
  double checkpoint_save_s(const JobView& job, int num_devices) const { return checkpoint_save_s(job.request(), num_devices); }
  double checkpoint_restore_s(const JobView& job, int num_devices) const { return checkpoint_restore_s(job.request(), num_devices); }
};

}  // namespace schedsim
