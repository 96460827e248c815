#include "base/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace schedsim {
namespace {

// Fixed plot area; the canvas grows around it to fit the tick labels on the left and
// the legend on the right, so that nothing is clipped whatever the number of series.
constexpr double kPlotW = 480, kPlotH = 340;
constexpr double kTop = 40, kBottom = 60, kMinLeft = 70;
constexpr double kFontPx = 12;
constexpr double kLegendRowPx = 18;
constexpr double kLegendGap = 24;  // between the plot frame and the legend box
constexpr std::size_t kMaxLabelChars = 56;  // longer legend labels are cut, the full text kept in a <title>

// Ten colours that stay apart on screen and in print (Okabe-Ito and Tableau, no two alike),
// combined with five dash patterns: series i has colour i % 10 and dash i / 10, so the
// first 50 series differ in colour or in dash (and later ones get longer dashes).
const char* const kColors[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#8c564b", "#7f7f7f", "#bcbd22"};
constexpr std::size_t kNumColors = sizeof kColors / sizeof kColors[0];
const char* const kDashes[] = {"", "7,3", "2,2", "9,3,2,3", "14,4"};
constexpr std::size_t kNumDashes = sizeof kDashes / sizeof kDashes[0];

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A tick label: plain digits where they are short (0.25, 1500), whole numbers from 10,000
// up with thousands separators (1,350,000), else 1.5e-05.
std::string tick(double v) {
  if (std::fabs(v) < 1e-12) return "0";
  char buf[40];
  if (std::fabs(v) >= 1e4 && std::fabs(v) < 1e15 && v == std::round(v)) {
    std::snprintf(buf, sizeof buf, "%.0f", std::fabs(v));
    std::string digits = buf, out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
      out += digits[i];
    }
    return (v < 0 ? "-" : "") + out;
  }
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Width of `chars` characters of 12 px sans-serif, a little wide so that no real font overflows it.
double text_px(std::size_t chars) { return 0.62 * kFontPx * static_cast<double>(chars); }

// Number of characters as the reader sees them (UTF-8 continuation bytes not counted).
std::size_t glyphs(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string shorten(const std::string& s) {
  if (glyphs(s) <= kMaxLabelChars) return s;
  std::string out;
  std::size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80 && ++n > kMaxLabelChars - 1) break;
    out += static_cast<char>(c);
  }
  return out + "\u2026";
}

// "Nice" ticks (1, 2 or 5 times a power of ten) covering [lo, hi]: the step whose
// number of intervals is closest to five.
std::vector<double> nice_ticks(double lo, double hi) {
  const double mag = std::pow(10.0, std::floor(std::log10((hi - lo) / 5)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0, 20.0}) {
    if (std::fabs((hi - lo) / (m * mag) - 5) < std::fabs((hi - lo) / step - 5)) step = m * mag;
  }
  std::vector<double> out;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 * step; v += step) out.push_back(std::fabs(v) < 1e-12 * step ? 0 : v);
  return out;
}

// The canvas: left margin from the widest y tick label, right part from the legend.
struct Layout {
  double left = kMinLeft, legend_w = 0, legend_h = 0;
  double width() const { return left + kPlotW + legend_w; }
  double height() const { return std::max(kTop + kPlotH + kBottom, kTop + legend_h + 20); }
  double plot_right() const { return left + kPlotW; }
};

Layout make_layout(const std::vector<std::string>& y_ticks, const std::vector<std::string>& legend_labels, double legend_extra_h = 0) {
  Layout l;
  std::size_t widest_tick = 0, widest_label = 0;
  for (const auto& t : y_ticks) widest_tick = std::max(widest_tick, glyphs(t));
  for (const auto& t : legend_labels) widest_label = std::max(widest_label, glyphs(shorten(t)));
  l.left = std::max(kMinLeft, 36 + text_px(widest_tick) + 10);
  // Box from plot_right + 24 (clear of the last x tick label): 10 padding, 28 swatch,
  // 6 gap, the text, 10 padding; 10 of margin right of the box.
  l.legend_w = kLegendGap + 10 + 28 + 6 + text_px(widest_label) + 10 + 10;
  l.legend_h = kLegendRowPx * static_cast<double>(legend_labels.size()) + 12 + legend_extra_h;
  return l;
}

