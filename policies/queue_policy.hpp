// The engine behind every queue-order policy: pending jobs sorted by a QueueOrder key
// (smaller first, ties broken by arrival order), started head first with the configured
// placement until the head does not fit (Discipline below: or past it, or re-admitting
// running and queued jobs together). Extras compose with any order:
//  - preemption: a blocked head may stop running jobs with a strictly worse key (the
//    worst first) when that frees enough devices for it;
//  - EASY backfilling: a blocked head gets a reservation (the earliest instant enough
//    devices free up, from running jobs' estimated ends) and later jobs start now if they
//    end before it or fit in the devices the head will not need.
// Without extras the head blocks the queue and a decision costs O(jobs started + 1);
// running jobs are only examined when the head is blocked and an extra is on. Orders whose
// keys change while queued (QueueOrder::keys_change_while_queued) add one re-keying pass
// over the queue per decision, O(n log n), and O(log n) per stale head re-inserted, except
// grouped orders (QueueOrder::grouped, e.g. fair share) without backfilling: one queue per
// group, O(log groups + log n) per start.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "policies/placement.hpp"
#include "policies/queue_order.hpp"
#include "policies/registry.hpp"
#include "sim/policy.hpp"
#include "base/rng.hpp"

namespace schedsim {

enum class Backfill { kNone, kEasy };

// What a decision does with a queued job that does not fit: kBlocking stops there (later
// jobs wait behind it, unless backfilling lets them by); kSkip passes over it and tries
// every later job in order (work-conserving: any job that fits starts, as Tiresias' and
// Gandiva's schedulers do). kRepack re-admits every job at each decision, running and
// queued, in key order, each while enough devices remain (counted, skipping a job that
// does not fit); running jobs left out are preempted, queued ones let in start. Ties
// inside a key go by queue entry, as in Tiresias' list queues: a job enters at its
// arrival and when its key changes; after each decision the jobs still queued go behind
// the others, in their order (so a job just preempted goes ahead of those that waited).
enum class Discipline : std::uint8_t { kBlocking, kSkip, kRepack };

// Options every queue policy shares.
// Which devices a job tries first when the scenario has a market (docs/market.md): any
// (the placement decides), spot first, non-spot first, or spot first only for short jobs
// (estimate <= spot_short_s) and non-spot first for the others. Falls back to the
// placement over every device when the preferred class has no room.
enum class SpotPreference : std::uint8_t { kAny, kPrefer, kAvoid, kShort };

struct QueuePolicyOptions {
  Placement placement = Placement::kFirstFit;
  bool preemption = false;
  Backfill backfill = Backfill::kNone;
  Discipline discipline = Discipline::kBlocking;
  // Slurm's bf_max_job_test: how many queued jobs behind the head one backfill pass
  // examines at most; bounds the work per decision.
  std::int64_t backfill_depth = 100;
  SpotPreference spot = SpotPreference::kAny;
  double spot_short_s = 3600.0;  // kShort: jobs whose estimate is at most this prefer spot
  std::uint64_t seed = 0;  // for random placement
  // The scenario's information model (from the PolicyContext): the order's sizes and the
  // backfill reservations come from it; the constructor refuses what it cannot provide.
  InformationModel information;

