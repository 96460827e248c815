// Advantages with an input-driven baseline (train.input_baseline; Mao et al., "Variance
// Reduction for Reinforcement Learning in Input-Driven Environments", ICLR 2019).
//
// In a scheduling environment the arrivals (the input), not the agent, cause most of the
// variance of an episode's return: a busy trace window costs more than a quiet one whatever
// the agent does. The learner therefore replays each training workload in `copies`
// consecutive environments (they differ only in their sampled actions) and judges a step by
// how much better its return-to-go is than the other copies' at the same simulated time.
// No LibTorch here: the learner calls it, the tests check it against hand-computed values.
#pragma once

#include <cstdint>
#include <vector>

namespace schedsim::rl {

// `rewards`, `valids`, `times_s`: [T][N], the rollout's step-major arrays (valids[t][i] =
// step t of environment i belongs to its episode; times_s[t][i] = the simulated time of
// that decision); `end_s[i]`: when environment i's episode ended (0 = unknown: its last
// decision). Environments i and j are copies when i / copies == j / copies (N must be a
// multiple of copies, copies >= 2). Rewards are multiplied by `scale`. Returns [T][N]: for
// each valid step, the undiscounted return-to-go minus the mean over the other copies of
// the reward they collected after that step's time (0 elsewhere). A step's reward accrues
// evenly over the simulated time until the next decision (decision points are arrivals
// and ends, so the jobs in the system do not change in between).
std::vector<std::vector<float>> input_baseline_advantages(const std::vector<std::vector<float>>& rewards, const std::vector<std::vector<std::uint8_t>>& valids,
                                                          const std::vector<std::vector<double>>& times_s, const std::vector<double>& end_s, double scale,
                                                          int copies);

}  // namespace schedsim::rl
