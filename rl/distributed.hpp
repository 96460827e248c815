// The collectives distributed training needs, behind one small interface: the only code
// that talks to PyTorch's c10d (Gloo on CPU; NCCL when the learner runs on CUDA and
// LibTorch was built with it). With one process every operation is the identity and no
// c10d object exists, so single-process training never depends on it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "rl/dist_launch.hpp"

namespace at {
class Tensor;
}

namespace schedsim::rl {

class Communicator {
 public:
  // Joins the process group of `config` (rank 0 hosts the TCP store at MASTER_ADDR:
  // MASTER_PORT). Every wait, the rendezvous included, gives up after `timeout_s`: a rank
  // whose peer died fails with an Error naming its rank instead of hanging.
  Communicator(const DistConfig& config, bool cuda, double timeout_s);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  // "gloo", "nccl", or "none" (one process).
  std::string backend() const;

  // In place: every tensor becomes the sum over ranks, bit-identical on every rank. The
  // tensors are sent as one flat buffer (they must share a dtype and device).
  void allreduce_sum(std::vector<at::Tensor>& tensors);
  void allreduce_sum(std::vector<double>& values);
  void barrier();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int rank_ = 0, world_size_ = 1;
  double timeout_s_ = 0.0;
  [[noreturn]] void fail(const char* what, const std::exception& e) const;
};

// True when this build can train with more than one process on CPU (c10d with Gloo was
// found at configure time; a build with -DSCHEDSIM_C10D_NCCL=ON alone can on CUDA only).
bool distributed_available();

}  // namespace schedsim::rl