void open_svg(std::ostringstream& o, const Layout& l, const std::string& title) {
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(l.width()) << "\" height=\"" << num(l.height()) << "\" viewBox=\"0 0 " << num(l.width())
    << ' ' << num(l.height()) << "\" font-family=\"sans-serif\" font-size=\"" << kFontPx << "\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << num(l.left + kPlotW / 2) << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" << escape(title) << "</text>\n";
}

void frame_and_labels(std::ostringstream& o, const Layout& l, const std::string& x_label, const std::string& y_label) {
  o << "<rect x=\"" << num(l.left) << "\" y=\"" << num(kTop) << "\" width=\"" << num(kPlotW) << "\" height=\"" << num(kPlotH)
    << "\" fill=\"none\" stroke=\"black\"/>\n";
  o << "<text x=\"" << num(l.left + kPlotW / 2) << "\" y=\"" << num(kTop + kPlotH + 45) << "\" text-anchor=\"middle\">" << escape(x_label) << "</text>\n";
  o << "<text transform=\"translate(18," << num(kTop + kPlotH / 2) << ") rotate(-90)\" text-anchor=\"middle\">" << escape(y_label) << "</text>\n";
}

void x_tick(std::ostringstream& o, double x, const std::string& label) {
  o << "<line x1=\"" << num(x) << "\" y1=\"" << num(kTop) << "\" x2=\"" << num(x) << "\" y2=\"" << num(kTop + kPlotH) << "\" stroke=\"#ddd\"/>\n";
  o << "<text x=\"" << num(x) << "\" y=\"" << num(kTop + kPlotH + 18) << "\" text-anchor=\"middle\">" << escape(label) << "</text>\n";
}

void y_tick(std::ostringstream& o, const Layout& l, double y, const std::string& label) {
  o << "<line x1=\"" << num(l.left) << "\" y1=\"" << num(y) << "\" x2=\"" << num(l.plot_right()) << "\" y2=\"" << num(y) << "\" stroke=\"#ddd\"/>\n";
  o << "<text x=\"" << num(l.left - 8) << "\" y=\"" << num(y + 4) << "\" text-anchor=\"end\">" << escape(label) << "</text>\n";
}

std::string dash_attr(const SeriesStyle& s) { return s.dash.empty() ? std::string() : " stroke-dasharray=\"" + s.dash + "\""; }

// The legend: a box right of the plot, one swatch (colour and dash) and label per series.
void legend(std::ostringstream& o, const Layout& l, const std::vector<std::string>& labels) {
  const double x = l.plot_right() + kLegendGap, y = kTop;
  o << "<g class=\"legend\">\n";
  o << "<rect class=\"legend-box\" x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(l.legend_w - kLegendGap - 10) << "\" height=\"" << num(l.legend_h)
    << "\" fill=\"white\" stroke=\"#999\"/>\n";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const SeriesStyle s = series_style(i);
    const double ly = y + 15 + kLegendRowPx * static_cast<double>(i);
    o << "<line class=\"legend-swatch\" x1=\"" << num(x + 10) << "\" y1=\"" << num(ly) << "\" x2=\"" << num(x + 38) << "\" y2=\"" << num(ly) << "\" stroke=\""
      << s.color << "\" stroke-width=\"2.5\"" << dash_attr(s) << "/>\n";
    const std::string shown = shorten(labels[i]);
    o << "<text class=\"legend-label\" x=\"" << num(x + 44) << "\" y=\"" << num(ly + 4) << "\">" << escape(shown);
    if (shown != labels[i]) o << "<title>" << escape(labels[i]) << "</title>";
    o << "</text>\n";
  }
  o << "</g>\n";
}

void series_open(std::ostringstream& o, std::size_t i) {
  const SeriesStyle s = series_style(i);
  o << "<polyline class=\"series\" fill=\"none\" stroke=\"" << s.color << "\" stroke-width=\"2\"" << dash_attr(s) << " points=\"";
}

