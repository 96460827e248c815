// Gavel job traces (stanford-futuredata/gavel scheduler/traces/*.trace): TAB-separated,
// 10 fields (job_type, command, working_dir, num_steps_arg, needs_data_dir, total_steps,
// scale_factor, priority_weight, SLO, arrival_time) or the older 7 (job_type, command,
// num_steps_arg, needs_data_dir, total_steps, arrival_time, scale_factor). Work is given
// in steps; the throughput matrix turns it into seconds on a reference device type.
#include <cmath>

#include "base/error.hpp"
#include "world/physics/throughput_matrix.hpp"
#include "traces/csv.hpp"
#include "traces/line_reader.hpp"
#include "traces/readers.hpp"

namespace schedsim {
namespace {

class GavelReader : public TraceReader {
 public:
  GavelReader(const std::string& path, const TraceOptions& o)
      : TraceReader(o.on_bad_row), lines_(path), matrix_(load(path, o)), matrix_path_(o.throughputs_path), device_(o.reference_device) {
    const auto devices = matrix_.device_types();
    if (std::find(devices.begin(), devices.end(), device_) == devices.end()) {
      std::string list;
      for (const auto& d : devices) list += (list.empty() ? "" : ", ") + d;
      throw InputError(o.throughputs_path, "reference device type '" + device_ + "' is not in the throughput matrix; it has: " + list);
    }
  }

 protected:
  bool read(JobSpec& out) override {
    while (lines_.next(line_)) {
      if (!line_.empty() && line_.back() == '\r') line_.pop_back();
      if (line_.find('\0') != std::string::npos) throw BadRowError(where(), "the line contains a NUL byte; is this a binary file?", "malformed_row");
      if (trim(line_).empty()) continue;
      const std::uint64_t index = jobs_seen_++;
      fields_.clear();
      std::string_view rest(line_);
      while (true) {
        const auto pos = rest.find('\t');
        fields_.push_back(rest.substr(0, pos));
        if (pos == std::string_view::npos) break;
        rest.remove_prefix(pos + 1);
      }
      int steps_col = 0, scale_col = 0, arrival_col = 0, priority_col = -1, slo_col = -1;
      if (fields_.size() == 10) {
        steps_col = 5, scale_col = 6, priority_col = 7, slo_col = 8, arrival_col = 9;
        names_ = kTen;
      } else if (fields_.size() == 7) {
        steps_col = 4, arrival_col = 5, scale_col = 6;
        names_ = kSeven;
      } else {
        throw BadRowError(where(), "expected 10 TAB-separated fields (or the older 7), got " + std::to_string(fields_.size()), "malformed_row");
      }
      out.id = std::to_string(index);
      out.model.assign(trim(fields_[0]));
      if (out.model.empty()) fail(0, "the job type is empty", "missing_value");
      const double steps = value(steps_col);
      if (!(steps >= 1) || steps != std::floor(steps)) fail(steps_col, "expected a whole number of steps >= 1", "out_of_range");
      const double scale = value(scale_col);
      if (!(scale >= 1) || scale != std::floor(scale) || scale > 1e6) fail(scale_col, "expected a whole GPU count from 1 to 1000000", "out_of_range");
      const double arrival = value(arrival_col);
      if (arrival < 0) fail(arrival_col, "must be >= 0 seconds", "out_of_range");
      out.submit = Tick::from_seconds(arrival);
      out.num_gpus = static_cast<int>(scale);
      out.iterations = steps;
      const auto rate = matrix_.isolated_steps_per_s(out.model, device_, out.num_gpus);
      if (!rate) {
        fail(0, "job type '" + out.model + "' at " + std::to_string(out.num_gpus) + " GPUs has no isolated throughput on " + device_ + " in " +
                    matrix_path_,
             "unknown_job_type");
      }
      if (!(*rate > 0)) fail(0, "the isolated throughput of this job type on " + device_ + " is 0 steps/s, so its duration is undefined", "unknown_job_type");
      out.duration_s = steps / *rate;
      if (out.duration_s > 1e12) fail(steps_col, "the duration is over 10^12 seconds", "out_of_range");
      if (priority_col >= 0) out.priority = value(priority_col);
      if (slo_col >= 0) {
        const double slo = value(slo_col);
        if (slo > 0) out.deadline_s = arrival + slo * out.duration_s;
      }
      out.source_line = lines_.line();
      return true;
    }
    return false;
  }

 private:
  static constexpr const char* kTen[10] = {"job_type", "command",         "working_dir", "num_steps_arg", "needs_data_dir",
                                           "total_steps", "scale_factor", "priority_weight", "SLO",       "arrival_time"};
  static constexpr const char* kSeven[7] = {"job_type", "command", "num_steps_arg", "needs_data_dir", "total_steps", "arrival_time", "scale_factor"};

  static ThroughputMatrix load(const std::string& path, const TraceOptions& o) {
    if (o.throughputs_path.empty()) {
      throw InputError(path, "the gavel format needs Gavel's throughput matrix: set workload.trace.throughputs (or --throughputs FILE), e.g. shared/data/gavel/simulation_throughputs.json");
    }
    return ThroughputMatrix::load_file(o.throughputs_path, o.poll_interrupt);
  }
  std::string where() const { return lines_.path() + ":" + std::to_string(lines_.line()); }
  [[noreturn]] void fail(int i, const std::string& what, const char* reason) const {
    throw BadRowError(where() + ": " + names_[i], what + " (field " + std::to_string(i + 1) + ": '" + std::string(fields_[static_cast<std::size_t>(i)]) + "')", reason);
  }
  double value(int i) const {
    double v = 0;
    if (!parse_double(fields_[static_cast<std::size_t>(i)], v) || !std::isfinite(v)) fail(i, "expected a finite number", "not_a_number");
    if (std::fabs(v) > 1e12) fail(i, "the value is out of range (over 10^12)", "out_of_range");
    return v;
  }

  LineReader lines_;
  ThroughputMatrix matrix_;
  std::string matrix_path_;
  std::string device_;
  std::string line_;
  std::vector<std::string_view> fields_;
  const char* const* names_ = kTen;
  std::uint64_t jobs_seen_ = 0;
};

}  // namespace

std::unique_ptr<TraceReader> make_gavel_reader(const std::string& path, const TraceOptions& o) { return std::make_unique<GavelReader>(path, o); }

}  // namespace schedsim
