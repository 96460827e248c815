#include "experiments/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace schedsim {
namespace {

constexpr double kWidth = 720, kHeight = 440;
constexpr double kLeft = 70, kRight = 170, kTop = 40, kBottom = 60;
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

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

std::string tick(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return std::string(buf);
}

// Linear axes over [xlo, xhi] x [ylo, yhi] in the plot area.
struct LinearFrame {
  double xlo, xhi, ylo, yhi;
  double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  double px(double v) const { return kLeft + (v - xlo) / (xhi - xlo) * plot_w; }
  double py(double v) const { return kTop + (1 - (v - ylo) / (yhi - ylo)) * plot_h; }
};

// The SVG header, title, a 5 x 5 tick grid, the frame and the axis labels.
void open_linear_plot(std::ostringstream& o, const LinearFrame& f, const std::string& x_label, const std::string& y_label, const std::string& title) {
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << num(kLeft + f.plot_w / 2) << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" << escape(title) << "</text>\n";
  for (int i = 0; i <= 4; ++i) {
    const double xv = f.xlo + (f.xhi - f.xlo) * i / 4.0, yv = f.ylo + (f.yhi - f.ylo) * i / 4.0;
    o << "<line x1=\"" << num(f.px(xv)) << "\" y1=\"" << num(kTop) << "\" x2=\"" << num(f.px(xv)) << "\" y2=\"" << num(kTop + f.plot_h) << "\" stroke=\"#ddd\"/>\n";
    o << "<text x=\"" << num(f.px(xv)) << "\" y=\"" << num(kTop + f.plot_h + 18) << "\" text-anchor=\"middle\">" << tick(xv) << "</text>\n";
    o << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(f.py(yv)) << "\" x2=\"" << num(kLeft + f.plot_w) << "\" y2=\"" << num(f.py(yv)) << "\" stroke=\"#ddd\"/>\n";
    o << "<text x=\"" << num(kLeft - 8) << "\" y=\"" << num(f.py(yv) + 4) << "\" text-anchor=\"end\">" << tick(yv) << "</text>\n";
  }
  o << "<rect x=\"" << num(kLeft) << "\" y=\"" << num(kTop) << "\" width=\"" << num(f.plot_w) << "\" height=\"" << num(f.plot_h) << "\" fill=\"none\" stroke=\"black\"/>\n";
  o << "<text x=\"" << num(kLeft + f.plot_w / 2) << "\" y=\"" << num(kHeight - 15) << "\" text-anchor=\"middle\">" << escape(x_label) << "</text>\n";
  o << "<text transform=\"translate(18," << num(kTop + f.plot_h / 2) << ") rotate(-90)\" text-anchor=\"middle\">" << escape(y_label) << "</text>\n";
}

}  // namespace

