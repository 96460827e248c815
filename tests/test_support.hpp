// Helpers shared by the C++ tests: in-memory job sources, temporary folders, the shared
// data folder.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/job_source.hpp"

namespace schedsim::test {

inline JobSpec make_job(const std::string& id, double submit_s, int gpus, double duration_s, double estimate_s = std::nan("")) {
  JobSpec j;
  j.id = id;
  j.submit = Tick::from_seconds(submit_s);
  j.num_gpus = gpus;
  j.duration_s = duration_s;
  j.estimate_s = estimate_s;
  return j;
}

class VectorSource : public JobSource {
 public:
  explicit VectorSource(std::vector<JobSpec> jobs) : jobs_(std::move(jobs)) {}
  bool next(JobSpec& out) override {
    if (next_ >= jobs_.size()) return false;
    out = jobs_[next_++];
    return true;
  }
  std::string describe() const override { return "test jobs"; }

 private:
  std::vector<JobSpec> jobs_;
  std::size_t next_ = 0;
};

// A fresh folder under the system temp dir, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("schedsim-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string path(const std::string& name = "") const { return name.empty() ? path_.string() : (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream out(path(name), std::ios::binary);
    out << content;
    return path(name);
  }
  // Names of the files in the folder, sorted.
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(path_)) {
      if (e.is_regular_file()) out.push_back(std::filesystem::relative(e.path(), path_).string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Starts args[0] with `args` as a child process. `env` is set in the child's environment
// on top of this one's, after unsetting the names in `unset`; with a `log` path, the
// child's stdout and stderr go to that file.
inline pid_t spawn_process(std::vector<std::string> args, const std::vector<std::pair<std::string, std::string>>& env = {},
                           const std::string& log = "", const std::vector<std::string>& unset = {}) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (const auto& name : unset) ::unsetenv(name.c_str());
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    if (!log.empty()) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// Waits for a child: its exit status, or 128 + the number of the signal that killed it.
inline int wait_process(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// ../shared/data beside the checkout (or $SCHEDSIM_DATA, the setting configs use; the
// older $SCHEDSIM_SHARED_DATA still works); "" when absent, in which case tests that need
// it report a skip with the reason.
// allocations.csv (RunOptions::timeline) as (job id, devices) per placement segment, in
// file order.
inline std::vector<std::pair<std::string, std::vector<int>>> read_allocations(const std::string& path) {
  std::istringstream rows(read_file(path));
  std::string line;
  std::getline(rows, line);  // job_id,start_s,end_s,devices
  std::vector<std::pair<std::string, std::vector<int>>> out;
  while (std::getline(rows, line)) {
    std::istringstream devices(line.substr(line.rfind(',') + 1));
    std::vector<int> d;
    for (int x; devices >> x;) d.push_back(x);
    out.emplace_back(line.substr(0, line.find(',')), std::move(d));
  }
  return out;
}

inline std::string shared_data_dir() {
  if (const char* env = std::getenv("SCHEDSIM_DATA")) return std::filesystem::is_directory(env) ? env : "";
  if (const char* env = std::getenv("SCHEDSIM_SHARED_DATA")) return std::filesystem::is_directory(env) ? env : "";
  const std::filesystem::path p = std::filesystem::path(SCHEDSIM_SOURCE_DIR) / ".." / "shared" / "data";
  return std::filesystem::is_directory(p) ? p.lexically_normal().string() : "";
}

}  // namespace schedsim::test
