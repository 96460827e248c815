#include "app/report.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "base/error.hpp"

extern char** environ;

namespace schedsim {
namespace fs = std::filesystem;

std::string find_experiments_script(const std::string& file_name, const char* env_var, const std::string& executable) {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv(env_var)) candidates.emplace_back(env);
  const fs::path exe_dir = fs::path(executable).parent_path();
  candidates.push_back(exe_dir / file_name);
  candidates.push_back(exe_dir / ".." / "experiments" / file_name);
  candidates.push_back(fs::path(SCHEDSIM_REPORT_SCRIPT).parent_path() / file_name);  // the source tree's experiments/
  std::string tried;
  for (const auto& c : candidates) {
    if (fs::is_regular_file(c)) return c.lexically_normal().string();
    tried += (tried.empty() ? "" : ", ") + c.string();
  }
  // One line (messages are escaped for the terminal, and a line break would show as \n).
  throw InputError(file_name, "cannot find " + file_name + "; tried: " + tried + "; set " + env_var + " to its path");
}

std::string find_report_script(const std::string& executable) {
  return find_experiments_script("report.py", "SCHEDSIM_REPORT_SCRIPT", executable);
}

int run_report(const std::string& results_dir, const std::string& out_dir, const std::string& executable, const ReportSelection& selection) {
  if (!fs::is_directory(results_dir)) throw InputError(results_dir, "not a folder: give the output folder of schedsim run, compare or sweep");
  std::vector<std::string> args{"python3", find_report_script(executable), results_dir};
  if (!out_dir.empty()) args.insert(args.end(), {"--out", out_dir});
  if (!selection.policies.empty()) args.insert(args.end(), {"--policies", selection.policies});
  if (!selection.highlight.empty()) args.insert(args.end(), {"--highlight", selection.highlight});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, "python3", nullptr, nullptr, argv.data(), environ);
  if (rc != 0) {
    throw InputError("report", std::string("cannot start python3 (") + std::strerror(rc) +
                                   "): install Python 3, then: pip install matplotlib pandas");
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw InputError("report", std::string("waiting for python3 failed: ") + std::strerror(errno));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace schedsim
