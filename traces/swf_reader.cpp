// Parallel Workloads Archive Standard Workload Format (SWF), plain or gzip: 18
// whitespace-separated fields per job, ';' comment lines, -1 = missing. Processors are
// read as GPUs. Float spellings in integer fields ("18.00") are accepted when the value
// is whole (times may have fractions).
#include <cmath>

#include "base/error.hpp"
#include "traces/csv.hpp"
#include "traces/line_reader.hpp"
#include "traces/readers.hpp"

namespace schedsim {
namespace {

const char* const kSwfFields[18] = {"job_number",     "submit_time",      "wait_time",       "run_time",       "allocated_processors",
                                    "average_cpu_time", "used_memory",    "requested_processors", "requested_time", "requested_memory",
                                    "status",         "user_id",          "group_id",        "executable",     "queue",
                                    "partition",      "preceding_job",    "think_time"};

class SwfReader : public TraceReader {
 public:
  SwfReader(const std::string& path, BadRowMode mode) : TraceReader(mode), lines_(path) {}

 protected:
  bool read(JobSpec& out) override {
    while (lines_.next(line_)) {
      if (line_.find('\0') != std::string::npos) throw BadRowError(where(), "the line contains a NUL byte; is this a binary file?", "malformed_row");
      fields_.clear();
      std::string_view rest(line_);
      while (!rest.empty()) {
        const auto b = rest.find_first_not_of(" \t\r");
        if (b == std::string_view::npos) break;
        rest.remove_prefix(b);
        const auto e = rest.find_first_of(" \t\r");
        fields_.push_back(rest.substr(0, e));
        rest.remove_prefix(e == std::string_view::npos ? rest.size() : e);
      }
      if (fields_.empty() || fields_[0].front() == ';') continue;  // blank or header comment
      if (fields_.size() != 18) {
        throw BadRowError(where(), "expected the 18 fields of the Standard Workload Format, got " + std::to_string(fields_.size()), "malformed_row");
      }
      out.id.assign(fields_[0]);
      const double submit = value(1);
      if (submit < 0) fail(1, "must be >= 0 seconds (-1 = missing is not allowed for the submit time)", submit < -1 ? "out_of_range" : "missing_value");
      out.submit = Tick::from_seconds(submit);
      const double run = value(3);
      if (run < 0) {
        filtered("missing_run_time");
        continue;
      }
      if (run == 0) {
        filtered("zero_duration");
        continue;
      }
      out.duration_s = run;
      double procs = whole(4);
      if (procs < 0) procs = whole(7);
      if (procs < 0) {
        filtered("missing_processors");
        continue;
      }
      if (procs == 0) {
        filtered("zero_processors");
        continue;
      }
      if (procs > 1e6) fail(4, "must be at most 1000000 processors", "out_of_range");
      out.num_gpus = static_cast<int>(procs);
      const double requested = value(8);
      if (requested > 0) out.estimate_s = requested;
      const double status = whole(10);
      if (status == 1) out.recorded_status = RecordedStatus::kCompleted;
      else if (status == 0) out.recorded_status = RecordedStatus::kFailed;
      else if (status == 5) out.recorded_status = RecordedStatus::kKilled;
      else if (status == -1 || (status >= 2 && status <= 4)) out.recorded_status = RecordedStatus::kUnknown;
      else fail(10, "allowed statuses are 0 (failed), 1 (completed), 2-4 (partial executions), 5 (cancelled) and -1 (missing)", "bad_value");
      const double user = whole(11);
      if (user >= 0) out.user.assign(fields_[11]);
      const double group = whole(12);
      if (group >= 0) out.group.assign(fields_[12]);
      out.source_line = lines_.line();
      return true;
    }
    return false;
  }

 private:
  std::string where() const { return lines_.path() + ":" + std::to_string(lines_.line()); }
  [[noreturn]] void fail(int i, const std::string& what, const char* reason) const {
    throw BadRowError(where() + ": field " + std::to_string(i + 1) + " (" + kSwfFields[i] + ")", what + ", got '" + std::string(fields_[static_cast<std::size_t>(i)]) + "'", reason);
  }
  double value(int i) const {
    double v = 0;
    if (!parse_double(fields_[static_cast<std::size_t>(i)], v)) fail(i, "expected a number", "not_a_number");
    if (!std::isfinite(v)) fail(i, "expected a finite number", "not_a_number");
    if (std::fabs(v) > 1e12) fail(i, "the value is out of range (over 10^12)", "out_of_range");
    return v;
  }
  double whole(int i) const {
    const double v = value(i);
    if (v != std::floor(v)) fail(i, "expected a whole number", "not_a_number");
    return v;
  }

  LineReader lines_;
  std::string line_;
  std::vector<std::string_view> fields_;
};

}  // namespace

std::unique_ptr<TraceReader> make_swf_reader(const std::string& path, const TraceOptions& o) {
  return std::make_unique<SwfReader>(path, o.on_bad_row);
}

}  // namespace schedsim
