// Failures and periodic checkpoints: what can go wrong with a running job and how often.
// The kernel asks this model for random times (loss spikes per job, failures and repairs
// per device or node) and for each job's checkpoint interval and cost; it keeps the
// job-level consequences (rollback, restart, requeue) itself. One model per simulator:
// it owns its random streams, derived from the scenario seed, so enabling failures never
// shifts the random numbers of the workload. Formulas and sources: docs/failures.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "world/physics/checkpoint_policy.hpp"
#include "sim/cluster_spec.hpp"
#include "base/config_node.hpp"
#include "sim/job.hpp"
#include "base/rng.hpp"
#include "base/span.hpp"

namespace schedsim {

class SnapshotArchive;

class PhysicsModel;

// Times between events of one renewal process with a given mean: exponential
// (memoryless) or Weibull with `weibull_shape` (< 1: infant mortality, > 1: wear-out),
// its scale set so that the mean is what the config says.
struct Lifetime {
  enum class Kind : std::uint8_t { kExponential, kWeibull };
  Kind kind = Kind::kExponential;
  double weibull_shape = 1.0;

  double sample(Rng& rng, double mean_s) const;
};

struct LossSpikeConfig {
  // Hazard per GPU-hour of running; 0 = no loss spikes. A job on n GPUs has hazard
  // rate_per_gpu_hour * n^gpu_exponent per hour.
  double rate_per_gpu_hour = 0.0;
  double gpu_exponent = 1.0;
  // Per job class (JobSpec::model): overrides rate_per_gpu_hour.
  std::map<std::string, double> rate_per_gpu_hour_by_model;
  Lifetime lifetime;
  int rollback_checkpoints = 1;  // 1 = the last committed checkpoint, 2 = the one before...
  double restart_s = 0.0;        // overhead before the job computes again

  bool enabled() const;
  double hazard_per_s(const JobSpec& job, int num_devices) const;
};

struct DeviceFailureConfig {
  enum class Unit : std::uint8_t { kNode, kDevice };
  enum class OnFailure : std::uint8_t { kRequeue, kWait };
  // Mean time between failures of one device, hours; 0 = no device failures.
  // A node of k devices fails with rate k / mtbf_h (unit: node).
  double mtbf_h = 0.0;
  std::map<std::string, double> mtbf_h_by_type;  // per device type, overrides mtbf_h
  Lifetime lifetime;
  Unit unit = Unit::kNode;
  double repair_h = 4.0;
  OnFailure on_failure = OnFailure::kRequeue;
  double restart_s = 0.0;

  bool enabled() const;
  double mtbf_h_of(const std::string& type) const;  // 0 = never fails
};

struct StragglerConfig {
  double fraction = 0.0;  // share of nodes that are slow (chosen once per run)
  double slowdown = 1.0;  // rate multiplier of a job touching a slow node, in (0, 1]
};

struct FailureConfig {
  // Trace-recorded failed/killed jobs end with that status and count apart from completed
  // ones; false = count them as completed.
  bool recorded_outcomes_separate = true;
  LossSpikeConfig loss_spikes;
  DeviceFailureConfig devices;
  StragglerConfig stragglers;
  CheckpointConfig checkpoint;

  // Parses the scenario's `failures:` map (strict; unknown keys rejected).
  static FailureConfig parse(const ConfigNode& node);
  YAML::Node to_yaml() const;
};

class FailureModel {
 public:
  // Random times beyond this (about 3 million years) mean "never": they would not fit
  // the kernel's microsecond clock.
  static constexpr double kHorizon_s = 1e14;

  // `physics` (may be null) gives checkpoint costs when checkpoint.cost_s is not set.
  FailureModel(const FailureConfig& config, const ClusterSpec& cluster, std::uint64_t seed, const PhysicsModel* physics);

  const FailureConfig& config() const { return config_; }

  // Units that fail together: nodes or single devices.
  int num_units() const { return num_units_; }
  Span<DeviceId> unit_devices(int unit) const;
  int unit_of(DeviceId d) const;
  // Time to the next failure of `unit` (from now, after a repair or at the start), or
  // nullopt when the unit never fails.
  std::optional<double> sample_time_to_failure_s(int unit);
  double repair_s() const { return config_.devices.repair_h * 3600.0; }

  // Time to the next loss spike of a job computing on `num_devices`, or nullopt.
  std::optional<double> sample_time_to_spike_s(const JobSpec& job, int num_devices);

  // Total failure rate a job sees on `devices` (spikes + failures of every unit it
  // touches), per second: 1 / M in the Young–Daly formula.
  double job_failure_rate_per_s(const JobSpec& job, Span<DeviceId> devices) const;
  // Seconds one checkpoint write of `job` takes (delta).
  double checkpoint_cost_s(const JobSpec& job, int num_devices) const;
  // Interval between checkpoints (compute seconds) for `job` on `devices`, or 0 when it
  // does not checkpoint.
  double checkpoint_interval_s(const JobSpec& job, Span<DeviceId> devices) const;

  // Rate multiplier of a job on `devices`: the slowdown when it touches a straggler node.
  double straggler_factor(Span<DeviceId> devices) const;
  bool is_straggler_node(int node) const { return !slow_node_.empty() && slow_node_[static_cast<std::size_t>(node)]; }

  // Saves or restores the random streams (sim/snapshot_archive.hpp).
  void snapshot(SnapshotArchive& ar);

 private:
  FailureConfig config_;
  const ClusterSpec& cluster_;
  const PhysicsModel* physics_;
  Rng spike_rng_;
  Rng unit_rng_;
  int num_units_ = 0;
  std::vector<DeviceId> device_ids_;  // 0..n-1, for unit_devices of device units
  std::vector<double> unit_rate_per_s_;  // failure rate of each unit (0 = never)
  std::vector<char> slow_node_;
};

}  // namespace schedsim
