// The cluster physics' per-job queries a policy makes through its view (the RL candidate
// rows): the request is handed to the model here, so a policy never holds a JobSpec.
#include "world/physics/cluster_physics.hpp"
#include "sim/policy.hpp"

namespace schedsim {

double SchedulerView::uncontended_rate(const ClusterPhysics& physics, JobView job, Span<DeviceId> devices) {
  return physics.uncontended_rate(job.request(), devices);
}

const WorkloadProfile* SchedulerView::profile_of(const ClusterPhysics& physics, JobView job) { return physics.profile_of(job.request()); }

}  // namespace schedsim
