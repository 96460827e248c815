// Fragmentation of GPU capacity under a mix of fractional and whole-GPU requests, after
// Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
// Fragmentation Gradient Descent" (USENIX ATC'23). For a node with free capacity f_g on
// each GPU g (milli, 1000 = free whole GPU) and a task class m asking for n_m GPUs of
// d_m milli each:
//   F_n(m) = sum_g f_g                          when m does not fit on the node at all,
//          = sum_{g : f_g < min(d_m, 1000)} f_g  otherwise (the free capacity m cannot use);
// the node's expected fragmentation is F_n = sum_m p_m F_n(m), with p_m the share of class
// m in the workload. FGD places a task where F_n grows the least.
// Simplified against the paper: GPUs only (no CPU or memory dimension in the fit test),
// no GPU-model constraints, and the class mix is learned online from the jobs that arrived
// so far (the paper takes it from the target workload's history).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cluster_state.hpp"
#include "sim/snapshot_archive.hpp"

namespace schedsim {

class TaskMix {
 public:
  struct Class {
    int num_gpus;
    int milli;  // per GPU
    std::int64_t count;
  };
  void add(int num_gpus, int milli);
  const std::vector<Class>& classes() const { return classes_; }
  std::int64_t total() const { return total_; }
  // Expected fragmentation (milli) of one node whose GPUs have `free_milli` free.
  double node_fragmentation_milli(const int* free_milli, int num_gpus) const;
  void snapshot(SnapshotArchive& ar) {
    ar.io_each(classes_, [&](Class& c) { ar(c.num_gpus, c.milli, c.count); });
    ar(total_);
  }

 private:
  std::vector<Class> classes_;  // in order of first appearance: deterministic
  std::int64_t total_ = 0;
};

// Expected fragmentation of the whole cluster (sum over nodes), in milli.
double cluster_fragmentation_milli(const ClusterState& state, const TaskMix& mix);

}  // namespace schedsim
