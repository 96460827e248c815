#include "traces/temp_files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "base/error.hpp"

namespace schedsim {

namespace fs = std::filesystem;

bool process_is_alive(long pid) {
  if (pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::optional<long> pid_after_prefix(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  std::size_t i = prefix.size();
  long pid = 0;
  const std::size_t first = i;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9' && i - first < 10) pid = pid * 10 + (name[i++] - '0');
  if (i == first || (i < name.size() && name[i] != '-')) return std::nullopt;
  return pid;
}

std::size_t remove_files_of_dead_processes(const std::string& dir, const std::function<std::optional<long>(const std::string& name)>& pid_of) {
  std::size_t removed = 0;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::optional<long> pid = pid_of(name);
    if (!pid || process_is_alive(*pid)) continue;
    std::error_code rm;
    if (fs::is_regular_file(it->symlink_status(rm)) && fs::remove(it->path(), rm)) ++removed;
  }
  return removed;
}

std::string temp_folder() {
  std::error_code ec;
  const fs::path p = fs::temp_directory_path(ec);
  return ec ? std::string("/tmp") : p.string();
}

InputSpool::InputSpool(const std::string& path, const std::function<void(const std::string&)>& poll_interrupt, const std::string& kind)
    : original_(path) {
  struct stat st {};
  // Regular files, folders and missing files are the readers' business (they say what
  // is wrong); everything else cannot be read twice.
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return;
  static std::atomic<unsigned> counter{0};
  const std::string prefix = "schedsim-spool-";
  const std::string dir = temp_folder();
  remove_files_of_dead_processes(dir, [&](const std::string& name) { return pid_after_prefix(name, prefix); });
  const std::string copy = (fs::path(dir) / (prefix + std::to_string(::getpid()) + "-" + std::to_string(counter++))).string();

  int in = -1;
  while ((in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC)) < 0 && errno == EINTR) {
    if (poll_interrupt) poll_interrupt(original_);  // waiting for a FIFO's writer
  }
  if (in < 0) throw InputError(path, "cannot open the " + kind + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } close_in{in};
  const int out = ::open(copy.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out < 0) {
    throw InputError(path, "is a pipe, which can be read only once; copying it to " + copy + " failed: " + std::strerror(errno) +
                               " (set TMPDIR to a writable folder, or give a regular file)");
  }
  copy_ = copy;  // from here the destructor's job, but it does not run if this throws
  try {
    Closer close_out{out};
    std::vector<char> buf(1 << 20);
    while (true) {
      const ssize_t n = ::read(in, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) {
        if (poll_interrupt) poll_interrupt(original_);
        continue;
      }
      if (n < 0) throw InputError(path, std::string("read error: ") + std::strerror(errno));
      if (n == 0) break;
      for (ssize_t done = 0; done < n;) {
        const ssize_t w = ::write(out, buf.data() + done, static_cast<std::size_t>(n - done));
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) throw InputError(path, "is a pipe, which can be read only once; copying it to " + copy + " failed: " + std::strerror(errno) + " (disk full?)");
        done += w;
      }
      if (poll_interrupt) poll_interrupt(original_);
    }
  } catch (...) {
    std::error_code ec;
    fs::remove(copy_, ec);
    throw;
  }
}

InputSpool::~InputSpool() {
  if (copy_.empty()) return;
  std::error_code ec;
  fs::remove(copy_, ec);
}

std::string InputSpool::renamed(std::string message) const {
  if (copy_.empty()) return message;
  for (std::size_t at = message.find(copy_); at != std::string::npos; at = message.find(copy_, at + original_.size())) {
    message.replace(at, copy_.size(), original_);
  }
  return message;
}

}  // namespace schedsim
