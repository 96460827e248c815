// Reads a text file line by line, plain or gzip-compressed (zlib detects which), with
// 1-based line numbers. Lines may hold any bytes, NUL included: callers decide what is
// allowed. Memory is one read buffer plus the longest line.
#pragma once

#include <cstdint>
#include <string>

namespace schedsim {

class LineReader {
 public:
  // Throws InputError when the file cannot be opened.
  explicit LineReader(const std::string& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its '\n' (a trailing '\r' is kept); false at the end of the
  // file. Throws InputError for a read or decompression error, or a line over 64 MiB.
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

}  // namespace schedsim
