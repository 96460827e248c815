#include "rl/rl_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "policies/registry.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "base/svg_plot.hpp"
#include "base/sha256.hpp"
#include "rl/dist_launch.hpp"
#include "rl/env/features.hpp"
#include "rl/heuristic_baseline.hpp"
#include "rl/train_command.hpp"
#include "base/error.hpp"
#include "sim/jct_lower_bound.hpp"
#include "sim/observer.hpp"
#include "sim/simulator.hpp"

namespace schedsim::rl {
namespace {

namespace fs = std::filesystem;

// The jobs that complete (their arrival, duration and GPUs) and the cluster's device
// count: what the bounds on mean JCT of a run without a physics model need.
class CompletedJobs : public Observer {
 public:
  void on_job_end(const JobState& job) override {
    if (job.status != JobStatus::kCompleted) return;
    jobs.push_back(BoundJob{job.spec.submit.seconds(), job.spec.duration_s, job.spec.num_gpus});
  }
  void after_event(const Simulator& sim) override { num_devices = sim.cluster_state().spec().num_devices(); }
  void snapshot(SnapshotArchive& /*ar*/) override {}
  std::vector<BoundJob> jobs;
  int num_devices = 0;
};

// The target lies below the lower bound on any scheduler's mean ratio (settings without a
// physics model): no agent can reach it.
bool unreachable(const RlBenchSettingResult& sr) {
  return std::isfinite(sr.lower_bound_ratio) && sr.lower_bound_ratio > 1.0 - sr.setting.target_below + 1e-12;
}

// The marker of a finished training (written last, so that a training killed half-way
// leaves none) and the file a child training's output goes to.
constexpr const char* kMarkerFile = "trained.json";
constexpr const char* kChildLogFile = "train.log";
// The files the Pareto report writes; removed when no setting has objectives, so that an
// earlier run's report does not pass for this one's.
const char* const kParetoFiles[] = {"pareto.csv", "pareto.md", "pareto.svg"};
constexpr std::int64_t kMaxJobs = 1024;

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

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
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

// The key an override sets ("env.max_candidates" of "env.max_candidates=4").
std::string override_key(const std::string& o) { return o.substr(0, o.find('=')); }

// True when an override changes what the agents are (their environment's shape or their
// training): keys under env. and train. (or the maps themselves).
bool changes_agents(const std::string& o) {
  const std::string key = override_key(o);
  for (const char* section : {"env", "train"}) {
    const std::string s = section;
    if (key == s || key.rfind(s + ".", 0) == 0) return true;
  }
  return false;
}

// A number of an objective's mean in the markdown: hours for JCT, else the unit's own.
double md_value(const std::string& objective, double v) { return objective == "jct" ? v / 3600 : v; }
std::string md_name(const std::string& objective) { return objective == "jct" ? "JCT" : objective; }
std::string md_unit(const std::string& objective) { return objective == "jct" ? "h" : rl_bench_objective_unit(objective); }
// A CSV column stem with its unit: jct_s, energy_kwh (the other names carry their unit).
std::string csv_stem(const std::string& objective) { return objective == "jct" ? "jct_s" : objective; }

// The model a setting's objective needs in the scenario, or "" when it is there. The
// values themselves are checked on the runs (a cost needs a price signal, too).
std::string missing_model(const ScenarioConfig& s, const std::string& objective) {
  if (objective == "energy_kwh" || objective == "cost_usd" || objective == "co2_kg") return s.energy ? "" : "an energy: map";
  if (objective == "compute_usd") return s.market ? "" : "a market: map";
  if (objective == "slo_violation_minutes") return s.inference ? "" : "inference services (an inference: map)";
  return "";
}

// The marker's content (trained.json).
struct Marker {
  std::string hash;
  std::uint64_t seed = 0;
  std::int64_t steps = 0;
  double wall_s = 0.0;
  std::optional<double> best_eval_mean_jct_s;
  std::int64_t best_eval_step = -1;
};

std::string marker_json(const std::string& setting, const Marker& m, std::int64_t total_steps) {
  nlohmann::ordered_json j;
  j["setting"] = setting;
  j["seed"] = m.seed;
  j["training_scenario_sha256"] = m.hash;
  j["total_steps"] = total_steps;
  j["steps"] = m.steps;
  j["best_eval_mean_jct_s"] = m.best_eval_mean_jct_s ? nlohmann::ordered_json(*m.best_eval_mean_jct_s) : nlohmann::ordered_json(nullptr);
  j["best_eval_step"] = m.best_eval_step;
  j["wall_s"] = m.wall_s;
  j["version"] = SCHEDSIM_VERSION;
  return j.dump(2) + "\n";
}

// The marker in `dir`; nullopt with the reason in `problem` when there is none or it
// cannot be read.
std::optional<Marker> read_marker(const fs::path& dir, std::string& problem) {
  const fs::path path = dir / kMarkerFile;
  std::ifstream in(path);
  if (!in) {
    problem = "no finished training there";
    return std::nullopt;
  }
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    Marker m;
    m.hash = j.at("training_scenario_sha256").get<std::string>();
    m.seed = j.at("seed").get<std::uint64_t>();
    m.steps = j.at("steps").get<std::int64_t>();
    m.wall_s = j.at("wall_s").get<double>();
    if (!j.at("best_eval_mean_jct_s").is_null()) m.best_eval_mean_jct_s = j.at("best_eval_mean_jct_s").get<double>();
    m.best_eval_step = j.at("best_eval_step").get<std::int64_t>();
    return m;
  } catch (const nlohmann::json::exception& e) {
    problem = path.string() + " cannot be read (" + e.what() + ")";
    return std::nullopt;
  }
}

// Scenario paths are made absolute (and normal): the scenario's own relative paths (its
// trace) then resolve to the same text from any working directory, so the training hash
// of trained.json does not depend on where rl-bench was started.
std::string absolute_path(const std::string& p) { return fs::absolute(p).lexically_normal().string(); }

// A `scenario:` value: an existing file, checked here so that the error names the key.
std::string scenario_file(const ConfigNode& n) {
  const std::string p = n.as_path();
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) n.fail(p + ": no such scenario file (a path relative to the benchmark file)");
  return absolute_path(p);
}

std::string seed_dir(const std::string& out_dir, const std::string& setting, std::uint64_t seed) {
  return (fs::path(out_dir) / setting / ("seed_" + std::to_string(seed))).string();
}

