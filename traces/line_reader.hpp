// Reads a text file line by line, plain or gzip-compressed (zlib detects which), with
// 1-based line numbers. Lines may hold any bytes, NUL included: callers decide what is
// allowed. Memory is one read buffer plus the longest line. A gzip stream that is cut
// short or damaged is an error, never a quiet end of file.
#pragma once

#include <cstdint>
#include <string>

#include "base/error.hpp"

namespace schedsim {

class LineReader {
 public:
  // Throws InputError when the file cannot be opened. `kind` names the file in those
  // messages ("trace file", "price series").
  explicit LineReader(const std::string& path, const std::string& kind = "trace file");
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its '\n' (a trailing '\r' is kept); false at the end of the
  // file. Throws InputError for a read error, a truncated or damaged gzip stream (after
  // the lines before it were returned) or a line over 64 MiB.
  bool next(std::string& line);
  std::int64_t line() const { return line_; }
  const std::string& path() const { return path_; }

 private:
  bool refill();
  std::string path_;
  void* file_ = nullptr;  // gzFile, kept opaque so that zlib.h stays out of headers
  std::string buf_;
  std::size_t pos_ = 0, end_ = 0;
  bool eof_ = false;
  std::int64_t line_ = 0;
};

// A compressed file whose stream is cut short or fails zlib's checks.
class DamagedFileError : public InputError {
 public:
  using InputError::InputError;
};

// "<path>: the gzip stream is truncated or damaged after line N (zlib: ...)", the one
// message for a compressed file that ends early or fails zlib's checks. `last_good_line`
// is the last complete line decompressed before zlib reported the problem.
DamagedFileError damaged_gzip_error(const std::string& path, std::int64_t last_good_line, const std::string& zlib_message);

// The message zlib holds for `file` (a gzFile), without the path zlib puts in front.
std::string zlib_message(void* file, const std::string& path);

// When `path` is gzip-compressed, decompresses it to its end and throws
// damaged_gzip_error if its stream is truncated or damaged; returns otherwise (plain
// files, unreadable files). A damaged deflate stream can decode to garbage rows before
// zlib notices (often only at the checksum at the end), so a bad row of a compressed file
// is first checked against this: the damaged file is the error to report, not the row.
// `bad_line` (> 0: the line that looked bad) caps the last good line named, since the
// garbage starts before zlib can tell.
void check_gzip_intact(const std::string& path, std::int64_t bad_line = 0);

}  // namespace schedsim
