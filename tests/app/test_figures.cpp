// The CLI's SVG figures (experiments/svg_plot.cpp) as a reviewer would check them: the
// legend box inside the canvas with every series in it, no two series alike, tick labels
// clear of the axis title; and the comparison table's marks and paired comparisons.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "app/advise_output.hpp"
#include "app/compare.hpp"
#include "base/svg_plot.hpp"
#include "app/sweep.hpp"
#include "base/error.hpp"

using namespace schedsim;

namespace {

std::map<std::string, std::string> attributes(const std::string& element) {
  std::map<std::string, std::string> out;
  static const std::regex attr(R"re(([a-z-]+)="([^"]*)")re");
  for (auto it = std::sregex_iterator(element.begin(), element.end(), attr); it != std::sregex_iterator(); ++it) out[(*it)[1]] = (*it)[2];
  return out;
}

// Every element of `svg` whose text starts with "<tag" and has class="cls" (any class when empty).
std::vector<std::map<std::string, std::string>> elements(const std::string& svg, const std::string& tag, const std::string& cls = "") {
  std::vector<std::map<std::string, std::string>> out;
  const std::regex re("<" + tag + R"re(\b[^>]*>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
    auto a = attributes(it->str());
    if (cls.empty() || a["class"] == cls) out.push_back(a);
  }
  return out;
}

// The text of each <text class="legend-label"> element, in order.
std::vector<std::string> legend_texts(const std::string& svg) {
  std::vector<std::string> out;
  static const std::regex re(R"re(<text class="legend-label"[^>]*>([^<]*))re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) out.push_back((*it)[1]);
  return out;
}

double d(const std::map<std::string, std::string>& a, const char* k) { return std::stod(a.at(k)); }

std::size_t glyphs(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The checks every figure passes: a legend box inside the canvas holding each legend
// label (at 0.6 em per character, wider than DejaVu Sans' average), and, for line
// figures, one legend entry per series and no two series of the same colour and dash.
void check_figure(const std::string& svg, std::size_t series) {
  const auto root = elements(svg, "svg").at(0);
  const double width = d(root, "width"), height = d(root, "height");
  const auto boxes = elements(svg, "rect", "legend-box");
  REQUIRE(boxes.size() == 1);
  const auto& box = boxes[0];
  const double bx = d(box, "x"), by = d(box, "y"), bw = d(box, "width"), bh = d(box, "height");
  CHECK(bx >= 0);
  CHECK(by >= 0);
  CHECK(bx + bw <= width);
  CHECK(by + bh <= height);
  const auto labels = elements(svg, "text", "legend-label");
  const auto texts = legend_texts(svg);
  REQUIRE(labels.size() == texts.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    INFO("legend label " << texts[i]);
    CHECK(d(labels[i], "x") >= bx);
    CHECK(d(labels[i], "x") + 0.6 * 12 * static_cast<double>(glyphs(texts[i])) <= bx + bw);
    CHECK(d(labels[i], "y") - 12 >= by);
    CHECK(d(labels[i], "y") + 3 <= by + bh);
  }
  // The legend lies right of the plot frame (the first plain <rect> with a stroke).
  double frame_right = 0;
  for (const auto& r : elements(svg, "rect")) {
    if (r.count("stroke") && r.at("stroke") == "black") {
      frame_right = d(r, "x") + d(r, "width");
      break;
    }
  }
  CHECK(bx >= frame_right);
  // x tick labels (centred, just under the frame) end left of the legend box.
  static const std::regex xtick(R"re(<text x="([0-9.]+)" y="398.0" text-anchor="middle">([^<]*)</text>)re");
  std::size_t xticks = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), xtick); it != std::sregex_iterator(); ++it, ++xticks) {
    INFO("x tick " << (*it)[2]);
    CHECK(std::stod((*it)[1]) + 0.3 * 12 * static_cast<double>((*it)[2].length()) < bx);
  }
  CHECK(xticks >= 3);
  if (series == 0) return;
  const auto lines = elements(svg, "polyline", "series");
  CHECK(lines.size() == series);
  CHECK(elements(svg, "line", "legend-swatch").size() == series);
  std::set<std::pair<std::string, std::string>> styles;
  for (const auto& l : lines) styles.insert({l.at("stroke"), l.count("stroke-dasharray") ? l.at("stroke-dasharray") : ""});
  CHECK(styles.size() == series);
}

}  // namespace

TEST_CASE("series styles: no two of the first 50 share colour and dash", "[experiments][figures]") {
  std::set<std::pair<std::string, std::string>> seen;
  for (std::size_t i = 0; i < 50; ++i) seen.insert({series_style(i).color, series_style(i).dash});
  CHECK(seen.size() == 50);
  // fifo (first) and gittins (11th of the default table) used to share blue.
  CHECK(series_style(0).color == series_style(10).color);
  CHECK(series_style(0).dash != series_style(10).dash);
}

TEST_CASE("the JCT CDF figure keeps all 23 legend entries inside its canvas", "[experiments][figures]") {
  // The rl_default comparison: 20 policies, the agent and three placement variants.
  const std::vector<std::string> names{"fifo", "sjf", "srtf", "las", "edf", "priority", "compose", "slurm-easy", "tiresias", "volcano-binpack",
                                       "gittins", "fair-share", "themis", "elastic-goodput", "gandiva", "spatial", "inference", "fgd", "gavel",
                                       "rl:default.pt", "sjf(placement=fastest_type)", "srtf(placement=fastest_type)",
                                       "slurm-easy(placement=fastest_type) (= sjf(placement=fastest_type))"};
  std::vector<std::vector<double>> values(names.size());
  std::vector<CdfSeries> series;
  for (std::size_t i = 0; i < names.size(); ++i) {
    for (int k = 1; k <= 50; ++k) values[i].push_back(0.01 * k * static_cast<double>(i + 1));
    series.push_back({names[i], &values[i]});
  }
  const std::string svg = cdf_svg(series, "job completion time (h, log scale)", "fraction of jobs", "JCT CDF: rl_default");
  check_figure(svg, names.size());
  CHECK(legend_texts(svg).size() == 23);
  CHECK(legend_texts(svg).back() == "slurm-easy(placement=fastest_type) (= sjf(placement=fas\u2026");  // cut at 56 characters
  CHECK(svg.find("<title>slurm-easy(placement=fastest_type) (= sjf(placement=fastest_type))</title>") != std::string::npos);
  // Hours: decades 0.01 .. 100 written as plain numbers.
  CHECK(svg.find(">0.01</text>") != std::string::npos);
  CHECK(svg.find(">10</text>") != std::string::npos);
}

TEST_CASE("the learning-curve figure: a legend box outside the plot, distinct series", "[experiments][figures]") {
  LineSeries train{"training episodes", {}}, held_out{"held-out evaluation (greedy)", {}};
  for (int k = 0; k <= 20; ++k) {
    train.points.emplace_back(1000.0 * k, 2.0 - 0.05 * k);
    if (k % 5 == 0) held_out.points.emplace_back(1000.0 * k, 1.9 - 0.04 * k);
  }
  const std::string svg = line_svg({train, held_out}, "agent steps", "mean JCT (h)", "Learning curve (ppo)");
  check_figure(svg, 2);
  // Ticks at round values (steps of 5000 agent steps), whatever the data's range.
  CHECK(svg.find(">15,000</text>") != std::string::npos);
}

TEST_CASE("the marker scatter (rl-bench's Pareto figure): legend outside the plot, one marker style per series, reference lines", "[experiments][figures]") {
  std::vector<MarkerSeries> series;
  series.push_back({"energy: heuristics", {{1.0, 1.0}, {1.12, 0.97}, {1.3, 1.02}}, {"fifo", "las", "tiresias"}});
  for (int k = 1; k <= 7; ++k) series.push_back({"energy: agent seed " + std::to_string(k), {{1.0 + 0.05 * k, 0.95 + 0.01 * k}}, {}});
  series.push_back({"empty", {{NAN, 1.0}}, {}});
  const std::string svg = marker_scatter_svg(series, "mean JCT / per-window best heuristic's (ratio)", "mean energy_kwh / best heuristic's (ratio)",
                                             "rl-bench: JCT vs energy_kwh", 1.0, 1.0);
  check_figure(svg, 0);
  CHECK(legend_texts(svg).size() == series.size());
  // One swatch per series, and no two series drawn alike (shape, colour).
  std::set<std::pair<std::string, std::string>> styles;
  static const std::regex swatch(R"re(<(circle|polygon|path) class="legend-swatch"[^>]*stroke="(#[0-9a-f]+)")re");
  std::size_t swatches = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), swatch); it != std::sregex_iterator(); ++it, ++swatches) {
    // The shape: its element and, for polygons, its number of corners.
    const std::string text = it->str();
    styles.insert({(*it)[1].str() + std::to_string(std::count(text.begin(), text.end(), ' ')), (*it)[2]});
  }
  CHECK(swatches == series.size());
  CHECK(styles.size() == series.size());
  // Every finite point is drawn (3 heuristics, 7 agents); the NaN one is not.
  static const std::regex point(R"re(<(circle|polygon|path) class="series")re");
  CHECK(std::distance(std::sregex_iterator(svg.begin(), svg.end(), point), std::sregex_iterator()) == 10);
  CHECK(elements(svg, "line", "reference").size() == 2);
  CHECK(elements(svg, "text", "point-label").size() == 3);
}

