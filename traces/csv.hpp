// CSV for traces and outputs. The reader is small, fast and knows its line numbers. Handles a
// UTF-8 byte-order mark, CRLF line ends, double-quoted fields ("a,b", "say ""hi"""), and
// gzip-compressed files. Errors (unreadable file, NUL byte, unterminated quote) name the
// file and line; the ones about a single line are BadRowErrors, which lenient trace
// reading skips.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"
#include "traces/line_reader.hpp"

namespace schedsim {

// One bad row of a trace. `reason` is a short key ("not_a_number", "malformed_row"...)
// under which lenient reading (`on_bad_row: skip`) counts the skipped row.
class BadRowError : public InputError {
 public:
  BadRowError(const std::string& where, const std::string& what, std::string reason)
      : InputError(where, what), reason_(std::move(reason)) {}
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

class CsvReader {
 public:
  // `kind` names the file in open errors ("trace file", "price series").
  explicit CsvReader(const std::string& path, char delimiter = ',', const std::string& kind = "trace file");

  // Reads the next record that is not blank; false at end of file. The views stay valid
  // until the next call.
  bool next(std::vector<std::string_view>& fields);
  // 1-based line number of the record returned last.
  std::int64_t line() const { return lines_.line(); }
  const std::string& path() const { return lines_.path(); }
  // "path:line" for messages about the last record.
  std::string where() const { return path() + ":" + std::to_string(line()); }

 private:
  LineReader lines_;
  char delimiter_;
  std::string buf_;
  std::string unquoted_;  // storage for fields that needed unquoting
};

// Strict field parsers: the whole field (spaces trimmed) must be the number.
bool parse_double(std::string_view field, double& out);
bool parse_int64(std::string_view field, std::int64_t& out);
std::string_view trim(std::string_view s);

// Writes one field, quoting it when it holds a comma, quote or line break.
void write_csv_field(std::ostream& out, std::string_view s);

}  // namespace schedsim
