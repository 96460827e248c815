// CSV trace formats described by a column layout: schedsim's own format and Microsoft
// ITP's. Both read columns by header name, so column order does not matter.
#include <algorithm>
#include <cmath>
#include <ostream>

#include "sim/error.hpp"
#include "traces/csv.hpp"
#include "traces/trace_reader.hpp"

namespace schedsim {
namespace {

struct CsvLayout {
  const char* format;
  const char* id;
  const char* submit;
  const char* duration;
  const char* gpus;
  const char* estimate;                  // nullptr: the format has no estimate column
  std::vector<std::string> also_allowed; // optional columns read or tolerated
  bool reject_unknown_columns;           // strict formats reject typos in the header
};

const CsvLayout kSchedsimLayout{"schedsim", "job_id", "submit_time_s", "duration_s", "num_gpus", "estimate_s", {"user", "name"}, true};
// ITP (microsoft/elasticflow-traces): relative seconds; ElasticFlow's richer files with
// the same job columns read through this layout too (extra columns ignored).
const CsvLayout kItpLayout{"itp", "job_id", "submission_time", "duration", "num_gpu", nullptr, {}, false};

std::string join_names(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

class CsvTraceReader : public TraceReader {
 public:
  CsvTraceReader(const std::string& path, const CsvLayout& layout) : csv_(path), layout_(layout) {
    if (!csv_.next(fields_)) throw InputError(path, "the trace is empty (no header line)");
    for (auto f : fields_) header_.emplace_back(trim(f));
    id_ = column(layout.id, true);
    submit_ = column(layout.submit, true);
    duration_ = column(layout.duration, true);
    gpus_ = column(layout.gpus, true);
    estimate_ = layout.estimate ? column(layout.estimate, false) : -1;
    if (layout.reject_unknown_columns) {
      std::vector<std::string> known{layout.id, layout.submit, layout.gpus, layout.duration};
      if (layout.estimate) known.emplace_back(layout.estimate);
      known.insert(known.end(), layout.also_allowed.begin(), layout.also_allowed.end());
      for (const auto& h : header_) {
        if (std::find(known.begin(), known.end(), h) == known.end()) {
          throw InputError(csv_.where(), "unknown column '" + h + "' in a " + layout.format + " trace; known columns: " + join_names(known));
        }
      }
    }
  }

  bool next(JobSpec& out) override {
    if (!csv_.next(fields_)) return false;
    if (fields_.size() != header_.size()) {
      throw InputError(csv_.where(), "expected " + std::to_string(header_.size()) + " fields like the header, got " + std::to_string(fields_.size()));
    }
    out.id.assign(trim(fields_[static_cast<std::size_t>(id_)]));
    if (out.id.empty()) fail(id_, "the job id is empty");
    const double submit = number(submit_);
    if (submit < 0) fail(submit_, "must be >= 0 seconds, got " + quoted(submit_));
    out.submit = Tick::from_seconds(submit);
    out.duration_s = number(duration_);
    if (!(out.duration_s > 0)) fail(duration_, "must be > 0 seconds, got " + quoted(duration_));
    std::int64_t gpus = 0;
    if (!parse_int64(fields_[static_cast<std::size_t>(gpus_)], gpus)) fail(gpus_, "expected an integer GPU count, got " + quoted(gpus_));
    if (gpus < 1 || gpus > 1'000'000) fail(gpus_, "must be between 1 and 1000000 GPUs, got " + quoted(gpus_));
    out.num_gpus = static_cast<int>(gpus);
    out.estimate_s = std::nan("");
    if (estimate_ >= 0 && !trim(fields_[static_cast<std::size_t>(estimate_)]).empty()) {
      out.estimate_s = number(estimate_);
      if (!(out.estimate_s > 0)) fail(estimate_, "must be > 0 seconds or empty, got " + quoted(estimate_));
    }
    out.source_line = csv_.line();
    return true;
  }

 private:
  int column(const char* name, bool required) {
    for (std::size_t i = 0; i < header_.size(); ++i) {
      if (header_[i] == name) return static_cast<int>(i);
    }
    if (required) {
      throw InputError(csv_.where(), std::string("missing column '") + name + "' for the " + layout_.format +
                                         " format (header has: " + join_names(header_) + ")");
    }
    return -1;
  }
  std::string quoted(int col) const { return "'" + std::string(fields_[static_cast<std::size_t>(col)]) + "'"; }
  [[noreturn]] void fail(int col, const std::string& what) const {
    throw InputError(csv_.where() + ": " + header_[static_cast<std::size_t>(col)], what);
  }
  double number(int col) const {
    double v = 0;
    if (!parse_double(fields_[static_cast<std::size_t>(col)], v)) fail(col, "expected a number, got " + quoted(col));
    if (!std::isfinite(v)) fail(col, "expected a finite number, got " + quoted(col));
    if (std::fabs(v) > 1e12) fail(col, "the value " + quoted(col) + " is out of range (over 10^12 seconds)");
    return v;
  }

  CsvReader csv_;
  const CsvLayout& layout_;
  std::vector<std::string_view> fields_;
  std::vector<std::string> header_;
  int id_ = -1, submit_ = -1, duration_ = -1, gpus_ = -1, estimate_ = -1;
};

}  // namespace

std::vector<TraceFormatInfo> trace_formats() {
  return {
      {"schedsim", "schedsim's CSV: job_id,submit_time_s,num_gpus,duration_s[,estimate_s,user,name]"},
      {"itp", "Microsoft ITP / ElasticFlow CSV: job_id,submission_time,duration,num_gpu (seconds)"},
  };
}

std::unique_ptr<TraceReader> open_trace_reader(const std::string& path, const std::string& format) {
  if (format == "schedsim") return std::make_unique<CsvTraceReader>(path, kSchedsimLayout);
  if (format == "itp") return std::make_unique<CsvTraceReader>(path, kItpLayout);
  std::string known;
  for (const auto& f : trace_formats()) known += (known.empty() ? "" : ", ") + f.name;
  throw InputError(path, "unknown trace format '" + format + "'; known formats: " + known);
}

std::string detect_trace_format(const std::string& path) {
  CsvReader csv(path);
  std::vector<std::string_view> header;
  if (!csv.next(header)) throw InputError(path, "the trace is empty (no header line)");
  auto has = [&](std::string_view name) {
    return std::any_of(header.begin(), header.end(), [&](std::string_view h) { return trim(h) == name; });
  };
  if (has("submit_time_s") && has("duration_s")) return "schedsim";
  if (has("submission_time") && has("num_gpu")) return "itp";
  throw InputError(csv.where(), "cannot tell the trace format from the header; name it with --format (known: schedsim, itp)");
}

void write_schedsim_trace_header(std::ostream& out, bool with_estimates) {
  out << "job_id,submit_time_s,num_gpus,duration_s" << (with_estimates ? ",estimate_s" : "") << '\n';
}

void write_schedsim_trace_row(std::ostream& out, const JobSpec& job, bool with_estimates) {
  write_csv_field(out, job.id);
  char buf[64];
  out << ',' << format_seconds(job.submit) << ',' << job.num_gpus << ',';
  // %.17g round-trips every double exactly.
  std::snprintf(buf, sizeof buf, "%.17g", job.duration_s);
  out << buf;
  if (with_estimates) {
    out << ',';
    if (job.has_estimate()) {
      std::snprintf(buf, sizeof buf, "%.17g", job.estimate_s);
      out << buf;
    }
  }
  out << '\n';
}

}  // namespace schedsim
