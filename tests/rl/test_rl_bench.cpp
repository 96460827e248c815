// `schedsim rl-bench` (rl/rl_bench.hpp) on its tiny benchmark (experiments/configs/rl_bench/
// tiny.yaml): every table cell is recomputed from `schedsim run`-equivalent runs, per-setting
// agents really differ, the Pareto report follows from the runs, parallel trainings write
// the same bytes as one at a time, finished trainings are reused and changed ones retrained,
// and bad benchmark files are errors naming the file and the key.
// LibTorch first (the checkpoints' weights): its glog CHECK macro is then replaced by Catch's.
#include <torch/serialize.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

#include "run/runner.hpp"
#include "rl/rl_bench.hpp"
#include "rl/train_command.hpp"
#include "base/error.hpp"
#include "tests/test_support.hpp"

using namespace schedsim;
using namespace schedsim::rl;
namespace fs = std::filesystem;
using schedsim::test::TempDir;

namespace {

const std::string kConfigs = std::string(SCHEDSIM_SOURCE_DIR) + "/experiments/configs/";
const std::string kTiny = kConfigs + "rl_bench/tiny.yaml";

bool have_itp() {
  if (fs::exists(fs::path(SCHEDSIM_SOURCE_DIR) / ".." / "shared" / "data" / "itp" / "cluster05.csv")) return true;
  WARN("skipped: ../shared/data/itp is absent (the tiny benchmark trains on ITP windows)");
  return false;
}

PolicyRegistry registry_with_rl() {
  PolicyRegistry r = builtin_policies();
  register_rl_policy(r);
  return r;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A CSV file's rows split into cells (the header first); no cell of these tables is quoted.
std::vector<std::vector<std::string>> csv_rows(const fs::path& p) {
  std::vector<std::vector<std::string>> out;
  std::istringstream in(slurp(p));
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    if (!line.empty() && line.back() == ',') f.emplace_back();
    out.push_back(f);
  }
  return out;
}

// The cell of `row` under `column` of the header.
const std::string& cell(const std::vector<std::vector<std::string>>& rows, std::size_t row, const std::string& column) {
  const auto& h = rows.at(0);
  const auto it = std::find(h.begin(), h.end(), column);
  REQUIRE(it != h.end());
  return rows.at(row).at(static_cast<std::size_t>(it - h.begin()));
}

// A setting's test scenario as the docs define it, built here independently of rl_bench.cpp.
ScenarioConfig test_scenario(const RlBenchConfig& config, const RlBenchSetting& st, const PolicyRegistry& reg) {
  std::vector<std::string> o = config.overrides;
  o.insert(o.end(), st.overrides.begin(), st.overrides.end());
  ScenarioConfig s = load_scenario(st.scenario_path.empty() ? config.scenario_path : st.scenario_path, o, std::nullopt, reg);
  if (s.workload.trace && s.workload.trace->windows) s.workload.trace->windows->use = WindowSplit::kTest;
  if (st.physics == "off") s.physics.reset();
  return s;
}

// The tensors of a checkpoint's network (its "model" archive), by name. The files of two
// processes differ even for equal weights: TorchScript's module names carry a
// process-wide counter (___torch_mangle_N).
void collect_tensors(torch::serialize::InputArchive& a, const std::string& prefix, std::map<std::string, torch::Tensor>& out) {
  for (const auto& key : a.keys()) {
    c10::IValue v;
    if (a.try_read(key, v) && v.isTensor()) {
      out[prefix + key] = v.toTensor();
      continue;
    }
    torch::serialize::InputArchive child;
    if (a.try_read(key, child)) collect_tensors(child, prefix + key + ".", out);
  }
}

std::map<std::string, torch::Tensor> network_weights(const fs::path& checkpoint) {
  torch::serialize::InputArchive a, model;
  a.load_from(checkpoint.string());
  a.read("model", model);
  std::map<std::string, torch::Tensor> out;
  collect_tensors(model, "", out);
  return out;
}

bool same_weights(const fs::path& a, const fs::path& b) {
  const auto wa = network_weights(a), wb = network_weights(b);
  REQUIRE_FALSE(wa.empty());
  if (wa.size() != wb.size()) return false;
  for (const auto& [name, t] : wa) {
    const auto it = wb.find(name);
    if (it == wb.end() || !torch::equal(t, it->second)) return false;
  }
  return true;
}

RunResult run_policy(const ScenarioConfig& scenario, std::uint64_t seed, const YAML::Node& policy, const PolicyRegistry& reg) {
  ScenarioConfig run = scenario;
  run.seed = seed;
  return run_scenario(run, reg, RunOptions{}, &policy);
}

YAML::Node rl_policy(const std::string& checkpoint) {
  YAML::Node p(YAML::NodeType::Map);
  p["name"] = "rl";
  p["path"] = checkpoint;
  return p;
}

RlBenchOptions logging_to(std::FILE* f) {
  RlBenchOptions o;
  o.log = f;
  return o;
}

// What `body` writes to the FILE it is given.
std::string run_log(const std::function<void(std::FILE*)>& body) {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  body(f);
  std::fflush(f);
  std::rewind(f);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  std::fclose(f);
  return out;
}

}  // namespace

