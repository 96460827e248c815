// The observation's feature rows. Each column is documented in docs/rl.md (unit and
// normalization); the names here are the contract with the agents and Python.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "rl/env/candidates.hpp"

namespace schedsim::rl {

inline constexpr int kCandidateFeatures = 24;
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
// Free-device fractions are reported for this many device slots (ClusterSpec type order);
// the last slot pools the fourth and all later types, so any number of types fits.
inline constexpr int kMaxDeviceTypes = 4;

std::vector<std::string> candidate_feature_names(bool cooling = false);
std::vector<std::string> global_feature_names(bool cooling = false);

// Writes one row of kCandidateFeatures values for candidate `c` at the view's now (a
// SchedulerView: the same code serves the environment and a policy running an agent).
// `info`: the scenario's information model, behind the duration columns (docs/rl.md).
// With `features` > kCandidateFeatures the cooling columns follow.
void write_candidate_features(const SchedulerView& view, const InformationModel& info, const Candidate& c, int max_candidates, float* row, int features = kCandidateFeatures);
// ln(1 + x) remembered for its last argument: log1p is a pure function, so an equal
// argument (bit for bit) gives the same bits without the call. Starts as log1p(0) = 0.
class Log1pMemo {
 public:
  double operator()(double x) {
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    if (bits != in_bits_) {
      in_bits_ = bits;
      out_ = std::log1p(x);
    }
    return out_;
  }

 private:
  std::uint64_t in_bits_ = 0;  // +0.0
  double out_ = 0.0;
};

// Logarithms of the feature rows kept between observations by the writer's owner (an
// environment, an agent's policy): a pending job's remaining work does not change while it
// waits, nor do its rows' run times while its placements stay, so most arguments repeat.
struct FeatureLogCache {
  struct Job {
    Log1pMemo work, gpu_work, age, attained, attained_gpu;
    Log1pMemo runtime[kNumPlacementOptions + 1];  // by option; the last: blocked and preemption rows
  };
  std::vector<Job> by_slot;
  Job& job(JobSlot slot) {
    const auto index = static_cast<std::size_t>(slot);
    if (by_slot.size() <= index) by_slot.resize(index + 1);
    return by_slot[index];
  }
  std::vector<double> log_rank;  // log1p(rank) / log1p(max_candidates), by rank
  int log_rank_of = -1;          // the max_candidates of log_rank
  Log1pMemo pending, queued_gpu_h, running, running_mean_h;  // global features
};

// Writes the K x F candidate block (rows beyond `rows` zero) and the first K mask entries
// (1 = legal); the wait entry is the caller's. `cache` (optional) only saves work: the
// output is the same with or without it.
void write_candidate_rows(const SchedulerView& view, const InformationModel& info, const std::vector<Candidate>& candidates, int rows, int max_candidates, float* out,
                          std::uint8_t* mask, int features = kCandidateFeatures, FeatureLogCache* cache = nullptr);
// Writes kGlobalFeatures values (`cache` as for write_candidate_rows).
void write_global_features(const SchedulerView& view, const InformationModel& info, const PendingQueue& queue, float* global, int features = kGlobalFeatures,
                           FeatureLogCache* cache = nullptr);

}  // namespace schedsim::rl
