#include "traces/line_reader.hpp"

#include <zlib.h>

#include <cstring>
#include <filesystem>

namespace schedsim {
namespace {
constexpr std::size_t kChunkBytes = 1 << 16;
constexpr std::size_t kMaxLineBytes = std::size_t{64} << 20;
}  // namespace

DamagedFileError damaged_gzip_error(const std::string& path, std::int64_t last_good_line, const std::string& zlib_message) {
  return DamagedFileError(path, "the gzip stream is truncated or damaged after line " + std::to_string(last_good_line) + " (zlib: " + zlib_message +
                              "); the file is incomplete or corrupt (gzip -t tests it)");
}

std::string zlib_message(void* file, const std::string& path) {
  int code = 0;
  const char* m = gzerror(static_cast<gzFile>(file), &code);
  std::string msg = m ? m : "";
  // zlib writes "<path>: <what>"; the path is already in our message.
  if (msg.compare(0, path.size() + 2, path + ": ") == 0) msg.erase(0, path.size() + 2);
  if (msg.empty()) msg = code == Z_BUF_ERROR ? "unexpected end of file" : "error " + std::to_string(code);
  return msg;
}

void check_gzip_intact(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return;
  struct Closer {
    gzFile f;
    ~Closer() { gzclose(f); }
  } closer{f};
  gzbuffer(f, kChunkBytes);
  if (gzdirect(f)) return;  // not compressed
  std::string buf(kChunkBytes, '\0');
  std::int64_t lines = 0;
  while (true) {
    const int n = gzread(f, &buf[0], static_cast<unsigned>(buf.size()));
    int code = Z_OK;
    gzerror(f, &code);
    if (n < 0 || (n == 0 && code == Z_BUF_ERROR)) throw damaged_gzip_error(path, lines, zlib_message(f, path));
    if (n == 0) return;
    for (int i = 0; i < n; ++i) lines += buf[static_cast<std::size_t>(i)] == '\n';
  }
}

LineReader::LineReader(const std::string& path, const std::string& kind) : path_(path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, "is a folder, not a " + kind);
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw InputError(path, "cannot open the " + kind + " (does it exist?)");
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
  // zlib returns what it could decompress of a stream that ends early and flags it
  // (Z_BUF_ERROR) instead of failing the read: the end of the data is not the end of the
  // file unless the stream closed cleanly. Bytes still buffered are an incomplete line.
  int code = Z_OK;
  gzerror(static_cast<gzFile>(file_), &code);
  if (n < 0 || (n == 0 && code == Z_BUF_ERROR)) throw damaged_gzip_error(path_, line_, zlib_message(file_, path_));
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
