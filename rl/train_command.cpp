#include "rl/train_command.hpp"

#include "run/progress.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <unistd.h>

#include "run/runner.hpp"
#include "base/svg_plot.hpp"
#include "rl/heuristic_baseline.hpp"
#include "rl/learner.hpp"
#include "base/error.hpp"

namespace schedsim::rl {
namespace {

// The last three columns (the best same-information heuristic on the evaluation episodes)
// came later: older readers that take the first eleven still work.
const char* const kCsvHeader =
    "step,update,episodes,mean_return,mean_jct_s,eval_mean_jct_s,policy_loss,value_loss,entropy,approx_kl,lr,best_heuristic,best_heuristic_mean_jct_s,"
    "eval_ratio_to_best_heuristic";

std::string num(double v) {
  if (!std::isfinite(v)) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string json_num(double v) { return std::isfinite(v) ? num(v) : "null"; }

struct CurveRow {
  UpdateStats s;
  double eval_mean_jct_s = NAN;
  std::string best_heuristic;  // evaluation rows with baseline: same_information
  double best_heuristic_mean_jct_s = NAN;
  double ratio() const { return eval_mean_jct_s / best_heuristic_mean_jct_s; }
};

std::string csv_row(const CurveRow& r) {
  std::ostringstream o;
  o << r.s.step << ',' << r.s.update << ',' << r.s.episodes << ',' << num(r.s.mean_return) << ',' << num(r.s.mean_jct_s) << ','
    << num(r.eval_mean_jct_s) << ',' << num(r.s.policy_loss) << ',' << num(r.s.value_loss) << ',' << num(r.s.entropy) << ','
    << num(r.s.approx_kl) << ',' << num(r.s.lr) << ',' << r.best_heuristic << ',' << num(r.best_heuristic_mean_jct_s) << ',' << num(r.ratio());
  return o.str();
}

std::string jsonl_row(const CurveRow& r) {
  std::ostringstream o;
  o << "{\"step\": " << r.s.step << ", \"update\": " << r.s.update << ", \"episodes\": " << r.s.episodes
    << ", \"mean_return\": " << json_num(r.s.mean_return) << ", \"mean_jct_s\": " << json_num(r.s.mean_jct_s)
    << ", \"eval_mean_jct_s\": " << json_num(r.eval_mean_jct_s) << ", \"policy_loss\": " << json_num(r.s.policy_loss)
    << ", \"value_loss\": " << json_num(r.s.value_loss) << ", \"entropy\": " << json_num(r.s.entropy)
    << ", \"approx_kl\": " << json_num(r.s.approx_kl) << ", \"lr\": " << json_num(r.s.lr) << ", \"best_heuristic\": ";
  if (r.best_heuristic.empty()) o << "null";
  else o << '"' << r.best_heuristic << '"';
  o << ", \"best_heuristic_mean_jct_s\": " << json_num(r.best_heuristic_mean_jct_s) << ", \"eval_ratio_to_best_heuristic\": " << json_num(r.ratio()) << "}";
  return o.str();
}

// Lines of `path` (without the header for CSV) whose update number is <= `updates`:
// what a resumed run keeps of the curve it continues.
std::vector<std::string> kept_lines(const std::string& path, std::int64_t updates, bool csv) {
  std::vector<std::string> out;
  std::ifstream in(path);
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (csv && first) {
      first = false;
      continue;
    }
    std::int64_t u = 0;
    if (csv) {
      const auto c1 = line.find(',');
      if (c1 == std::string::npos) continue;
      u = std::atoll(line.c_str() + c1 + 1);
    } else {
      const auto p = line.find("\"update\": ");
      if (p == std::string::npos) continue;
      u = std::atoll(line.c_str() + p + 10);
    }
    if (u <= updates) out.push_back(line);
  }
  return out;
}

// Test hook (docs/rl_agents.md): SCHEDSIM_DIST_TEST_DIE_AFTER_UPDATE=U makes the last rank
// of a multi-process run exit with status 3 right after update U, as a crashed worker.
void maybe_die_for_test(const DistConfig& dist, std::int64_t update) {
  const char* v = std::getenv("SCHEDSIM_DIST_TEST_DIE_AFTER_UPDATE");
  if (v == nullptr || dist.world_size < 2 || dist.rank != dist.world_size - 1) return;
  if (std::atoll(v) == update) {
    std::fprintf(stderr, "schedsim train: rank %d exits after update %lld (SCHEDSIM_DIST_TEST_DIE_AFTER_UPDATE)\n", dist.rank,
                 static_cast<long long>(update));
    std::_Exit(3);
  }
}

// The bar's text is experiments/progress.hpp's train_bar_text (tested without LibTorch):
// it clamps the step and the ETA, as the last update may end past total_steps.
// On a terminal the bar is rewritten in place; otherwise (a batch job's log) a plain line
// every style.interval_s.
void progress_bar(std::FILE* out, bool terminal, std::int64_t step, std::int64_t total, double elapsed_s, std::int64_t start_step, double eval_jct_s) {
  const std::string text = train_bar_text(step, total, elapsed_s, start_step, eval_jct_s);
  if (terminal) std::fprintf(out, "\r%s   ", text.c_str());
  else std::fprintf(out, "train: %s\n", text.c_str());
  std::fflush(out);
}

// train.early_stop: counts evaluations in a row that did not beat the reference (the
// best evaluation that counted as an improvement) by more than min_delta of it.
class EarlyStopper {
 public:
  EarlyStopper(int patience, double min_delta) : patience_(patience), min_delta_(min_delta) {}
  // True when training should stop after this evaluation.
  bool observe(double mean_jct_s) {
    if (patience_ <= 0 || !std::isfinite(mean_jct_s)) return false;
    if (!std::isfinite(reference_s_) || mean_jct_s < reference_s_ * (1.0 - min_delta_)) {
      reference_s_ = mean_jct_s;
      stalls_ = 0;
      return false;
    }
    return ++stalls_ >= patience_;
  }
  int stalls() const { return stalls_; }

