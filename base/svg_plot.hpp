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

struct MarkerSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y); non-finite points skipped
  // Empty, or one short text per point drawn beside it (e.g. each heuristic's name).
  std::vector<std::string> point_labels;
};

// Points on linear axes, series i drawn with marker shape i % 6 (circle, square, triangle,
// diamond, inverted triangle, cross) in series_style(i)'s colour, so that no two of the
// first 30 series look alike; the legend (a marker and the label per series) in a box
// right of the plot. Dashed grey reference lines at x = ref_x and y = ref_y when finite
// (e.g. 1: parity with a yardstick), kept inside the axes.
std::string marker_scatter_svg(const std::vector<MarkerSeries>& series, const std::string& x_label, const std::string& y_label, const std::string& title,
                               double ref_x, double ref_y);

// Dots on linear axes, colored by `shade` (scale legend on the right, labelled
// `shade_label`); highlighted dots joined by a line in x order.
std::string scatter_svg(const std::vector<ScatterPoint>& points, const std::string& x_label, const std::string& y_label, const std::string& shade_label,
                        const std::string& title);

}  // namespace schedsim
