// A JobSource over a trace file. Construction reads the file once to validate every row
// (so a bad row stops the run before it starts, not hours in), to count skipped rows
// and to check the order of submit times. A sorted trace is then streamed a second time,
// keeping memory bounded by the jobs in the system. An unsorted one is sorted by submit
// time (ties keep file order) and reported in `warnings`: in memory when it has at most
// `TraceOptions::sort_memory_jobs` jobs, otherwise as sorted runs of that size in
// temporary files that are merged while the simulation pulls jobs (unlinked as soon as
// they are open, so that not even a kill leaves them behind).
//
// A trace that can be read only once (a FIFO, /dev/fd/N from process substitution) is
// first copied into a temporary file (InputSpool), and so are a pai-tasks job table and
// a gavel throughput matrix given that way; messages still name the paths given.
#pragma once

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "sim/job_source.hpp"
#include "traces/temp_files.hpp"
#include "traces/trace_reader.hpp"

namespace schedsim {

class TraceJobSource : public JobSource {
 public:
  TraceJobSource(std::string path, std::string format, std::vector<std::string>& warnings);
  // `format` may be "auto": guessed from the first line (detect_trace_format).
  TraceJobSource(std::string path, std::string format, const TraceOptions& options, std::vector<std::string>& warnings);

  bool next(JobSpec& out) override;
  std::string describe() const override { return path_; }
  // The format read (the one detected when "auto" was given).
  const std::string& format() const { return format_; }
  std::uint64_t expected_jobs() const override { return num_jobs_; }
  // Rows of the whole file that were skipped, by reason (from the validation pass).
  std::map<std::string, std::uint64_t> rows_skipped() const override { return skipped_; }
  bool has_estimates() const { return has_estimates_; }
  bool sorted() const { return stream_ != nullptr; }
  // JobSpecs held in memory right now: 0 for a streamed (sorted) trace, one per run
  // while merging sorted runs.
  std::size_t jobs_buffered() const { return sorted_.size() - sorted_next_ + heads_.size(); }
  // Temporary sorted runs of an unsorted trace (0 when it was sorted in memory).
  std::size_t sort_runs() const { return runs_.size(); }
  ~TraceJobSource() override;
  TraceJobSource(const TraceJobSource&) = delete;
  TraceJobSource& operator=(const TraceJobSource&) = delete;

 private:
  std::string path_;
  std::string format_;
  TraceOptions options_;
  std::uint64_t num_jobs_ = 0;
  bool has_estimates_ = false;
  RowSkips skipped_;
  std::unique_ptr<TraceReader> stream_;  // sorted trace: second pass over the file
  std::vector<JobSpec> sorted_;          // unsorted trace: loaded and sorted
  std::size_t sorted_next_ = 0;
  // Unsorted trace longer than sort_memory_jobs: sorted runs on disk, merged.
  struct Run;
  std::vector<std::unique_ptr<Run>> runs_;
  struct Head {
    Tick submit;
    std::size_t run;
    bool operator>(const Head& o) const { return submit != o.submit ? submit > o.submit : run > o.run; }
  };
  std::vector<Head> heads_;  // min-heap of the next job of each run
  std::unique_ptr<InputSpool> spool_;    // what is opened: the file, or a pipe's copy
  // The same for the files read with the trace each time it is opened (job table,
  // throughput matrix); options_ names what they hold.
  std::vector<std::unique_ptr<InputSpool>> side_spools_;
  bool next_as_read(JobSpec& out);  // next(), before options_.models is applied
  bool spooled() const;
  // `message` naming the paths given instead of the copies.
  std::string renamed(std::string message) const;
  void read_trace(std::vector<std::string>& warnings);
  std::unique_ptr<TraceReader> open_reader() const;
  void external_sort(std::vector<std::string>& warnings);
};

}  // namespace schedsim
