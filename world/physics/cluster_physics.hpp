// The hardware model behind job speeds: compute on the job's device types (roofline from
// its workload profile), data-parallel gradient all-reduce over its placement's links
// shared max-min fairly with other jobs, co-location interference, memory limits and
// checkpoint costs. A job runs at rate t_ref / t_iter, where t_iter is its iteration time
// on its current placement and t_ref the iteration time on its reference placement (the
// job's device count, consolidated, on the reference type, without contention): trace
// durations are measured on the reference, so an unchanged placement keeps rate 1.
// Jobs without a known workload profile run at rate 1 (elastic ones follow Amdahl's law).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "world/physics/accelerator_catalogue.hpp"
#include "world/physics/comm_model.hpp"
#include "base/config_node.hpp"
#include "sim/physics.hpp"
#include "world/physics/throughput_matrix.hpp"
#include "world/physics/topology.hpp"
#include "sim/training_plan.hpp"
#include "world/physics/workload_profiles.hpp"

namespace schedsim {

struct PhysicsConfig {
  // The device type trace durations refer to; "" = the job's gpu_type, else the type of
  // the cluster's first node group.
  std::string reference_device;
  double overlap = 0.0;                 // compute/communication overlap, [0, 1]
  double interference_factor = 1.0;     // rate multiplier while sharing a node with another job, (0, 1]
  bool allow_mixed_types = true;        // false: a job may not span device types
  double checkpoint_bytes_per_param = 16.0;       // weights + Adam state, mixed precision
  double default_checkpoint_gb = 10.0;  // for jobs without a profile
  double storage_bandwidth_gbps = 2.0;  // GB/s, to and from checkpoint storage
  double restart_overhead_s = 0.0;      // added to every restore (process start, data loader)
  double elastic_serial_fraction = 0.05;  // Amdahl scaling of profile-less elastic jobs
  std::string throughputs{};            // Gavel-style measured throughput matrix (JSON path), "" = none
  std::string throughputs_resolved{};   // the same, usable from the working directory

  static PhysicsConfig parse(const ConfigNode& node);
  YAML::Node to_yaml() const;
};

class ClusterPhysics : public PhysicsModel {
 public:
  // All references must outlive the model.
  // `matrix` (may be null) gives measured speeds for jobs whose model is one of its job
  // types: their rate is the measured throughput on the placement's slowest type over the
  // throughput on the reference type (consolidated or not, as placed).
  ClusterPhysics(const ClusterSpec& cluster, const TopologySpec& topology, const AcceleratorCatalogue& accelerators,
                 const WorkloadProfileCatalogue& profiles, PhysicsConfig config, const ThroughputMatrix* matrix = nullptr);

  std::string placement_problem(const JobSpec& job, Span<DeviceId> devices) const override;
  void update_rates(const Simulator& sim, const std::vector<JobSlot>& changed, std::vector<std::pair<JobSlot, double>>& rates) override;
  double estimated_rate(const JobSpec& job, int type_index, int num_devices) const override;
  double checkpoint_save_s(const JobSpec& job, int num_devices) const override;
  double checkpoint_restore_s(const JobSpec& job, int num_devices) const override;
  bool allows_mixed_types() const override { return config_.allow_mixed_types; }
  double compute_utilization(JobSlot slot) const override;
  std::string invariant_problem() const override;

  // The job's rate (work-seconds per second) on exactly `devices`, uncontended and without
  // co-location interference: what the placement gives it if nothing else shares its links
  // or nodes. 0 when the job cannot run there (memory, missing measurement). For the RL
  // environment's per-placement speed feature.
  double uncontended_rate(const JobSpec& job, Span<DeviceId> devices) const;
  // Iteration time of `job` on `devices` given its max-min share `shared_bandwidth_Bps`
  // (average bytes/s) of the links it shares (+infinity = uncontended): the uncontended
  // time, or the time its all-reduce traffic needs at that share when that is longer.
  double iteration_time_s(const JobSpec& job, Span<DeviceId> devices, double shared_bandwidth_Bps) const;
  // Iteration time on the job's reference placement.
  double reference_iteration_time_s(const JobSpec& job, int num_devices) const;
  // The job's profile, or null when it has none (rate 1).
  const WorkloadProfile* profile_of(const JobSpec& job) const;
  const TopologySpec& topology() const { return topology_; }
  // Measured steps/s of a matrix job on n devices of a cluster type; nullopt when the
  // job is not in the matrix or the matrix has no such measurement.
  std::optional<double> measured_steps_per_s(const JobSpec& job, int type_index, int num_devices, bool consolidated) const;

  // Saves or restores the state (sim/snapshot_archive.hpp).
  void snapshot(SnapshotArchive& ar) override;

  // LLM jobs with a parallelism plan (sim/training_plan.hpp; null = none, the default):
  // for the jobs it handles, memory, iteration time and DP traffic come from their plan
  // on the devices offered instead of from a workload profile. Set before the run; must
  // outlive the model.
  void set_plan_model(const TrainingPlanModel* model) { plan_model_ = model; }
  const TrainingPlanModel* plan_model() const { return plan_model_; }
  bool planned(const JobSpec& job) const { return plan_model_ && plan_model_->handles(job); }
  // The plan `job` (by id) ran under in its latest placement, "" when none (jobs.csv's
  // plan column).
  std::string plan_of(const std::string& job_id) const;
  // The job's plan on `devices` (the slowest device type's when they mix types).
  PlannedIteration planned_on(const JobSpec& job, Span<DeviceId> devices) const;

