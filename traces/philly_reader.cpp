// Microsoft Philly cluster_job_log: one JSON array of jobs. The array is split into its
// elements by a small byte scanner (strings and nesting respected) and each job object is
// parsed on its own, so memory holds one job at a time however long the file is.
#include <zlib.h>

#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/json_errors.hpp"
#include "traces/csv.hpp"
#include "traces/line_reader.hpp"
#include "traces/readers.hpp"
#include "traces/time_parse.hpp"

namespace schedsim {
namespace {

constexpr std::size_t kMaxElementBytes = std::size_t{64} << 20;

// Yields the top-level elements of a JSON array, each as text with its first line.
class JsonArrayScanner {
 public:
  explicit JsonArrayScanner(const std::string& path) : path_(path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputError(path, "is a folder, not a trace file");
    file_ = gzopen(path.c_str(), "rb");
    if (!file_) throw InputError(path, "cannot open the trace file (does it exist?)");
    try {  // the destructor does not run when the constructor throws
      gzbuffer(file_, 1 << 16);
      buf_.resize(1 << 16);
      skip_space();
      if (peek() == 0xEF) {  // UTF-8 byte-order mark
        get(), get(), get();
        skip_space();
      }
      if (get() != '[') throw InputError(path + ":" + std::to_string(line_), "expected a JSON array of jobs ('[' first)");
    } catch (...) {
      gzclose(file_);
      throw;
    }
  }
  ~JsonArrayScanner() { gzclose(file_); }
  JsonArrayScanner(const JsonArrayScanner&) = delete;
  JsonArrayScanner& operator=(const JsonArrayScanner&) = delete;

  // The next element; false after the closing ']'. Throws InputError for a broken array.
  // `line` and `column` (bytes, from 1) are where the element starts.
  bool next(std::string& element, std::int64_t& line, std::int64_t& column) {
    if (done_) return false;
    skip_space();
    if (peek() < 0) throw InputError(path_ + ":" + std::to_string(line_), "the file ends before the job array's closing ']' (truncated file?)");
    if (peek() == ',' && !first_) {
      get();
      skip_space();
    } else if (peek() == ']') {
      get();
      done_ = true;
      // What follows is ignored, but read: a compressed file is only whole once its
      // stream has ended cleanly (refill throws otherwise).
      while (get() >= 0) {
      }
      return false;
    } else if (!first_) {
      throw InputError(path_ + ":" + std::to_string(line_), "expected ',' or ']' between jobs");
    }
    first_ = false;
    line = line_;
    column = column_ + 1;
    element.clear();
    int depth = 0;
    bool in_string = false;
    while (true) {
      const int c = get();
      if (c < 0) throw InputError(path_ + ":" + std::to_string(line_), "the file ends inside a job (truncated JSON?)");
      element.push_back(static_cast<char>(c));
      if (element.size() > kMaxElementBytes) throw InputError(path_ + ":" + std::to_string(line), "a job is longer than 64 MiB");
      if (in_string) {
        if (c == '\\') {
          const int n = get();
          if (n < 0) continue;
          element.push_back(static_cast<char>(n));
        } else if (c == '"') {
          in_string = false;
          if (depth == 0) return true;  // a string element
        }
        continue;
      }
      if (c == '"') in_string = true;
      else if (c == '{' || c == '[') ++depth;
      else if (c == '}' || c == ']') {
        if (--depth < 0) throw InputError(path_ + ":" + std::to_string(line_), "unbalanced brackets in the job array");
      }
      if (depth == 0) {
        // A scalar element ends at ',' or ']' (not consumed); an object or array at its close.
        if (c == '}' || c == ']') return true;
        const int n = peek();
        if (n < 0 || n == ',' || n == ']' || n == ' ' || n == '\n' || n == '\r' || n == '\t') return true;
      }
    }
  }

 private:
  int peek() {
    if (pos_ == end_ && !refill()) return -1;
    return static_cast<unsigned char>(buf_[pos_]);
  }
  int get() {
    const int c = peek();
    if (c >= 0) {
      ++pos_;
      if (c == '\n') ++line_, column_ = 0;
      else ++column_;
    }
    return c;
  }
  void skip_space() {
    for (int c = peek(); c == ' ' || c == '\n' || c == '\r' || c == '\t'; c = peek()) get();
  }
  bool refill() {
    const int n = gzread(file_, &buf_[0], static_cast<unsigned>(buf_.size()));
    // A stream that ends early is flagged (Z_BUF_ERROR), not failed: see LineReader.
    int code = Z_OK;
    gzerror(file_, &code);
    if (n < 0 || (n == 0 && code == Z_BUF_ERROR)) {
      // The last line may be incomplete: the line before it is the last good one.
      throw damaged_gzip_error(path_, line_ - 1, zlib_message(file_, path_));
    }
    pos_ = 0;
    end_ = static_cast<std::size_t>(n);
    return n > 0;
  }

  std::string path_;
  gzFile file_ = nullptr;
  std::string buf_;
  std::size_t pos_ = 0, end_ = 0;
  std::int64_t line_ = 1;
  std::int64_t column_ = 0;  // bytes read of the current line
  bool first_ = true, done_ = false;
};

class PhillyReader : public TraceReader {
 public:
  PhillyReader(const std::string& path, BadRowMode mode) : TraceReader(mode), path_(path), scanner_(path) {}

