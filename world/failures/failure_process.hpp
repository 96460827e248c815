// The failures model as a world process (sim/world_process.hpp): loss spikes, device and
// node failures and repairs, stragglers, periodic checkpoints and trace-recorded
// outcomes. The model (sim/failure_model.hpp) draws the random times and computes
// intervals and costs; here they become events, rollbacks, restarts and requeues, through
// the kernel's core actions.
//
// Event kinds 4..8 (event_kind::kLossSpike .. kUnitRepair) keep the numbers the kernel
// gave them before this was a process, so event order and snapshots are unchanged.
#pragma once

#include <vector>

#include "world/failures/failure_model.hpp"
#include "sim/world_process.hpp"

namespace schedsim {

class FailureProcess final : public WorldProcess {
 public:
  // The model must outlive the process.
  explicit FailureProcess(FailureModel& model) : model_(model) {}

  const char* name() const override { return "failures"; }
  std::uint32_t hooks() const override;
  void start(WorldContext& ctx) override;
  std::vector<std::uint32_t> event_kinds() const override;
  void handle(WorldContext& ctx, const Event& e) override;
  double rate_factor(const JobState& j) const override { return model_.straggler_factor(j.devices); }
  void on_job_arrival(WorldContext& ctx, JobSlot slot) override;
  void on_compute_begins(WorldContext& ctx, JobSlot slot) override;
  void on_progress_interrupted(WorldContext& ctx, JobSlot slot, Interruption why) override;
  void start_overhead(WorldContext& ctx, JobSlot slot, Span<DeviceId> devices, bool moving, StartOverhead& out) override;
  void completion_status(const JobState& j, JobStatus& status) const override;
  int checkpoint_marks_kept() const override { return model_.config().loss_spikes.rollback_checkpoints; }
  SnapshotSlot snapshot_slot() const override { return SnapshotSlot::kAfterPhysics; }
  void snapshot(SnapshotArchive& ar) override;
  void snapshot_job(SnapshotArchive& ar, JobSlot slot) override;
  void check_restored(const WorldContext& ctx, SnapshotArchive& ar) const override;
  void check_event(const WorldContext& ctx, SnapshotArchive& ar, const Event& e, const std::string& what) const override;
  DeviceReasons device_reasons_used() const override { return device_reason::kUnderRepair; }

  // What the process keeps per job slot (reset when a job arrives in the slot): its armed
  // timers, the checkpoint being written, and whether the next start is a restart.
  struct JobTimers {
    CheckpointMark pending_checkpoint;  // being written (not reset on arrival: its value is only read after a write)
    EventId loss_spike_event = 0;
    EventId checkpoint_due_event = 0;
    EventId checkpoint_commit_event = 0;
    bool needs_restart = false;  // rolled back and requeued: pays the restart overhead at its next start
  };
  // Read access for tests and outputs: the side-table entry of `slot` (defaults for a slot
  // that never held a job).
  JobTimers timers(JobSlot slot) const;

 private:
  // The side-table entry of `slot` (grown on first use): inline, it is asked at every
  // start, stall end and checkpoint.
  JobTimers& entry(JobSlot slot) {
    const auto i = static_cast<std::size_t>(slot);
    return i < jobs_.size() ? jobs_[i] : grow(slot);
  }
  JobTimers& grow(JobSlot slot);
  void disarm(WorldContext& ctx, JobSlot slot);
  void handle_loss_spike(WorldContext& ctx, const Event& e);
  void handle_checkpoint_due(WorldContext& ctx, const Event& e);
  void handle_checkpoint_commit(WorldContext& ctx, const Event& e);
  void handle_unit_failure(WorldContext& ctx, const Event& e);
  void handle_unit_repair(WorldContext& ctx, const Event& e);
  void fail_job(WorldContext& ctx, JobSlot slot, Tick repair_at);

  FailureModel& model_;
  std::vector<JobTimers> jobs_;    // by job slot
  std::vector<JobSlot> hit_jobs_;  // reused: jobs on a failing unit
};

}  // namespace schedsim
