#include "run/jobs_csv_writer.hpp"

#include <utility>

#include "base/tick.hpp"
#include "traces/csv.hpp"

namespace schedsim {

namespace {
// Device-time counters are kept in microseconds and written in seconds.
JobFieldList::Writer device_seconds(std::int64_t JobState::*us) {
  return [us](std::ostream& out, const JobState& j) { out << format_seconds(Tick::from_us(j.*us)); };
}
}  // namespace

void add_job_record_fields(JobFieldList& f) {
  f.add("job_id", "", [](std::ostream& out, const JobState& j) { write_csv_field(out, j.spec.id); });
  f.add("submit_s", "s", [](std::ostream& out, const JobState& j) { out << format_seconds(j.spec.submit); });
  f.add("start_s", "s", [](std::ostream& out, const JobState& j) { out << format_seconds(j.start); });
  f.add("end_s", "s", [](std::ostream& out, const JobState& j) { out << format_seconds(j.end); });
  f.add("num_gpus", "", [](std::ostream& out, const JobState& j) { out << j.spec.num_gpus; });
  f.add("jct_s", "s", [](std::ostream& out, const JobState& j) { out << format_seconds(j.end - j.spec.submit); });
  f.add("queue_delay_s", "s", [](std::ostream& out, const JobState& j) { out << format_seconds(j.end - j.spec.submit - Tick::from_us(j.held_us)); });
  f.add("status", "", [](std::ostream& out, const JobState& j) { out << to_string(j.status); });
  f.add("gpu_s", "s", device_seconds(&JobState::device_us));
  f.add("checkpoint_gpu_s", "s", device_seconds(&JobState::overhead_device_us));
  f.add("preemptions", "", [](std::ostream& out, const JobState& j) { out << j.preemptions; });
  f.add("moves", "", [](std::ostream& out, const JobState& j) { out << j.moves; });
  f.add("loss_spike_restarts", "", [](std::ostream& out, const JobState& j) { out << j.loss_spike_restarts; });
  f.add("failure_restarts", "", [](std::ostream& out, const JobState& j) { out << j.failure_restarts; });
  f.add("periodic_checkpoint_gpu_s", "s", device_seconds(&JobState::checkpoint_device_us));
  f.add("restart_gpu_s", "s", device_seconds(&JobState::restart_device_us));
  f.add("lost_gpu_s", "s", device_seconds(&JobState::lost_device_us));
}

JobFieldList jobs_csv_fields(EnergyMeter* energy, bool bound_idle, const ClusterPhysics* plans) {
  JobFieldList f;
  add_job_record_fields(f);
  EnergyMeter::add_job_fields(f, energy);
  if (bound_idle) f.add("bound_idle_gpu_s", "s", device_seconds(&JobState::bound_idle_device_us));
  if (plans) f.add("plan", "", [plans](std::ostream& out, const JobState& j) { write_csv_field(out, plans->plan_of(j.spec.id)); });
  return f;
}

JobsCsvWriter::JobsCsvWriter(std::ostream& out, JobFieldList fields) : out_(out), fields_(std::move(fields)) { fields_.write_csv_header(out_); }

}  // namespace schedsim
