#include "traces/csv.hpp"

#include <charconv>
#include <cstring>

#include "base/error.hpp"
#include "base/text_checks.hpp"

namespace schedsim {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool parse_double(std::string_view field, double& out) {
  field = trim(field);
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);
  if (field.empty()) return false;
  const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), out);
  return ec == std::errc() && ptr == field.data() + field.size();
}

bool parse_int64(std::string_view field, std::int64_t& out) {
  field = trim(field);
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);
  if (field.empty()) return false;
  const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), out);
  return ec == std::errc() && ptr == field.data() + field.size();
}

void write_csv_field(std::ostream& out, std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) {
    out << s;
    return;
  }
  out << '"';
  for (char c : s) {
    if (c == '"') out << '"';
    out << c;
  }
  out << '"';
}

CsvReader::CsvReader(const std::string& path, char delimiter, const std::string& kind) : lines_(path, kind), delimiter_(delimiter) {}

bool CsvReader::next(std::vector<std::string_view>& fields) {
  fields.clear();
  while (lines_.next(buf_)) {
    if (!buf_.empty() && buf_.back() == '\r') buf_.pop_back();
    if (line() == 1 && buf_.size() >= 3 && std::memcmp(buf_.data(), "\xEF\xBB\xBF", 3) == 0) buf_.erase(0, 3);
    if (buf_.find('\0') != std::string::npos) throw BadRowError(where(), "the line contains a NUL byte; is this a binary file?", "malformed_row");
    if (const auto bad = invalid_utf8_at(buf_); bad != std::string::npos) {
      throw BadRowError(where(), "the line is not UTF-8 text (" + describe_byte(buf_, bad) + "); convert the file, e.g. iconv -f latin1 -t utf-8", "malformed_row");
    }
    if (trim(buf_).empty()) continue;
    if (buf_.find('"') == std::string::npos) {
      std::string_view rest(buf_);
      while (true) {
        const auto pos = rest.find(delimiter_);
        fields.push_back(rest.substr(0, pos));
        if (pos == std::string_view::npos) break;
        rest.remove_prefix(pos + 1);
      }
      return true;
    }
    // Quoted fields: unquote into one buffer, then point the views into it.
    unquoted_.clear();
    unquoted_.reserve(buf_.size());
    std::vector<std::pair<std::size_t, std::size_t>> spans;
    std::size_t i = 0;
    while (true) {
      const std::size_t begin = unquoted_.size();
      if (i < buf_.size() && buf_[i] == '"') {
        ++i;
        bool closed = false;
        while (i < buf_.size()) {
          if (buf_[i] == '"') {
            if (i + 1 < buf_.size() && buf_[i + 1] == '"') {
              unquoted_.push_back('"');
              i += 2;
              continue;
            }
            closed = true;
            ++i;
            break;
          }
          unquoted_.push_back(buf_[i++]);
        }
        if (!closed) throw BadRowError(where(), "unterminated quoted field (quoted fields may not span lines)", "malformed_row");
        while (i < buf_.size() && buf_[i] != delimiter_) unquoted_.push_back(buf_[i++]);
      } else {
        while (i < buf_.size() && buf_[i] != delimiter_) unquoted_.push_back(buf_[i++]);
      }
      spans.emplace_back(begin, unquoted_.size() - begin);
      if (i >= buf_.size()) break;
      ++i;  // skip the delimiter
    }
    for (const auto& [b, n] : spans) fields.emplace_back(unquoted_.data() + b, n);
    return true;
  }
  return false;
}

}  // namespace schedsim