TEST_CASE("the advisor's Pareto figure: cost ticks clear of the axis title, the scale in its box", "[experiments][figures]") {
  std::vector<ScatterPoint> points;
  for (int k = 0; k < 40; ++k) points.push_back({100.0 + 7.5 * k, 1.25e6 + 37500.0 * (k % 9), 80.0 + 3.3 * k, k % 7 == 0});
  const std::string svg = scatter_svg(points, "expected finish (hours after time 0)", "cost (USD)", "CO2 (t)", "advisor: feasible plans and the Pareto front");
  check_figure(svg, 0);
  // Each y tick label (right-aligned at x, 0.6 em per character) starts right of the
  // rotated y-axis title, which occupies x < 26.
  static const std::regex ytick(R"re(<text x="([0-9.]+)" y="[0-9.]+" text-anchor="end">([^<]*)</text>)re");
  std::size_t n = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), ytick); it != std::sregex_iterator(); ++it, ++n) {
    INFO("tick " << (*it)[2]);
    CHECK(std::stod((*it)[1]) - 0.6 * 12 * static_cast<double>((*it)[2].length()) >= 26);
  }
  CHECK(n >= 4);
  CHECK(legend_texts(svg).size() == 7);  // title, five shades, the front
}

namespace {

RunResult run_named(const std::string& name, double mean_jct_s, std::vector<double> jct) {
  RunResult r;
  r.policy_name = name;
  r.summary.jobs_completed = jct.size();
  r.summary.mean_jct_s = mean_jct_s;
  r.sorted_jct_s = std::move(jct);
  return r;
}

}  // namespace

