// A CSV file read as a table: columns found by header name (or given names for
// headerless files), one row at a time, with typed field access whose errors name the
// file, line and column and say what is allowed. Shared by the CSV trace formats.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/job.hpp"
#include "traces/csv.hpp"

namespace schedsim {

class CsvTable {
 public:
  // Reads the header from the file's first line; a column named twice is an InputError.
  CsvTable(const std::string& path, std::string format, char delimiter = ',');
  // A file that is not a trace: `kind` names it in messages ("price series"), where a
  // trace's messages say "trace" and name its format.
  struct NotATrace {
    std::string kind;
  };
  CsvTable(const std::string& path, const NotATrace& file);
  // A headerless file whose columns are `names`.
  CsvTable(const std::string& path, std::string format, std::vector<std::string> names, char delimiter = ',');

  // Index of the column called `name`; -1 when absent and not required. A missing
  // required column throws InputError listing the header.
  int column(const std::string& name, bool required);
  const std::vector<std::string>& header() const { return header_; }

  // The next row; false at the end. A row with the wrong number of fields is a
  // BadRowError (after it has been consumed).
  bool next_row();
  std::int64_t line() const { return csv_.line(); }
  std::string where() const { return csv_.where(); }
  const std::string& path() const { return csv_.path(); }

  // Field access for the current row. col must be a valid index.
  std::string_view raw(int col) const;
  std::string_view text(int col) const { return trim(raw(col)); }
  bool empty(int col) const { return col < 0 || text(col).empty(); }
  // A finite number with |x| <= 1e12.
  double number(int col) const;
  // An integer (float spellings rejected) in [lo, hi].
  std::int64_t integer(int col, std::int64_t lo, std::int64_t hi) const;
  [[noreturn]] void fail(int col, const std::string& what, const std::string& reason) const;
  std::string quoted(int col) const;

 private:
  void init_header(std::vector<std::string> names);
  void read_header(const std::string& path);
  CsvReader csv_;
  std::string format_;
  std::string kind_;  // "" for a trace
  std::vector<std::string> header_;
  std::vector<std::string_view> fields_;
};

// Sets every optional JobSpec field to "unknown".
void reset_job(JobSpec& job);
// Reads a status word ("completed", "Pass", "FAILED", "Succeeded", "cancelled", ...);
// false when the word is not one of the known spellings.
bool parse_status(std::string_view word, RecordedStatus& out);

}  // namespace schedsim
