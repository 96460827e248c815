// Where this process stands in a multi-process training run, read from the environment
// variables torchrun and Slurm's srun set (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
// LOCAL_RANK; SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID when WORLD_SIZE is unset but
// MASTER_ADDR is set), and the launchers that start copies of this executable:
// `schedsim train --nproc N` (ranks of one training) and `schedsim rl-bench --jobs N`
// (independent trainings). No LibTorch here: the c10d side is rl/distributed.hpp.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace schedsim::rl {

struct DistConfig {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr;  // rank 0's address (its TCP store); empty for one process
  int master_port = 0;
  bool from_environment = false;  // WORLD_SIZE (or SLURM_NTASKS) was set
};

// Reads the variables above. One process when none is set. Throws InputError naming the
// variable when a value is malformed, when WORLD_SIZE > 1 without MASTER_ADDR and
// MASTER_PORT, or when RANK is outside [0, WORLD_SIZE).
DistConfig dist_config_from_environment();

// A TCP port on 127.0.0.1 that was free a moment ago (the kernel picks it).
int free_local_port();

// How a child ended, in words: "exited with status 3", "was killed by signal 9 (Killed)".
std::string describe_wait_status(int status);

// Child processes that run `exe` (this executable, usually), each known by the caller's
// number. The owner waits for them one at a time; whatever is still running when it gives
// up (kill_all, or the destructor after an exception) is killed and reaped, so no copy
// outlives the command that started it.
class ChildProcesses {
 public:
  // `who` starts the messages of errors, e.g. "schedsim train --nproc".
  explicit ChildProcesses(std::string who) : who_(std::move(who)) {}
  ChildProcesses(const ChildProcesses&) = delete;
  ChildProcesses& operator=(const ChildProcesses&) = delete;
  ~ChildProcesses() { kill_all(); }

  // Starts `exe` with `argv` (argv[0] included) and `env` added to this process's
  // environment. With a `log_path`, the child's stdout and stderr go to that file
  // (created or truncated here, so that a failure to open it is this process's error).
  // Throws Error when the process cannot be started (the others keep running).
  void start(int id, const std::string& exe, const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env = {},
             const std::string& log_path = "");

  struct Ended {
    int id = 0;
    int status = 0;  // as waitpid reports it (describe_wait_status)
    bool ok() const;  // exited with status 0
  };
  // Waits for any of the running children to end; nullopt when none is running.
  std::optional<Ended> wait_any();
  // SIGKILL to every running child, then reaps them.
  void kill_all();
  std::size_t running() const { return children_.size(); }

 private:
  std::string who_;
  std::map<pid_t, int> children_;  // pid -> id
};

// `schedsim train --nproc N`: runs `argv` (this executable's arguments) as N child
// processes with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR=127.0.0.1 and MASTER_PORT (a
// free port, or MASTER_PORT when set) in their environment, and waits for all of them.
// When one exits non-zero or is killed by a signal, the others are killed and an Error
// names that rank and how it ended.
void launch_local_ranks(int nproc, const std::vector<std::string>& argv);

}  // namespace schedsim::rl