void log_trained(std::FILE* log, const RlBenchTraining& t) {
  if (!log) return;
  std::fprintf(log, "rl-bench: %s seed %llu trained %lld steps in %.1f s; best validation mean JCT %.4f h at step %lld\n", t.setting.c_str(),
               static_cast<unsigned long long>(t.seed), static_cast<long long>(t.steps), t.wall_s,
               t.best_eval_mean_jct_s ? *t.best_eval_mean_jct_s / 3600 : NAN, static_cast<long long>(t.best_eval_step));
  std::fflush(log);
}

void fill_from_marker(RlBenchTraining& t, const Marker& m) {
  t.steps = m.steps;
  t.wall_s = m.wall_s;
  t.best_eval_mean_jct_s = m.best_eval_mean_jct_s;
  t.best_eval_step = m.best_eval_step;
}

// The last non-empty line of a child's log, for the message of its failure.
std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last;
}

// A training setting's folder is emptied before it trains (again): no checkpoint, curve
// or marker of an earlier configuration may survive beside the new ones.
void clear_training_dir(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) throw InputError(dir, "cannot remove the earlier training there: " + ec.message());
  fs::create_directories(dir, ec);
  if (ec) throw InputError(dir, "cannot create the training folder: " + ec.message());
}

// Runs the trainings that are not reused: in this process one after the other (jobs 1),
// or as up to `jobs` child processes of `exe_or_self` ("": this executable) (`rl-bench CONFIG --out OUT --train-one
// SETTING/SEED`, stdout and stderr in the seed's train.log). A child that fails stops
// the others and the benchmark, naming the setting, the seed and its log.
void run_trainings(const RlBenchConfig& config, const std::string& out_dir, std::vector<RlBenchTraining*> todo, int jobs, const std::string& exe_or_self,
                   std::FILE* log) {
  if (todo.empty()) return;
  if (jobs <= 1) {
    for (RlBenchTraining* t : todo) {
      clear_training_dir(t->dir);
      const RlBenchTraining done = train_rl_bench_agent(config, t->setting, t->seed, t->dir, false);
      t->steps = done.steps;
      t->wall_s = done.wall_s;
      t->best_eval_mean_jct_s = done.best_eval_mean_jct_s;
      t->best_eval_step = done.best_eval_step;
      log_trained(log, *t);
    }
    return;
  }
  const std::string exe = exe_or_self.empty() ? fs::read_symlink("/proc/self/exe").string() : exe_or_self;
  const std::string config_path = fs::absolute(config.source).string();
  const std::string out = fs::absolute(out_dir).string();
  if (log) {
    std::fprintf(log, "rl-bench: training %zu agent%s, up to %d at a time (child processes; each one's output in OUT/<setting>/seed_S/%s)\n", todo.size(),
                 todo.size() == 1 ? "" : "s", jobs, kChildLogFile);
    std::fflush(log);
  }
  ChildProcesses children("schedsim rl-bench --jobs " + std::to_string(jobs));
  std::size_t next = 0;
  auto start_next = [&] {
    RlBenchTraining& t = *todo[next];
    clear_training_dir(t.dir);
    const std::vector<std::string> argv = {exe, "rl-bench", config_path, "--out", out, "--train-one", t.setting + "/" + std::to_string(t.seed)};
    children.start(static_cast<int>(next), exe, argv, {}, (fs::path(t.dir) / kChildLogFile).string());
    ++next;
  };
  while (next < todo.size() && children.running() < static_cast<std::size_t>(jobs)) start_next();
  while (const auto ended = children.wait_any()) {
    RlBenchTraining& t = *todo[static_cast<std::size_t>(ended->id)];
    const std::string log_path = (fs::path(t.dir) / kChildLogFile).string();
    std::string problem;
    const std::optional<Marker> m = ended->ok() ? read_marker(t.dir, problem) : std::nullopt;
    if (!m) {
      children.kill_all();  // the others' results would not be used: stop them now
      const std::string last = last_line(log_path);
      throw Error("rl-bench: the training of setting '" + t.setting + "' seed " + std::to_string(t.seed) + " failed: its process " +
                  (ended->ok() ? "exited without writing " + std::string(kMarkerFile) : describe_wait_status(ended->status)) + "; its log: " + log_path +
                  (last.empty() ? std::string() : " (last line: " + last + ")") + "; the other trainings were stopped");
    }
    fill_from_marker(t, *m);
    log_trained(log, t);
    if (next < todo.size()) start_next();
  }
}

// The evaluation scenario of a setting: its scenario (or the benchmark's) with the
// benchmark's and the setting's overrides, its physics, and test windows.
ScenarioConfig evaluation_scenario(const RlBenchConfig& config, const RlBenchSetting& st, const PolicyRegistry& registry) {
  std::vector<std::string> o = config.overrides;
  o.insert(o.end(), st.overrides.begin(), st.overrides.end());
  ScenarioConfig s = load_scenario(st.scenario_path.empty() ? config.scenario_path : st.scenario_path, o, std::nullopt, registry);
  if (st.physics == "on" && !s.physics)
    throw InputError(config.source, "setting '" + st.name + "' has physics: on, but its scenario " + (st.scenario_path.empty() ? config.scenario_path : st.scenario_path) +
                                        " has no physics: map");
  if (st.physics == "off") s.physics.reset();
  // Test windows, never replayed in training or validation. (A synthetic workload's test
  // episodes are its test seeds.)
  if (s.workload.trace && s.workload.trace->windows) s.workload.trace->windows->use = WindowSplit::kTest;
  return s;
}

