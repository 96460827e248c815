#include "policies/presets.hpp"

#include "policies/fifo.hpp"
#include "policies/las.hpp"
#include "policies/queue_policy.hpp"
#include "policies/slurm_priority.hpp"

namespace schedsim {

PolicyInfo slurm_easy_policy_info() {
  QueuePolicyOptions d;
  d.backfill = Backfill::kEasy;
  return queue_policy_info("slurm-easy", "Slurm-style FIFO with EASY backfilling: later jobs start when they do not delay the head's reservation", fifo_order(), d);
}

// Slurm as documented (docs/policies.md "Slurm"): priority/multifactor with the
// multifactor page's example weights, sched/backfill testing at most bf_max_job_test
// (default 500) queued jobs per pass, and select over topology/tree switches.
PolicyInfo slurm_policy_info() {
  QueuePolicyOptions d;
  d.backfill = Backfill::kEasy;
  d.backfill_depth = 500;
  d.placement = Placement::kTopologyTree;
  return queue_policy_info("slurm", "Slurm: multifactor priority (age, fair share, job size, QoS), EASY backfilling (bf_max_job_test 500), topology/tree placement over racks and pods",
                           slurm_priority_order(), d);
}

PolicyInfo tiresias_policy_info() {
  QueuePolicyOptions d;
  d.placement = Placement::kPacked;
  return queue_policy_info("tiresias", "Tiresias: discretized 2D-LAS (GPUs x time) with starvation guard, consolidated placement, preemptive", las_order(), d);
}

// Tiresias' simulator (SymbioticLab/Tiresias, simulator/run_sim.py, commit 959f9b0) as it
// runs `--schedule=dlas` / `dlas-gpu`: three queues split at 3,250 and 7,200 (jobs.py's
// queue_limit), FIFO inside a queue, every job that fits starts (the pass skips a job
// that does not), GPUs counted rather than placed, a job demoted exactly when it crosses
// a threshold, no starvation guard (solve_starvation = 0). docs/policies.md and
// docs/validation.md say where the peer differs.
namespace {
PolicyInfo tiresias_dlas_info(const std::string& name, const std::string& description, LasService service, LasDemotion demotion) {
  LasOptions las;
  las.service = service;
  las.thresholds = {3250.0, 7200.0};
  las.starvation_multiple = 0.0;
  las.demotion = demotion;
  QueuePolicyOptions d;
  d.discipline = Discipline::kRepack;
  d.preemption = true;
  return queue_policy_info(name, description, las_order(las), d);
}
}  // namespace

PolicyInfo tiresias_dlas_policy_info() {
  return tiresias_dlas_info("tiresias-dlas", "Tiresias' simulator, dlas: discretized LAS on executed time (queues at 3250 and 7200 s), repack discipline, exact demotion, preemptive",
                            LasService::kTime, LasDemotion::kExact);
}

PolicyInfo tiresias_dlas_gpu_policy_info() {
  return tiresias_dlas_info("tiresias-dlas-gpu", "Tiresias' simulator, dlas-gpu: discretized LAS on GPU time (queues at 3250 and 7200 GPU-s), repack discipline, exact demotion, preemptive",
                            LasService::kGpuTime, LasDemotion::kExact);
}

PolicyInfo tiresias_fifo_yarn_policy_info() {
  QueuePolicyOptions d;
  d.placement = Placement::kYarn;
  return queue_policy_info("tiresias-fifo-yarn", "Tiresias' simulator, fifo with its yarn scheme: blocking FIFO, strict per-node consolidation", fifo_order(), d);
}

PolicyInfo volcano_binpack_policy_info() {
  QueuePolicyOptions d;
  d.placement = Placement::kPacked;
  return queue_policy_info("volcano-binpack", "Volcano-style gang scheduling in FIFO order with binpack placement (fullest nodes first)", fifo_order(), d);
}

PolicyInfo fgd_policy_info() {
  QueuePolicyOptions d;
  d.placement = Placement::kFgd;
  return queue_policy_info("fgd", "FIFO with fragmentation gradient descent placement for fractional GPU requests (Alibaba, ATC'23)", fifo_order(), d);
}

}  // namespace schedsim