// A decade's label on a log axis: 0.0001, 0.001, ... 1, 10, ... 10000, else 1e-5 / 1e5.
std::string decade(int e) {
  if (e >= -4 && e <= 4) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", e < 0 ? -e : 0, std::pow(10.0, e));
    return buf;
  }
  return "1e" + std::to_string(e);
}

constexpr std::size_t kNumMarkers = 6;

// Marker shape `shape` (kNumMarkers of them) of radius about r centred on (x, y).
void marker(std::ostringstream& o, std::size_t shape, double x, double y, double r, const std::string& color, const char* css_class) {
  const std::string paint = "\" fill=\"" + color + "\" stroke=\"" + color + "\" fill-opacity=\"0.85\"/>\n";
  auto polygon = [&](std::initializer_list<std::pair<double, double>> pts) {
    o << "<polygon class=\"" << css_class << "\" points=\"";
    for (const auto& [dx, dy] : pts) o << num(x + dx) << ',' << num(y + dy) << ' ';
    o << paint;
  };
  switch (shape % kNumMarkers) {
    case 0: o << "<circle class=\"" << css_class << "\" cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"" << num(r) << paint; break;
    case 1: polygon({{-r, -r}, {r, -r}, {r, r}, {-r, r}}); break;
    case 2: polygon({{0, -1.2 * r}, {1.1 * r, 0.9 * r}, {-1.1 * r, 0.9 * r}}); break;
    case 3: polygon({{0, -1.3 * r}, {1.3 * r, 0}, {0, 1.3 * r}, {-1.3 * r, 0}}); break;
    case 4: polygon({{0, 1.2 * r}, {1.1 * r, -0.9 * r}, {-1.1 * r, -0.9 * r}}); break;
    default:
      o << "<path class=\"" << css_class << "\" d=\"M" << num(x - r) << ',' << num(y - r) << " L" << num(x + r) << ',' << num(y + r) << " M" << num(x - r) << ','
        << num(y + r) << " L" << num(x + r) << ',' << num(y - r) << "\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\"/>\n";
  }
}

}  // namespace

SeriesStyle series_style(std::size_t i) {
  SeriesStyle s;
  s.color = kColors[i % kNumColors];
  const std::size_t d = i / kNumColors;
  s.dash = d < kNumDashes ? kDashes[d] : std::to_string(4 + 2 * d) + ",3";
  return s;
}

std::string cdf_svg(const std::vector<CdfSeries>& series, const std::string& x_label, const std::string& y_label, const std::string& title) {
  double lo = INFINITY, hi = 0;
  for (const auto& s : series) {
    for (double v : *s.sorted_values) {
      if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
    }
  }
  if (!(hi > 0)) lo = 1, hi = 10;
  const double x0 = std::floor(std::log10(lo)), x1 = std::max(x0 + 1, std::ceil(std::log10(hi)));
  std::vector<std::string> labels;
  for (const auto& s : series) labels.push_back(s.label);
  const Layout l = make_layout({"0.75"}, labels);
  auto px = [&](double v) { return l.left + (std::log10(v) - x0) / (x1 - x0) * kPlotW; };
  auto py = [&](double f) { return kTop + (1 - f) * kPlotH; };

  std::ostringstream o;
  open_svg(o, l, title);
  for (double e = x0; e <= x1; ++e) x_tick(o, px(std::pow(10.0, e)), decade(static_cast<int>(e)));
  for (int i = 0; i <= 4; ++i) y_tick(o, l, py(i / 4.0), tick(i / 4.0));
  frame_and_labels(o, l, x_label, y_label);
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto& v = *series[i].sorted_values;
    series_open(o, i);
    if (!v.empty()) {
      // At most ~600 points per line: plenty for the eye, small files for a million jobs.
      const std::size_t step = std::max<std::size_t>(1, v.size() / 600);
      for (std::size_t k = 0; k < v.size(); k += step) {
        if (v[k] > 0) o << num(px(v[k])) << ',' << num(py(static_cast<double>(k + 1) / static_cast<double>(v.size()))) << ' ';
      }
      if (v.back() > 0) o << num(px(v.back())) << ',' << num(py(1.0));
    }
    o << "\"/>\n";
  }
  legend(o, l, labels);
  o << "</svg>\n";
  return o.str();
}