TEST_CASE("rl-bench: the tiny benchmark's tables are consistent with schedsim run, its verdicts follow the rule, and --jobs 2 writes the same bytes",
          "[rl][rl-bench]") {
  if (!have_itp()) return;
  TempDir tmp;
  const fs::path a = tmp.path("jobs1"), b = tmp.path("jobs2");
  const RlBenchConfig config = RlBenchConfig::load_file(kTiny);
  REQUIRE(config.settings.size() == 4u);
  CHECK(config.settings[0].trains());
  CHECK(config.settings[1].physics == "off");
  CHECK(config.settings[1].trains());
  CHECK(config.settings[2].agents == "physics_on");
  CHECK(fs::path(config.settings[2].scenario_path).filename() == "tiny_synthetic.yaml");
  CHECK(config.settings[3].objectives == std::vector<std::string>{"jct", "energy_kwh"});
  const RlBenchResult r = run_rl_bench(config, a.string());

  // Three settings train two seeds each into OUT/<setting>/seed_S/; the evaluation-only one none.
  REQUIRE(r.trainings.size() == 6u);
  for (const auto& t : r.trainings) {
    INFO(t.setting << " seed " << t.seed);
    CHECK_FALSE(t.reused);
    CHECK(t.dir == (a / t.setting / ("seed_" + std::to_string(t.seed))).string());
    for (const char* f : {"best.pt", "learning_curve.csv", "trained.json"}) CHECK(fs::exists(fs::path(t.dir) / f));
    CHECK(t.steps >= 200);
  }
  CHECK_FALSE(fs::exists(a / "philly_like"));
  // physics_off's agents are its own: trained without the physics model, other weights
  // (and another learning curve).
  for (auto seed : {"seed_1", "seed_2"}) {
    CHECK_FALSE(same_weights(a / "physics_off" / seed / "best.pt", a / "physics_on" / seed / "best.pt"));
    CHECK(slurp(a / "physics_off" / seed / "learning_curve.csv") != slurp(a / "physics_on" / seed / "learning_curve.csv"));
  }

  const PolicyRegistry reg = registry_with_rl();
  REQUIRE(r.settings.size() == 4u);
  for (const RlBenchSettingResult& sr : r.settings) {
    INFO("setting " << sr.setting.name);
    REQUIRE(sr.windows.size() == 3u);
    REQUIRE(sr.checkpoints.size() == 2u);
    for (std::size_t k = 0; k < 2; ++k)
      CHECK(sr.checkpoints[k] == (a / sr.setting.agents_setting() / ("seed_" + std::to_string(config.seeds[k])) / "best.pt").string());
    CHECK(std::find(sr.heuristics.begin(), sr.heuristics.end(), "fifo") != sr.heuristics.end());
    CHECK(std::find(sr.heuristics.begin(), sr.heuristics.end(), "srtf") == sr.heuristics.end());  // information none
    const ScenarioConfig scenario = test_scenario(config, sr.setting, reg);
    const bool no_physics = !scenario.physics;
    CHECK(no_physics == (sr.setting.physics == "off"));
    double ratio_sum = 0.0, bound_sum = 0.0, lower_sum = 0.0;
    for (const auto& w : sr.windows) {
      if (no_physics) {
        // The no-wait bound: fifo never preempts and every job runs at rate 1, so its mean
        // JCT less its mean queue delay is the jobs' mean duration; no policy does better.
        const RunResult f = run_policy(scenario, w.seed, YAML::Node("fifo"), reg);
        REQUIRE(f.summary.mean_queue_delay_s);
        CHECK(w.no_wait_bound_s == Approx(*f.summary.mean_jct_s - *f.summary.mean_queue_delay_s).epsilon(1e-9));
        CHECK(w.no_wait_bound_s > 0.0);
        for (double v : w.heuristic_jct_s) CHECK((!std::isfinite(v) || w.no_wait_bound_s <= v * (1 + 1e-12)));
        for (double v : w.agent_jct_s) CHECK(w.no_wait_bound_s <= v * (1 + 1e-12));
        bound_sum += w.no_wait_bound_s / w.best_heuristic_jct_s;
        // The lower bound (sim/jct_lower_bound.hpp, closed forms in tests/sim): at least
        // the no-wait bound, and no policy beats it, clairvoyant srtf included.
        CHECK(w.lower_bound_s >= w.no_wait_bound_s);
        for (double v : w.heuristic_jct_s) CHECK((!std::isfinite(v) || w.lower_bound_s <= v * (1 + 1e-12)));
        for (double v : w.agent_jct_s) CHECK(w.lower_bound_s <= v * (1 + 1e-12));
        ScenarioConfig oracle = scenario;
        oracle.information = InformationModel::oracle();
        CHECK(w.lower_bound_s <= *run_policy(oracle, w.seed, YAML::Node("srtf"), reg).summary.mean_jct_s * (1 + 1e-12));
        lower_sum += w.lower_bound_s / w.best_heuristic_jct_s;
      } else {
        CHECK(std::isnan(w.no_wait_bound_s));
        CHECK(std::isnan(w.lower_bound_s));
      }
      // Trace settings replay test windows; the synthetic one describes its generator.
      CHECK((w.window.find("test window") != std::string::npos) == sr.setting.scenario_path.empty());
      // The best heuristic is the minimum of its row.
      double lo = std::numeric_limits<double>::infinity();
      for (double v : w.heuristic_jct_s) {
        if (std::isfinite(v)) lo = std::min(lo, v);
      }
      CHECK(w.best_heuristic_jct_s == lo);
      // The agent's cell is `schedsim run` of that checkpoint on that window (physics_off's
      // with physics off, philly_like's on the synthetic workload).
      for (std::size_t k = 0; k < sr.checkpoints.size(); ++k) {
        const RunResult rr = run_policy(scenario, w.seed, rl_policy(sr.checkpoints[k]), reg);
        REQUIRE(rr.summary.mean_jct_s);
        CHECK(w.agent_jct_s[k] == *rr.summary.mean_jct_s);
        CHECK(w.ratio[k] == w.agent_jct_s[k] / w.best_heuristic_jct_s);
        ratio_sum += w.ratio[k];
      }
      // A heuristic's cell is `schedsim run --policy NAME` on that window.
      CHECK(*run_policy(scenario, w.seed, YAML::Node(w.best_heuristic), reg).summary.mean_jct_s == w.best_heuristic_jct_s);
    }
    CHECK(sr.mean_ratio == Approx(ratio_sum / 6.0).epsilon(1e-12));
    if (no_physics) {
      CHECK(sr.no_wait_bound_ratio == Approx(bound_sum / 3.0).epsilon(1e-12));
      CHECK(sr.lower_bound_ratio == Approx(lower_sum / 3.0).epsilon(1e-12));
      CHECK(sr.lower_bound_ratio >= sr.no_wait_bound_ratio);
    } else {
      CHECK(std::isnan(sr.no_wait_bound_ratio));
      CHECK(std::isnan(sr.lower_bound_ratio));
    }
    CHECK(sr.min_ratio <= sr.mean_ratio);
    CHECK(sr.max_ratio >= sr.mean_ratio);
    CHECK(sr.reached == (sr.mean_ratio <= 1.0 - sr.setting.target_below));
    CHECK(sr.verdict.find(sr.reached ? ": REACHED" : ": NOT REACHED") != std::string::npos);
    // A target below the lower bound is called unreachable, in the verdict and summary.md.
    const bool unreachable = no_physics && sr.lower_bound_ratio > 1.0 - sr.setting.target_below;
    CHECK((sr.verdict.find("no scheduler reaches it, clairvoyant or not: the lower bound on the mean ratio is ") != std::string::npos) == unreachable);
    if (sr.setting.name == "physics_off") {
      CHECK(unreachable);  // the tiny episodes never queue: the bound is the best heuristic itself
      CHECK(slurp(a / "summary.md").find("% | unreachable (target under the lower bound) |") != std::string::npos);
    }
  }
  CHECK(r.settings[2].verdict.rfind("philly_like (agents of physics_on): agent mean JCT", 0) == 0);
  CHECK(r.settings[2].windows[0].window != r.settings[0].windows[0].window);

  // The Pareto report of the energy setting, recomputed from runs: each objective's mean
  // over the windows, its ratio to the best heuristic's mean, the JCT window ratio.
  {
    const RlBenchSettingResult& sr = r.settings[3];
    const ScenarioConfig scenario = test_scenario(config, sr.setting, reg);
    REQUIRE(scenario.energy);
    const std::size_t nh = sr.heuristics.size(), nk = sr.checkpoints.size();
    std::vector<std::array<double, 2>> mean(nh + nk, {0.0, 0.0});
    std::vector<double> window_ratio(nh + nk, 0.0);
    for (const auto& w : sr.windows) {
      for (std::size_t p = 0; p < nh + nk; ++p) {
        const RunResult rr = run_policy(scenario, w.seed, p < nh ? YAML::Node(sr.heuristics[p]) : rl_policy(sr.checkpoints[p - nh]), reg);
        REQUIRE(rr.summary.mean_jct_s);
        REQUIRE(rr.energy);
        const double jct = *rr.summary.mean_jct_s, kwh = rr.energy->facility.energy_kwh;
        CHECK(kwh > 0);
        const auto& recorded = p < nh ? w.heuristic_objectives[p] : w.agent_objectives[p - nh];
        CHECK(recorded == std::vector<double>{jct, kwh});
        mean[p][0] += jct / 3.0;
        mean[p][1] += kwh / 3.0;
        window_ratio[p] += jct / w.best_heuristic_jct_s / 3.0;
      }
    }
    double best_jct = std::numeric_limits<double>::infinity(), best_kwh = best_jct;
    for (std::size_t h = 0; h < nh; ++h) best_jct = std::min(best_jct, mean[h][0]), best_kwh = std::min(best_kwh, mean[h][1]);
    const auto pareto = csv_rows(a / "pareto.csv");
    REQUIRE(pareto.size() == 1 + nh + nk);
    CHECK(pareto[0] == std::vector<std::string>{"setting", "policy", "kind", "seed", "windows", "jct_window_ratio", "mean_jct_s", "ratio_jct", "best_heuristic_jct",
                                                "mean_energy_kwh", "ratio_energy_kwh", "best_heuristic_energy_kwh", "pareto_optimal"});
    REQUIRE(sr.pareto.size() == nh + nk);
    for (std::size_t p = 0; p < nh + nk; ++p) {
      INFO("policy " << sr.pareto[p].policy);
      const RlBenchParetoRow& row = sr.pareto[p];
      CHECK(row.agent == (p >= nh));
      CHECK(row.mean[0] == Approx(mean[p][0]).epsilon(1e-12));
      CHECK(row.mean[1] == Approx(mean[p][1]).epsilon(1e-12));
      CHECK(row.ratio[0] == Approx(mean[p][0] / best_jct).epsilon(1e-12));
      CHECK(row.ratio[1] == Approx(mean[p][1] / best_kwh).epsilon(1e-12));
      CHECK(row.jct_window_ratio == Approx(window_ratio[p]).epsilon(1e-12));
      // Pareto-optimal: no other policy at least as good in both means and better in one.
      bool dominated = false;
      for (std::size_t q = 0; q < nh + nk; ++q) {
        if (q != p && mean[q][0] <= mean[p][0] && mean[q][1] <= mean[p][1] && (mean[q][0] < mean[p][0] || mean[q][1] < mean[p][1])) dominated = true;
      }
      CHECK(row.pareto_optimal == !dominated);
      // The CSV says the same (to its 9 significant digits).
      CHECK(cell(pareto, p + 1, "setting") == "energy");
      CHECK(cell(pareto, p + 1, "policy") == (p < nh ? sr.heuristics[p] : "agent_seed" + std::to_string(config.seeds[p - nh])));
      CHECK(cell(pareto, p + 1, "kind") == (p < nh ? "heuristic" : "agent"));
      CHECK(std::stod(cell(pareto, p + 1, "mean_jct_s")) == Approx(mean[p][0]).epsilon(1e-8));
      CHECK(std::stod(cell(pareto, p + 1, "mean_energy_kwh")) == Approx(mean[p][1]).epsilon(1e-8));
      CHECK(std::stod(cell(pareto, p + 1, "ratio_energy_kwh")) == Approx(mean[p][1] / best_kwh).epsilon(1e-8));
      CHECK(std::stod(cell(pareto, p + 1, "jct_window_ratio")) == Approx(window_ratio[p]).epsilon(1e-8));
      CHECK(cell(pareto, p + 1, "pareto_optimal") == (dominated ? "false" : "true"));
    }
    // The agents' JCT window ratio is the verdict's per-seed ratio.
    for (std::size_t k = 0; k < nk; ++k) CHECK(sr.pareto[nh + k].jct_window_ratio == sr.seed_mean_ratio[k]);
    const std::string svg = slurp(a / "pareto.svg");
    CHECK(svg.find("legend-box") != std::string::npos);
    CHECK(svg.find(">energy: heuristics (first 3 fronts named)<") != std::string::npos);
    // Point names only on the heuristics' first three Pareto fronts: a heuristic's front
    // is the length of the longest chain of heuristics beating one another down to it
    // (on the figure's axes: JCT window ratio, energy ratio); beyond the third, unnamed.
    auto beats = [&](std::size_t q, std::size_t p) {
      const RlBenchParetoRow& a = sr.pareto[q];
      const RlBenchParetoRow& b = sr.pareto[p];
      return a.jct_window_ratio <= b.jct_window_ratio && a.ratio[1] <= b.ratio[1] && (a.jct_window_ratio < b.jct_window_ratio || a.ratio[1] < b.ratio[1]);
    };
    std::function<int(std::size_t)> front = [&](std::size_t p) {
      int f = 0;
      for (std::size_t q = 0; q < nh; ++q) {
        if (beats(q, p)) f = std::max(f, 1 + front(q));
      }
      return f;
    };
    int named = 0;
    for (std::size_t p = 0; p < nh; ++p) {
      const std::string& name = sr.pareto[p].policy;
      INFO("heuristic " << name << ", front " << front(p));
      const bool shown = svg.find("\">" + name + "<") != std::string::npos || svg.find("\">" + name + " and ") != std::string::npos;
      if (front(p) >= 3) CHECK_FALSE(shown);
      named += shown ? 1 : 0;
    }
    CHECK(named > 0);
    CHECK(svg.find("class=\"point-label\"") != std::string::npos);
    CHECK(svg.find(">energy: agent seed 2<") != std::string::npos);
    CHECK(svg.find("mean energy_kwh / best heuristic") != std::string::npos);
    CHECK(slurp(a / "pareto.md").find("## energy") != std::string::npos);
  }

  for (const char* f : {"windows.csv", "windows.md", "summary.csv", "summary.md", "ratios.svg"}) CHECK(fs::exists(a / f));
  const auto summary = csv_rows(a / "summary.csv");
  REQUIRE(summary.size() == 5u);
  CHECK(summary[0] == std::vector<std::string>{"setting", "windows", "seeds", "mean_ratio", "min_seed_ratio", "max_seed_ratio", "std_seed_ratio", "target_below",
                                               "reached", "agents", "scenario", "no_wait_bound_ratio", "lower_bound_ratio"});
  CHECK(summary[1][11].empty());  // physics on: no bound
  CHECK(summary[1][12].empty());
  CHECK(std::stod(summary[2][11]) == Approx(r.settings[1].no_wait_bound_ratio).epsilon(1e-8));
  CHECK(std::stod(summary[2][12]) == Approx(r.settings[1].lower_bound_ratio).epsilon(1e-8));
  CHECK((std::vector<std::string>{summary[1][0], summary[1][9], summary[1][10]} == std::vector<std::string>{"physics_on", "physics_on", "tiny_scenario.yaml"}));
  CHECK((std::vector<std::string>{summary[2][0], summary[2][9]} == std::vector<std::string>{"physics_off", "physics_off"}));
  CHECK((std::vector<std::string>{summary[3][0], summary[3][9], summary[3][10]} == std::vector<std::string>{"philly_like", "physics_on", "tiny_synthetic.yaml"}));
  CHECK((std::vector<std::string>{summary[4][0], summary[4][9]} == std::vector<std::string>{"energy", "energy"}));
  CHECK(slurp(a / "ratios.svg").find("legend-box") != std::string::npos);

  // Two trainings at a time, as child processes of the CLI: the same bytes.
  const std::string log = tmp.path("jobs2.log");
  REQUIRE(test::wait_process(test::spawn_process({SCHEDSIM_EXE, "rl-bench", kTiny, "--out", b.string(), "--jobs", "2"}, {}, log)) == 0);
  const std::string text = slurp(log);
  CHECK(text.find("rl-bench: training 6 agents, up to 2 at a time") != std::string::npos);
  for (const char* f : {"windows.csv", "windows.md", "summary.csv", "summary.md", "ratios.svg", "pareto.csv", "pareto.md", "pareto.svg"}) {
    INFO(f);
    CHECK(slurp(a / f) == slurp(b / f));
  }
  for (const auto& t : r.trainings) {
    const fs::path rel = fs::path(t.setting) / ("seed_" + std::to_string(t.seed));
    INFO(rel.string());
    CHECK(slurp(a / rel / "learning_curve.csv") == slurp(b / rel / "learning_curve.csv"));
    CHECK(slurp(a / rel / "learning_curve.jsonl") == slurp(b / rel / "learning_curve.jsonl"));
    CHECK(same_weights(a / rel / "best.pt", b / rel / "best.pt"));
    CHECK(fs::exists(b / rel / "train.log"));
  }
}

