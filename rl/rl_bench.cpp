#include "rl/rl_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <sstream>

#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "base/svg_plot.hpp"
#include "rl/heuristic_baseline.hpp"
#include "rl/train_command.hpp"
#include "base/error.hpp"

namespace schedsim::rl {
namespace {

std::vector<std::string> string_list(const ConfigNode& n) {
  if (!n.is_sequence()) n.fail("must be a list of KEY=VALUE overrides, e.g. [\"train.total_steps=2000\"]");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string v = n.at(i).as_string();
    if (v.find('=') == std::string::npos) n.at(i).fail("must be KEY=VALUE (an override like --set), got '" + v + "'");
    out.push_back(v);
  }
  return out;
}

std::string num(double v) {
  if (!std::isfinite(v)) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "n/a";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Markdown cells may not hold '|'.
std::string md(std::string s) {
  std::replace(s.begin(), s.end(), '|', '/');
  return s;
}

// A CSV cell: quoted when it holds a comma or a quote.
std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

RlBenchConfig RlBenchConfig::load_file(const std::string& path) { return parse(ConfigNode::load_file(path)); }

RlBenchConfig RlBenchConfig::parse(const ConfigNode& node) {
  node.expect_map({"scenario", "set", "seeds", "test_seed_start", "test_episodes", "settings"});
  RlBenchConfig c;
  c.source = node.source();
  if (!node.has("scenario")) node.fail("needs 'scenario': the path of a scenario with a train: map (relative to this file)");
  c.scenario_path = node.child("scenario").as_path();
  if (auto s = node.maybe_child("set")) c.overrides = string_list(*s);
  if (!node.has("seeds")) node.fail("needs 'seeds': the training seeds, one agent each (e.g. seeds: [1, 2, 3, 4, 5])");
  const ConfigNode seeds = node.child("seeds");
  if (!seeds.is_sequence() || seeds.size() == 0) seeds.fail("must be a non-empty list of training seeds, e.g. [1, 2, 3]");
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    const std::uint64_t s = seeds.at(i).as_seed();
    if (std::find(c.seeds.begin(), c.seeds.end(), s) != c.seeds.end()) seeds.at(i).fail("seed " + std::to_string(s) + " is listed twice");
    c.seeds.push_back(s);
  }
  if (auto n = node.maybe_child("test_seed_start")) c.test_seed_start = n->as_seed();
  if (auto n = node.maybe_child("test_episodes")) {
    const std::int64_t v = n->as_positive_int();
    if (v > 100000) n->fail("must be at most 100000, got " + std::to_string(v));
    c.test_episodes = static_cast<int>(v);
  }
  if (auto s = node.maybe_child("settings")) {
    if (!s->is_sequence() || s->size() == 0) s->fail("must be a non-empty list of {name, set, target_below}");
    for (std::size_t i = 0; i < s->size(); ++i) {
      const ConfigNode e = s->at(i);
      e.expect_map({"name", "set", "physics", "target_below"});
      if (!e.has("name")) e.fail("needs 'name' (e.g. physics_off)");
      RlBenchSetting st;
      st.name = e.child("name").as_string();
      if (st.name.empty() || st.name.find_first_of(",|/ ") != std::string::npos) e.child("name").fail("must be a non-empty name without ',', '|', '/' or spaces, got '" + st.name + "'");
      for (const auto& other : c.settings) {
        if (other.name == st.name) e.child("name").fail("setting '" + st.name + "' is listed twice");
      }
      if (auto o = e.maybe_child("set")) st.overrides = string_list(*o);
      if (auto p = e.maybe_child("physics")) st.physics = p->as_choice({"on", "off", "as_configured"});
      if (auto t = e.maybe_child("target_below")) {
        st.target_below = t->as_nonnegative_double();
        if (st.target_below >= 1.0) t->fail("must be a fraction in [0, 1), got " + t->as_string());
      }
      c.settings.push_back(st);
    }
  } else {
    c.settings.push_back(RlBenchSetting{"as_configured", {}, "as_configured", 0.0});
  }
  return c;
}

RlBenchResult run_rl_bench(const RlBenchConfig& config, const std::string& out_dir, std::FILE* log) {
  namespace fs = std::filesystem;
  PolicyRegistry registry = builtin_policies();
  register_rl_policy(registry);
  auto load = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> o = config.overrides;
    o.insert(o.end(), extra.begin(), extra.end());
    return load_scenario(config.scenario_path, o, std::nullopt, registry);
  };
  // Every setting's scenario is loaded before training, so a bad override fails at once.
  std::vector<ScenarioConfig> eval_scenarios;
  for (const auto& st : config.settings) {
    ScenarioConfig s = load(st.overrides);
    if (st.physics == "on" && !s.physics) throw InputError(config.source, "setting '" + st.name + "' has physics: on, but the scenario has no physics: map");
    if (st.physics == "off") s.physics.reset();
    // Test windows, never replayed in training or validation.
    if (s.workload.trace && s.workload.trace->windows) s.workload.trace->windows->use = WindowSplit::kTest;
    eval_scenarios.push_back(std::move(s));
  }
  const ScenarioConfig train_base = load({});
  if (!train_base.train_yaml.IsDefined() || train_base.train_yaml.IsNull())
    throw InputError(config.source, "the scenario " + config.scenario_path + " has no train: map (see docs/config.md#train)");
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir, "cannot create the output folder: " + ec.message());

  RlBenchResult result;
  result.seeds = config.seeds;
  for (const std::uint64_t seed : config.seeds) {
    const std::string dir = (fs::path(out_dir) / ("seed_" + std::to_string(seed))).string();
    ScenarioConfig s = load({"train.seed=" + std::to_string(seed)});
    const TrainOutcome o = train_agent(s, TrainOptions{dir, false, false, {}});
    result.checkpoints.push_back((fs::path(dir) / "best.pt").string());
    if (log) {
      std::fprintf(log, "rl-bench: seed %llu trained %lld steps in %.1f s; best validation mean JCT %.4f h at step %lld\n", static_cast<unsigned long long>(seed),
                   static_cast<long long>(o.steps), o.wall_s, o.best_eval_mean_jct_s ? *o.best_eval_mean_jct_s / 3600 : NAN, static_cast<long long>(o.best_eval_step));
      std::fflush(log);
    }
  }

  for (std::size_t si = 0; si < config.settings.size(); ++si) {
    const ScenarioConfig& scenario = eval_scenarios[si];
    RlBenchSettingResult sr;
    sr.setting = config.settings[si];
    sr.heuristics = same_information_heuristics(scenario, registry);
    const std::vector<HeuristicScore> scores = score_heuristics(scenario, registry, sr.heuristics, config.test_seed_start, config.test_episodes);
    for (int e = 0; e < config.test_episodes; ++e) {
      RlBenchWindow w;
      w.seed = config.test_seed_start + static_cast<std::uint64_t>(e);
      std::vector<std::string> warnings;
      w.window = scenario.workload.make_source(w.seed, warnings)->describe();
      w.best_heuristic_jct_s = std::numeric_limits<double>::infinity();
      for (const auto& h : scores) {
        const double v = h.episode_mean_jct_s[static_cast<std::size_t>(e)];
        w.heuristic_jct_s.push_back(v);
        if (std::isfinite(v) && v < w.best_heuristic_jct_s) {
          w.best_heuristic_jct_s = v;
          w.best_heuristic = h.name;
        }
      }
      if (w.best_heuristic.empty()) throw InputError(config.source, "no heuristic finished test episode " + std::to_string(w.seed) + " (" + w.window + ")");
      for (const auto& ckpt : result.checkpoints) {
        ScenarioConfig run = scenario;
        run.seed = w.seed;
        YAML::Node p(YAML::NodeType::Map);
        p["name"] = "rl";
        p["path"] = ckpt;
        const RunResult r = run_scenario(run, registry, RunOptions{}, &p);
        const double jct_s = r.summary.mean_jct_s ? *r.summary.mean_jct_s : NAN;
        w.agent_jct_s.push_back(jct_s);
        w.ratio.push_back(jct_s / w.best_heuristic_jct_s);
      }
      sr.windows.push_back(std::move(w));
    }
    // The spread over training seeds of each seed's mean ratio over the windows.
    for (std::size_t k = 0; k < result.checkpoints.size(); ++k) {
      double sum = 0.0;
      for (const auto& w : sr.windows) sum += w.ratio[k];
      sr.seed_mean_ratio.push_back(sum / static_cast<double>(sr.windows.size()));
    }
    double sum = 0.0;
    for (double r : sr.seed_mean_ratio) sum += r;
    sr.mean_ratio = sum / static_cast<double>(sr.seed_mean_ratio.size());
    sr.min_ratio = *std::min_element(sr.seed_mean_ratio.begin(), sr.seed_mean_ratio.end());
    sr.max_ratio = *std::max_element(sr.seed_mean_ratio.begin(), sr.seed_mean_ratio.end());
    double sq = 0.0;
    for (double r : sr.seed_mean_ratio) sq += (r - sr.mean_ratio) * (r - sr.mean_ratio);
    sr.std_ratio = std::sqrt(sq / static_cast<double>(sr.seed_mean_ratio.size()));
    // The rule (issue 25): the mean over seeds of the agent's mean JCT relative to the
    // per-window best same-information heuristic, at least target_below under 1.
    sr.reached = std::isfinite(sr.mean_ratio) && sr.mean_ratio <= 1.0 - sr.setting.target_below + 1e-12;
    std::ostringstream v;
    const double below = (1.0 - sr.mean_ratio) * 100;
    v << sr.setting.name << ": agent mean JCT " << fixed(std::fabs(below), 1) << (below >= 0 ? "% below" : "% above")
      << " the per-window best same-information heuristic (mean ratio " << fixed(sr.mean_ratio, 3) << " over " << sr.seed_mean_ratio.size() << " seeds x "
      << sr.windows.size() << " test windows; seeds " << fixed(sr.min_ratio, 3) << " .. " << fixed(sr.max_ratio, 3) << ", std " << fixed(sr.std_ratio, 3)
      << "); target at least " << fixed(sr.setting.target_below * 100, 1) << "% below: " << (sr.reached ? "REACHED" : "NOT REACHED");
    sr.verdict = v.str();
    if (log) std::fprintf(log, "rl-bench: %s\n", sr.verdict.c_str());
    result.settings.push_back(std::move(sr));
  }

  // Tables.
  std::ostringstream csv, mdw, sum_csv, sum_md;
  csv << "setting,test_seed,window";
  // Heuristic columns differ between settings only if the information level does; their
  // union in first-seen order keeps one header.
  std::vector<std::string> all_heuristics;
  for (const auto& sr : result.settings) {
    for (const auto& h : sr.heuristics) {
      if (std::find(all_heuristics.begin(), all_heuristics.end(), h) == all_heuristics.end()) all_heuristics.push_back(h);
    }
  }
  for (const auto& h : all_heuristics) csv << ',' << h << "_jct_s";
  csv << ",best_heuristic,best_heuristic_jct_s";
  for (auto s : result.seeds) csv << ",agent_seed" << s << "_jct_s";
  for (auto s : result.seeds) csv << ",ratio_seed" << s;
  csv << '\n';
  for (const auto& sr : result.settings) {
    mdw << "## " << sr.setting.name << "\n\nMean JCT (h) per test window; ratio = agent / best heuristic of the window.\n\n| window |";
    for (const auto& h : sr.heuristics) mdw << ' ' << md(h) << " |";
    mdw << " best heuristic |";
    for (auto s : result.seeds) mdw << " agent seed " << s << " |";
    for (auto s : result.seeds) mdw << " ratio seed " << s << " |";
    mdw << "\n|---|";
    for (std::size_t i = 0; i < sr.heuristics.size() + 1 + 2 * result.seeds.size(); ++i) mdw << "---:|";
    mdw << '\n';
    for (const auto& w : sr.windows) {
      csv << sr.setting.name << ',' << w.seed << ',' << csv_cell(w.window);
      for (const auto& h : all_heuristics) {
        const auto it = std::find(sr.heuristics.begin(), sr.heuristics.end(), h);
        csv << ',' << (it == sr.heuristics.end() ? std::string() : num(w.heuristic_jct_s[static_cast<std::size_t>(it - sr.heuristics.begin())]));
      }
      csv << ',' << w.best_heuristic << ',' << num(w.best_heuristic_jct_s);
      for (double a : w.agent_jct_s) csv << ',' << num(a);
      for (double r : w.ratio) csv << ',' << num(r);
      csv << '\n';
      mdw << "| " << md(w.window) << " (seed " << w.seed << ") |";
      for (double v : w.heuristic_jct_s) mdw << ' ' << fixed(v / 3600, 4) << " |";
      mdw << ' ' << md(w.best_heuristic) << ' ' << fixed(w.best_heuristic_jct_s / 3600, 4) << " |";
      for (double a : w.agent_jct_s) mdw << ' ' << fixed(a / 3600, 4) << " |";
      for (double r : w.ratio) mdw << ' ' << fixed(r, 3) << " |";
      mdw << '\n';
    }
    mdw << '\n';
  }
  sum_csv << "setting,windows,seeds,mean_ratio,min_seed_ratio,max_seed_ratio,std_seed_ratio,target_below,reached\n";
  sum_md << "| setting | windows | seeds | mean ratio | min seed | max seed | std over seeds | target below | verdict |\n|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& sr : result.settings) {
    sum_csv << sr.setting.name << ',' << sr.windows.size() << ',' << sr.seed_mean_ratio.size() << ',' << num(sr.mean_ratio) << ',' << num(sr.min_ratio) << ','
            << num(sr.max_ratio) << ',' << num(sr.std_ratio) << ',' << num(sr.setting.target_below) << ',' << (sr.reached ? "true" : "false") << '\n';
    sum_md << "| " << sr.setting.name << " | " << sr.windows.size() << " | " << sr.seed_mean_ratio.size() << " | " << fixed(sr.mean_ratio, 3) << " | "
           << fixed(sr.min_ratio, 3) << " | " << fixed(sr.max_ratio, 3) << " | " << fixed(sr.std_ratio, 3) << " | " << fixed(sr.setting.target_below * 100, 1)
           << "% | " << (sr.reached ? "reached" : "not reached") << " |\n";
  }
  sum_md << "\nRule: a setting is reached when the mean over training seeds of the agent's mean JCT divided by the per-window best same-information "
            "heuristic's is at most 1 - target below.\n\n";
  for (const auto& sr : result.settings) sum_md << "- " << md(sr.verdict) << '\n';

  // The figure: one line per (setting, seed) of the per-window ratio, and the parity line.
  std::vector<LineSeries> series;
  LineSeries parity{"per-window best heuristic (ratio 1)", {}};
  std::size_t max_windows = 0;
  for (const auto& sr : result.settings) {
    max_windows = std::max(max_windows, sr.windows.size());
    for (std::size_t k = 0; k < result.seeds.size(); ++k) {
      LineSeries l{sr.setting.name + ", seed " + std::to_string(result.seeds[k]), {}};
      for (std::size_t i = 0; i < sr.windows.size(); ++i) l.points.emplace_back(static_cast<double>(i + 1), sr.windows[i].ratio[k]);
      series.push_back(std::move(l));
    }
  }
  parity.points = {{1.0, 1.0}, {static_cast<double>(std::max<std::size_t>(max_windows, 2)), 1.0}};
  series.push_back(parity);
  const fs::path out(out_dir);
  write_file_atomically((out / "windows.csv").string(), csv.str());
  write_file_atomically((out / "windows.md").string(), mdw.str());
  write_file_atomically((out / "summary.csv").string(), sum_csv.str());
  write_file_atomically((out / "summary.md").string(), sum_md.str());
  write_file_atomically((out / "ratios.svg").string(),
                        line_svg(series, "test window (number)", "agent mean JCT / best heuristic mean JCT (ratio)", "rl-bench: agent vs per-window best heuristic"));
  return result;
}

}  // namespace schedsim::rl
