// What schedulers may know about job durations: the scenario's `information:` setting
// (docs/config.md#information). Every policy and the RL observation ask this one type for
// a job's size, remaining time and attained service; none reads JobSpec::duration_s or
// the kernel's remaining work for a decision itself, so that a run declared
// non-clairvoyant cannot see the true duration through a side door.
//
// Three levels:
//  - oracle: clairvoyant, exactly what schedsim did before the setting existed (the
//    regression anchor): a job's size is its estimate when it has one, else its true
//    duration, and its remaining time that size scaled by the true fraction of work left.
//  - estimates: a job's size is an estimate (the workload's estimate column, or a seeded
//    noisy draw around the truth), and its remaining time a function of what a real
//    scheduler sees: max(estimate - attained work, floor x estimate). The floor is a
//    constant fraction of the estimate, so a job that outlives its estimate keeps a
//    positive remaining time (it is never "done" forever) and a running job's remaining
//    time never grows (queue orders rely on running keys only improving).
//  - none: no duration information; policies that need some refuse to be built.
#pragma once

#include <cstdint>
#include <string>

#include <yaml-cpp/yaml.h>

#include "base/config_node.hpp"
#include "base/error.hpp"
#include "sim/policy.hpp"

namespace schedsim {

// A policy refused because the scenario's information level cannot serve it (an
// InputError: exit status 1); `compare` without --policy skips such policies.
class InformationRefused : public InputError {
 public:
  using InputError::InputError;
};

enum class InformationLevel : std::uint8_t { kOracle, kEstimates, kNone };
enum class EstimateSource : std::uint8_t { kTrace, kNoisy };

class InformationModel {
 public:
  // Oracle: what a PolicyContext holds unless the scenario says otherwise (tests and
  // embedders that build policies directly keep the old behaviour).
  InformationModel() = default;
  static InformationModel oracle() { return InformationModel(); }
  static InformationModel none();
  // `sigma`, `bias` only matter for kNoisy; `floor` is the fraction of the estimate a job
  // that outlived it is still expected to run.
  static InformationModel estimates(EstimateSource source, double sigma = kDefaultSigma, double bias = kDefaultBias, double floor = kDefaultFloor,
                                    std::uint64_t seed = 0);
  // `oracle` | `none` | `estimates` | {estimates: {source: trace|noisy, sigma, bias, floor}}.
  static InformationModel parse(const ConfigNode& node);
  // The same model with its noisy draws keyed by `seed` (the run's seed: a scenario's
  // seed may be replaced by --seed or a sweep after parsing).
  InformationModel with_seed(std::uint64_t seed) const {
    InformationModel m = *this;
    m.seed_ = seed;
    return m;
  }
  // The resolved setting, in the form parse() reads.
  YAML::Node to_yaml() const;
  // One line for tables and results.json: "oracle", "none", "estimates (trace)",
  // "estimates (noisy, sigma 0.5, bias 1)".
  std::string describe() const;

  InformationLevel level() const { return level_; }
  EstimateSource source() const { return source_; }
  bool is_oracle() const { return level_ == InformationLevel::kOracle; }
  bool knows_durations() const { return level_ != InformationLevel::kNone; }

  // Refusals, at construction: `need` says what of the policy needs the information, e.g.
  // "by: auto (ranks jobs by their size)". require_durations throws under `none`;
  // require_oracle unless the level is oracle.
  void require_durations(const std::string& policy, const std::string& need) const { require_durations_at("policy '" + policy + "'", need); }
  // The same naming the place some other way ("the RL environment").
  void require_durations_at(const std::string& where, const std::string& need) const;
  void require_oracle(const std::string& policy, const std::string& need) const;

  // The job's size as the scheduler knows it, work-seconds at rate 1. oracle: its
  // estimate when it has one, else its duration; estimates: the estimate (the trace's,
  // an InputError naming the job when it has none; or the noisy draw). Not under none.
  // A policy asks with the job's view (SchedulerView::job), which shows neither.
  double estimated_total_s(const JobSpec& job) const;
  double estimated_total_s(const JobView& job) const { return estimated_total_s(job.request()); }
  // The job's estimated work left, work-seconds at rate 1. oracle: estimated_total_s
  // scaled by the true fraction left; estimates: max(size - attained, floor x size).
  double estimated_remaining_s(const SchedulerView& view, const JobView& job) const;
  // The same pair where a policy wants the truth under oracle (srtf's remaining work,
  // themis's run time alone): oracle gives the true duration and remaining work; the
  // other levels the estimates above.
  double total_work_s(const JobSpec& job) const;
  double total_work_s(const JobView& job) const { return total_work_s(job.request()); }
  double remaining_work_s(const SchedulerView& view, const JobView& job) const;
  // Remaining work of a job at `now`, in work-seconds, as the kernel knows it: exact at
  // last_update, then advancing at rate(now). Never negative. This is the truth: decisions
  // take it through the methods above, which pass it on only under `oracle`; the free
  // kernel_remaining_work_s() below is for bookkeeping that must mirror the kernel (LAS's
  // wake-up times, a re-allocation's hypothetical queue, Python's oracle view).
  static double kernel_remaining_work_s(const JobView& job, Tick now) { return job.remaining_work_s(now); }
  // The same at instant `at` (one formula, so that an order that predicts its keys
  // computes exactly what a later call computes).
  static double kernel_remaining_work_at_s(const JobView& job, Tick at) { return job.remaining_work_s(at); }
  // Attained work given one reading of kernel_remaining_work_s (JobView::attained_work_s
  // without computing the remaining work again).
  static double attained_work_from_s(const JobView& job, double kernel_remaining_s) { return job.request().duration_s - kernel_remaining_s; }
  // The noisy estimate of `job` (kNoisy): duration x bias x exp(sigma z), z standard
  // normal drawn from the seed, the job's id and its submit time: the same job gets the
  // same estimate at every call, in every policy, in every run with this seed.
  double noisy_estimate_s(const JobSpec& job) const;

  static constexpr double kDefaultSigma = 0.5;
  static constexpr double kDefaultBias = 1.0;
  static constexpr double kDefaultFloor = 0.1;

 private:
  InformationLevel level_ = InformationLevel::kOracle;
  EstimateSource source_ = EstimateSource::kTrace;
  double sigma_ = kDefaultSigma;
  double bias_ = kDefaultBias;
  double floor_ = kDefaultFloor;
  std::uint64_t seed_ = 0;
};

// The kernel's remaining work of `job` now (InformationModel::kernel_remaining_work_s).
inline double kernel_remaining_work_s(const SchedulerView& view, const JobView& job) { return InformationModel::kernel_remaining_work_s(job, view.now()); }
inline double kernel_remaining_work_at_s(const JobView& job, Tick at) { return InformationModel::kernel_remaining_work_at_s(job, at); }

// Work executed so far (work-seconds at rate 1): what any scheduler observes (elapsed run
// time times the observed rate), whatever the information level (JobView::attained_work_s).
inline double attained_work_s(const SchedulerView& view, const JobView& job) { return job.attained_work_s(view.now()); }

}  // namespace schedsim