  // The config keys parse() reads.
  static const std::vector<std::string>& keys();
  static std::vector<PolicyOptionDoc> docs(const QueuePolicyOptions& defaults);
  // Reads the shared keys from `config` over `defaults` (other keys are the caller's).
  static QueuePolicyOptions parse(const ConfigNode& config, const PolicyContext& context, const QueuePolicyOptions& defaults);
  void write(YAML::Node& resolved) const;
};

class QueuePolicy : public Policy {
 public:
  QueuePolicy(std::string name, std::unique_ptr<QueueOrder> order, const QueuePolicyOptions& options);
  std::string name() const override { return name_; }
  void on_job_queued(const SchedulerView& view, JobSlot job) override;
  void on_job_finished(const SchedulerView& view, JobSlot job) override;
  void decide(const SchedulerView& view, ActionBatch& out) override;
  void snapshot(SnapshotArchive& ar) override;
  // What the repack discipline's sorts did (tests guard the shape: about one step an
  // entry, std::sort only when the last decision's order is far off).
  struct RepackWork {
    std::uint64_t queued_only = 0;  // decisions where every queued job fit: only the queued entries sorted
    std::uint64_t passes = 0;       // decisions that sorted the whole pass (sort_pass())
    std::uint64_t entries = 0;     // running and queued jobs ranked, over all passes
    std::uint64_t moves = 0;       // insertion-sort shifts
    std::uint64_t full_sorts = 0;  // passes handed to std::sort (move budget spent)
    // Orders with timers: running jobs' keys asked of the order (QueueOrder::running_key_info)
    // and reused from an earlier decision, and reused next key changes asked again for
    // the wake-up (the candidates for the earliest).
    std::uint64_t keys_asked = 0;
    std::uint64_t keys_reused = 0;
    std::uint64_t wake_asked = 0;
  };
  const RepackWork& repack_work() const { return work_; }

 private:
  using Entry = std::tuple<double, std::uint64_t, JobSlot>;  // (key, arrival sequence, slot)
  struct Queued {
    double key = 0;
    double promote_at_s = 0;
    int group = -1;  // grouped orders
  };
  // Grouped orders (QueueOrder::grouped()): the queued jobs of one group by arrival.
  struct Group {
    std::set<std::pair<std::uint64_t, JobSlot>> jobs;  // (arrival sequence, slot)
    bool listed = false;  // in group_heads_ with key and head_seq
    double key = 0;
    std::uint64_t head_seq = 0;
  };

  bool place(const SchedulerView& view, const JobView& job, std::vector<DeviceId>& out);
  // The spot preference: `job` on free devices of the class it prefers (spot or not), in
  // one datacenter it may use, lowest ids first; false when none has room.
  bool place_by_spot(const SchedulerView& view, const JobView& job, std::vector<DeviceId>& out);
  bool is_short(const JobView& job) const;
  // A fractional job's device under the configured placement (only_type as in packed()).
  bool place_share(const JobView& job, std::vector<DeviceId>& out, int only_type);
  // A whole-device job of `n` by the configured placement, within type `only_type` when >= 0.
  bool place_whole(int n, std::vector<DeviceId>& out, int only_type);
  // A whole-device job that no single device type can host (more devices than any type
  // has, or memory), under physics.mixed_types other than forbid: across the types whose
  // memory holds it, by the agnostic placement when every type does, else first fit.
  bool place_across_types(const SchedulerView& view, const JobView& job, std::vector<DeviceId>& out);
  std::vector<DeviceId> across_candidates_;  // scratch of place_across_types
  // topology_tree: the switches over the nodes, from the view at the first placement.
  void build_switch_tree(const SchedulerView& view);
  SwitchTree switch_tree_;
  bool switch_tree_built_ = false;
  // Several datacenters (a geography), whole-device jobs: the kernel runs a job inside
  // one, and only where it may run. First fit inside one datacenter: its home first, then the others in
  // order; within one device type in the physics model's order under
  // physics.mixed_types: forbid, else over the types whose memory holds the job.
  bool place_in_one_datacenter(const SchedulerView& view, const JobView& job, std::vector<DeviceId>& out);
  void promote_due(const SchedulerView& view);
  // For orders whose keys change while queued: recompute every queued key (O(n log n)).
  void refresh_keys(const SchedulerView& view);
  void rekey(JobSlot slot, const Entry& entry, double key);
  void remove(JobSlot slot, const Entry& entry);
  // Emits the start of queued job `slot` (its entry `entry`) on devices_.
  void start(const SchedulerView& view, JobSlot slot, const Entry& entry, ActionBatch& out);
  // The job left the running set (back in the queue, or finished).
  void stopped_running(JobSlot slot);
  // Preempts for the blocked head. Returns true when the head was started in this batch
  // (checkpoints are free); sets `waiting` when devices were freed for it later.
  bool preempt_for(const SchedulerView& view, const Entry& head, ActionBatch& out, bool& waiting);
  void backfill(const SchedulerView& view, ActionBatch& out);
  // Discipline::kSkip: after the head blocked, every later queued job in order that fits
  // starts (and, with preemption, may preempt worse running jobs for itself).
  void skip_pass(const SchedulerView& view, ActionBatch& out, bool dynamic);
  // Discipline::kRepack: the whole decision.
  void decide_repack(const SchedulerView& view, ActionBatch& out);
  std::uint64_t& stamp_of(JobSlot slot) {  // inline: read for every entry of every repack pass
    const auto i = static_cast<std::size_t>(slot);
    if (stamps_.size() <= i) stamps_.resize(i + 1, 0);
    return stamps_[i];
  }
  // Asks for a decision point when the order says a running job's key changes next.
  // from_pass: decide_repack() has taken the earliest next key change of the running
  // jobs (pass_next_change_s_; used when it preempted nobody, else they are asked here).
  void request_wake(const SchedulerView& view, ActionBatch& out, bool from_pass = false);
  bool queue_empty() const { return grouped_ ? group_heads_.empty() : queue_.empty(); }
  // Grouped orders: puts group `g` back in group_heads_ under its current key and first job.
  void relist(int g);
  void decide_grouped(const SchedulerView& view, ActionBatch& out);
  // After loading a snapshot: refuses slots, groups or devices that do not exist.
  void check_restored(SnapshotArchive& ar) const;

