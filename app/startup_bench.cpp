#include "app/startup_bench.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "base/error.hpp"
#include "traces/temp_files.hpp"

namespace schedsim {
namespace {

namespace fs = std::filesystem;

struct Start {
  double wall_s = 0;
  double peak_rss_mib = 0;
};

std::string shell_line(const std::string& exe, const std::vector<std::string>& args) {
  std::string out = fs::path(exe).filename().string();
  for (const auto& a : args) {
    const bool plain = a.find_first_of(" '\"{}$*?;&|<>()\\") == std::string::npos && !a.empty();
    out += " " + (plain ? a : "'" + a + "'");
  }
  return out;
}

// One start of `exe` with `args`, as a shell would run it: fork, exec, wait.
Start start_once(const std::string& exe, const std::vector<std::string>& args, const std::string& log_path) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) throw Error("bench startup: fork() failed");
  if (pid == 0) {
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    execv(exe.c_str(), argv.data());
    std::fprintf(stderr, "cannot execute %s\n", exe.c_str());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) throw Error("bench startup: wait4() failed");
  Start s;
  s.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.peak_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream log(log_path);
    std::string first;
    std::getline(log, first);
    const std::string how = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status)) : "was killed by signal " + std::to_string(WTERMSIG(status));
    throw Error("bench startup: `" + shell_line(exe, args) + "` " + how + (first.empty() ? "" : ": " + first));
  }
  return s;
}

}  // namespace

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::vector<StartupCase> startup_cases(const std::string& agent) {
  std::vector<StartupCase> out = {
      {"--version", {"--version"}, false},
      {"run", {"run", "--quiet", "--out", "{OUT}"}, false},
  };
  // One job: the run itself costs next to nothing, so the difference is loading LibTorch
  // and the agent.
  if (!agent.empty())
    out.push_back({"run rl", {"run", "--quiet", "--set", "workload.synthetic.num_jobs=1", "--set", "policy=rl:" + agent, "--out", "{OUT}"}, true});
  return out;
}

std::vector<StartupResult> run_startup_bench(const StartupBenchOptions& options) {
  if (options.runs < 1) throw InputError("--startup-runs", "must be at least 1, got " + std::to_string(options.runs));
  if (!options.agent.empty() && !fs::is_regular_file(options.agent))
    throw InputError("--startup-agent", "no checkpoint file '" + options.agent + "'");
  const bool own_dir = options.work_dir.empty();
  const std::string dir = own_dir ? temp_folder() + "/schedsim-startup-" + std::to_string(getpid()) : options.work_dir;
  fs::create_directories(dir);
  std::vector<StartupResult> results;
  try {
    for (const auto& c : startup_cases(options.agent)) {
      std::vector<std::string> args = c.args;
      for (auto& a : args)
        if (a == "{OUT}") a = dir + "/out";
      StartupResult r;
      r.label = c.label;
      r.loads_libtorch = c.loads_libtorch;
      r.runs = options.runs;
      std::vector<std::string> shown = c.args;
      for (auto& a : shown)
        if (a == "{OUT}") a = "OUT";
      r.command = shell_line(options.executable, shown);
      std::vector<double> wall, rss;
      for (int i = 0; i < options.runs; ++i) {
        const Start s = start_once(options.executable, args, dir + "/output.txt");
        wall.push_back(s.wall_s);
        rss.push_back(s.peak_rss_mib);
      }
      r.median_wall_s = median_of(wall);
      r.min_wall_s = *std::min_element(wall.begin(), wall.end());
      r.max_wall_s = *std::max_element(wall.begin(), wall.end());
      r.median_peak_rss_mib = median_of(rss);
      r.max_peak_rss_mib = *std::max_element(rss.begin(), rss.end());
      results.push_back(r);
    }
  } catch (...) {
    std::error_code ec;
    if (own_dir) fs::remove_all(dir, ec);
    throw;
  }
  std::error_code ec;
  if (own_dir) fs::remove_all(dir, ec);
  double torch_wall_s = 0;
  for (const auto& r : results)
    if (r.loads_libtorch) torch_wall_s = r.median_wall_s;
  for (auto& r : results) r.libtorch_ratio = torch_wall_s > 0 && r.median_wall_s > 0 ? torch_wall_s / r.median_wall_s : 0;
  return results;
}

nlohmann::ordered_json startup_bench_json(const StartupResult& r) {
  nlohmann::ordered_json j;
  j["name"] = "startup";
  j["case"] = r.label;
  j["command"] = r.command;
  j["loads_libtorch"] = r.loads_libtorch;
  j["runs"] = r.runs;
  j["median_wall_s"] = r.median_wall_s;
  j["min_wall_s"] = r.min_wall_s;
  j["max_wall_s"] = r.max_wall_s;
  j["median_peak_rss_mib"] = r.median_peak_rss_mib;
  j["max_peak_rss_mib"] = r.max_peak_rss_mib;
  j["libtorch_ratio"] = r.libtorch_ratio;
  return j;
}

std::string startup_bench_line(const StartupResult& r) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "startup  %-10s runs=%d  median wall=%.4f s (min %.4f, max %.4f)  median peak RSS %.1f MiB (max %.1f)", r.label.c_str(),
                r.runs, r.median_wall_s, r.min_wall_s, r.max_wall_s, r.median_peak_rss_mib, r.max_peak_rss_mib);
  std::string line = buf;
  if (r.libtorch_ratio > 0 && !r.loads_libtorch) {
    std::snprintf(buf, sizeof buf, "  the LibTorch-loading call takes %.1fx as long", r.libtorch_ratio);
    line += buf;
  }
  line += "\n         " + r.command;
  return line;
}

}  // namespace schedsim
