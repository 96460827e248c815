// Synthetic workloads: an arrival process (Poisson, fixed gaps or bursty MMPP), a duration
// distribution and a distribution of GPU counts, each drawn from its own random stream so that changing
// one does not shift the others. Jobs are generated lazily, one per pull.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/config_node.hpp"
#include "sim/job_source.hpp"
#include "base/rng.hpp"
#include "sim/training_plan.hpp"
#include "traces/distribution.hpp"

namespace schedsim {

struct SyntheticConfig {
  std::uint64_t num_jobs = 1000;
  // Arrivals: "poisson" (exponential gaps with the given mean), "fixed" (constant gaps)
  // or "bursty": a two-state Markov-modulated Poisson process whose calm state has mean
  // gap mean_interarrival_s and whose burst state arrives burst_factor times faster;
  // the states last exponential times with means mean_calm_s and mean_burst_s.
  std::string arrival_process = "poisson";
  double mean_interarrival_s = 60.0;
  double burst_factor = 1.0;
  double mean_calm_s = 0.0, mean_burst_s = 0.0;
  // Long-run mean gap of the process (= mean_interarrival_s unless bursty).
  double long_run_interarrival_s() const;
  // `load:` (docs/config.md#offered-load): the offered load the arrival rate is set for,
  // as a share of the cluster's devices; applied by set_offered_load once the cluster is
  // known. Unset = the gap as written.
  std::optional<double> load;
  // Sets the mean gap so that mean_gpus() x mean duration / long-run gap = load x devices
  // (the shape of a bursty process kept). Throws via `where` when the duration
  // distribution has no finite mean.
  void set_offered_load(int devices, const ConfigNode& where);
  double start_s = 0.0;  // the first gap is measured from here
  Distribution duration_s = Distribution::exponential(3600.0);
  // (GPU count, probability), probabilities summing to 1.
  std::vector<std::pair<int, double>> gpus = {{1, 1.0}};
  // When set, each job carries a runtime estimate = duration x exp(N(0, sigma)).
  double estimate_error_sigma = -1.0;
  // (workload profile name, probability): the model each job trains, for the physics
  // model; empty = no model (rate 1 everywhere).
  std::vector<std::pair<std::string, double>> models;
  // (model name, `plan:`) of the models written as {share: P, plan: ...}
  // (docs/parallelism.md, "In a run"); models without one keep the default.
  std::vector<std::pair<std::string, PlanRequest>> plans;
  // The calibrated preset this config started from ("" = none).
  std::string preset;
  // When set (shares > 0), each job carries a recorded status drawn with these shares
  // (completed, killed, failed), as data for a failures model; the kernel ignores it.
  struct StatusShares {
    double completed = 0, killed = 0, failed = 0;
  };
  std::optional<StatusShares> recorded_status;
  // When set (fraction > 0), each job is elastic with this probability: it may run on
  // min_gpus = max(1, floor(num_gpus x min_scale)) to max_gpus = ceil(num_gpus x max_scale).
  struct Elastic {
    double fraction = 0, min_scale = 0.5, max_scale = 2.0;
  };
  std::optional<Elastic> elastic;

  static SyntheticConfig parse(const ConfigNode& node);
  // A workload calibrated to a published cluster trace: "philly-like", "helios-like" or
  // "llm-cluster-like" (docs/config.md cites every number). Throws InputError listing
  // the presets for an unknown name.
  static SyntheticConfig from_preset(const std::string& name, const std::string& where);
  static std::vector<std::string> preset_names();
  YAML::Node to_yaml() const;
  int max_gpus() const;
  double mean_gpus() const;
};

class SyntheticJobSource : public JobSource {
 public:
  SyntheticJobSource(const SyntheticConfig& config, std::uint64_t seed);
  bool next(JobSpec& out) override;
  std::string describe() const override { return "synthetic workload"; }
  std::uint64_t expected_jobs() const override { return config_.num_jobs; }

 private:
  double next_arrival_s();

  const SyntheticConfig& config_;
  // config_.arrival_process decoded once: next() runs once per job.
  enum class ArrivalProcess { kFixed, kPoisson, kBursty } process_;
  Rng arrivals_, durations_, gpus_, estimates_, statuses_, models_, elastic_, bursts_;
  std::vector<double> gpu_cdf_, model_cdf_;
  std::uint64_t generated_ = 0;
  double t_s_;
  // Bursty arrivals: whether the process is in its burst state, and when that ends.
  bool in_burst_ = false;
  double state_end_s_ = 0.0;
};

}  // namespace schedsim