TEST_CASE("the comparison table marks rows identical to an earlier one", "[experiments][compare][figures]") {
  const RunResult fifo = run_named("fifo", 7200, {3600, 10800});
  RunResult edf = fifo;
  edf.policy_name = "edf";
  RunResult swapped = run_named("sjf", 7200, {3600, 10800});
  swapped.summary.makespan_s = 1;  // same JCTs, another summary: not identical
  RunResult priority = edf;
  priority.policy_name = "priority";
  const std::vector<RunResult> runs{fifo, swapped, edf, priority};
  const auto same = identical_rows(runs);
  REQUIRE(same.size() == 4);
  CHECK_FALSE(same[0]);
  CHECK_FALSE(same[1]);
  CHECK(same[2] == std::optional<std::size_t>(0));
  CHECK(same[3] == std::optional<std::size_t>(0));  // named by the first of the group, not by edf

  const std::string text = comparison_table(runs, false);
  CHECK(text.find("\nfifo    ") != std::string::npos);
  CHECK(text.find("0.00  = fifo\n") != std::string::npos);
  CHECK(text.find("\nsjf  ") != std::string::npos);
  CHECK(text.find("= NAME: 2 of 4 rows have results identical to NAME's (every summary metric and the sorted JCTs of all completed jobs): "
                  "on this workload the policy acts as NAME\n") != std::string::npos);
  const std::string md = comparison_table(runs, true);
  CHECK(md.find("| makespan (h) | identical to |\n") != std::string::npos);
  CHECK(md.find("| = fifo |\n") != std::string::npos);
  // Without duplicates the table is as before: no extra column, no footnote.
  const std::string plain = comparison_table({fifo, swapped}, true);
  INFO(plain);
  CHECK(plain.find("identical") == std::string::npos);
  CHECK(plain.find("| makespan (h) |\n") != std::string::npos);
}