std::string line_svg(const std::vector<LineSeries>& series, const std::string& x_label, const std::string& y_label, const std::string& title) {
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      xlo = std::min(xlo, x), xhi = std::max(xhi, x), ylo = std::min(ylo, y), yhi = std::max(yhi, y);
    }
  }
  if (!(xhi >= xlo)) xlo = 0, xhi = 1, ylo = 0, yhi = 1;
  if (xhi == xlo) xhi = xlo + 1;
  if (yhi == ylo) yhi = ylo + 1;
  const double pad = 0.05 * (yhi - ylo);
  ylo -= pad, yhi += pad;
  const auto xt = nice_ticks(xlo, xhi), yt = nice_ticks(ylo, yhi);
  std::vector<std::string> labels, ytl;
  for (const auto& s : series) labels.push_back(s.label);
  for (double v : yt) ytl.push_back(tick(v));
  const Layout l = make_layout(ytl, labels);
  auto px = [&](double v) { return l.left + (v - xlo) / (xhi - xlo) * kPlotW; };
  auto py = [&](double v) { return kTop + (1 - (v - ylo) / (yhi - ylo)) * kPlotH; };
  std::ostringstream o;
  open_svg(o, l, title);
  for (double v : xt) x_tick(o, px(v), tick(v));
  for (double v : yt) y_tick(o, l, py(v), tick(v));
  frame_and_labels(o, l, x_label, y_label);
  for (std::size_t i = 0; i < series.size(); ++i) {
    series_open(o, i);
    for (const auto& [x, y] : series[i].points) {
      if (std::isfinite(x) && std::isfinite(y)) o << num(px(x)) << ',' << num(py(y)) << ' ';
    }
    o << "\"/>\n";
  }
  legend(o, l, labels);
  o << "</svg>\n";
  return o.str();
}

