#include "rl/dist_launch.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "base/error.hpp"

extern char** environ;  // POSIX: this process's environment, copied into each child's

namespace schedsim::rl {
namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

// A non-negative integer environment variable, strictly parsed.
std::optional<long> env_int(const char* name, long min, long max) {
  const auto v = env(name);
  if (!v) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v->c_str(), &end, 10);
  if (errno != 0 || end == v->c_str() || *end != '\0' || x < min || x > max)
    throw InputError(std::string("environment variable ") + name,
                     "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got '" + *v + "'");
  return x;
}

}  // namespace

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error(std::string("schedsim train --nproc: cannot open a socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw Error("schedsim train --nproc: cannot find a free port on 127.0.0.1: " + why + " (set MASTER_PORT)");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

DistConfig dist_config_from_environment() {
  DistConfig c;
  constexpr long kMaxRanks = 1 << 20;
  auto world = env_int("WORLD_SIZE", 1, kMaxRanks);
  auto rank = env_int("RANK", 0, kMaxRanks);
  const char* world_name = "WORLD_SIZE";
  const char* rank_name = "RANK";
  // srun without torchrun: its own variables, but only when MASTER_ADDR says a
  // multi-process run is meant. Slurm sets SLURM_NTASKS in every task of an allocation,
  // also for independent runs (experiments/slurm/train_seeds.sbatch).
  if (!world && env("MASTER_ADDR")) {
    world = env_int("SLURM_NTASKS", 1, kMaxRanks);
    if (world) {
      world_name = "SLURM_NTASKS";
      rank = env_int("SLURM_PROCID", 0, kMaxRanks);
      rank_name = "SLURM_PROCID";
    }
  }
  if (!world) {
    if (rank && *rank != 0) throw InputError("environment variable RANK", "is " + std::to_string(*rank) + " but WORLD_SIZE is not set");
    return c;
  }
  c.from_environment = true;
  c.world_size = static_cast<int>(*world);
  if (!rank) {
    if (c.world_size > 1) throw InputError(std::string("environment variable ") + rank_name, std::string("is not set but ") + world_name + " is " + std::to_string(c.world_size));
    rank = 0;
  }
  if (*rank >= c.world_size)
    throw InputError(std::string("environment variable ") + rank_name,
                     "is " + std::to_string(*rank) + ", must be below " + world_name + " (" + std::to_string(c.world_size) + ")");
  c.rank = static_cast<int>(*rank);
  auto local = env_int("LOCAL_RANK", 0, kMaxRanks);
  if (!local) local = env_int("SLURM_LOCALID", 0, kMaxRanks);
  c.local_rank = local ? static_cast<int>(*local) : 0;
  if (c.world_size > 1) {
    const auto addr = env("MASTER_ADDR");
    const auto port = env_int("MASTER_PORT", 1, 65535);
    if (!addr || !port)
      throw InputError(std::string(world_name) + "=" + std::to_string(c.world_size),
                       "a multi-process run needs MASTER_ADDR and MASTER_PORT (rank 0's host and a free TCP port) in the environment; "
                       "torchrun sets them, under srun export them in the batch script (experiments/slurm/train_distributed.sbatch), or use "
                       "`schedsim train --nproc N` on one machine");
    c.master_addr = *addr;
    c.master_port = static_cast<int>(*port);
  }
  return c;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  return "ended with wait status " + std::to_string(status);
}

bool ChildProcesses::Ended::ok() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

void ChildProcesses::start(int id, const std::string& exe, const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
                           const std::string& log_path) {
  // Everything the child needs is built here: between fork and exec a process that may
  // have other threads (LibTorch's, once loaded) must not allocate.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    if (std::none_of(env.begin(), env.end(), [&](const auto& kv) { return kv.first == key; })) env_strings.push_back(entry);
  }
  for (const auto& [key, value] : env) env_strings.push_back(key + "=" + value);
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::string exec_failed = who_ + ": cannot run " + exe + ": ";
  int log_fd = -1;
  if (!log_path.empty()) {
    log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) throw Error(who_ + ": cannot write the log file " + log_path + ": " + std::strerror(errno));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    const std::string why = std::strerror(errno);
    if (log_fd >= 0) ::close(log_fd);
    throw Error(who_ + ": cannot start a process: " + why);
  }
  if (pid == 0) {
    if (log_fd >= 0) {  // dup2 clears close-on-exec on the copies
      ::dup2(log_fd, STDOUT_FILENO);
      ::dup2(log_fd, STDERR_FILENO);
    }
    ::execve(exe.c_str(), args.data(), envp.data());
    const char* why = std::strerror(errno);
    [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    n = ::write(STDERR_FILENO, why, std::strlen(why));
    n = ::write(STDERR_FILENO, "\n", 1);
    ::_exit(127);
  }
  if (log_fd >= 0) ::close(log_fd);
  children_[pid] = id;
}

std::optional<ChildProcesses::Ended> ChildProcesses::wait_any() {
  while (!children_.empty()) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      // No child left to wait for (someone else reaped ours): nothing more will end.
      children_.clear();
      return std::nullopt;
    }
    const auto it = children_.find(pid);
    if (it == children_.end()) continue;  // a child this object did not start
    Ended e{it->second, status};
    children_.erase(it);
    return e;
  }
  return std::nullopt;
}

void ChildProcesses::kill_all() {
  for (const auto& [pid, id] : children_) ::kill(pid, SIGKILL);
  for (const auto& [pid, id] : children_) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  children_.clear();
}

void launch_local_ranks(int nproc, const std::vector<std::string>& argv) {
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  const auto env_port = env_int("MASTER_PORT", 1, 65535);
  const int port = env_port ? static_cast<int>(*env_port) : free_local_port();
  ChildProcesses ranks("schedsim train --nproc");
  for (int r = 0; r < nproc; ++r) {
    ranks.start(r, exe, argv,
                {{"RANK", std::to_string(r)},
                 {"LOCAL_RANK", std::to_string(r)},
                 {"WORLD_SIZE", std::to_string(nproc)},
                 {"MASTER_ADDR", "127.0.0.1"},
                 {"MASTER_PORT", std::to_string(port)}});
  }
  // The first rank to fail decides the message; the others are killed rather than left
  // waiting for it in a collective.
  while (const auto ended = ranks.wait_any()) {
    if (ended->ok()) continue;
    const std::string failure = "rank " + std::to_string(ended->id) + " of " + std::to_string(nproc) + " " + describe_wait_status(ended->status);
    ranks.kill_all();
    throw Error("schedsim train --nproc " + std::to_string(nproc) + ": " + failure + "; the other ranks were stopped (see the messages above)");
  }
}

}  // namespace schedsim::rl