namespace {

// A one-setting benchmark on the tiny scenario: one update of training, one test window.
std::string small_benchmark(const TempDir& tmp, const std::string& seeds, const std::string& set) {
  return tmp.write("small.yaml", "scenario: " + kConfigs + "rl_bench/tiny_scenario.yaml\nseeds: " + seeds +
                                      "\ntest_episodes: 1\nsettings:\n  - {name: only, physics: on, set: [" + set + "]}\n");
}

}  // namespace

TEST_CASE("rl-bench: a finished training of the same configuration is reused, a changed set retrains", "[rl][rl-bench][resume]") {
  if (!have_itp()) return;
  TempDir tmp;
  const std::string out = tmp.path("out");
  const fs::path dir = fs::path(out) / "only" / "seed_3";
  const std::string first = run_log([&](std::FILE* f) {
    const RlBenchResult r = run_rl_bench(RlBenchConfig::load_file(small_benchmark(tmp, "[3]", "\"train.total_steps=100\"")), out, logging_to(f));
    REQUIRE(r.trainings.size() == 1u);
    CHECK_FALSE(r.trainings[0].reused);
  });
  CHECK(first.find("rl-bench: only seed 3 trained") != std::string::npos);
  const std::string marker = slurp(dir / "trained.json");
  CHECK(marker.find("\"training_scenario_sha256\": \"") != std::string::npos);
  CHECK(marker.find("\"seed\": 3") != std::string::npos);
  CHECK(marker.find("\"steps\": 100") != std::string::npos);
  const auto curve_time = fs::last_write_time(dir / "learning_curve.csv");
  const std::string windows = slurp(fs::path(out) / "windows.csv");

  // The same benchmark again (e.g. to evaluate more test episodes): nothing trains.
  const std::string second = run_log([&](std::FILE* f) {
    const RlBenchResult r = run_rl_bench(RlBenchConfig::load_file(small_benchmark(tmp, "[3]", "\"train.total_steps=100\"")), out, logging_to(f));
    CHECK(r.trainings[0].reused);
    CHECK(r.trainings[0].steps == 100);
  });
  CHECK(second.find("rl-bench: only seed 3: reusing the finished training in " + dir.string() + "\n") != std::string::npos);
  CHECK(second.find("trained") == std::string::npos);
  CHECK(fs::last_write_time(dir / "learning_curve.csv") == curve_time);
  CHECK(slurp(dir / "trained.json") == marker);
  CHECK(slurp(fs::path(out) / "windows.csv") == windows);

  // Another set: another training scenario, trained again (and the log says why).
  const std::string third = run_log([&](std::FILE* f) {
    const RlBenchResult r =
        run_rl_bench(RlBenchConfig::load_file(small_benchmark(tmp, "[3]", "\"train.total_steps=100\", \"train.lr=0.001\"")), out, logging_to(f));
    CHECK_FALSE(r.trainings[0].reused);
  });
  CHECK(third.find("rl-bench: only seed 3: retraining in " + dir.string() + ": its configuration changed (training scenario SHA-256 ") != std::string::npos);
  CHECK(third.find("rl-bench: only seed 3 trained") != std::string::npos);
  CHECK(slurp(dir / "trained.json") != marker);
}

