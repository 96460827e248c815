// CSV for traces and outputs. The reader is small, fast and knows its line numbers. Handles a
// UTF-8 byte-order mark, CRLF line ends and double-quoted fields ("a,b", "say ""hi""").
// Errors (unreadable file, NUL byte, unterminated quote) name the file and line.
#pragma once

#include <cstdint>
#include <fstream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace schedsim {

class CsvReader {
 public:
  explicit CsvReader(const std::string& path, char delimiter = ',');

  // Reads the next record that is not blank; false at end of file. The views stay valid
  // until the next call.
  bool next(std::vector<std::string_view>& fields);
  // 1-based line number of the record returned last.
  std::int64_t line() const { return line_; }
  const std::string& path() const { return path_; }
  // "path:line" for messages about the last record.
  std::string where() const { return path_ + ":" + std::to_string(line_); }

 private:
  std::string path_;
  char delimiter_;
  std::ifstream in_;
  std::string buf_;
  std::string unquoted_;  // storage for fields that needed unquoting
  std::int64_t line_ = 0;
};

// Strict field parsers: the whole field (spaces trimmed) must be the number.
bool parse_double(std::string_view field, double& out);
bool parse_int64(std::string_view field, std::int64_t& out);
std::string_view trim(std::string_view s);

// Writes one field, quoting it when it holds a comma, quote or line break.
void write_csv_field(std::ostream& out, std::string_view s);

}  // namespace schedsim
