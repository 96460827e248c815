// The observation's feature rows. Each column is documented in docs/rl.md (unit and
// normalization); the names here are the contract with the agents and Python.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rl/env/candidates.hpp"

namespace schedsim::rl {

inline constexpr int kCandidateFeatures = 20;
inline constexpr int kGlobalFeatures = 16;
// With the cooling action family (EnvConfig::cooling_setpoints_c) rows get two more columns
// and the global vector three more (docs/rl.md); without it the shapes above are unchanged.
inline constexpr int kCoolingCandidateFeatures = 2;
inline constexpr int kCoolingGlobalFeatures = 3;
inline constexpr double kTemperatureScale_c = 40.0;
int candidate_feature_count(const EnvConfig& config);
int global_feature_count(const EnvConfig& config);
// Price and carbon global features: value / scale; forecasts average this window ahead.
inline constexpr double kPriceScale_usd_per_mwh = 100.0;
inline constexpr double kCarbonScale_g_per_kwh = 500.0;
inline constexpr double kForecastWindow_s = 6 * 3600.0;
// Free-device fractions are reported for this many device types (ClusterSpec order); a
// scenario with more types is rejected when the environment is built.
inline constexpr int kMaxDeviceTypes = 4;

std::vector<std::string> candidate_feature_names(bool cooling = false);
std::vector<std::string> global_feature_names(bool cooling = false);

// Writes one row of kCandidateFeatures values for candidate `c` at the view's now (a
// SchedulerView: the same code serves the environment and a policy running an agent).
// With `features` > kCandidateFeatures the cooling columns follow.
void write_candidate_features(const SchedulerView& view, const Candidate& c, int max_candidates, float* row, int features = kCandidateFeatures);
// Writes the K x F candidate block (rows beyond `rows` zero) and the first K mask entries
// (1 = legal); the wait entry is the caller's.
void write_candidate_rows(const SchedulerView& view, const std::vector<Candidate>& candidates, int rows, int max_candidates, float* out,
                          std::uint8_t* mask, int features = kCandidateFeatures);
// Writes kGlobalFeatures values.
void write_global_features(const SchedulerView& view, const PendingQueue& queue, float* global, int features = kGlobalFeatures);

}  // namespace schedsim::rl