std::string marker_scatter_svg(const std::vector<MarkerSeries>& series, const std::string& x_label, const std::string& y_label, const std::string& title,
                               double ref_x, double ref_y) {
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      xlo = std::min(xlo, x), xhi = std::max(xhi, x), ylo = std::min(ylo, y), yhi = std::max(yhi, y);
    }
  }
  if (!(xhi >= xlo)) xlo = 0, xhi = 1, ylo = 0, yhi = 1;
  // The reference lines are part of what the reader compares against: inside the axes.
  if (std::isfinite(ref_x)) xlo = std::min(xlo, ref_x), xhi = std::max(xhi, ref_x);
  if (std::isfinite(ref_y)) ylo = std::min(ylo, ref_y), yhi = std::max(yhi, ref_y);
  if (xhi == xlo) xlo -= 0.5, xhi += 0.5;
  if (yhi == ylo) ylo -= 0.5, yhi += 0.5;
  const double xpad = 0.06 * (xhi - xlo), ypad = 0.06 * (yhi - ylo);
  xlo -= xpad, xhi += xpad, ylo -= ypad, yhi += ypad;
  const auto xt = nice_ticks(xlo, xhi), yt = nice_ticks(ylo, yhi);
  std::vector<std::string> labels, ytl;
  for (const auto& s : series) labels.push_back(s.label);
  for (double v : yt) ytl.push_back(tick(v));
  const Layout l = make_layout(ytl, labels);
  auto px = [&](double v) { return l.left + (v - xlo) / (xhi - xlo) * kPlotW; };
  auto py = [&](double v) { return kTop + (1 - (v - ylo) / (yhi - ylo)) * kPlotH; };
  std::ostringstream o;
  open_svg(o, l, title);
  for (double v : xt) x_tick(o, px(v), tick(v));
  for (double v : yt) y_tick(o, l, py(v), tick(v));
  frame_and_labels(o, l, x_label, y_label);
  if (std::isfinite(ref_x))
    o << "<line class=\"reference\" x1=\"" << num(px(ref_x)) << "\" y1=\"" << num(kTop) << "\" x2=\"" << num(px(ref_x)) << "\" y2=\"" << num(kTop + kPlotH)
      << "\" stroke=\"#777\" stroke-dasharray=\"5,4\"/>\n";
  if (std::isfinite(ref_y))
    o << "<line class=\"reference\" x1=\"" << num(l.left) << "\" y1=\"" << num(py(ref_y)) << "\" x2=\"" << num(l.plot_right()) << "\" y2=\"" << num(py(ref_y))
      << "\" stroke=\"#777\" stroke-dasharray=\"5,4\"/>\n";
  for (std::size_t i = 0; i < series.size(); ++i) {
    const std::string color = series_style(i).color;
    const auto& s = series[i];
    for (std::size_t k = 0; k < s.points.size(); ++k) {
      const auto [x, y] = s.points[k];
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      marker(o, i, px(x), py(y), 4.5, color, "series");
      if (k < s.point_labels.size() && !s.point_labels[k].empty())
        o << "<text class=\"point-label\" x=\"" << num(px(x) + 7) << "\" y=\"" << num(py(y) - 5) << "\" font-size=\"10\" fill=\"#444\">"
          << escape(shorten(s.point_labels[k])) << "</text>\n";
    }
  }
  // The legend: one marker and label per series, in a box right of the plot.
  const double bx = l.plot_right() + kLegendGap;
  o << "<g class=\"legend\">\n";
  o << "<rect class=\"legend-box\" x=\"" << num(bx) << "\" y=\"" << num(kTop) << "\" width=\"" << num(l.legend_w - kLegendGap - 10) << "\" height=\"" << num(l.legend_h)
    << "\" fill=\"white\" stroke=\"#999\"/>\n";
  for (std::size_t i = 0; i < series.size(); ++i) {
    const double ly = kTop + 15 + kLegendRowPx * static_cast<double>(i);
    marker(o, i, bx + 24, ly, 4.5, series_style(i).color, "legend-swatch");
    const std::string shown = shorten(labels[i]);
    o << "<text class=\"legend-label\" x=\"" << num(bx + 44) << "\" y=\"" << num(ly + 4) << "\">" << escape(shown);
    if (shown != labels[i]) o << "<title>" << escape(labels[i]) << "</title>";
    o << "</text>\n";
  }
  o << "</g>\n";
  o << "</svg>\n";
  return o.str();
}