 private:
  int patience_;
  double min_delta_;
  double reference_s_ = std::numeric_limits<double>::infinity();
  int stalls_ = 0;
};

}  // namespace

TrainOutcome train_agent(const ScenarioConfig& scenario_in, const TrainOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const TrainConfig config = TrainConfig::parse(ConfigNode(scenario_in.train_yaml, scenario_in.source, "train"));
  // A windowed trace (workload.trace.windows): training episodes replay training windows
  // and evaluations (checkpoint selection) validation windows, whatever `use` says; the
  // test windows are left for `schedsim run`/`compare`. Both copies share the trace read.
  auto with_split = [&](WindowSplit split) {
    ScenarioConfig s = scenario_in;
    if (s.workload.trace && s.workload.trace->windows) s.workload.trace->windows->use = split;
    return std::make_shared<const ScenarioConfig>(std::move(s));
  };
  auto scenario = with_split(WindowSplit::kTrain);
  auto eval_scenario = with_split(WindowSplit::kValidation);
  const EnvConfig env_config = EnvConfig::from_scenario(*scenario);
  BatchEnvFactory make_env = [scenario, env_config, threads = config.env_threads](int n) {
    return make_vector_batch_env(scenario, env_config, n, threads);
  };
  BatchEnvFactory make_eval_env = [eval_scenario, env_config, threads = config.env_threads](int n) {
    return make_vector_batch_env(eval_scenario, env_config, n, threads);
  };

  namespace fs = std::filesystem;
  const fs::path out(options.out_dir);
  const std::string checkpoint = (out / "checkpoint.pt").string();
  const std::string csv_path = (out / "learning_curve.csv").string(), jsonl_path = (out / "learning_curve.jsonl").string();
  if (options.resume && !fs::exists(checkpoint))
    throw InputError("--resume", "no checkpoint to resume from at " + checkpoint + " (train once without --resume first)");
  // Only rank 0 writes: the other ranks' copies of every statistic are identical.
  const bool writer = options.dist.rank == 0;

  Learner learner(config, make_env, options.dist);  // first: a bad setting leaves no folder behind
  std::vector<std::string> csv_lines, jsonl_lines;
  if (options.resume) {
    learner.load_checkpoint(checkpoint);
    csv_lines = kept_lines(csv_path, learner.updates(), true);
    jsonl_lines = kept_lines(jsonl_path, learner.updates(), false);
  }
  std::ofstream csv, jsonl;
  if (writer) {
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) throw InputError(options.out_dir, "cannot create the output folder: " + ec.message());
    csv.open(csv_path, std::ios::trunc);
    jsonl.open(jsonl_path, std::ios::trunc);
    if (!csv || !jsonl) throw InputError(options.out_dir, "cannot write the learning curve files there");
    csv << kCsvHeader << '\n';
    for (const auto& l : csv_lines) csv << l << '\n';
    for (const auto& l : jsonl_lines) jsonl << l << '\n';
    csv.flush();
    jsonl.flush();
  }

