// Where this process stands in a multi-process training run, read from the environment
// variables torchrun and Slurm's srun set (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
// LOCAL_RANK; SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID when WORLD_SIZE is unset but
// MASTER_ADDR is set), and the launcher behind
// A TCP port on 127.0.0.1 that was free a moment ago (the kernel picks it).
int free_local_port();

// `schedsim train --nproc N`, which starts N local ranks of the same command. No LibTorch
// here: the c10d side is rl/distributed.hpp.
#pragma once

#include <string>
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

// `schedsim train --nproc N`: runs `argv` (this executable's arguments) as N child
// processes with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR=127.0.0.1 and MASTER_PORT (a
// free port, or MASTER_PORT when set) in their environment, and waits for all of them.
// When one exits non-zero or is killed by a signal, the others are killed and an Error
// names that rank and how it ended.
void launch_local_ranks(int nproc, const std::vector<std::string>& argv);

}  // namespace schedsim::rl