  std::string name_;
  std::unique_ptr<QueueOrder> order_;
  QueuePolicyOptions options_;
  Rng rng_;
  FreeDevices free_;
  std::vector<std::vector<DeviceId>> by_class_;  // the market's devices by (site, spot or not, device type), ascending
  TaskMix mix_;  // the workload's request classes seen so far (fgd placement)
  const std::vector<int>* node_group_ = nullptr;
  std::set<Entry> queue_;  // every queued job, unless grouped_
  // grouped_: the order is grouped and there is no backfilling (which walks the queue in
  // the keyed order); then queued jobs live in groups_, and group_heads_ holds
  // (group key, arrival sequence of its first job, group) for every non-empty group.
  bool grouped_ = false;
  bool timers_ = false;  // order_->has_timers(): wake at the order's next key change
  std::vector<Group> groups_;
  std::set<Entry> group_heads_;
  std::set<std::tuple<double, std::uint64_t, JobSlot>> promotions_;  // (instant s, seq, slot)
  std::vector<Queued> queued_;  // by slot, valid while the job is queued
  std::vector<DeviceId> devices_;
  std::vector<JobSlot> preempted_;
  std::vector<std::vector<DeviceId>> stopping_devices_;  // by slot: devices of a job this policy preempted, until it is back in the queue
  int stopping_count_ = 0;  // their number, summed over slots
  // Keys of running jobs when they started, for running_keys_only_improve() orders: an
  // upper bound of their keys now. NaN by slot = not running.
  std::multiset<double> running_keys_;
  std::vector<double> started_key_;  // in this decision: still listed as running until applied
  std::vector<std::tuple<double, std::uint64_t, JobSlot>> scratch_;
  // kRepack: queue-entry stamps by slot (the tie-breaker inside a key), the next stamp,
  // the key each running job had at the last decision (NaN = none), and the jobs this
  // policy preempted that keep their stamp when they come back to the queue.
  std::vector<std::uint64_t> stamps_;
  std::uint64_t next_stamp_ = 0;
  std::vector<double> repack_key_;
  std::vector<char> keeps_stamp_;
  struct RepackEntry {
    double key;
    std::uint64_t stamp;
    JobSlot slot;
    int need;  // devices counted: held (running) or asked for (queued)
    bool running;
    bool fractional;  // a queued fractional job: no count to take
    bool operator<(const RepackEntry& o) const { return key != o.key ? key < o.key : stamp < o.stamp; }
  };
  std::vector<JobSlot> started_now_;  // orders with timers: the jobs this decision starts
  std::vector<RepackEntry> pass_;
  RepackWork work_;
  std::vector<std::pair<std::uint64_t, JobSlot>> restamp_;  // (stamp, slot) of the jobs stamped again after a decision
  // Sorts pass_'s first `queued` entries (the queued jobs) and the running ones after them,
  // each part by (key, stamp); true when the running part was not already in order.
  bool sort_pass(std::size_t queued);
  // After a full pass that reordered the running jobs: held_ in that order.
  void reorder_held(std::size_t queued);
  double pass_next_change_s_ = 0.0;  // the earliest next key change of the running jobs, taken by the pass
  // Running jobs whose key changed since the last decision: arrival, slot, index in pass_.
  static constexpr std::size_t kNotInPass = static_cast<std::size_t>(-1);
  struct Rekeyed {
    std::uint64_t arrival_seq;
    JobSlot slot;
    std::size_t index;
  };
  std::vector<Rekeyed> rekeyed_;
  // kRepack: the kernel's running (and stopping) jobs as this policy follows them (the
  // starts it emits, the ends and returns to the queue it is told of), packed, so that a
  // decision reads them without walking the kernel's list from job to job; rebuilt from
  // the view when the counts differ (after a restore). Kept in the last full pass's order.
  // Orders with timers: each also keeps the job's QueueOrder::running_key_info(), reused
  // while the instant is at most stable_until and the job's progress_as_of() (the
  // kernel's JobState::last_update) and stall_end are those it was computed from. The kernel brings a job's progress up to
  // date (Simulator::advance: last_update = now) at every change of its rate, stall,
  // remaining work or status, as kernel_remaining_work_s() needs, so an unchanged
  // last_update means an unchanged record; an answer computed when last_update was the
  // instant itself is not reused (a change later in that instant would keep it).
  struct Held {
    JobSlot slot;
    bool fractional;
    int devices;  // held, as of the answer
    Tick stable_until;  // kNoAnswer: nothing to reuse
    Tick last_update;
    Tick stall_end;
    double key;
    double next_change_s;
    double next_change_err_s;
  };
  static constexpr Tick kNoAnswer = Tick::from_us(std::numeric_limits<std::int64_t>::min());
  std::vector<Held> held_;
  std::vector<std::uint32_t> held_pos_;  // by slot: 1 + index in held_, 0 = none
  std::vector<Held> held_scratch_;
  void hold(JobSlot slot, bool fractional);
  void unhold(JobSlot slot);
  void sync_held(const SchedulerView& view);
  void forget_key(JobSlot slot) {
    const auto i = static_cast<std::size_t>(slot);
    if (i < held_pos_.size() && held_pos_[i] != 0) held_[held_pos_[i] - 1].stable_until = kNoAnswer;
  }
  // A running job's next key change in this decision: [earliest_s, latest_s] (one value
  // when just asked; a reused entry's rounding range).
  struct RunChange {
    RunChange() {}  // left uninitialised: add_run() fills every field
    double earliest_s;
    double latest_s;
    JobSlot slot;
    bool reused;
  };
  std::vector<RunChange> runs_;
  // Filled in place: a temporary pushed back is stored field by field and copied with
  // wider loads, a store-forwarding stall per running job.
  void add_run(double earliest_s, double latest_s, JobSlot slot, bool reused) {
    RunChange& r = runs_.emplace_back();
    r.earliest_s = earliest_s;
    r.latest_s = latest_s;
    r.slot = slot;
    r.reused = reused;
  }
  // The earliest next key change of runs_ but `victims`, exactly as asking each would give.
  double earliest_key_change(const SchedulerView& view, const std::vector<JobSlot>& victims);
  std::vector<JobSlot> admitted_;
  std::vector<DeviceId> released_;
};

// A registry entry for a queue policy named `name` built on `order`: accepts `name`,
// the shared options and the order's own options. The shared options default to
// `defaults`, except preemption, which defaults to the order's preemptive_by_default.
PolicyInfo queue_policy_info(const std::string& name, const std::string& description, const OrderKind& order,
                             QueuePolicyOptions defaults = {});

}  // namespace schedsim
