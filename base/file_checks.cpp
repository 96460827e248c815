#include "base/file_checks.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace schedsim {

namespace {

std::string from_errno(int err, const std::string& kind) {
  if (err == ENOENT || err == ENOTDIR) return "cannot open the " + kind + " (does it exist?)";
  if (err == EACCES || err == EPERM) return "cannot open the " + kind + ": permission denied";
  if (err == EISDIR) return "is a directory, not a " + kind;
  return "cannot open the " + kind + ": " + std::strerror(err);
}

}  // namespace

std::string file_open_problem(const std::string& path, const std::string& kind) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return from_errno(errno, kind);
  // An ifstream opens a directory without complaint and then reads nothing.
  if (S_ISDIR(st.st_mode)) return "is a directory, not a " + kind;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return from_errno(errno, kind);
  ::close(fd);
  return "";
}

}  // namespace schedsim
