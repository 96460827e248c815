// Dependency-free SVG figures for the CLI (the main job's JCT CDF). Deterministic text
// output, so figures are reproducible byte for byte like every other result.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace schedsim {

// How series i is drawn: a colour and a dash pattern ("" = solid). No two of the first
// 50 series share both, so every line stays identifiable in colour and in print.
struct SeriesStyle {
  std::string color;
  std::string dash;
};
SeriesStyle series_style(std::size_t i);

// Every figure has its legend in a box right of the plot (class="legend-box"), sized to
// its entries: the canvas grows to fit it, and long labels are cut at 56 characters.

struct CdfSeries {
  std::string label;
  const std::vector<double>* sorted_values;  // ascending, positive
};

// Empirical CDFs on a log-scaled x axis, one line per series, with a legend.
std::string cdf_svg(const std::vector<CdfSeries>& series, const std::string& x_label, const std::string& y_label, const std::string& title);

struct LineSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending; non-finite y skipped
};

// Lines on linear axes, one per series, with a legend (learning curves).
std::string line_svg(const std::vector<LineSeries>& series, const std::string& x_label, const std::string& y_label, const std::string& title);

}  // namespace schedsim

namespace schedsim {

struct ScatterPoint {
  double x = 0, y = 0;
  double shade = 0;        // mapped onto a light-to-dark color scale
  bool highlight = false;  // drawn larger, outlined
};

// Dots on linear axes, colored by `shade` (scale legend on the right, labelled
// `shade_label`); highlighted dots joined by a line in x order.
std::string scatter_svg(const std::vector<ScatterPoint>& points, const std::string& x_label, const std::string& y_label, const std::string& shade_label,
                        const std::string& title);

}  // namespace schedsim
