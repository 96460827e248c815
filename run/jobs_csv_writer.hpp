// jobs.csv: one row per ended job, its columns from one field list (sim/output_fields.hpp)
// that the kernel's job record and the meters contribute to. Adding a column is one line
// in the table of whoever owns the value (docs/architecture.md "how to add a metric").
#pragma once

#include <ostream>

#include "world/physics/cluster_physics.hpp"
#include "world/energy/energy.hpp"
#include "sim/observer.hpp"
#include "sim/output_fields.hpp"

namespace schedsim {

// The columns of the kernel's job record, in file order: job_id ... lost_gpu_s.
void add_job_record_fields(JobFieldList& fields);

// Every column of a run's jobs.csv, in file order: the job record's, the energy meter's
// (`energy` may be null: empty cells), then bound_idle_gpu_s when the policy may bind
// devices to waiting jobs (`bound_idle`), then plan when the run has LLM jobs under a
// parallelism plan (`plans`, else null; docs/parallelism.md).
JobFieldList jobs_csv_fields(EnergyMeter* energy, bool bound_idle, const ClusterPhysics* plans);

// Streams jobs.csv as jobs finish: memory stays bounded by the jobs in the system. A
// field that needs a meter's value pulls it from that meter, so the writer may be added
// before or after the meters.
class JobsCsvWriter : public Observer {
 public:
  JobsCsvWriter(std::ostream& out, JobFieldList fields);
  void on_job_end(const JobState& j) override { fields_.write_csv_row(out_, j); }
  // Its rows are in the file (RunSnapshots keeps the file's position); nothing else.
  void snapshot(SnapshotArchive& /*ar*/) override {}

 private:
  std::ostream& out_;
  JobFieldList fields_;
};

}  // namespace schedsim