  const ProgressStyle style = options.progress_style ? *options.progress_style : progress_style_from_environment();
  const bool show = writer && options.progress && style.interval_s > 0;
  double last_line_s = -std::numeric_limits<double>::infinity();
  const std::string best = (out / "best.pt").string();
  TrainOutcome outcome;
  // A whole trace replays the same jobs whatever the seed: its evaluation episodes are the
  // training episodes again, and the log says so instead of "held out". Trace windows
  // evaluate on validation windows, which training never replays.
  outcome.eval_held_out = !scenario->workload.trace.has_value() || scenario->workload.trace->windows.has_value();
  // Resumed: the best so far is the best evaluation row of the kept learning curve, so
  // best.pt is replaced only by a better one (a resumed run of an older version without
  // best.pt starts afresh).
  for (const auto& line : fs::exists(best) ? csv_lines : std::vector<std::string>{}) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    if (f.size() < 6 || f[5].empty()) continue;
    const double jct_s = std::atof(f[5].c_str());
    if (!outcome.best_eval_mean_jct_s || jct_s < *outcome.best_eval_mean_jct_s) {
      outcome.best_eval_mean_jct_s = jct_s;
      outcome.best_eval_step = std::atoll(f[0].c_str());
    }
  }
  EarlyStopper stopper(config.early_stop_patience, config.early_stop_min_delta);
  for (const auto& line : csv_lines) {  // a resumed run continues the count
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    if (f.size() >= 6 && !f[5].empty()) stopper.observe(std::atof(f[5].c_str()));
  }
  // The same-information heuristics on the evaluation episodes: scored once (the episodes
  // are the same at every evaluation), by the writer only (only it logs them).
  std::optional<std::vector<HeuristicScore>> baseline;
  auto best_baseline = [&]() -> const HeuristicScore* {
    if (!config.baseline_heuristics || !writer) return nullptr;
    if (!baseline) {
      const PolicyRegistry registry = builtin_policies();
      baseline = score_heuristics(*eval_scenario, registry, same_information_heuristics(*eval_scenario, registry), config.eval_seed_start,
                                  config.eval_episodes);
      for (const auto& h : *baseline) {
        if (!h.error.empty() && options.progress) std::fprintf(options.progress_out, "train: warning: heuristic %s left out of the baseline: %s\n", h.name.c_str(), h.error.c_str());
      }
    }
    return best_heuristic(*baseline);
  };
  const char* eval_kind = scenario->workload.trace && scenario->workload.trace->windows ? "validation" : outcome.eval_held_out ? "held-out" : "training-trace";
  bool stop_early = false;
  const std::int64_t start_step = learner.steps();
  std::int64_t next_eval = config.eval_every > 0 ? (learner.steps() / config.eval_every + 1) * config.eval_every : config.total_steps;
  std::int64_t next_checkpoint = (learner.steps() / config.checkpoint_every + 1) * config.checkpoint_every;
  double last_eval = NAN;
  while (!learner.finished() && !stop_early) {
    CurveRow row;
    row.s = learner.update();
    if (learner.steps() >= next_eval || learner.finished()) {
      row.eval_mean_jct_s = learner.evaluate(make_eval_env, config.eval_seed_start, config.eval_episodes).mean_jct_s;
      if (const HeuristicScore* b = best_baseline()) {
        row.best_heuristic = b->name;
        row.best_heuristic_mean_jct_s = b->mean_jct_s;
        outcome.best_heuristic = b->name;
        outcome.best_heuristic_mean_jct_s = b->mean_jct_s;
      }
      stop_early = stopper.observe(row.eval_mean_jct_s);
      last_eval = row.eval_mean_jct_s;
      outcome.eval_mean_jct_s = last_eval;
      if (std::isfinite(last_eval) && (!outcome.best_eval_mean_jct_s || last_eval < *outcome.best_eval_mean_jct_s)) {
        outcome.best_eval_mean_jct_s = last_eval;
        outcome.best_eval_step = learner.steps();
        if (writer) learner.save_checkpoint(best);
      }
      while (next_eval <= learner.steps()) next_eval += config.eval_every > 0 ? config.eval_every : config.total_steps;
    }
    if (writer) {
      csv << csv_row(row) << '\n';
      jsonl << jsonl_row(row) << '\n';
      csv.flush();
      jsonl.flush();
    }
    const bool last = learner.finished() || stop_early;
    if (learner.steps() >= next_checkpoint || last) {
      if (writer) learner.save_checkpoint(checkpoint);
      while (next_checkpoint <= learner.steps()) next_checkpoint += config.checkpoint_every;
    }
    maybe_die_for_test(options.dist, learner.updates());
    if (show) {
      const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (style.terminal || el - last_line_s >= style.interval_s || last) {
        progress_bar(options.progress_out, style.terminal, learner.steps(), config.total_steps, el, start_step, last_eval);
        last_line_s = el;
      }
    }
    if (show && std::isfinite(row.eval_mean_jct_s)) {
      if (style.terminal) std::fprintf(options.progress_out, "\n");
      std::fprintf(options.progress_out, "train: evaluation at step %lld: %s mean JCT %.4f h", static_cast<long long>(learner.steps()), eval_kind,
                   row.eval_mean_jct_s / 3600);
      if (!row.best_heuristic.empty())
        std::fprintf(options.progress_out, "; best same-information heuristic %s %.4f h (ratio %.3f)", row.best_heuristic.c_str(), row.best_heuristic_mean_jct_s / 3600,
                     row.ratio());
      std::fprintf(options.progress_out, "\n");
    }
    if (stop_early) {
      std::ostringstream why;
      why << "stopped early at step " << learner.steps() << ": " << eval_kind << " mean JCT did not improve by more than " << config.early_stop_min_delta * 100
          << "% for " << config.early_stop_patience << " evaluations";
      outcome.early_stop = why.str();
      if (show) std::fprintf(options.progress_out, "train: %s\n", outcome.early_stop.c_str());
    }
  }
  if (show && style.terminal) std::fprintf(options.progress_out, "\n");
  outcome.steps = learner.steps();
  outcome.updates = learner.updates();
  if (!writer) {
    outcome.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return outcome;
  }
  csv.close();
  jsonl.close();
  learner.export_torchscript((out / "policy.ts").string());

  // The figure, from the whole curve (resumed runs included).
  LineSeries train{"training episodes", {}},
      held_out{outcome.eval_held_out ? "held-out evaluation (greedy)" : "evaluation on the training trace (greedy)", {}};
  for (const auto& line : kept_lines(csv_path, learner.updates(), true)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) f.push_back(cell);
    while (f.size() < 6) f.emplace_back();
    const double step = std::atof(f[0].c_str());
    if (!f[4].empty()) train.points.emplace_back(step, std::atof(f[4].c_str()) / 3600);
    if (!f[5].empty()) held_out.points.emplace_back(step, std::atof(f[5].c_str()) / 3600);
  }
  write_file_atomically((out / "learning_curve.svg").string(),
                        line_svg({train, held_out}, "agent steps", "mean JCT (h)",
                                 std::string("Learning curve (") + to_string(config.algorithm) + ")"));
  outcome.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return outcome;
}

}  // namespace schedsim::rl
