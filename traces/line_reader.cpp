#include "traces/line_reader.hpp"

#include <zlib.h>

#include <cstring>
#include <filesystem>

#include "sim/error.hpp"

namespace schedsim {
namespace {
constexpr std::size_t kChunkBytes = 1 << 16;
constexpr std::size_t kMaxLineBytes = std::size_t{64} << 20;
}  // namespace

LineReader::LineReader(const std::string& path) : path_(path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, "is a folder, not a trace file");
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw InputError(path, "cannot open the trace file (does it exist?)");
  gzbuffer(f, kChunkBytes);
  file_ = f;
  buf_.resize(kChunkBytes);
}

LineReader::~LineReader() {
  if (file_) gzclose(static_cast<gzFile>(file_));
}

bool LineReader::refill() {
  if (eof_) return false;
  // Keep the unread tail at the front, then read after it.
  if (pos_ > 0) {
    std::memmove(&buf_[0], buf_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  if (buf_.size() - end_ < kChunkBytes) buf_.resize(end_ + kChunkBytes);
  const int n = gzread(static_cast<gzFile>(file_), &buf_[end_], static_cast<unsigned>(buf_.size() - end_));
  if (n < 0) {
    int code = 0;
    const char* msg = gzerror(static_cast<gzFile>(file_), &code);
    throw InputError(path_ + ":" + std::to_string(line_ + 1), std::string("read error (corrupt gzip data?): ") + (msg ? msg : "unknown"));
  }
  if (n == 0) {
    eof_ = true;
    return false;
  }
  end_ += static_cast<std::size_t>(n);
  return true;
}

bool LineReader::next(std::string& line) {
  std::size_t scanned = pos_;
  while (true) {
    const void* nl = std::memchr(buf_.data() + scanned, '\n', end_ - scanned);
    if (nl) {
      const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(nl) - buf_.data());
      line.assign(buf_.data() + pos_, at - pos_);
      pos_ = at + 1;
      ++line_;
      return true;
    }
    if (end_ - pos_ > kMaxLineBytes) {
      throw InputError(path_ + ":" + std::to_string(line_ + 1), "the line is longer than 64 MiB; is this a text trace?");
    }
    const std::size_t scanned_bytes = end_ - pos_;
    if (!refill()) {
      if (pos_ == end_) return false;
      line.assign(buf_.data() + pos_, end_ - pos_);  // last line without '\n'
      pos_ = end_;
      ++line_;
      return true;
    }
    scanned = pos_ + scanned_bytes;
  }
}

}  // namespace schedsim
