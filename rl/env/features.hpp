// The observation's feature rows. Each column is documented in docs/rl.md (unit and
// normalization); the names here are the contract with the agents and Python.
#pragma once

#include <string>
#include <vector>

#include "rl/env/candidates.hpp"

namespace schedsim::rl {

inline constexpr int kCandidateFeatures = 19;
inline constexpr int kGlobalFeatures = 16;
// Free-device fractions are reported for this many device types (ClusterSpec order); a
// scenario with more types is rejected when the environment is built.
inline constexpr int kMaxDeviceTypes = 4;

std::vector<std::string> candidate_feature_names();
std::vector<std::string> global_feature_names();

// Writes one row of kCandidateFeatures values for candidate `c` at the simulator's now.
void write_candidate_features(const Simulator& sim, const Candidate& c, int max_candidates, float* row);
// Writes kGlobalFeatures values.
void write_global_features(const Simulator& sim, const PendingQueue& queue, float* global);

}  // namespace schedsim::rl