 protected:
  bool read(JobSpec& out) override {
    while (scanner_.next(text_, line_, column_)) {
      nlohmann::json job;
      try {
        job = nlohmann::json::parse(text_);
      } catch (const nlohmann::json::exception& e) {  // parse errors and number overflow (1e99999)
        // The place in the job's text, moved to the file's line and column.
        const JsonErrorDescription d = describe_json_error(e.what(), text_);
        std::string place = where();
        if (d.line > 0) {
          place = path_ + ":" + std::to_string(line_ + d.line - 1);
          if (d.column > 0) place += ":" + std::to_string(d.line == 1 ? column_ + d.column - 1 : d.column);
        }
        throw BadRowError(place, "the job is not valid JSON: " + d.what, "malformed_row");
      }
      if (!job.is_object()) throw BadRowError(where(), "expected a job object {\"jobid\": ..., \"attempts\": [...]}", "malformed_row");
      out.id = string_field(job, "jobid", true);
      const double submit = time_field(job, "submitted_time");
      const std::string status = string_field(job, "status", true);
      if (status == "Pass") out.recorded_status = RecordedStatus::kCompleted;
      else if (status == "Failed") out.recorded_status = RecordedStatus::kFailed;
      else if (status == "Killed") out.recorded_status = RecordedStatus::kKilled;
      else fail("status", "unknown status '" + status + "'; allowed: Pass, Failed, Killed", "bad_value");
      out.user = string_field(job, "user", false);
      out.group = string_field(job, "vc", false);
      if (submit < 0) fail("submitted_time", "must not be before 1970", "out_of_range");
      out.submit = Tick::from_seconds(submit);
      const auto attempts = job.find("attempts");
      if (attempts == job.end() || attempts->is_null() || (attempts->is_array() && attempts->empty())) {
        filtered("no_attempts");
        continue;
      }
      if (!attempts->is_array()) fail("attempts", "expected a list of attempts", "bad_value");
      double run_s = 0;
      int gpus = 0;
      bool running = false;
      for (std::size_t i = 0; i < attempts->size(); ++i) {
        const auto& a = (*attempts)[i];
        if (!a.is_object()) fail("attempts", "expected each attempt to be an object", "bad_value");
        const bool has_start = has_time(a, "start_time");
        const bool has_end = has_time(a, "end_time");
        if (has_start && has_end) {
          const double d = time_field(a, "end_time") - time_field(a, "start_time");
          if (d < 0) fail("attempts", "attempt " + std::to_string(i + 1) + " ends before it starts", "out_of_range");
          run_s += d;
        }
        if (i + 1 == attempts->size() && has_start && !has_end) running = true;
        const auto detail = a.find("detail");
        if (detail != a.end() && detail->is_array()) {
          int n = 0;
          for (const auto& d : *detail) {
            if (!d.is_object()) continue;
            const auto g = d.find("gpus");
            if (g != d.end() && g->is_array()) n += static_cast<int>(std::min<std::size_t>(g->size(), 1'000'000));
          }
          if (n > 0) gpus = n;  // the last attempt with a GPU list wins
        }
      }
      if (running) {
        filtered("still_running");
        continue;
      }
      if (gpus == 0) {
        filtered("no_gpu_detail");
        continue;
      }
      if (run_s == 0) {
        filtered("zero_duration");
        continue;
      }
      out.num_gpus = gpus;
      out.duration_s = run_s;
      out.source_line = line_;
      return true;
    }
    return false;
  }

 private:
  std::string where() const { return path_ + ":" + std::to_string(line_); }
  [[noreturn]] void fail(const std::string& field, const std::string& what, const char* reason) const {
    throw BadRowError(where() + ": " + field, what, reason);
  }
  std::string string_field(const nlohmann::json& j, const char* key, bool required) const {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
      if (required) fail(key, "missing", "missing_value");
      return "";
    }
    if (!it->is_string()) fail(key, "expected a string, got " + it->dump(), "bad_value");
    std::string s = it->get<std::string>();
    if (required && s.empty()) fail(key, "is empty", "missing_value");
    return s;
  }
  // A time that is present: not absent, null, empty or Python's "None" (the publisher's
  // README speaks of None values).
  static bool has_time(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return false;
    return !(it->is_string() && (it->get_ref<const std::string&>().empty() || it->get_ref<const std::string&>() == "None"));
  }
  double time_field(const nlohmann::json& j, const char* key) const {
    const std::string s = string_field(j, key, true);
    double t = 0;
    if (!parse_datetime(s, TimeZone::us_pacific(), t)) fail(key, "expected a date-time like '2017-10-07 01:12:09', got '" + s + "'", "bad_time");
    return t;
  }

  std::string path_;
  JsonArrayScanner scanner_;
  std::string text_;
  std::int64_t line_ = 0, column_ = 0;  // where the current job starts
};

}  // namespace

std::unique_ptr<TraceReader> make_philly_reader(const std::string& path, const TraceOptions& o) {
  return std::make_unique<PhillyReader>(path, o.on_bad_row);
}

}  // namespace schedsim