 private:
  struct Placed {  // what the model remembers about a placed job, by slot
    std::uint64_t arrival_seq = 0;
    bool placed = false;
    std::vector<DeviceId> devices;
    MaxMinFairShare::FlowId flow = -1;
    const WorkloadProfile* profile = nullptr;  // of the job in this slot (set with arrival_seq)
    double t_ref_s = 0.0;
    // Cached at placement, so that a change of bandwidth share costs O(1) per job:
    double compute_s = 0.0;        // slowest member's roofline time
    double fixed_bw_Bps = 0.0;     // min(private NVLink, shared links' capacities)
    double latency_s = 0.0;
    double wire_bytes = 0.0;       // ring all-reduce bytes per iteration through each link, 2(n-1)/n x gradient bytes
    double alone_s = 0.0;          // iteration time with fixed_bw_Bps (no other job on its links)
    double demand_Bps = 0.0;       // average traffic uncontended: wire_bytes / alone_s (its max-min cap)
    double share_Bps = 0.0;        // last max-min share applied
    double utilization = 1.0;      // compute / iteration time at the last rate update
    bool planned = false;          // an LLM job under a parallelism plan (plan_model_)
  };
  static double contended_iteration_s(double alone_s, double wire_bytes, double share_Bps);
  // Rate before interference; also records the placement's compute utilization in `p`.
  double job_rate(const JobState& j, Placed& p) const;
  void cache_placement(const JobSpec& job, Placed& p);
  const AcceleratorSpec& reference_type(const JobSpec& job) const;
  bool is_matrix_job(const JobSpec& job) const;
  int matrix_job_id(const JobSpec& job) const;  // matrix_ must be set
  double matrix_rate(const JobSpec& job, const std::vector<DeviceId>& devices) const;
  bool shares_node(JobSlot slot, const std::vector<DeviceId>& devices) const;

  int devices_per_node_of_type(int type_index) const;
  int devices_per_node_of(const AcceleratorSpec& type) const;  // of its first group; 8 when not in the cluster
  double planned_reference_s(const JobSpec& job) const;

  const ClusterSpec& cluster_;
  const TopologySpec& topology_;
  const TrainingPlanModel* plan_model_ = nullptr;
  std::map<std::string, std::string> job_plans_;  // job id -> plan of its latest placement (planned jobs)
  const AcceleratorCatalogue& accelerators_;
  const WorkloadProfileCatalogue& profiles_;
  PhysicsConfig config_;
  const ThroughputMatrix* matrix_;
  std::vector<std::string> matrix_types_;  // by cluster type index: the matrix's name for it ("" = none)
  std::vector<int> matrix_type_ids_;       // the same as ThroughputMatrix::device_type_id (-1 = none)
  mutable std::string last_matrix_model_;  // matrix_job_id: the last model asked about
  mutable int last_matrix_job_ = -1;       // and its ThroughputMatrix::job_type_id (-1 = not a matrix job type)
  std::vector<const AcceleratorSpec*> type_specs_;  // by ClusterSpec type index
  const AcceleratorSpec* reference_spec_ = nullptr;  // config_.reference_device, when set
  // By ClusterSpec::groups() index: the group's catalogue entry (null when unknown), looked
  // up once (a lookup normalizes names: most of a rate query's cost when done per query).
  std::vector<const AcceleratorSpec*> group_specs_;
  mutable CommPath path_scratch_;  // iteration_time_s's, reused (its vectors allocate)
  MaxMinFairShare fair_share_;
  std::vector<Placed> placed_;          // by job slot
  std::vector<std::vector<JobSlot>> node_jobs_;  // placed jobs per node
  CommPath path_;                       // scratch
  std::vector<JobSlot> affected_;       // scratch
  std::vector<char> mark_;              // scratch, by slot
  std::vector<JobSlot> flow_slot_;      // max-min flow id -> job slot
  mutable std::unordered_map<std::string, const WorkloadProfile*> profile_cache_;
  // The last answer of profile_of: consecutive queries are mostly for one job, and a
  // string comparison is cheaper than the hash.
  mutable std::string last_model_;
  mutable const WorkloadProfile* last_profile_ = nullptr;
  // Roofline compute time by (profile, device type, device count): a run has few.
  double compute_time_s(const WorkloadProfile& profile, const AcceleratorSpec& device, int num_devices) const;
  struct ComputeKey {
    const WorkloadProfile* profile;
    const AcceleratorSpec* device;
    int num_devices;
    bool operator==(const ComputeKey& o) const { return profile == o.profile && device == o.device && num_devices == o.num_devices; }
  };
  struct ComputeKeyHash {
    std::size_t operator()(const ComputeKey& k) const {
      const auto a = reinterpret_cast<std::uintptr_t>(k.profile), b = reinterpret_cast<std::uintptr_t>(k.device);
      return (a * 0x9E3779B97F4A7C15ULL) ^ (b * 0xC2B2AE3D27D4EB4FULL) ^ static_cast<std::size_t>(k.num_devices);
    }
  };
  // A hash table, not a tree: the lookup runs several times per rate query.
  mutable std::unordered_map<ComputeKey, double, ComputeKeyHash> compute_cache_;
  // reference_iteration_time_s by (profile, reference type, device count).
  mutable std::unordered_map<ComputeKey, double, ComputeKeyHash> reference_cache_;
  double reference_iteration_uncached_s(const WorkloadProfile* profile, const AcceleratorSpec& ref, int num_devices) const;
};

}  // namespace schedsim
