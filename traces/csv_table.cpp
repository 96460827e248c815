#include "traces/csv_table.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "base/error.hpp"

namespace schedsim {
namespace {

// Lists at most 100 names, so that a hostile header cannot make a megabyte message.
std::string join_names(const std::vector<std::string>& v) {
  std::string out;
  const std::size_t shown = std::min<std::size_t>(v.size(), 100);
  for (std::size_t i = 0; i < shown; ++i) out += (out.empty() ? "" : ", ") + v[i];
  if (shown < v.size()) out += " and " + std::to_string(v.size() - shown) + " more";
  return out;
}

// No trace format has more than a few dozen columns; a wider header is a wrong delimiter
// or not a trace, and is rejected before its names are copied.
constexpr std::size_t kMaxColumns = 10'000;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

CsvTable::CsvTable(const std::string& path, std::string format, char delimiter) : csv_(path, delimiter), format_(std::move(format)) {
  read_header(path);
}

CsvTable::CsvTable(const std::string& path, const NotATrace& file) : csv_(path, ',', file.kind), format_(file.kind), kind_(file.kind) {
  read_header(path);
}

void CsvTable::read_header(const std::string& path) {
  if (!csv_.next(fields_)) throw InputError(path, kind_.empty() ? "the trace is empty (no header line)" : "the " + kind_ + " is empty (no header line)");
  if (fields_.size() > kMaxColumns) {
    throw InputError(path + ":1", "the header has " + std::to_string(fields_.size()) + " columns, more than the " + std::to_string(kMaxColumns) +
                                      " schedsim reads; is the delimiter right, and is this a trace?");
  }
  std::vector<std::string> names;
  for (auto f : fields_) names.emplace_back(trim(f));
  // A column named twice would be read from its first copy and the second ignored,
  // whichever the file's author meant. (Unnamed columns, e.g. a trailing comma, cannot
  // be looked up and may repeat.)
  std::vector<std::pair<std::string, std::size_t>> sorted;
  sorted.reserve(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) sorted.emplace_back(names[i], i);
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].first.empty() || sorted[i].first != sorted[i - 1].first) continue;
    const std::string in = kind_.empty() ? "a " + format_ + " trace" : "the " + kind_;
    throw InputError(path + ":1", "column '" + sorted[i].first + "' appears twice in the header (columns " + std::to_string(sorted[i - 1].second + 1) +
                                      " and " + std::to_string(sorted[i].second + 1) + "); each column may appear once in " + in);
  }
  init_header(std::move(names));
}

CsvTable::CsvTable(const std::string& path, std::string format, std::vector<std::string> names, char delimiter)
    : csv_(path, delimiter), format_(std::move(format)) {
  init_header(std::move(names));
}

void CsvTable::init_header(std::vector<std::string> names) { header_ = std::move(names); }

int CsvTable::column(const std::string& name, bool required) {
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return static_cast<int>(i);
  }
  if (required) {
    const std::string in = kind_.empty() ? "for the " + format_ + " format" : "in the " + kind_;
    throw InputError(path() + ":1", "missing column '" + name + "' " + in + " (header has: " + join_names(header_) + ")");
  }
  return -1;
}

bool CsvTable::next_row() {
  if (!csv_.next(fields_)) return false;
  if (fields_.size() != header_.size()) {
    throw BadRowError(csv_.where(), "expected " + std::to_string(header_.size()) + " fields like the header, got " + std::to_string(fields_.size()),
                      "malformed_row");
  }
  return true;
}

std::string_view CsvTable::raw(int col) const { return fields_[static_cast<std::size_t>(col)]; }

std::string CsvTable::quoted(int col) const { return "'" + std::string(raw(col)) + "'"; }

void CsvTable::fail(int col, const std::string& what, const std::string& reason) const {
  throw BadRowError(csv_.where() + ": " + header_[static_cast<std::size_t>(col)], what, reason);
}

double CsvTable::number(int col) const {
  double v = 0;
  if (!parse_double(raw(col), v)) {
    if (text(col).empty()) fail(col, "expected a number, got an empty field", "missing_value");
    // A number a double cannot hold (1e309, 1e-400) is out of range, not "not a number".
    std::string_view f = trim(raw(col));
    if (!f.empty() && f.front() == '+') f.remove_prefix(1);
    double probe = 0;
    const auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), probe);
    if (ec == std::errc::result_out_of_range && end == f.data() + f.size()) {
      fail(col, "the value " + quoted(col) + " is beyond the range of a double", "out_of_range");
    }
    fail(col, "expected a number, got " + quoted(col), "not_a_number");
  }
  if (!std::isfinite(v)) fail(col, "expected a finite number, got " + quoted(col), "not_a_number");
  if (std::fabs(v) > 1e12) fail(col, "the value " + quoted(col) + " is out of range (over 10^12 seconds)", "out_of_range");
  return v;
}

std::int64_t CsvTable::integer(int col, std::int64_t lo, std::int64_t hi) const {
  std::int64_t v = 0;
  if (!parse_int64(raw(col), v)) {
    if (text(col).empty()) fail(col, "expected an integer, got an empty field", "missing_value");
    fail(col, "expected an integer, got " + quoted(col), "not_a_number");
  }
  if (v < lo || v > hi) fail(col, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + quoted(col), "out_of_range");
  return v;
}

void reset_job(JobSpec& job) {
  job.id.clear();
  job.submit = Tick();
  job.num_gpus = 1;
  job.duration_s = 0;
  job.estimate_s = std::nan("");
  job.source_line = 0;
  job.user.clear();
  job.group.clear();
  job.model.clear();
  job.gpu_type.clear();
  job.gpu_milli = 1000;
  job.iterations = std::nan("");
  job.deadline_s = std::nan("");
  job.priority = 0;
  job.recorded_status = RecordedStatus::kUnknown;
}

bool parse_status(std::string_view word, RecordedStatus& out) {
  const std::string w = lower(trim(word));
  if (w == "completed" || w == "pass" || w == "succeeded" || w == "success" || w == "terminated") {
    out = RecordedStatus::kCompleted;
  } else if (w == "failed" || w == "fail" || w == "timeout" || w == "node_fail") {
    out = RecordedStatus::kFailed;
  } else if (w == "killed" || w == "cancelled" || w == "canceled") {
    out = RecordedStatus::kKilled;
  } else if (w == "unknown" || w.empty()) {
    out = RecordedStatus::kUnknown;
  } else {
    return false;
  }
  return true;
}

}  // namespace schedsim
