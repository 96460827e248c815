// Where jobs come from: a trace reader or a synthetic generator, pulled one job at a time
// so that memory is bounded by the jobs in the system, not by the length of the workload.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "sim/job.hpp"

namespace schedsim {

class JobSource {
 public:
  virtual ~JobSource() = default;
  // Fills `out` with the next job and returns true, or returns false at the end.
  // Submit times are nondecreasing. Throws InputError on bad input.
  virtual bool next(JobSpec& out) = 0;
  // A name for messages: the trace path, or "synthetic workload".
  virtual std::string describe() const = 0;
  // How many jobs the source will offer, when known (0 = unknown): for progress lines.
  virtual std::uint64_t expected_jobs() const { return 0; }
  // Input rows the source left out, by reason (trace readers: CPU-only jobs, bad rows
  // in lenient mode...); empty for generated workloads.
  virtual std::map<std::string, std::uint64_t> rows_skipped() const { return {}; }
};

}  // namespace schedsim