TEST_CASE("rl-bench --jobs: a failed child training stops the benchmark, naming the setting, the seed and its log", "[rl][rl-bench][jobs]") {
  if (!have_itp()) return;
  TempDir tmp;
  const std::string bench = small_benchmark(tmp, "[3, 4]", "\"train.total_steps=100\"");
  const std::string log = tmp.path("log.txt"), out = tmp.path("out");
  const int rc = test::wait_process(
      test::spawn_process({SCHEDSIM_EXE, "rl-bench", bench, "--out", out, "--jobs", "2", "--quiet"}, {{"SCHEDSIM_RL_BENCH_TEST_FAIL", "only/4"}}, log));
  CHECK(rc == 1);
  const std::string text = slurp(log);
  const std::string child_log = (fs::path(out) / "only" / "seed_4" / "train.log").string();
  CHECK(text.find("schedsim: error: rl-bench: the training of setting 'only' seed 4 failed: its process exited with status 1; its log: " + child_log) !=
        std::string::npos);
  CHECK(text.find("fails on purpose (SCHEDSIM_RL_BENCH_TEST_FAIL)") != std::string::npos);  // the log's last line
  CHECK(slurp(child_log).find("fails on purpose") != std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(out) / "summary.csv"));
}

TEST_CASE("rl-bench: bad benchmark files are errors naming the file, the key and what is allowed", "[rl][rl-bench][config]") {
  auto parse = [](const std::string& y) { return RlBenchConfig::parse(ConfigNode::load_string(y, "b.yaml")); };
  const std::string head = "{scenario: " + kConfigs + "rl_train.yaml, seeds: [1]";
  CHECK_THROWS_WITH(parse("{seeds: [1]}"), Catch::Contains("b.yaml") && Catch::Contains("needs 'scenario'"));
  CHECK_THROWS_WITH(parse("{scenario: " + kConfigs + "rl_train.yaml, seeds: []}"), Catch::Contains("seeds: must be a non-empty list of training seeds"));
  CHECK_THROWS_WITH(parse("{scenario: " + kConfigs + "rl_train.yaml, seeds: [1, 1]}"), Catch::Contains("seed 1 is listed twice"));
  CHECK_THROWS_WITH(parse(head + ", settings: [{name: a, physics: maybe}]}"), Catch::Contains("as_configured"));
  CHECK_THROWS_WITH(parse(head + ", settings: [{name: a, target_below: 1}]}"), Catch::Contains("must be a fraction in [0, 1)"));
  CHECK_THROWS_WITH(parse(head + ", set: [nokey]}"), Catch::Contains("must be KEY=VALUE"));
  CHECK_THROWS_WITH(parse(head + ", settings: [{name: a, agent: b}]}"),
                    Catch::Contains("b.yaml:1: settings[0]: unknown key 'agent' (did you mean 'agents'?)") && Catch::Contains("objectives"));
  // jobs: trainings at a time.
  CHECK_THROWS_WITH(parse(head + ", jobs: 0}"), Catch::Contains("b.yaml:1: jobs: must be an integer from 1 to 1024 (trainings at a time), got 0"));
  CHECK(parse(head + ", jobs: 3}").jobs == 3);
  CHECK(parse(head + "}").jobs == 1);
  // agents: an earlier setting that trains.
  CHECK_THROWS_WITH(parse(head + ", settings: [{name: a}, {name: b, agents: c}]}"),
                    Catch::Contains("b.yaml:1: settings[1].agents: there is no earlier setting 'c'; agents: must name an earlier setting that trains its agents: a"));
  CHECK_THROWS_WITH(parse(head + ", settings: [{name: b, agents: a}, {name: a}]}"),
                    Catch::Contains("settings[0].agents: there is no earlier setting 'a'") && Catch::Contains("(none comes before this one)"));
  CHECK_THROWS_WITH(parse(head + ", settings: [{name: a}, {name: b, agents: a}, {name: c, agents: b}]}"),
                    Catch::Contains("settings[2].agents: 'b' evaluates the agents of 'a' and trains none; agents: must name an earlier setting that trains its agents: a"));
  CHECK_THROWS_WITH(parse(head + ", settings: [{name: a, agents: a}]}"), Catch::Contains("a setting cannot name itself"));
  CHECK_THROWS_WITH(parse(head + ", settings: [{name: a}, {name: b, agents: a, set: [\"workload.synthetic.num_jobs=9\", \"env.max_candidates=4\"]}]}"),
                    Catch::Contains("b.yaml:1: settings[1].set[1]: 'env.max_candidates' would change the agents' environment or training") &&
                        Catch::Contains("agents of 'a'"));
  CHECK_THROWS_WITH(parse(head + ", settings: [{name: a}, {name: b, agents: a, set: [\"train.lr=0.1\"]}]}"), Catch::Contains("'train.lr' would change"));
  const RlBenchConfig ok = parse(head + ", settings: [{name: a}, {name: b, agents: a, physics: off, set: [\"workload.synthetic.num_jobs=9\"]}]}");
  CHECK(ok.settings[1].agents_setting() == "a");
  CHECK_FALSE(ok.settings[1].trains());
  // scenario: only with agents:.
  CHECK_THROWS_WITH(parse(head + ", settings: [{name: a, scenario: " + kConfigs + "default.yaml}]}"),
                    Catch::Contains("b.yaml:1: settings[0].scenario: needs 'agents' beside it"));
  CHECK_THROWS_WITH(parse(head + ", settings: [{name: a}, {name: b, agents: a, scenario: /nonexistent/s.yaml}]}"), Catch::Contains("b.yaml:1: settings[1].scenario: /nonexistent/s.yaml: no such scenario file"));
  // objectives: jct first, then known per-run totals.
  CHECK_THROWS_WITH(parse(head + ", settings: [{name: a, objectives: [jct, power]}]}"),
                    Catch::Contains("b.yaml:1: settings[0].objectives[1]: unknown objective 'power'; allowed after jct: energy_kwh, cost_usd, co2_kg, compute_usd, "
                                    "slo_violation_minutes"));
  CHECK_THROWS_WITH(parse(head + ", settings: [{name: a, objectives: [energy_kwh, jct]}]}"), Catch::Contains("objectives[0]: the first objective must be jct"));
  CHECK_THROWS_WITH(parse(head + ", settings: [{name: a, objectives: [jct]}]}"), Catch::Contains("objectives: must be a list of jct and one or two further objectives"));
  CHECK_THROWS_WITH(parse(head + ", settings: [{name: a, objectives: [jct, co2_kg, co2_kg]}]}"), Catch::Contains("objective 'co2_kg' is listed twice"));
  CHECK(parse(head + ", settings: [{name: a, objectives: [jct, cost_usd, co2_kg]}]}").settings[0].objectives.size() == 3u);
}