// The Pareto rows of a setting with objectives (RlBenchParetoRow).
void pareto_rows(RlBenchSettingResult& sr, const std::vector<std::uint64_t>& seeds) {
  const std::size_t m = sr.setting.objectives.size(), nw = sr.windows.size();
  auto mean_of = [&](auto value_at) {
    double sum = 0.0;
    for (std::size_t w = 0; w < nw; ++w) sum += value_at(sr.windows[w]);
    return sum / static_cast<double>(nw);
  };
  for (std::size_t h = 0; h < sr.heuristics.size(); ++h) {
    RlBenchParetoRow row;
    row.policy = sr.heuristics[h];
    for (std::size_t o = 0; o < m; ++o) row.mean.push_back(mean_of([&](const RlBenchWindow& w) { return w.heuristic_objectives[h][o]; }));
    row.jct_window_ratio = mean_of([&](const RlBenchWindow& w) { return w.heuristic_jct_s[h] / w.best_heuristic_jct_s; });
    sr.pareto.push_back(std::move(row));
  }
  for (std::size_t k = 0; k < sr.checkpoints.size(); ++k) {
    RlBenchParetoRow row;
    row.agent = true;
    row.seed = seeds[k];
    row.policy = "agent_seed" + std::to_string(row.seed);
    for (std::size_t o = 0; o < m; ++o) row.mean.push_back(mean_of([&](const RlBenchWindow& w) { return w.agent_objectives[k][o]; }));
    row.jct_window_ratio = sr.seed_mean_ratio[k];
    sr.pareto.push_back(std::move(row));
  }
  // Each objective's yardstick: the heuristic with the lowest finite mean (the first on a tie).
  sr.best_heuristic_by_objective.assign(m, "");
  for (std::size_t o = 0; o < m; ++o) {
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t h = 0; h < sr.heuristics.size(); ++h) {
      if (std::isfinite(sr.pareto[h].mean[o]) && sr.pareto[h].mean[o] < best) {
        best = sr.pareto[h].mean[o];
        sr.best_heuristic_by_objective[o] = sr.heuristics[h];
      }
    }
    for (auto& row : sr.pareto) row.ratio.push_back(row.mean[o] / best);
  }
  // Pareto-optimal: finite means, and no other row at least as good in every objective
  // and better in one.
  for (auto& row : sr.pareto) {
    const bool finite = std::all_of(row.mean.begin(), row.mean.end(), [](double v) { return std::isfinite(v); });
    bool dominated = false;
    for (const auto& other : sr.pareto) {
      if (&other == &row || !std::all_of(other.mean.begin(), other.mean.end(), [](double v) { return std::isfinite(v); })) continue;
      bool no_worse = true, better = false;
      for (std::size_t o = 0; o < m; ++o) {
        no_worse = no_worse && other.mean[o] <= row.mean[o];
        better = better || other.mean[o] < row.mean[o];
      }
      if (no_worse && better) dominated = true;
    }
    row.pareto_optimal = finite && !dominated;
  }
}

// Pareto layers of points to minimise on both axes: 0 for those no other point beats
// (at least as good on both, better on one), 1 for those only layer-0 points beat, and
// so on. O(n^3), for the 30-odd heuristics of a setting.
std::vector<int> pareto_layers(const std::vector<std::pair<double, double>>& points) {
  const std::size_t n = points.size();
  std::vector<int> layer(n, -1);
  auto beats = [&](std::size_t j, std::size_t i) {
    return points[j].first <= points[i].first && points[j].second <= points[i].second &&
           (points[j].first < points[i].first || points[j].second < points[i].second);
  };
  for (int l = 0, left = static_cast<int>(n); left > 0; ++l) {
    std::vector<std::size_t> now;
    for (std::size_t i = 0; i < n; ++i) {
      if (layer[i] >= 0) continue;
      bool beaten = false;
      for (std::size_t j = 0; j < n && !beaten; ++j) beaten = j != i && layer[j] < 0 && beats(j, i);
      if (!beaten) now.push_back(i);
    }
    for (std::size_t i : now) layer[i] = l;
    left -= static_cast<int>(now.size());
  }
  return layer;
}

constexpr int kNamedFronts = 3;  // heuristics' fronts whose points pareto.svg names

}  // namespace

const std::vector<std::string>& rl_bench_objectives() {
  static const std::vector<std::string> names = {"energy_kwh", "cost_usd", "co2_kg", "compute_usd", "slo_violation_minutes"};
  return names;
}

std::string rl_bench_objective_unit(const std::string& objective) {
  if (objective == "jct") return "s";
  // The unit each writer's field table states.
  if (const auto* f = find_field(energy_fields(), objective)) return f->unit;
  if (const auto* f = find_field(market_fields(), objective)) return f->unit;
  if (const auto* f = find_field(service_fields(), objective)) return f->unit;
  return "";
}

std::optional<double> rl_bench_objective_value(const RunResult& run, const std::string& objective) {
  // Each value is read through the field table of the results.json section that holds it
  // (sim/output_fields.hpp): a renamed field fails here at once.
  auto field = [](const auto& table, const std::string& name) {
    const auto* f = find_field(table, name);
    if (!f) throw std::logic_error("results.json has no field '" + name + "' in its table");
    return f;
  };
  if (objective == "jct") return field(summary_fields(), "mean_jct_s")->value(run.summary);
  if (objective == "energy_kwh" || objective == "cost_usd" || objective == "co2_kg") {
    if (!run.energy) return std::nullopt;
    return field(energy_fields(), objective)->value(*run.energy);
  }
  if (objective == "compute_usd") {
    if (!run.market) return std::nullopt;
    return field(market_fields(), objective)->value(MarketReport{&*run.market, &run.stats});
  }
  if (objective == "slo_violation_minutes") {
    if (run.inference.empty()) return std::nullopt;
    double minutes = 0.0;
    for (const ServiceMetrics& s : run.inference) {
      const auto v = field(service_fields(), objective)->value(s);
      if (!v) return std::nullopt;
      minutes += *v;
    }
    return minutes;
  }
  throw std::logic_error("rl-bench: unknown objective '" + objective + "'");
}

RlBenchConfig RlBenchConfig::load_file(const std::string& path) { return parse(ConfigNode::load_file(path)); }

