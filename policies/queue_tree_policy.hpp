// The queue-tree engine: hierarchical queues (policies/queue_tree.hpp) with a share rule,
// an order inside each leaf, gang modes, reclaim between queues and a topology
// placement; the `volcano` and `yunikorn` presets are compositions of these options
// (docs/policies.md, "Volcano" and "Apache YuniKorn").
//
// A decision:
//  1. Shares. Each queue's GPUs held (running jobs, plus devices bound to waiting jobs by placeholders)
//     and, under share: proportion or drf, its deserved GPUs (proportion_deserved over the
//     demand: held + pending requests).
//  2. Allocation. Repeatedly the best leaf is chosen from the root down, children in the
//     order of their key (proportion: held / deserved; drf: dominant share / weight;
//     guaranteed: guaranteed_fair_key), skipping queues at or over their deserved share
//     (proportion, drf: Volcano's overused check); in the leaf the next pending job by
//     `sort` is tried. It starts when its gang fits (rigid: all its GPUs, elastic:
//     min_gpus..its request) without any queue on its path exceeding max_gpus; otherwise
//     it is passed over (Volcano and YuniKorn do not block a queue on its head) or, with
//     gang: placeholders, it binds what is free now (ActionBatch::bind).
//  3. Reclaim. A leaf whose next job would keep it within its share (deserved, or
//     guaranteed) and that has waited reclaim_delay_s may preempt running jobs of other,
//     reclaimable leaves over their share, youngest first, each only while its queue
//     stays at or above its share.
// Cost per decision: O(devices + running + pending log pending + starts x queues).
#pragma once

#include <string>
#include <vector>

#include "policies/placement.hpp"
#include "policies/queue_tree.hpp"
#include "policies/registry.hpp"
#include "sim/policy.hpp"

namespace schedsim {

enum class QueueShare : std::uint8_t { kProportion, kDrf, kGuaranteed };
enum class AppSort : std::uint8_t { kFifo, kPriority, kFair };
enum class GangMode : std::uint8_t { kAllOrNothing, kPlaceholders };

struct QueueTreeOptions {
  QueueTree tree;
  QueueShare share = QueueShare::kProportion;
  AppSort sort = AppSort::kFifo;
  bool reclaim = true;
  double reclaim_delay_s = 0.0;  // a job waits this long before its queue may reclaim for it
  GangMode gang = GangMode::kAllOrNothing;
  double placeholder_timeout_s = 900.0;  // YuniKorn's placeholderTimeoutInSeconds default
  TopologyPick placement = TopologyPick::kBinpack;

  static const std::vector<std::string>& keys();
  static std::vector<PolicyOptionDoc> docs(const QueueTreeOptions& defaults);
  static QueueTreeOptions parse(const ConfigNode& config, const QueueTreeOptions& defaults);
  void write(YAML::Node& resolved) const;
};

class QueueTreePolicy : public Policy {
 public:
  QueueTreePolicy(std::string name, QueueTreeOptions options);
  std::string name() const override { return name_; }
  void on_job_queued(const SchedulerView& view, JobSlot job) override;
  void on_job_finished(const SchedulerView& view, JobSlot job) override;
  void decide(const SchedulerView& view, ActionBatch& out) override;
  void snapshot(SnapshotArchive& ar) override;
  // gang: placeholders binds devices to waiting jobs (the kernel meters them bound-idle).
  bool may_bind() const override { return options_.gang == GangMode::kPlaceholders; }

  // For tests and docs: the shares of the last decision, by queue index.
  const std::vector<double>& held_gpus() const { return held_; }
  const std::vector<double>& deserved_gpus() const { return deserved_; }
  const QueueTree& tree() const { return options_.tree; }

 private:
  struct Memo {
    double deadline_s = -1;          // placeholders: when unfilled ones are released (-1: none)
    bool timed_out = false;          // placeholders released: all-or-nothing from now on
    bool reclaimed = false;          // preempted by this policy, still stopping
    double queued_s = 0;             // when it entered the queue (reclaim_delay_s)
  };
  Memo& memo(JobSlot slot);
  void setup(const SchedulerView& view);
  double job_gpus(const JobView& job) const;  // GPUs a running job holds (shares in thousandths)
  // Adds `gpus` held on `devices` to the leaf and its ancestors (and, for drf, by type).
  void add_held(int leaf, double gpus, const std::vector<DeviceId>& devices);
  double share_of(int q) const;  // deserved (proportion, drf) or guaranteed
  double key_of(int q) const;
  bool overused(int q) const;
  int pick_leaf(int q);
  // The GPUs a leaf's path can still take (the tightest max_gpus - held on the way up).
  double room(int leaf) const;
  bool uses_placeholders(const JobView& job) const;
  // Devices bound to a pending job: the kernel's, plus the binds of this decision (a job
  // may be tried again by the reclaim pass after the allocation bound part of its set).
  int bound_count(const SchedulerView& view, JobSlot slot) const;
  // Tries the job: starts it (true; with placeholders, the bind that completes its set) or,
  // with placeholders, binds what it can (false).
  bool try_start(const SchedulerView& view, JobSlot slot, int leaf, ActionBatch& out);
  bool place(const SchedulerView& view, const JobView& job, int n, std::vector<DeviceId>& out);
  bool place_share(const SchedulerView& view, const JobView& job, std::vector<DeviceId>& out);
  void claim(const std::vector<DeviceId>& devices);
  void reclaim_pass(const SchedulerView& view, ActionBatch& out);

  std::string name_;
  QueueTreeOptions options_;
  bool ready_ = false;
  bool one_site_ = true;
  const ClusterSpec* spec_ = nullptr;  // no geography, or one datacenter (placeholders need it)
  TopologyLayout layout_;
  std::vector<int> leaf_of_slot_;  // by slot, -1 = unknown
  std::vector<Memo> memos_;        // by slot
  // Per decision:
  std::vector<char> avail_;        // by device: free and not claimed in this decision
  std::vector<int> claimed_milli_; // by device: shares claimed in this decision
  int free_total_ = 0;
  double cluster_gpus_ = 0;
  std::vector<double> held_, deserved_, demand_;
  std::vector<std::vector<double>> held_by_type_;  // [queue][device type], for drf
  std::vector<double> type_capacity_;
  std::vector<std::vector<JobSlot>> pending_;  // by leaf, in `sort` order
  std::vector<std::size_t> cursor_;
  std::vector<char> started_;  // by slot: started in this decision
  std::vector<int> bound_now_;  // by slot: devices bound in this decision
  std::vector<DeviceId> devices_, scratch_;
};

// A registry entry for the engine under `name` with `defaults` (keys: QueueTreeOptions::keys()).
PolicyInfo queue_tree_policy_info(const std::string& name, const std::string& description, const QueueTreeOptions& defaults);
PolicyInfo queue_tree_generic_policy_info();  // `queue-tree`
PolicyInfo volcano_policy_info();             // `volcano`
PolicyInfo yunikorn_policy_info();            // `yunikorn`

}  // namespace schedsim
