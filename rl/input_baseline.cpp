#include "rl/input_baseline.hpp"

#include <algorithm>

namespace schedsim::rl {

std::vector<std::vector<float>> input_baseline_advantages(const std::vector<std::vector<float>>& rewards, const std::vector<std::vector<std::uint8_t>>& valids,
                                                          const std::vector<std::vector<double>>& times_s, const std::vector<double>& end_s, double scale,
                                                          int copies) {
  const std::size_t T = rewards.size(), N = end_s.size();
  struct Track {
    std::vector<double> at_s;    // decision times, then the episode's end
    std::vector<double> before;  // reward collected before each decision (prefix sums)
  };
  std::vector<Track> tracks(N);
  for (std::size_t i = 0; i < N; ++i) {
    Track& tr = tracks[i];
    tr.before.push_back(0.0);
    for (std::size_t t = 0; t < T && valids[t][i]; ++t) {
      tr.at_s.push_back(times_s[t][i]);
      tr.before.push_back(tr.before.back() + static_cast<double>(rewards[t][i]) * scale);
    }
    // An episode cut short (no end seen) ends at its last decision.
    tr.at_s.push_back(tr.at_s.empty() ? 0.0 : std::max(end_s[i], tr.at_s.back()));
  }
  // Reward environment j collected up to simulated time s.
  auto collected = [&](std::size_t j, double s) {
    const Track& tr = tracks[j];
    const std::size_t steps = tr.at_s.size() - 1;
    if (steps == 0) return 0.0;
    const auto p = static_cast<std::size_t>(std::upper_bound(tr.at_s.begin(), tr.at_s.end(), s) - tr.at_s.begin());  // first time > s
    if (p == 0) return 0.0;
    if (p > steps) return tr.before[steps];
    const std::size_t k = p - 1;  // at_s[k] <= s < at_s[k + 1]
    const double share = (s - tr.at_s[k]) / (tr.at_s[k + 1] - tr.at_s[k]);
    return tr.before[k] + (tr.before[k + 1] - tr.before[k]) * share;
  };
  std::vector<std::vector<float>> out(T, std::vector<float>(N, 0.0f));
  const auto group = static_cast<std::size_t>(copies);
  for (std::size_t i = 0; i < N; ++i) {
    const std::size_t first = i / group * group;
    const Track& tr = tracks[i];
    const std::size_t steps = tr.at_s.size() - 1;
    for (std::size_t t = 0; t < steps; ++t) {
      const double s = tr.at_s[t];
      double others = 0.0;
      for (std::size_t j = first; j < first + group && j < N; ++j) {
        if (j != i) others += tracks[j].before.back() - collected(j, s);
      }
      const double baseline = others / static_cast<double>(group - 1);
      out[t][i] = static_cast<float>(tr.before.back() - tr.before[t] - baseline);
    }
  }
  return out;
}

}  // namespace schedsim::rl