TEST_CASE("compare's paired table: difference and ratio of mean JCT against the baseline", "[experiments][compare][figures]") {
  const std::vector<RunResult> runs{run_named("fifo", 7200, {7200}), run_named("sjf", 5400, {5400})};
  CHECK(paired_table(runs, 0, false) ==
        "paired with fifo (same seed and workload; one seed, so no interval: a sweep over seeds gives the paired 95% CI in summary.csv)\n"
        "policy  mean JCT - fifo (h)  mean JCT / fifo\n"
        "------  -------------------  ---------------\n"
        "fifo                  0.000            1.000\n"
        "sjf                  -0.500            0.750\n");
  INFO(paired_table(runs, 1, true));
  CHECK(paired_table(runs, 1, true).find("| fifo   |             +0.500 |          1.333 |\n") != std::string::npos);
  CHECK(paired_table({runs[0]}, 0, false).empty());
  CHECK(baseline_index({"fifo", "sjf"}, "") == 0);
  CHECK(baseline_index({"fifo", "sjf"}, "sjf") == 1);
  CHECK_THROWS_WITH(baseline_index({"fifo", "sjf"}, "gavel"), "--baseline: 'gavel' is not one of the compared policies (fifo, sjf)");
}

TEST_CASE("paired statistics over seeds: the t interval of the per-seed differences", "[experiments][sweep][figures]") {
  const PairedStats p = paired_stats({3.0, 5.0, 7.0, std::nullopt}, {1.0, 2.0, 4.0, 9.0});
  CHECK(p.pairs == 3);
  // Differences {2, 3, 3}: mean 8/3, sd sqrt(1/3); ratios {3, 2.5, 1.75}: mean 7.25/3.
  const double t2 = 4.302652729911275;
  CHECK(p.diff_mean == Approx(8.0 / 3));
  CHECK(p.diff_ci95 == Approx(t2 * std::sqrt(1.0 / 3) / std::sqrt(3.0)).epsilon(1e-10));
  CHECK(p.ratio_mean == Approx(7.25 / 3));
  const double rm = 7.25 / 3, rv = ((3 - rm) * (3 - rm) + (2.5 - rm) * (2.5 - rm) + (1.75 - rm) * (1.75 - rm)) / 2;
  CHECK(p.ratio_ci95 == Approx(t2 * std::sqrt(rv / 3)).epsilon(1e-10));
  const PairedStats one = paired_stats({3.0}, {1.0});
  CHECK(one.diff_mean == 2);
  CHECK(std::isnan(one.diff_ci95));
}