std::string cdf_svg(const std::vector<CdfSeries>& series, const std::string& x_label, const std::string& y_label, const std::string& title) {
  double lo = INFINITY, hi = 0;
  for (const auto& s : series) {
    for (double v : *s.sorted_values) {
      if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
    }
  }
  if (!(hi > 0)) lo = 1, hi = 10;
  const double x0 = std::floor(std::log10(lo)), x1 = std::max(x0 + 1, std::ceil(std::log10(hi)));
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto px = [&](double v) { return kLeft + (std::log10(v) - x0) / (x1 - x0) * plot_w; };
  auto py = [&](double f) { return kTop + (1 - f) * plot_h; };

  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << num(kLeft + plot_w / 2) << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" << escape(title) << "</text>\n";
  for (double e = x0; e <= x1; ++e) {  // decades
    const double x = px(std::pow(10.0, e));
    o << "<line x1=\"" << num(x) << "\" y1=\"" << num(kTop) << "\" x2=\"" << num(x) << "\" y2=\"" << num(kTop + plot_h) << "\" stroke=\"#ddd\"/>\n";
    o << "<text x=\"" << num(x) << "\" y=\"" << num(kTop + plot_h + 18) << "\" text-anchor=\"middle\">1e" << static_cast<int>(e) << "</text>\n";
  }
  for (int i = 0; i <= 4; ++i) {
    const double y = py(i / 4.0);
    o << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(y) << "\" x2=\"" << num(kLeft + plot_w) << "\" y2=\"" << num(y) << "\" stroke=\"#ddd\"/>\n";
    o << "<text x=\"" << num(kLeft - 8) << "\" y=\"" << num(y + 4) << "\" text-anchor=\"end\">" << (i / 4.0) << "</text>\n";
  }
  o << "<rect x=\"" << num(kLeft) << "\" y=\"" << num(kTop) << "\" width=\"" << num(plot_w) << "\" height=\"" << num(plot_h) << "\" fill=\"none\" stroke=\"black\"/>\n";
  o << "<text x=\"" << num(kLeft + plot_w / 2) << "\" y=\"" << num(kHeight - 15) << "\" text-anchor=\"middle\">" << escape(x_label) << "</text>\n";
  o << "<text transform=\"translate(18," << num(kTop + plot_h / 2) << ") rotate(-90)\" text-anchor=\"middle\">" << escape(y_label) << "</text>\n";
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto& v = *series[i].sorted_values;
    const char* color = kColors[i % (sizeof kColors / sizeof kColors[0])];
    if (!v.empty()) {
      // At most ~600 points per line: plenty for the eye, small files for a million jobs.
      const std::size_t step = std::max<std::size_t>(1, v.size() / 600);
      o << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
      for (std::size_t k = 0; k < v.size(); k += step) {
        if (v[k] > 0) o << num(px(v[k])) << ',' << num(py(static_cast<double>(k + 1) / static_cast<double>(v.size()))) << ' ';
      }
      if (v.back() > 0) o << num(px(v.back())) << ',' << num(py(1.0));
      o << "\"/>\n";
    }
    const double ly = kTop + 10 + 20.0 * static_cast<double>(i);
    o << "<line x1=\"" << num(kLeft + plot_w + 15) << "\" y1=\"" << num(ly) << "\" x2=\"" << num(kLeft + plot_w + 40) << "\" y2=\"" << num(ly)
      << "\" stroke=\"" << color << "\" stroke-width=\"3\"/>\n";
    o << "<text x=\"" << num(kLeft + plot_w + 46) << "\" y=\"" << num(ly + 4) << "\">" << escape(series[i].label) << "</text>\n";
  }
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
  const LinearFrame f{xlo, xhi, ylo, yhi};
  const double plot_w = f.plot_w;
  auto px = [&](double v) { return f.px(v); };
  auto py = [&](double v) { return f.py(v); };
  std::ostringstream o;
  open_linear_plot(o, f, x_label, y_label, title);
  for (std::size_t i = 0; i < series.size(); ++i) {
    const char* color = kColors[i % (sizeof kColors / sizeof kColors[0])];
    o << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
    for (const auto& [x, y] : series[i].points) {
      if (std::isfinite(x) && std::isfinite(y)) o << num(px(x)) << ',' << num(py(y)) << ' ';
    }
    o << "\"/>\n";
    const double ly = kTop + 10 + 20.0 * static_cast<double>(i);
    o << "<line x1=\"" << num(kLeft + plot_w + 15) << "\" y1=\"" << num(ly) << "\" x2=\"" << num(kLeft + plot_w + 40) << "\" y2=\"" << num(ly)
      << "\" stroke=\"" << color << "\" stroke-width=\"3\"/>\n";
    o << "<text x=\"" << num(kLeft + plot_w + 46) << "\" y=\"" << num(ly + 4) << "\">" << escape(series[i].label) << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace schedsim

namespace schedsim {

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
  const LinearFrame f{xlo, xhi, ylo, yhi};
  const double plot_w = f.plot_w;
  auto px = [&](double v) { return f.px(v); };
  auto py = [&](double v) { return f.py(v); };
  // Yellow (low) to dark purple (high), linear in RGB.
  auto color = [&](double s) {
    const double share = std::clamp((s - slo) / (shi - slo), 0.0, 1.0);
    char buf[16];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(253 + share * (68 - 253)), static_cast<int>(231 + share * (1 - 231)),
                  static_cast<int>(37 + share * (84 - 37)));
    return std::string(buf);
  };
  std::ostringstream o;
  open_linear_plot(o, f, x_label, y_label, title);
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
    o << "<polyline fill=\"none\" stroke=\"black\" stroke-width=\"1\" stroke-dasharray=\"4,3\" points=\"";
    for (const auto* p : front) o << num(px(p->x)) << ',' << num(py(p->y)) << ' ';
    o << "\"/>\n";
  }
  for (const auto* p : front) {
    o << "<circle cx=\"" << num(px(p->x)) << "\" cy=\"" << num(py(p->y)) << "\" r=\"5\" fill=\"" << color(p->shade) << "\" stroke=\"black\" stroke-width=\"1.2\"/>\n";
  }
  // Color scale.
  const double lx = kLeft + plot_w + 20;
  o << "<text x=\"" << num(lx) << "\" y=\"" << num(kTop + 4) << "\">" << escape(shade_label) << "</text>\n";
  for (int i = 0; i <= 4; ++i) {
    const double s = slo + (shi - slo) * i / 4.0, y = kTop + 20 + 22.0 * i;
    o << "<circle cx=\"" << num(lx + 6) << "\" cy=\"" << num(y) << "\" r=\"5\" fill=\"" << color(s) << "\"/>\n";
    o << "<text x=\"" << num(lx + 18) << "\" y=\"" << num(y + 4) << "\">" << tick(s) << "</text>\n";
  }
  const double fy = kTop + 20 + 22.0 * 6;
  o << "<circle cx=\"" << num(lx + 6) << "\" cy=\"" << num(fy) << "\" r=\"5\" fill=\"white\" stroke=\"black\" stroke-width=\"1.2\"/>\n";
  o << "<text x=\"" << num(lx + 18) << "\" y=\"" << num(fy + 4) << "\">Pareto front</text>\n";
  o << "</svg>\n";
  return o.str();
}

}  // namespace schedsim
