// Dependency-free SVG figures for the CLI (the main job's JCT CDF). Deterministic text
// output, so figures are reproducible byte for byte like every other result.
#pragma once

#include <string>
#include <vector>

namespace schedsim {

struct CdfSeries {
  std::string label;
  const std::vector<double>* sorted_values;  // ascending, positive
};

// Empirical CDFs on a log-scaled x axis, one line per series, with a legend.
std::string cdf_svg(const std::vector<CdfSeries>& series, const std::string& x_label, const std::string& y_label, const std::string& title);

}  // namespace schedsim
