// When a job checkpoints: never, at a fixed interval, or at the Young–Daly interval
// sqrt(2 * delta * M) computed from the job's checkpoint cost delta and the mean time
// between the failures it sees M (derivation in docs/failures.md).
#pragma once

#include <cstdint>

namespace schedsim {

struct CheckpointConfig {
  enum class Policy : std::uint8_t { kNone, kFixed, kYoungDaly };
  Policy policy = Policy::kNone;
  double interval_s = 0.0;  // kFixed: compute seconds between the end of one checkpoint and the next
  // Seconds per checkpoint write; < 0 = from the physics model (size / storage bandwidth).
  double cost_s = -1.0;
  // Asynchronous: the job keeps computing while the checkpoint is written; it commits
  // cost_s after it was taken.
  bool async = false;
};

// sqrt(2 * cost_s * mtbf_s): first-order optimum of the expected overhead
// cost/tau + tau/(2M) (Young 1974, Daly 2006).
double young_daly_interval_s(double cost_s, double mtbf_s);

// The interval for one job; 0 = no periodic checkpoints. `failure_rate_per_s` = 1 / M.
double checkpoint_interval_s(const CheckpointConfig& config, double cost_s, double failure_rate_per_s);

}  // namespace schedsim