std::string scatter_svg(const std::vector<ScatterPoint>& points, const std::string& x_label, const std::string& y_label, const std::string& shade_label,
                        const std::string& title) {
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY, slo = INFINITY, shi = -INFINITY;
  for (const auto& p : points) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    xlo = std::min(xlo, p.x), xhi = std::max(xhi, p.x), ylo = std::min(ylo, p.y), yhi = std::max(yhi, p.y);
    slo = std::min(slo, p.shade), shi = std::max(shi, p.shade);
  }
  if (!(xhi >= xlo)) xlo = 0, xhi = 1, ylo = 0, yhi = 1, slo = 0, shi = 1;
  if (xhi == xlo) xhi = xlo + 1;
  if (yhi == ylo) yhi = ylo + 1;
  if (!(shi > slo)) shi = slo + 1;
  const double xpad = 0.04 * (xhi - xlo), ypad = 0.05 * (yhi - ylo);
  xlo -= xpad, xhi += xpad, ylo -= ypad, yhi += ypad;
  const auto xt = nice_ticks(xlo, xhi), yt = nice_ticks(ylo, yhi);
  // The legend: the colour scale's title, five shades with their values, the front's marker.
  std::vector<std::string> ytl, legend_texts{shade_label, "Pareto front"};
  for (double v : yt) ytl.push_back(tick(v));
  // Shades are read by eye: three significant digits are plenty.
  auto shade_text = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return std::string(buf);
  };
  for (int i = 0; i <= 4; ++i) legend_texts.push_back(shade_text(slo + (shi - slo) * i / 4.0));
  Layout l = make_layout(ytl, legend_texts);
  l.legend_h = 38 + 22.0 * 6 + 16;  // title, five shades, a gap, the front's marker
  auto px = [&](double v) { return l.left + (v - xlo) / (xhi - xlo) * kPlotW; };
  auto py = [&](double v) { return kTop + (1 - (v - ylo) / (yhi - ylo)) * kPlotH; };
  // Yellow (low) to dark purple (high), linear in RGB.
  auto color = [&](double s) {
    const double share = std::clamp((s - slo) / (shi - slo), 0.0, 1.0);
    char buf[16];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(253 + share * (68 - 253)), static_cast<int>(231 + share * (1 - 231)),
                  static_cast<int>(37 + share * (84 - 37)));
    return std::string(buf);
  };
  std::ostringstream o;
  open_svg(o, l, title);
  for (double v : xt) x_tick(o, px(v), tick(v));
  for (double v : yt) y_tick(o, l, py(v), tick(v));
  frame_and_labels(o, l, x_label, y_label);
  for (const auto& p : points) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || p.highlight) continue;
    o << "<circle cx=\"" << num(px(p.x)) << "\" cy=\"" << num(py(p.y)) << "\" r=\"2.5\" fill=\"" << color(p.shade) << "\" fill-opacity=\"0.7\"/>\n";
  }
  std::vector<const ScatterPoint*> front;
  for (const auto& p : points) {
    if (p.highlight && std::isfinite(p.x) && std::isfinite(p.y)) front.push_back(&p);
  }
  std::stable_sort(front.begin(), front.end(), [](const ScatterPoint* a, const ScatterPoint* b) { return a->x < b->x; });
  if (front.size() > 1) {
    o << "<polyline class=\"series\" fill=\"none\" stroke=\"black\" stroke-width=\"1\" stroke-dasharray=\"4,3\" points=\"";
    for (const auto* p : front) o << num(px(p->x)) << ',' << num(py(p->y)) << ' ';
    o << "\"/>\n";
  }
  for (const auto* p : front) {
    o << "<circle cx=\"" << num(px(p->x)) << "\" cy=\"" << num(py(p->y)) << "\" r=\"5\" fill=\"" << color(p->shade) << "\" stroke=\"black\" stroke-width=\"1.2\"/>\n";
  }
  // Colour scale and the front's marker, in a box right of the plot.
  const double bx = l.plot_right() + kLegendGap, lx = bx + 10;
  o << "<g class=\"legend\">\n";
  o << "<rect class=\"legend-box\" x=\"" << num(bx) << "\" y=\"" << num(kTop) << "\" width=\"" << num(l.legend_w - kLegendGap - 10) << "\" height=\"" << num(l.legend_h)
    << "\" fill=\"white\" stroke=\"#999\"/>\n";
  o << "<text class=\"legend-label\" x=\"" << num(lx) << "\" y=\"" << num(kTop + 18) << "\">" << escape(shorten(shade_label)) << "</text>\n";
  for (int i = 0; i <= 4; ++i) {
    const double s = slo + (shi - slo) * i / 4.0, y = kTop + 38 + 22.0 * i;
    o << "<circle cx=\"" << num(lx + 6) << "\" cy=\"" << num(y) << "\" r=\"5\" fill=\"" << color(s) << "\"/>\n";
    o << "<text class=\"legend-label\" x=\"" << num(lx + 18) << "\" y=\"" << num(y + 4) << "\">" << shade_text(s) << "</text>\n";
  }
  const double fy = kTop + 38 + 22.0 * 6;
  o << "<circle cx=\"" << num(lx + 6) << "\" cy=\"" << num(fy) << "\" r=\"5\" fill=\"white\" stroke=\"black\" stroke-width=\"1.2\"/>\n";
  o << "<text class=\"legend-label\" x=\"" << num(lx + 18) << "\" y=\"" << num(fy + 4) << "\">Pareto front</text>\n";
  o << "</g>\n";
  o << "</svg>\n";
  return o.str();
}

}  // namespace schedsim