TEST_CASE("rl-bench: an objective whose model the scenario lacks fails before anything trains", "[rl][rl-bench][config]") {
  if (!have_itp()) return;
  TempDir tmp;
  const std::string scenario = kConfigs + "rl_bench/tiny_scenario.yaml";
  const std::string no_energy = tmp.write("e.yaml", "scenario: " + scenario + "\nseeds: [1]\nsettings: [{name: e, objectives: [jct, co2_kg]}]\n");
  CHECK_THROWS_WITH(run_rl_bench(RlBenchConfig::load_file(no_energy), tmp.path("out1")),
                    Catch::Contains("e.yaml: setting 'e' lists objective co2_kg, but its scenario lacks an energy: map"));
  CHECK_FALSE(fs::exists(tmp.path("out1")));
}

TEST_CASE("rl-bench: itp_high_load.yaml's physics_off is itp.yaml's, so its trainings carry over", "[rl][rl-bench]") {
  const RlBenchConfig itp = RlBenchConfig::load_file(kConfigs + "rl_bench/itp.yaml");
  const RlBenchConfig high = RlBenchConfig::load_file(kConfigs + "rl_bench/itp_high_load.yaml");
  CHECK(high.scenario_path == itp.scenario_path);
  CHECK(high.overrides == itp.overrides);
  CHECK(high.seeds == itp.seeds);
  CHECK((high.test_seed_start == itp.test_seed_start && high.test_episodes == itp.test_episodes));
  const RlBenchSetting* a = itp.find_setting("physics_off");
  const RlBenchSetting* b = high.find_setting("physics_off");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(b->overrides == a->overrides);
  CHECK(b->physics == a->physics);
  CHECK(b->target_below == a->target_below);
  // The evaluation-only setting: physics_off's agents at the higher loads.
  const RlBenchSetting* h = high.find_setting("physics_off_high_load");
  REQUIRE(h);
  CHECK(h->agents == "physics_off");
  CHECK(std::find(h->overrides.begin(), h->overrides.end(), "workload.trace.windows.offered_load=[1.2, 2.4]") != h->overrides.end());
}
