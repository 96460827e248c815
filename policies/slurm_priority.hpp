// Slurm's multifactor job priority (priority/multifactor, docs/policies.md "Slurm"):
//   priority = floor(W_age * age + W_fairshare * fairshare + W_jobsize * jobsize + W_qos * qos)
// with every factor in [0, 1]: age = min(wait / max_age_s, 1); classic fair share
// 2^(-U/S) (U: the account's decayed GPU-seconds over everyone's, S: its normalized
// shares); job size relative to the cluster's devices (favouring large or small jobs);
// QoS = JobSpec.priority / the largest priority. Larger priority first, ties in arrival
// order (Slurm: submit time, then job id). Keys change while jobs wait (age grows, usage
// decays and accrues), so the queue engine re-keys the queue at each decision.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "policies/queue_order.hpp"
#include "policies/registry.hpp"

namespace schedsim {

// Defaults: the "Configuration Example" of Slurm's multifactor page (14-day half-life
// and maximum age, PriorityFavorSmall=NO, weights age 1000, fair share 10000, job size
// 1000, QoS 0).
struct SlurmPriorityOptions {
  double weight_age = 1000.0;
  double weight_fairshare = 10000.0;
  double weight_jobsize = 1000.0;
  double weight_qos = 0.0;
  double max_age_s = 14 * 86400.0;          // PriorityMaxAge: wait at which age reaches 1
  double decay_half_life_s = 14 * 86400.0;  // PriorityDecayHalfLife; 0 = usage never decays
  bool favor_small = false;                 // PriorityFavorSmall
  bool by_group = false;                    // account = JobSpec.group, else JobSpec.user
  std::map<std::string, double> shares;     // account -> raw shares (default 1)
  // QoS factor = JobSpec.priority / this; 0 = the largest priority among the jobs queued so far.
  double qos_max_priority = 0.0;
};

// The factors of one job at one instant, each in [0, 1], and the resulting priority.
struct SlurmPriorityFactors {
  double age = 0, fairshare = 0, jobsize = 0, qos = 0;
  double priority = 0;  // floor of the weighted sum (Slurm's priority is an integer)
};

// The order itself, public so that tests can read a job's factors at an instant.
class SlurmPriorityOrder : public QueueOrder {
 public:
  explicit SlurmPriorityOrder(SlurmPriorityOptions options);

  double queued_key(const SchedulerView& view, JobSlot job) override;
  double running_key(const SchedulerView& view, JobSlot job) const override { return -factors(view, job).priority; }
  bool keys_change_while_queued() const override { return true; }
  void on_decision(const SchedulerView& view) override;
  void on_started(const SchedulerView& view, JobSlot job) override;
  void on_stopped(const SchedulerView& view, JobSlot job) override;
  void write(YAML::Node& resolved) const override;
  void snapshot(SnapshotArchive& ar) override;

  // The factors of `job` now (its account must have been seen: the job was queued).
  SlurmPriorityFactors factors(const SchedulerView& view, JobSlot job) const;
  // An account's decayed usage (GPU-seconds) at `now_s` (>= the last update).
  double usage_gpu_s(const std::string& account, double now_s) const;

 private:
  const std::string& account(const JobView& spec) const { return options_.by_group ? spec.group() : spec.user(); }
  int account_id(const std::string& name);
  double usage_at(std::size_t account, double now_s) const;
  // The fair-share factor of every account at `now_s`.
  void fairshare_at(double now_s, std::vector<double>& out) const;
  // Brings every account's decayed usage to `now_s` (GPUs held constant since the last update).
  void advance(double now_s);

  SlurmPriorityOptions options_;
  std::map<std::string, int> ids_;  // account -> id (a map: snapshot and iteration order are fixed)
  std::vector<double> usage_;       // by id: decayed GPU-seconds at last_s_
  std::vector<double> held_;        // by id: devices its running jobs hold
  std::vector<double> raw_shares_;  // by id
  double shares_total_ = 0;
  double last_s_ = 0;
  double max_priority_seen_ = 0;
  std::vector<std::pair<int, double>> counted_;  // by slot: (account id, devices) while running, (-1, 0) otherwise
  // What a key needs of a job, by slot, filled when the job is first queued (the job
  // tables are large and a key is computed for every queued job at every decision).
  struct JobTerms {
    std::uint64_t arrival_seq = ~std::uint64_t{0};  // whose terms these are
    double submit_s = 0;
    double jobsize = 0;   // the job-size factor
    double priority = 0;  // JobSpec.priority
    int account = -1;
  };
  std::vector<JobTerms> terms_;
  const JobTerms& terms_of(const SchedulerView& view, JobSlot job);
  SlurmPriorityFactors compute(const JobTerms& t, double now_s) const;
  // Fair-share factors by account as of the last decision (one O(accounts) pass per
  // decision instead of one per key); valid while the instant and the accounts stay.
  std::vector<double> fairshare_;
  double fairshare_s_ = -1;
};

// The order by config name ("slurm-priority") with its documented options.
OrderKind slurm_priority_order();

}  // namespace schedsim