const RlBenchSetting* RlBenchConfig::find_setting(const std::string& name) const {
  for (const auto& s : settings) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

RlBenchConfig RlBenchConfig::parse(const ConfigNode& node) {
  node.expect_map({"scenario", "set", "seeds", "test_seed_start", "test_episodes", "jobs", "settings"});
  RlBenchConfig c;
  c.source = node.source();
  if (!node.has("scenario")) node.fail("needs 'scenario': the path of a scenario with a train: map (relative to this file)");
  c.scenario_path = scenario_file(node.child("scenario"));
  c.scenario_label = node.child("scenario").as_string();
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
  if (auto n = node.maybe_child("jobs")) {
    const std::int64_t v = n->as_int();
    if (v < 1 || v > kMaxJobs) n->fail("must be an integer from 1 to " + std::to_string(kMaxJobs) + " (trainings at a time), got " + std::to_string(v));
    c.jobs = static_cast<int>(v);
  }
  if (auto s = node.maybe_child("settings")) {
    if (!s->is_sequence() || s->size() == 0) s->fail("must be a non-empty list of {name, set, physics, target_below, agents, scenario, objectives}");
    for (std::size_t i = 0; i < s->size(); ++i) {
      const ConfigNode e = s->at(i);
      e.expect_map({"name", "set", "physics", "target_below", "agents", "scenario", "objectives"});
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
      if (auto a = e.maybe_child("agents")) {
        st.agents = a->as_string();
        // Agents are trained before anything is evaluated, but an earlier setting reads
        // in order; one that trains none has no agents to lend.
        std::vector<std::string> trainers;
        for (const auto& other : c.settings) {
          if (other.trains()) trainers.push_back(other.name);
        }
        const RlBenchSetting* lender = c.find_setting(st.agents);
        if (!lender || !lender->trains()) {
          const std::string what = lender ? "'" + st.agents + "' evaluates the agents of '" + lender->agents + "' and trains none"
                                   : st.agents == st.name ? "a setting cannot name itself (leave agents: out to train its own)"
                                                          : "there is no earlier setting '" + st.agents + "'";
          a->fail(what + "; agents: must name an earlier setting that trains its agents" +
                  (trainers.empty() ? std::string(" (none comes before this one)") : ": " + joined(trainers)));
        }
        // The agents were trained for their own environment: this setting may change the
        // world they are evaluated in, not the agents.
        if (auto o = e.maybe_child("set")) {
          for (std::size_t k = 0; k < st.overrides.size(); ++k) {
            if (changes_agents(st.overrides[k]))
              o->at(k).fail("'" + override_key(st.overrides[k]) + "' would change the agents' environment or training, but this setting evaluates the agents of '" +
                            st.agents + "' and trains none; keys under env. and train. are allowed only in settings that train (drop agents: to train this setting's own)");
          }
        }
      }
      if (auto p = e.maybe_child("scenario")) {
        if (st.agents.empty())
          p->fail("needs 'agents' beside it: training only uses the benchmark scenario's training windows, so a setting with its own scenario evaluates the agents of "
                  "an earlier setting (e.g. agents: physics_on)");
        st.scenario_path = scenario_file(*p);
        st.scenario_label = p->as_string();
      }
      if (auto ob = e.maybe_child("objectives")) {
        const std::vector<std::string>& allowed = rl_bench_objectives();
        if (!ob->is_sequence() || ob->size() < 2 || ob->size() > 3)
          ob->fail("must be a list of jct and one or two further objectives (" + joined(allowed) + "), e.g. [jct, energy_kwh]");
        for (std::size_t k = 0; k < ob->size(); ++k) {
          const std::string name = ob->at(k).as_string();
          if (k == 0 && name != "jct") ob->at(k).fail("the first objective must be jct (the verdict's), got '" + name + "'");
          if (k > 0 && std::find(allowed.begin(), allowed.end(), name) == allowed.end())
            ob->at(k).fail("unknown objective '" + name + "'; allowed after jct: " + joined(allowed) + " (per-run totals of results.json)");
          if (std::find(st.objectives.begin(), st.objectives.end(), name) != st.objectives.end()) ob->at(k).fail("objective '" + name + "' is listed twice");
          st.objectives.push_back(name);
        }
      }
      c.settings.push_back(st);
    }
  } else {
    RlBenchSetting st;
    st.name = "as_configured";
    c.settings.push_back(st);
  }
  return c;
}

ScenarioConfig rl_bench_training_scenario(const RlBenchConfig& config, const RlBenchSetting& setting, std::uint64_t seed, const PolicyRegistry& registry) {
  std::vector<std::string> o = config.overrides;
  o.insert(o.end(), setting.overrides.begin(), setting.overrides.end());
  o.push_back("train.seed=" + std::to_string(seed));
  ScenarioConfig s = load_scenario(config.scenario_path, o, std::nullopt, registry);
  if (!s.train_yaml.IsDefined() || s.train_yaml.IsNull())
    throw InputError(config.source, "the scenario " + config.scenario_path + " has no train: map (see docs/config.md#train)");
  if (setting.physics == "on" && !s.physics) throw InputError(config.source, "setting '" + setting.name + "' has physics: on, but the scenario has no physics: map");
  // physics: off trains without the physics model, as the setting is evaluated: removed
  // after loading, so the trace's models stay labels.
  if (setting.physics == "off") s.physics.reset();
  return s;
}

std::string rl_bench_training_hash(const ScenarioConfig& training_scenario) {
  YAML::Node doc(YAML::NodeType::Map);
  doc["scenario"] = training_scenario.to_yaml(training_scenario.policy);
  doc["train"] = training_scenario.train_yaml;
  YAML::Emitter emitter;
  emitter << doc;
  return sha256_hex(emitter.c_str());
}

RlBenchTraining train_rl_bench_agent(const RlBenchConfig& config, const std::string& setting, std::uint64_t seed, const std::string& dir, bool progress) {
  const RlBenchSetting* st = config.find_setting(setting);
  if (!st || !st->trains()) throw InputError("--train-one", "'" + setting + "' is not a setting of " + config.source + " that trains its agents");
  if (std::find(config.seeds.begin(), config.seeds.end(), seed) == config.seeds.end())
    throw InputError("--train-one", "seed " + std::to_string(seed) + " is not one of " + config.source + "'s seeds");
  // Test hook (docs/rl_agents.md): SCHEDSIM_RL_BENCH_TEST_FAIL=SETTING/SEED makes that
  // training fail, as a crashed child of --jobs N.
  if (const char* v = std::getenv("SCHEDSIM_RL_BENCH_TEST_FAIL"); v && setting + "/" + std::to_string(seed) == v)
    throw Error("rl-bench: the training of " + setting + " seed " + std::to_string(seed) + " fails on purpose (SCHEDSIM_RL_BENCH_TEST_FAIL)");
  PolicyRegistry registry = builtin_policies();
  register_rl_policy(registry);
  const ScenarioConfig scenario = rl_bench_training_scenario(config, *st, seed, registry);
  const fs::path out(dir);
  std::error_code ec;
  fs::remove(out / kMarkerFile, ec);  // a training that stops half-way leaves no marker
  const TrainOutcome o = train_agent(scenario, TrainOptions{dir, false, progress, {}});
  RlBenchTraining t;
  t.setting = setting;
  t.seed = seed;
  t.dir = dir;
  t.steps = o.steps;
  t.wall_s = o.wall_s;
  t.best_eval_mean_jct_s = o.best_eval_mean_jct_s;
  t.best_eval_step = o.best_eval_step;
  Marker m{rl_bench_training_hash(scenario), seed, o.steps, o.wall_s, o.best_eval_mean_jct_s, o.best_eval_step};
  write_file_atomically((out / kMarkerFile).string(), marker_json(setting, m, scenario.train ? scenario.train->total_steps : o.steps));
  return t;
}

RlBenchResult run_rl_bench(const RlBenchConfig& config, const std::string& out_dir, const RlBenchOptions& options) {
  std::FILE* log = options.log;
  const int jobs = options.jobs > 0 ? options.jobs : config.jobs;
  PolicyRegistry registry = builtin_policies();
  register_rl_policy(registry);
  RlBenchResult result;
  result.seeds = config.seeds;

  // Every scenario is loaded and cross-checked before anything trains, so that a bad
  // override, a missing model or agents of another environment fail at once.
  std::vector<ScenarioConfig> eval_scenarios;
  std::map<std::string, std::vector<std::string>> hashes;  // training setting -> by seed
  std::map<std::string, std::pair<int, int>> agent_features;  // training setting -> (candidate, global) features
  for (const auto& st : config.settings) {
    if (st.trains()) {
      for (const std::uint64_t seed : config.seeds) {
        const ScenarioConfig t = rl_bench_training_scenario(config, st, seed, registry);
        hashes[st.name].push_back(rl_bench_training_hash(t));
        const EnvConfig env = EnvConfig::from_scenario(t);
        agent_features[st.name] = {candidate_feature_count(env), global_feature_count(env)};
      }
    }
    ScenarioConfig s = evaluation_scenario(config, st, registry);
    const EnvConfig env = EnvConfig::from_scenario(s);
    const auto [cand, glob] = agent_features.at(st.agents_setting());
    if (candidate_feature_count(env) != cand || global_feature_count(env) != glob)
      throw InputError(config.source, "setting '" + st.name + "' evaluates the agents of '" + st.agents_setting() + "', which read " + std::to_string(cand) +
                                          " candidate and " + std::to_string(glob) + " global features, on " +
                                          (st.scenario_path.empty() ? config.scenario_path : st.scenario_path) + ", whose environment has " +
                                          std::to_string(candidate_feature_count(env)) + " and " + std::to_string(global_feature_count(env)) +
                                          " (its env: map differs from the agents' training scenario's; give it the same env: map)");
    for (const auto& objective : st.objectives) {
      const std::string missing = missing_model(s, objective);
      if (!missing.empty())
        throw InputError(config.source, "setting '" + st.name + "' lists objective " + objective + ", but its scenario lacks " + missing +
                                            " (results.json would have no " + objective + "); add it to the scenario or with the setting's set:");
    }
    eval_scenarios.push_back(std::move(s));
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir, "cannot create the output folder: " + ec.message());

  // Trainings: reused when a finished one of the same configuration is there.
  for (const auto& st : config.settings) {
    if (!st.trains()) continue;
    for (std::size_t k = 0; k < config.seeds.size(); ++k) {
      RlBenchTraining t;
      t.setting = st.name;
      t.seed = config.seeds[k];
      t.dir = seed_dir(out_dir, st.name, t.seed);
      std::string problem;
      const std::optional<Marker> m = read_marker(t.dir, problem);
      const std::string& hash = hashes.at(st.name)[k];
      if (m && m->hash == hash && m->seed == t.seed && fs::is_regular_file(fs::path(t.dir) / "best.pt")) {
        t.reused = true;
        fill_from_marker(t, *m);
        if (log) std::fprintf(log, "rl-bench: %s seed %llu: reusing the finished training in %s\n", st.name.c_str(), static_cast<unsigned long long>(t.seed), t.dir.c_str());
      } else if (log && m) {
        const std::string why = m->hash != hash ? "its configuration changed (training scenario SHA-256 " + m->hash.substr(0, 12) + "... in " + kMarkerFile +
                                                      ", now " + hash.substr(0, 12) + "...)"
                                : m->seed != t.seed ? "its trained.json is of seed " + std::to_string(m->seed)
                                                    : std::string("its best.pt is missing");
        std::fprintf(log, "rl-bench: %s seed %llu: retraining in %s: %s\n", st.name.c_str(), static_cast<unsigned long long>(t.seed), t.dir.c_str(), why.c_str());
      } else if (log && problem != "no finished training there") {
        std::fprintf(log, "rl-bench: %s seed %llu: retraining in %s: %s\n", st.name.c_str(), static_cast<unsigned long long>(t.seed), t.dir.c_str(), problem.c_str());
      }
      result.trainings.push_back(std::move(t));
    }
  }
  if (log) std::fflush(log);
  std::vector<RlBenchTraining*> todo;
  for (auto& t : result.trainings) {
    if (!t.reused) todo.push_back(&t);
  }
  run_trainings(config, out_dir, todo, jobs, options.executable, log);

  for (std::size_t si = 0; si < config.settings.size(); ++si) {
    const ScenarioConfig& scenario = eval_scenarios[si];
    RlBenchSettingResult sr;
    sr.setting = config.settings[si];
    for (const std::uint64_t seed : config.seeds) sr.checkpoints.push_back((fs::path(seed_dir(out_dir, sr.setting.agents_setting(), seed)) / "best.pt").string());
    const std::vector<std::string>& objectives = sr.setting.objectives;
    // An objective's value of one run; a run without it is an error naming the setting.
    auto objective_values = [&](const RunResult& r, const std::string& who, std::uint64_t episode) {
      std::vector<double> v;
      for (const auto& objective : objectives) {
        const std::optional<double> x = rl_bench_objective_value(r, objective);
        if (!x && objective != "jct")
          throw InputError(config.source, "setting '" + sr.setting.name + "': the run of " + who + " on test episode " + std::to_string(episode) + " has no " + objective +
                                              " (results.json reports it only with " + (objective == "cost_usd" ? "a price signal" : objective == "co2_kg" ? "a carbon signal" : "its model") + ")");
        v.push_back(x ? *x : NAN);
      }
      return v;
    };
    sr.heuristics = same_information_heuristics(scenario, registry);
    // heuristic -> episode -> objective values
    std::vector<std::vector<std::vector<double>>> heuristic_objectives(sr.heuristics.size(),
                                                                       std::vector<std::vector<double>>(static_cast<std::size_t>(config.test_episodes)));
    const std::vector<HeuristicScore> scores = score_heuristics(scenario, registry, sr.heuristics, config.test_seed_start, config.test_episodes,
                                                                [&](std::size_t h, int e, const RunResult& r) {
                                                                  if (!objectives.empty())
                                                                    heuristic_objectives[h][static_cast<std::size_t>(e)] =
                                                                        objective_values(r, sr.heuristics[h], config.test_seed_start + static_cast<std::uint64_t>(e));
                                                                });
    for (int e = 0; e < config.test_episodes; ++e) {
      RlBenchWindow w;
      w.seed = config.test_seed_start + static_cast<std::uint64_t>(e);
      std::vector<std::string> warnings;
      w.window = scenario.workload.make_source(w.seed, warnings)->describe();
      w.best_heuristic_jct_s = std::numeric_limits<double>::infinity();
      for (std::size_t h = 0; h < scores.size(); ++h) {
        const double v = scores[h].episode_mean_jct_s[static_cast<std::size_t>(e)];
        w.heuristic_jct_s.push_back(v);
        if (std::isfinite(v) && v < w.best_heuristic_jct_s) {
          w.best_heuristic_jct_s = v;
          w.best_heuristic = scores[h].name;
        }
        if (!objectives.empty()) {
          std::vector<double> values = heuristic_objectives[h][static_cast<std::size_t>(e)];
          if (values.empty()) values.assign(objectives.size(), NAN);  // the run failed (HeuristicScore::error)
          w.heuristic_objectives.push_back(std::move(values));
        }
      }
      if (w.best_heuristic.empty()) throw InputError(config.source, "no heuristic finished test episode " + std::to_string(w.seed) + " (" + w.window + ")");
      if (!scenario.physics) {
        // Every job at rate 1, each taking its duration once it starts: any policy completes
        // the same jobs (the window's, less those dropped as oversized), fifo as well.
        ScenarioConfig run = scenario;
        run.seed = w.seed;
        PolicyInstance fifo = registry.create(ConfigNode(YAML::Node("fifo"), config.source, "policy"), policy_context(run));
        CompletedJobs completed;
        run_scenario(run, *fifo.policy, fifo.resolved, RunOptions{}, {&completed});
        if (!completed.jobs.empty()) {
          double sum_s = 0.0;
          for (const BoundJob& j : completed.jobs) sum_s += j.duration_s;
          w.no_wait_bound_s = sum_s / static_cast<double>(completed.jobs.size());
          w.lower_bound_s = mean_jct_lower_bound_s(completed.jobs, completed.num_devices);
        }
      }
      for (const auto& ckpt : sr.checkpoints) {
        ScenarioConfig run = scenario;
        run.seed = w.seed;
        YAML::Node p(YAML::NodeType::Map);
        p["name"] = "rl";
        p["path"] = ckpt;
        const RunResult r = run_scenario(run, registry, RunOptions{}, &p);
        const double jct_s = r.summary.mean_jct_s ? *r.summary.mean_jct_s : NAN;
        w.agent_jct_s.push_back(jct_s);
        w.ratio.push_back(jct_s / w.best_heuristic_jct_s);
        if (!objectives.empty()) w.agent_objectives.push_back(objective_values(r, "the agent " + ckpt, w.seed));
      }
      sr.windows.push_back(std::move(w));
    }
    // The spread over training seeds of each seed's mean ratio over the windows.
    for (std::size_t k = 0; k < sr.checkpoints.size(); ++k) {
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
    if (!scenario.physics) {
      double bound_sum = 0.0;
      for (const auto& w : sr.windows) bound_sum += w.no_wait_bound_s / w.best_heuristic_jct_s;
      sr.no_wait_bound_ratio = bound_sum / static_cast<double>(sr.windows.size());
      double lower_sum = 0.0;
      for (const auto& w : sr.windows) lower_sum += w.lower_bound_s / w.best_heuristic_jct_s;
      sr.lower_bound_ratio = lower_sum / static_cast<double>(sr.windows.size());
    }
    std::ostringstream v;
    const double below = (1.0 - sr.mean_ratio) * 100;
    v << sr.setting.name << (sr.setting.trains() ? "" : " (agents of " + sr.setting.agents + ")") << ": agent mean JCT " << fixed(std::fabs(below), 1)
      << (below >= 0 ? "% below" : "% above") << " the per-window best same-information heuristic (mean ratio " << fixed(sr.mean_ratio, 3) << " over "
      << sr.seed_mean_ratio.size() << " seeds x " << sr.windows.size() << " test windows; seeds " << fixed(sr.min_ratio, 3) << " .. " << fixed(sr.max_ratio, 3)
      << ", std " << fixed(sr.std_ratio, 3) << "); target at least " << fixed(sr.setting.target_below * 100, 1) << "% below: " << (sr.reached ? "REACHED" : "NOT REACHED");
    if (unreachable(sr))
      v << "; no scheduler reaches it, clairvoyant or not: the lower bound on the mean ratio is " << fixed(sr.lower_bound_ratio, 3) << " (the target "
        << fixed(1.0 - sr.setting.target_below, 3) << ")";
    sr.verdict = v.str();
    if (!objectives.empty()) pareto_rows(sr, config.seeds);
    if (log) std::fprintf(log, "rl-bench: %s\n", sr.verdict.c_str());
    result.settings.push_back(std::move(sr));
  }

  // Tables.
  auto scenario_label = [&](const RlBenchSetting& st) { return st.scenario_path.empty() ? config.scenario_label : st.scenario_label; };
  auto agents_label = [&](const RlBenchSetting& st) {
    return st.trains() ? "trained by this setting (" + st.name + "/seed_S/best.pt)" : "those of " + st.agents + " (" + st.agents + "/seed_S/best.pt)";
  };
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
  csv << ",no_wait_bound_s,lower_bound_s\n";  // last: readers of the earlier columns still work
  for (const auto& sr : result.settings) {
    mdw << "## " << sr.setting.name << "\n\nAgents: " << agents_label(sr.setting) << ". Test episodes of " << md(scenario_label(sr.setting))
        << ".\n\nMean JCT (h) per test window; ratio = agent / best heuristic of the window."
        << (std::isnan(sr.no_wait_bound_ratio) ? "" : " No-wait bound: the mean duration of the jobs (h), what mean JCT would be if no job waited (no physics model: every job at rate 1)."
                                                       " Lower bound: no scheduler's mean JCT (h) is lower, clairvoyant or not (sim/jct_lower_bound.hpp: no waiting and the cluster as one"
                                                       " pooled machine by completion rank, or the rate-capped mean-busy-time bound, whichever is larger).")
        << "\n\n| window |";
    for (const auto& h : sr.heuristics) mdw << ' ' << md(h) << " |";
    mdw << " best heuristic |";
    for (auto s : result.seeds) mdw << " agent seed " << s << " |";
    for (auto s : result.seeds) mdw << " ratio seed " << s << " |";
    const bool bound = !std::isnan(sr.no_wait_bound_ratio);
    if (bound) mdw << " no-wait bound | lower bound |";
    mdw << "\n|---|";
    for (std::size_t i = 0; i < sr.heuristics.size() + 1 + 2 * result.seeds.size() + (bound ? 2 : 0); ++i) mdw << "---:|";
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
      csv << ',' << (std::isnan(w.no_wait_bound_s) ? std::string() : num(w.no_wait_bound_s)) << ','
          << (std::isnan(w.lower_bound_s) ? std::string() : num(w.lower_bound_s)) << '\n';
      mdw << "| " << md(w.window) << " (seed " << w.seed << ") |";
      for (double v : w.heuristic_jct_s) mdw << ' ' << fixed(v / 3600, 4) << " |";
      mdw << ' ' << md(w.best_heuristic) << ' ' << fixed(w.best_heuristic_jct_s / 3600, 4) << " |";
      for (double a : w.agent_jct_s) mdw << ' ' << fixed(a / 3600, 4) << " |";
      for (double r : w.ratio) mdw << ' ' << fixed(r, 3) << " |";
      if (bound) mdw << ' ' << fixed(w.no_wait_bound_s / 3600, 4) << " | " << fixed(w.lower_bound_s / 3600, 4) << " |";
      mdw << '\n';
    }
    mdw << '\n';
  }
  // agents and scenario came later: readers of the first nine columns still work.
  sum_csv << "setting,windows,seeds,mean_ratio,min_seed_ratio,max_seed_ratio,std_seed_ratio,target_below,reached,agents,scenario,no_wait_bound_ratio,lower_bound_ratio\n";
  sum_md << "| setting | agents | test episodes of | windows | seeds | mean ratio | min seed | max seed | std over seeds | no-wait bound | lower bound | target below | verdict |\n"
            "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& sr : result.settings) {
    sum_csv << sr.setting.name << ',' << sr.windows.size() << ',' << sr.seed_mean_ratio.size() << ',' << num(sr.mean_ratio) << ',' << num(sr.min_ratio) << ','
            << num(sr.max_ratio) << ',' << num(sr.std_ratio) << ',' << num(sr.setting.target_below) << ',' << (sr.reached ? "true" : "false") << ','
            << sr.setting.agents_setting() << ',' << csv_cell(scenario_label(sr.setting)) << ','
            << (std::isnan(sr.no_wait_bound_ratio) ? std::string() : num(sr.no_wait_bound_ratio)) << ','
            << (std::isnan(sr.lower_bound_ratio) ? std::string() : num(sr.lower_bound_ratio)) << '\n';
    sum_md << "| " << sr.setting.name << " | " << sr.setting.agents_setting() << (sr.setting.trains() ? " (own)" : "") << " | " << md(scenario_label(sr.setting))
           << " | " << sr.windows.size() << " | " << sr.seed_mean_ratio.size() << " | " << fixed(sr.mean_ratio, 3) << " | " << fixed(sr.min_ratio, 3) << " | "
           << fixed(sr.max_ratio, 3) << " | " << fixed(sr.std_ratio, 3) << " | " << (std::isnan(sr.no_wait_bound_ratio) ? std::string("n/a") : fixed(sr.no_wait_bound_ratio, 3))
           << " | " << (std::isnan(sr.lower_bound_ratio) ? std::string("n/a") : fixed(sr.lower_bound_ratio, 3)) << " | " << fixed(sr.setting.target_below * 100, 1) << "% | "
           << (sr.reached ? "reached" : unreachable(sr) ? "unreachable (target under the lower bound)" : "not reached") << " |\n";
  }
  sum_md << "\nRule: a setting is reached when the mean over training seeds of the agent's mean JCT divided by the per-window best same-information "
            "heuristic's is at most 1 - target below. Agents: the setting whose training made them (own: the setting trained them on the benchmark "
            "scenario's training windows with its own set and physics). No-wait bound (settings without a physics model, where every job runs at "
            "rate 1): the mean over windows of the jobs' mean duration over the per-window best heuristic's mean JCT. Lower bound (the same settings): "
            "the same mean for a tighter bound on any scheduler's mean JCT, clairvoyant or not (sim/jct_lower_bound.hpp), the larger of two: "
            "the k-th job to complete does so no earlier than the k-th earliest of arrival + duration, nor than the k-th completion of the cluster as "
            "one machine of all its devices serving GPU-seconds shortest-remaining-first; and each job completes at least half its duration after its "
            "mean busy time, whose sum is at least the optimum of the linear programme where devices are shared fractionally and each job runs at rate "
            "at most 1 on its GPUs (bounded from below through its Lagrangian dual). No scheduler's mean ratio is lower.\n\n";
  for (const auto& sr : result.settings) sum_md << "- " << md(sr.verdict) << '\n';

  // The figure: per setting, the per-window ratio averaged over training seeds, windows
  // sorted by it (x: the fraction of the setting's test windows at or below that ratio), so
  // settings with different window counts share the axis; one line per (setting, seed)
  // was unreadable at 8 settings x 5 seeds. Per-seed values are in windows.csv.
  std::vector<LineSeries> series;
  for (const auto& sr : result.settings) {
    std::vector<double> mean;
    for (const auto& w : sr.windows) {
      double sum = 0.0;
      for (double r : w.ratio) sum += r;
      mean.push_back(w.ratio.empty() ? 0.0 : sum / static_cast<double>(w.ratio.size()));
    }
    std::sort(mean.begin(), mean.end());
    LineSeries l{sr.setting.name + " (mean of " + std::to_string(result.seeds.size()) + (result.seeds.size() == 1 ? " seed)" : " seeds)"), {}};
    for (std::size_t i = 0; i < mean.size(); ++i) l.points.emplace_back(static_cast<double>(i + 1) / static_cast<double>(mean.size()), mean[i]);
    series.push_back(std::move(l));
  }
  series.push_back(LineSeries{"per-window best heuristic (ratio 1)", {{0.0, 1.0}, {1.0, 1.0}}});
  const fs::path out(out_dir);
  write_file_atomically((out / "windows.csv").string(), csv.str());
  write_file_atomically((out / "windows.md").string(), mdw.str());
  write_file_atomically((out / "summary.csv").string(), sum_csv.str());
  write_file_atomically((out / "summary.md").string(), sum_md.str());
  write_file_atomically((out / "ratios.svg").string(),
                        line_svg(series, "fraction of test windows (sorted by ratio)", "agent mean JCT / best heuristic mean JCT (ratio)",
                                 "rl-bench: agent vs per-window best heuristic"));

  // The Pareto report of the settings with objectives.
  std::vector<const RlBenchSettingResult*> multi;
  for (const auto& sr : result.settings) {
    if (!sr.setting.objectives.empty()) multi.push_back(&sr);
  }
  if (multi.empty()) {
    for (const char* f : kParetoFiles) fs::remove(out / f, ec);
    return result;
  }
  std::vector<std::string> all_objectives;  // union in first-seen order: one CSV header
  for (const auto* sr : multi) {
    for (const auto& o : sr->setting.objectives) {
      if (std::find(all_objectives.begin(), all_objectives.end(), o) == all_objectives.end()) all_objectives.push_back(o);
    }
  }
  std::ostringstream pcsv, pmd;
  pcsv << "setting,policy,kind,seed,windows,jct_window_ratio";
  for (const auto& o : all_objectives) pcsv << ",mean_" << csv_stem(o) << ",ratio_" << o << ",best_heuristic_" << o;
  pcsv << ",pareto_optimal\n";
  std::vector<MarkerSeries> points;
  std::vector<std::string> second_objectives;
  for (const auto* sr : multi) {
    const auto& objs = sr->setting.objectives;
    pmd << "## " << sr->setting.name << "\n\nObjectives: " << joined(objs) << ". Means over " << sr->windows.size() << " test windows of "
        << md(scenario_label(sr->setting)) << "; each ratio is the mean over the best heuristic's mean of that objective (";
    for (std::size_t o = 0; o < objs.size(); ++o) pmd << (o ? ", " : "") << objs[o] << ": " << md(sr->best_heuristic_by_objective[o]);
    pmd << "); JCT window ratio = the mean over windows of JCT / the window's best heuristic's JCT (the verdict's ratio). Agents: " << agents_label(sr->setting)
        << ".\n\n| policy |";
    for (const auto& o : objs) pmd << " mean " << md_name(o) << " (" << md_unit(o) << ") | " << md_name(o) << " ratio |";
    pmd << " JCT window ratio | Pareto-optimal |\n|---|";
    for (std::size_t i = 0; i < 2 * objs.size() + 1; ++i) pmd << "---:|";
    pmd << "---|\n";
    MarkerSeries heuristics{sr->setting.name + ": heuristics", {}, {}};
    std::vector<int> alike;  // by heuristic point: how many others share it
    std::vector<MarkerSeries> agents;
    for (const auto& row : sr->pareto) {
      pcsv << sr->setting.name << ',' << row.policy << ',' << (row.agent ? "agent" : "heuristic") << ',' << (row.agent ? std::to_string(row.seed) : std::string())
           << ',' << sr->windows.size() << ',' << num(row.jct_window_ratio);
      for (const auto& o : all_objectives) {
        const auto it = std::find(objs.begin(), objs.end(), o);
        if (it == objs.end()) {
          pcsv << ",,,";
          continue;
        }
        const auto i = static_cast<std::size_t>(it - objs.begin());
        pcsv << ',' << num(row.mean[i]) << ',' << num(row.ratio[i]) << ',' << sr->best_heuristic_by_objective[i];
      }
      pcsv << ',' << (row.pareto_optimal ? "true" : "false") << '\n';
      pmd << "| " << (row.agent ? "agent seed " + std::to_string(row.seed) : md(row.policy)) << " |";
      for (std::size_t o = 0; o < objs.size(); ++o) pmd << ' ' << fixed(md_value(objs[o], row.mean[o]), 4) << " | " << fixed(row.ratio[o], 3) << " |";
      pmd << ' ' << fixed(row.jct_window_ratio, 3) << " | " << (row.pareto_optimal ? "yes" : "no") << " |\n";
      if (row.agent) {
        agents.push_back({sr->setting.name + ": agent seed " + std::to_string(row.seed), {{row.jct_window_ratio, row.ratio[1]}}, {}});
      } else {
        // Heuristics that behave alike on these windows (e.g. fifo and edf without
        // deadlines) share a point: one marker, labelled by the first and their number.
        const std::pair<double, double> xy{row.jct_window_ratio, row.ratio[1]};
        const auto same = std::find(heuristics.points.begin(), heuristics.points.end(), xy);
        if (same == heuristics.points.end()) {
          heuristics.points.push_back(xy);
          heuristics.point_labels.push_back(row.policy);
          alike.push_back(0);
        } else {
          const auto i = static_cast<std::size_t>(same - heuristics.points.begin());
          const std::string first = heuristics.point_labels[i].substr(0, heuristics.point_labels[i].find(" and "));
          heuristics.point_labels[i] = first + " and " + std::to_string(++alike[i]) + " alike";
        }
      }
    }
    pmd << '\n';
    // Names only on the heuristics' first three fronts (front k: what no heuristic of front
    // k or later beats on both axes), the ones near the agents and the trade-off: 30
    // names in the cloud behind them overlapped. pareto.md lists every one.
    const std::vector<int> layer = pareto_layers(heuristics.points);
    for (std::size_t i = 0; i < heuristics.points.size(); ++i) {
      if (layer[i] >= kNamedFronts) heuristics.point_labels[i].clear();
    }
    heuristics.label += " (first " + std::to_string(kNamedFronts) + " fronts named)";
    points.push_back(std::move(heuristics));
    for (auto& a : agents) points.push_back(std::move(a));
    if (std::find(second_objectives.begin(), second_objectives.end(), objs[1]) == second_objectives.end()) second_objectives.push_back(objs[1]);
  }
  pmd << "Pareto-optimal: no other policy of the setting has a mean at least as good in every objective and better in one.\n";
  // One y axis: named after the second objective when every setting shares it.
  const std::string y = second_objectives.size() == 1 ? "mean " + second_objectives[0] + " / best heuristic's (ratio)"
                                                      : "mean second objective / best heuristic's (ratio)";
  write_file_atomically((out / "pareto.csv").string(), pcsv.str());
  write_file_atomically((out / "pareto.md").string(), pmd.str());
  write_file_atomically((out / "pareto.svg").string(), marker_scatter_svg(points, "mean JCT / per-window best heuristic's (ratio)", y,
                                                                          "rl-bench: JCT vs " + (second_objectives.size() == 1 ? second_objectives[0] : "second objective"),
                                                                          1.0, 1.0));
  return result;
}

}  // namespace schedsim::rl
