// Trace formats. A TraceReader turns the rows of one file into JobSpecs, in file order,
// validating every field. A bad row throws InputError naming file, line and field
// (strict mode, the default) or is skipped and counted under a reason (lenient mode,
// `on_bad_row: skip`). Rows that a format leaves out by design (CPU-only jobs, jobs that
// never ran) are skipped and counted in both modes. Formats are looked up by name
// (`workload.trace.format`).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/config_node.hpp"
#include "sim/job.hpp"

namespace schedsim {

class TraceModels;  // traces/trace_models.hpp

enum class BadRowMode : std::uint8_t { kError, kSkip };

// Rows skipped, by reason ("cpu_only", "not_a_number", ...).
using RowSkips = std::map<std::string, std::uint64_t>;

// The column mapping of the `csv` (generic) format: which column of the file holds each
// JobSpec field, and the unit of its times.
struct CsvMapping {
  // JobSpec field name (job_id, submit_time, duration, num_gpus, estimate, user, group,
  // model, gpu_type, gpu_milli, iterations, deadline, priority, status, end_time) ->
  // column name in the file's header.
  std::map<std::string, std::string> columns;
  double time_unit_s = 1.0;  // seconds per unit of the time columns
  char delimiter = ',';

  // Throws InputError naming the key for unknown fields, a missing required field or a
  // bad unit.
  static CsvMapping parse(const ConfigNode& node);
  static CsvMapping load_file(const std::string& path);
  YAML::Node to_yaml() const;
};

struct TraceOptions {
  BadRowMode on_bad_row = BadRowMode::kError;
  // gavel: the throughput matrix (simulation_throughputs.json) and the device type whose
  // isolated throughput turns steps into seconds.
  std::string throughputs_path;
  std::string reference_device = "v100";
  // csv (generic): the column mapping.
  std::optional<CsvMapping> mapping;
  // pai-tasks: the PAI 2020 pai_job_table to join by job_name (user and job status);
  // empty = no join. Any other format rejects it.
  std::string job_table_path;
  // Sorting an unsorted trace holds at most this many jobs in memory; longer traces are
  // sorted in runs of this size spilled to temporary files and merged.
  std::size_t sort_memory_jobs = 100'000;
  // Called with the trace's path every few thousand rows while a trace is read (and while
  // a pipe is copied); stops a long read by throwing. The CLI passes one that throws
  // Interrupted after Ctrl-C / SIGTERM (experiments/interrupt.hpp); empty = never stop.
  std::function<void(const std::string& path)> poll_interrupt;
  // Model profiles of the jobs (workload.trace.models and the physics check,
  // traces/trace_models.hpp), applied by TraceJobSource with `model_seed`; null = none.
  std::shared_ptr<const TraceModels> models;
  std::uint64_t model_seed = 0;
};

class TraceReader {
 public:
  explicit TraceReader(BadRowMode mode) : mode_(mode) {}
  virtual ~TraceReader() = default;
  // The next job in file order; false at the end of the file. Resets every optional
  // field of `out` first, so a reused JobSpec carries nothing over from the last row.
  bool next(JobSpec& out);
  // Rows skipped so far, by reason.
  const RowSkips& skipped() const { return skipped_; }
  // Set by open_trace_reader: the file (an error in a gzip file whose stream is damaged
  // is reported as the damage, see check_gzip_intact) and the interruption poll.
  void attach(std::string path, std::function<void(const std::string&)> poll_interrupt);

 protected:
  // Fills `out` from the next usable row; false at the end. Throws BadRowError (with a
  // reason) for a bad row, after consuming it.
  virtual bool read(JobSpec& out) = 0;
  // Counts a row left out by design.
  void filtered(const std::string& reason) {
    ++skipped_[reason];
    poll();
  }

 private:
  // Every 4096 rows read or left out: a row costs about a microsecond, so a signal is
  // seen within milliseconds.
  void poll() {
    if (poll_interrupt_ && (++rows_polled_ & 4095) == 0) poll_interrupt_(path_);
  }
  [[noreturn]] void rethrow_explained();
  BadRowMode mode_;
  RowSkips skipped_;
  std::string path_;
  std::function<void(const std::string&)> poll_interrupt_;
  std::uint64_t rows_polled_ = 0;
};

struct TraceFormatInfo {
  std::string name;
  std::string description;
};

// The formats `open_trace_reader` accepts, with one-line descriptions.
std::vector<TraceFormatInfo> trace_formats();
std::vector<std::string> trace_format_names();

// Throws InputError for an unknown format (listing the known ones), a missing file, a
// header that lacks a required column, a missing option (gavel's throughput matrix,
// csv's mapping) or an option given to a format it does not apply to (a job table for
// anything but pai-tasks).
std::unique_ptr<TraceReader> open_trace_reader(const std::string& path, const std::string& format,
                                               const TraceOptions& options = {});

// Guesses the format from the file's first line ("auto" in the CLI); throws when unsure.
std::string detect_trace_format(const std::string& path);

// schedsim's own CSV format (header included), e.g. for `trace convert`. The optional
// columns are written when `columns` asks for them; see SchedsimColumns.
struct SchedsimColumns {
  bool estimate = true;
  bool attributes = true;  // user, group, model, gpu_type, gpu_milli, iterations, deadline_s, priority, status
  bool elastic = false;    // min_gpus, max_gpus (empty for rigid jobs)
};
void write_schedsim_trace_header(std::ostream& out, const SchedsimColumns& columns);
void write_schedsim_trace_row(std::ostream& out, const JobSpec& job, const SchedsimColumns& columns);
// The original two-flag form: the four required columns, plus estimate_s when asked.
void write_schedsim_trace_header(std::ostream& out, bool with_estimates);
void write_schedsim_trace_row(std::ostream& out, const JobSpec& job, bool with_estimates);

}  // namespace schedsim
