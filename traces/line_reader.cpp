#include "traces/line_reader.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

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

void check_gzip_intact(const std::string& path, std::int64_t bad_line) {
  // zlib's inflate directly, not gzread: gzread drops the bytes of a read that fails, and
  // decompresses far ahead into its own buffer, so its line count would be off. inflate
  // hands out every byte it decoded before it found the problem.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return;  // a pipe cannot be read again
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return;
  struct Closer {
    std::FILE* f;
    ~Closer() { std::fclose(f); }
  } closer{f};
  std::vector<unsigned char> in(kChunkBytes), out(kChunkBytes);
  std::size_t have = std::fread(in.data(), 1, in.size(), f);
  if (have < 2 || in[0] != 0x1f || in[1] != 0x8b) return;  // not gzip: read as plain text
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return;
  struct Ender {
    z_stream* z;
    ~Ender() { inflateEnd(z); }
  } ender{&z};
  std::int64_t lines = 0;
  z.next_in = in.data();
  z.avail_in = static_cast<unsigned>(have);
  while (true) {
    if (z.avail_in == 0) {
      have = std::fread(in.data(), 1, in.size(), f);
      if (have == 0) throw damaged_gzip_error(path, bad_line > 0 ? std::min(lines, bad_line - 1) : lines, "unexpected end of file");
      z.next_in = in.data();
      z.avail_in = static_cast<unsigned>(have);
    }
    z.next_out = out.data();
    z.avail_out = static_cast<unsigned>(out.size());
    const int ret = inflate(&z, Z_NO_FLUSH);
    const std::size_t produced = out.size() - z.avail_out;
    lines += std::count(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(produced), static_cast<unsigned char>('\n'));
    if (ret == Z_STREAM_END) {
      // Another gzip member may follow (gzip reads them as one file); anything else ends it.
      if (z.avail_in == 0) {
        have = std::fread(in.data(), 1, in.size(), f);
        if (have == 0) return;
        z.next_in = in.data();
        z.avail_in = static_cast<unsigned>(have);
      }
      if (z.avail_in < 2 || z.next_in[0] != 0x1f || z.next_in[1] != 0x8b) return;
      inflateReset(&z);
      continue;
    }
    if (ret != Z_OK && ret != Z_BUF_ERROR) {
      throw damaged_gzip_error(path, bad_line > 0 ? std::min(lines, bad_line - 1) : lines, z.msg ? z.msg : "error " + std::to_string(ret));
    }
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
  if (n < 0) {
    // This read's bytes are lost; a second pass in small steps finds a later last good line.
    check_gzip_intact(path_);
    throw damaged_gzip_error(path_, line_, zlib_message(file_, path_));
  }
  if (n == 0 && code == Z_BUF_ERROR) throw damaged_gzip_error(path_, line_, zlib_message(file_, path_));
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
