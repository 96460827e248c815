// `schedsim train` end to end on the RL default scenario (small workloads), the train:
// map's validation, and the rl policy: a run under rl:CHECKPOINT makes exactly the
// decisions of a greedy episode of the environment.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <fstream>
#include <sstream>

#include "run/runner.hpp"
#include "rl/heuristic_baseline.hpp"
#include "rl/learner.hpp"
#include "rl/train_command.hpp"
#include "base/error.hpp"

using namespace schedsim;
using namespace schedsim::rl;

namespace {

const std::string kConfigs = std::string(SCHEDSIM_SOURCE_DIR) + "/experiments/configs/";

PolicyRegistry registry_with_rl() {
  PolicyRegistry r = builtin_policies();
  register_rl_policy(r);
  return r;
}

// rl_train.yaml with a small workload and a short run.
ScenarioConfig small_training(const std::vector<std::string>& extra = {}, const std::string& path = kConfigs + "rl_train.yaml") {
  std::vector<std::string> o = {"workload.synthetic.num_jobs=30", "train.total_steps=150", "train.num_envs=2", "train.eval_episodes=2",
                                "train.eval_every=0",           "train.minibatch=64",    "train.hidden=[16]",
                                "train.input_baseline=0"};
  o.insert(o.end(), extra.begin(), extra.end());
  return load_scenario(path, o, std::nullopt, registry_with_rl());
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("train: keys are validated with clear messages", "[rl][train][config]") {
  auto parse = [](const std::string& yaml) { return TrainConfig::parse(ConfigNode::load_string(yaml, "t.yaml")); };
  CHECK(parse("{}").algorithm == Algorithm::kPpo);
  CHECK(parse("{algorithm: a2c, hidden: [8, 4]}").hidden == std::vector<int>{8, 4});
  CHECK_THROWS_WITH(parse("{total_step: 5}"), Catch::Contains("unknown key 'total_step'") && Catch::Contains("total_steps"));
  CHECK_THROWS_WITH(parse("{algorithm: dqn}"), Catch::Contains("ppo"));
  CHECK_THROWS_WITH(parse("{gamma: 1.5}"), Catch::Contains("[0, 1]"));
  CHECK_THROWS_WITH(parse("{hidden: []}"), Catch::Contains("layer widths"));
  CHECK_THROWS_WITH(parse("{eval_seed_start: 995, eval_episodes: 8}"), Catch::Contains("held out"));
  CHECK_THROWS_WITH(parse("{device: tpu}"), Catch::Contains("cuda"));
}

TEST_CASE("train: an output folder that cannot be created is one clear error", "[rl][train][errors]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "schedsim_test_train_out";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "file") << "x";
  const std::string out = (dir / "file" / "out").string();  // under a regular file
  CHECK_THROWS_WITH(train_agent(small_training(), TrainOptions{out, false, false, {}}), out + ": cannot create the output folder: Not a directory");
  fs::remove_all(dir);
}

TEST_CASE("rl_train.yaml is rl_default.yaml plus the train map", "[rl][train][config]") {
  const PolicyRegistry reg = registry_with_rl();
  const ScenarioConfig a = load_scenario(kConfigs + "rl_default.yaml", {}, std::nullopt, reg);
  const ScenarioConfig b = load_scenario(kConfigs + "rl_train.yaml", {}, std::nullopt, reg);
  YAML::Emitter ea, eb;
  ea << a.to_yaml(a.policy);
  eb << b.to_yaml(b.policy);
  CHECK(std::string(ea.c_str()) == std::string(eb.c_str()));
  CHECK(b.train_yaml.IsMap());
  CHECK(a.train_yaml.IsNull());
}

TEST_CASE("Single-threaded training writes identical learning curves for a seed", "[rl][train][determinism]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "schedsim_test_train_det";
  fs::remove_all(dir);
  const ScenarioConfig s = small_training();
  const TrainOutcome a = train_agent(s, TrainOptions{(dir / "a").string(), false, false, {}});
  train_agent(s, TrainOptions{(dir / "b").string(), false, false, {}});
  const std::string csv = slurp(dir / "a" / "learning_curve.csv");
  CHECK(csv == slurp(dir / "b" / "learning_curve.csv"));
  CHECK(slurp(dir / "a" / "learning_curve.jsonl") == slurp(dir / "b" / "learning_curve.jsonl"));
  CHECK(a.steps >= 150);
  REQUIRE(a.eval_mean_jct_s);
  CHECK(*a.eval_mean_jct_s > 0);
  CHECK(csv.rfind("step,update,episodes,mean_return,mean_jct_s,eval_mean_jct_s,", 0) == 0);
  CHECK(fs::exists(dir / "a" / "checkpoint.pt"));
  CHECK(fs::exists(dir / "a" / "policy.ts"));
  CHECK(slurp(dir / "a" / "learning_curve.svg").find("<polyline") != std::string::npos);

  // --resume continues: the curve keeps its rows and grows to the new total.
  const ScenarioConfig longer = small_training({"train.total_steps=300"});
  const TrainOutcome r = train_agent(longer, TrainOptions{(dir / "a").string(), true, false, {}});
  CHECK(r.updates > a.updates);
  const std::string resumed = slurp(dir / "a" / "learning_curve.csv");
  CHECK(resumed.compare(0, csv.size(), csv) == 0);
  CHECK_THROWS_WITH(train_agent(s, TrainOptions{(dir / "none").string(), true, false, {}}), Catch::Contains("no checkpoint to resume from"));
  fs::remove_all(dir);
}

TEST_CASE("train keeps the best evaluation's weights in best.pt and prints plain progress lines off a terminal", "[rl][train]") {
  // Before, checkpoint.pt (the last weights) was all there was, and no progress at all was
  // printed when stderr was not a terminal (a batch job's log stayed empty).
  const auto dir = std::filesystem::temp_directory_path() / "schedsim_train_best";
  std::filesystem::remove_all(dir);
  // Rollouts of 20 steps: several updates, an evaluation after each.
  const ScenarioConfig s = small_training({"train.eval_every=20", "train.rollout_steps=20"});
  TrainOptions options{dir.string(), false, true, {}};
  options.progress_style = ProgressStyle{false, 1e-9};  // a line at every update
  std::FILE* log = std::tmpfile();
  REQUIRE(log);
  options.progress_out = log;
  const TrainOutcome o = train_agent(s, options);
  CHECK(std::filesystem::exists(dir / "best.pt"));
  CHECK(std::filesystem::exists(dir / "checkpoint.pt"));
  CHECK(o.eval_held_out);  // a synthetic workload: other seeds, other jobs
  // The best is the lowest evaluation of the learning curve, at its step.
  std::istringstream curve(slurp(dir / "learning_curve.csv"));
  std::string line;
  std::getline(curve, line);
  double best_s = std::numeric_limits<double>::infinity();
  long long best_step = -1;
  int evals = 0;
  while (std::getline(curve, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    if (f.size() < 6 || f[5].empty()) continue;
    ++evals;
    if (std::stod(f[5]) < best_s) {
      best_s = std::stod(f[5]);
      best_step = std::stoll(f[0]);
    }
  }
  CHECK(evals >= 3);
  REQUIRE(o.best_eval_mean_jct_s);
  CHECK(*o.best_eval_mean_jct_s == Approx(best_s).epsilon(1e-6));  // the CSV's precision
  CHECK(o.best_eval_step == best_step);
  // best.pt holds the weights that gave that evaluation: evaluated again, the same number.
  auto scenario = std::make_shared<const ScenarioConfig>(s);
  const EnvConfig env = EnvConfig::from_scenario(*scenario);
  const TrainConfig tc = TrainConfig::parse(ConfigNode(s.train_yaml, s.source, "train"));
  auto make = [&](int n) { return make_vector_batch_env(scenario, env, n, tc.env_threads); };
  Learner learner(tc, make);
  learner.load_checkpoint((dir / "best.pt").string());
  CHECK(learner.steps() == o.best_eval_step);
  CHECK(learner.evaluate(make, tc.eval_seed_start, tc.eval_episodes).mean_jct_s == Approx(*o.best_eval_mean_jct_s).epsilon(1e-12));
  // Progress: plain lines (no carriage return), one per update, the last at the total.
  std::rewind(log);
  std::string text;
  for (int c; (c = std::fgetc(log)) != EOF;) text.push_back(static_cast<char>(c));
  std::fclose(log);
  CHECK(text.find('\r') == std::string::npos);
  CHECK(text.rfind("train: [", 0) == 0);
  // One bar line per update; since issue 25 also one line per evaluation (the agent
  // against the best same-information heuristic).
  std::int64_t bar_lines = 0;
  for (std::size_t p = text.find("train: ["); p != std::string::npos; p = text.find("train: [", p + 1)) ++bar_lines;
  CHECK(bar_lines == o.updates);
  CHECK(static_cast<std::int64_t>(std::count(text.begin(), text.end(), '\n')) == o.updates + evals);
  CHECK(text.find("step 150/150") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("train on a trace workload does not call its evaluation held out", "[rl][train]") {
  // A trace replays the same jobs whatever the seed: before, the log and the figure still
  // said "held-out" for evaluation episodes that were the training trace again.
  const auto dir = std::filesystem::temp_directory_path() / "schedsim_train_trace";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    std::ofstream t(dir / "t.csv");
    t << "job_id,submit_time_s,num_gpus,duration_s,estimate_s,model\n";
    for (int i = 0; i < 20; ++i) t << "j" << i << "," << i * 300 << "," << (i % 3 == 0 ? 8 : 2) << "," << 1800 + 100 * i << "," << 2000 << ",ResNet-50\n";
  }
  const ScenarioConfig s = small_training({"workload={trace: {path: '" + (dir / "t.csv").string() + "', format: schedsim}}", "train.eval_every=0"});
  const TrainOutcome o = train_agent(s, TrainOptions{(dir / "out").string(), false, false, {}});
  CHECK_FALSE(o.eval_held_out);
  const std::string svg = slurp(dir / "out" / "learning_curve.svg");
  CHECK(svg.find("evaluation on the training trace (greedy)") != std::string::npos);
  CHECK(svg.find("held-out") == std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("train on trace windows trains on the training split and evaluates on the validation split", "[rl][train][windows]") {
  // 60 jobs in 6 windows of 10: train 0.6 -> windows 0-2, validation 0.2 -> window 3, test
  // 4-5. Window 3's jobs have 100,000 s of work, every other job 1,000 s (the cluster's
  // devices run ResNet-50 about 2.6x faster than the reference): an evaluation mean JCT
  // above 20,000 s shows the validation window was replayed, training episodes below it
  // that they never were.
  const auto dir = std::filesystem::temp_directory_path() / "schedsim_train_windows";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    std::ofstream t(dir / "t.csv");
    t << "job_id,submit_time_s,num_gpus,duration_s,estimate_s,model\n";
    for (int i = 0; i < 60; ++i) t << "j" << i << "," << i * 300 << ",2," << (i / 10 == 3 ? 100000 : 1000) << ",2000,ResNet-50\n";
  }
  const ScenarioConfig s =
      small_training({"workload={trace: {path: '" + (dir / "t.csv").string() + "', format: schedsim, windows: {jobs: 10}}}", "train.eval_every=0"});
  const TrainOutcome o = train_agent(s, TrainOptions{(dir / "out").string(), false, false, {}});
  CHECK(o.eval_held_out);
  REQUIRE(o.eval_mean_jct_s.has_value());
  CHECK(*o.eval_mean_jct_s > 20000.0);
  std::ifstream curve(dir / "out" / "learning_curve.csv");
  std::string line;
  std::getline(curve, line);  // header: step, update, episodes, mean_return, mean_jct_s, ...
  int rows = 0;
  while (std::getline(curve, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    REQUIRE(f.size() > 4);
    if (f[4].empty()) continue;  // no episode ended in this update
    CHECK(std::atof(f[4].c_str()) < 20000.0);
    ++rows;
  }
  CHECK(rows > 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("A run under rl:CHECKPOINT makes the greedy environment episode's decisions", "[rl][train][policy]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "schedsim_test_rl_policy";
  fs::remove_all(dir);
  // Preemption rows on top of rl_train.yaml's migration rows: the equivalence covers the
  // agent's preemptions (this short-trained agent moves no job on these seeds).
  ScenarioConfig s = small_training({"env.preempt_rows=4"});
  train_agent(s, TrainOptions{dir.string(), false, false, {}});
  const std::string ckpt = (dir / "checkpoint.pt").string();

  auto scenario = std::make_shared<const ScenarioConfig>(s);
  const EnvConfig env = EnvConfig::from_scenario(*scenario);
  TrainConfig tc;
  tc.hidden = {16};
  tc.num_envs = 1;
  Learner learner(tc, [&](int n) { return make_vector_batch_env(scenario, env, n, 1); });
  learner.load_checkpoint(ckpt);
  const PolicyRegistry reg = registry_with_rl();
  std::uint64_t preemptions = 0;
  for (std::uint64_t seed : {3u, 4u}) {
    const EvalStats greedy = learner.evaluate([&](int n) { return make_vector_batch_env(scenario, env, n, 1); }, seed, 1);
    ScenarioConfig run = s;
    run.seed = seed;
    const YAML::Node policy = YAML::Load("{name: rl, path: '" + ckpt + "'}");
    const RunResult r = run_scenario(run, reg, RunOptions{}, &policy);
    INFO("seed " << seed);
    REQUIRE(r.summary.mean_jct_s);
    CHECK(r.summary.jobs_completed == 30);
    CHECK(*r.summary.mean_jct_s == Approx(greedy.mean_jct_s).epsilon(1e-12));
    preemptions += r.summary.preemptions;
  }
  CHECK(preemptions > 0);
  // The short form and a bad path.
  CHECK(reg.create("rl:" + ckpt).policy->name() == "rl");
  CHECK_THROWS_WITH(reg.create("rl:/nonexistent.pt"), Catch::Contains("no such checkpoint file"));
  CHECK_THROWS_WITH(reg.create("rl"), Catch::Contains("needs a checkpoint"));
  fs::remove_all(dir);
}

TEST_CASE("The shipped agent's mean JCT on rl_default.yaml is fixed (golden)", "[rl][train][golden]") {
  // experiments/agents/default.pt on the held-out workload of seed 1 (see
  // experiments/agents/README.md: retrain and update this number when the environment's
  // features change). 2742.42 s since the issue-25 recipe (attained-service features,
  // migration rows instead of preemption rows, input-driven baseline); the agent before
  // it, with preemption rows, had 2935.12 s.
  const PolicyRegistry reg = registry_with_rl();
  const ScenarioConfig s = load_scenario(kConfigs + "rl_default.yaml", {}, 1, reg);
  const YAML::Node policy = YAML::Load("{name: rl, path: '" + std::string(SCHEDSIM_SOURCE_DIR) + "/experiments/agents/default.pt'}");
  const RunResult r = run_scenario(s, reg, RunOptions{}, &policy);
  REQUIRE(r.summary.mean_jct_s);
  CHECK(r.summary.jobs_completed == 200);
  CHECK(*r.summary.mean_jct_s == Approx(2742.416044025).epsilon(1e-9));
}

namespace {

// The learning curve's rows, split into cells (the header first).
std::vector<std::vector<std::string>> csv_rows(const std::filesystem::path& p) {
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

}  // namespace

TEST_CASE("same_information_heuristics: the heuristics the scenario's information level serves", "[rl][train][baseline]") {
  const PolicyRegistry reg = builtin_policies();
  auto names = [&](const std::string& information) {
    return same_information_heuristics(small_training({"information=" + information}), reg);
  };
  const auto oracle = names("oracle"), none = names("none");
  auto has = [](const std::vector<std::string>& v, const std::string& n) { return std::find(v.begin(), v.end(), n) != v.end(); };
  CHECK(has(oracle, "srtf"));
  CHECK(has(oracle, "sjf"));
  CHECK(has(oracle, "fifo"));
  CHECK(has(none, "fifo"));
  CHECK(has(none, "las"));
  CHECK_FALSE(has(none, "sjf"));
  CHECK_FALSE(has(none, "srtf"));
  CHECK_FALSE(has(oracle, "rl"));  // needs a checkpoint
  CHECK(none.size() < oracle.size());
}

TEST_CASE("train logs the agent against the best same-information heuristic at every evaluation", "[rl][train][baseline]") {
  const auto dir = std::filesystem::temp_directory_path() / "schedsim_train_baseline";
  std::filesystem::remove_all(dir);
  const ScenarioConfig s = small_training({"train.eval_every=20", "train.rollout_steps=20"});
  TrainOptions options{dir.string(), false, true, {}};
  options.progress_style = ProgressStyle{false, 1e-9};
  std::FILE* log = std::tmpfile();
  REQUIRE(log);
  options.progress_out = log;
  const TrainOutcome o = train_agent(s, options);
  // The yardstick computed here: every heuristic of the level on the evaluation seeds.
  const PolicyRegistry reg = builtin_policies();
  const TrainConfig tc = TrainConfig::parse(ConfigNode(s.train_yaml, s.source, "train"));
  const auto scores = score_heuristics(s, reg, same_information_heuristics(s, reg), tc.eval_seed_start, tc.eval_episodes);
  const HeuristicScore* best = best_heuristic(scores);
  REQUIRE(best != nullptr);
  for (const auto& h : scores) {
    if (std::isfinite(h.mean_jct_s)) CHECK(best->mean_jct_s <= h.mean_jct_s);
  }
  // The best heuristic's mean is the mean of `schedsim run --seed S --policy NAME` over the seeds.
  double sum_s = 0.0;
  for (int e = 0; e < tc.eval_episodes; ++e) {
    ScenarioConfig run = s;
    run.seed = tc.eval_seed_start + static_cast<std::uint64_t>(e);
    const YAML::Node policy(best->name);
    sum_s += *run_scenario(run, reg, RunOptions{}, &policy).summary.mean_jct_s;
  }
  CHECK(best->mean_jct_s == Approx(sum_s / tc.eval_episodes).epsilon(1e-12));
  CHECK(o.best_heuristic == best->name);
  REQUIRE(o.best_heuristic_mean_jct_s);
  CHECK(*o.best_heuristic_mean_jct_s == best->mean_jct_s);
  // The CSV: the old columns first, three new ones at the end, filled on evaluation rows.
  const auto rows = csv_rows(dir / "learning_curve.csv");
  REQUIRE(rows.size() > 2);
  CHECK(rows[0].size() == 14u);
  CHECK(rows[0][5] == "eval_mean_jct_s");
  CHECK(rows[0][11] == "best_heuristic");
  CHECK(rows[0][12] == "best_heuristic_mean_jct_s");
  CHECK(rows[0][13] == "eval_ratio_to_best_heuristic");
  int evals = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    REQUIRE(rows[i].size() == 14u);
    if (rows[i][5].empty()) {
      CHECK(rows[i][11].empty());
      continue;
    }
    ++evals;
    CHECK(rows[i][11] == best->name);
    CHECK(std::stod(rows[i][12]) == Approx(best->mean_jct_s).epsilon(1e-8));
    CHECK(std::stod(rows[i][13]) == Approx(std::stod(rows[i][5]) / best->mean_jct_s).epsilon(1e-7));
  }
  CHECK(evals >= 3);
  // The log: one line per evaluation with the agent, the heuristic and the ratio.
  std::rewind(log);
  std::string text;
  for (int c; (c = std::fgetc(log)) != EOF;) text.push_back(static_cast<char>(c));
  std::fclose(log);
  std::size_t eval_lines = 0;
  for (std::size_t p = text.find("train: evaluation at step "); p != std::string::npos; p = text.find("train: evaluation at step ", p + 1)) ++eval_lines;
  CHECK(eval_lines == static_cast<std::size_t>(evals));
  CHECK(text.find("validation mean JCT") == std::string::npos);  // a synthetic workload: held-out seeds
  CHECK(text.find(" held-out mean JCT ") != std::string::npos);
  CHECK(text.find("; best same-information heuristic " + best->name + " ") != std::string::npos);
  CHECK(text.find("stopped early") == std::string::npos);  // early_stop is off by default
  CHECK(o.early_stop.empty());
  CHECK(o.steps >= 150);
  std::filesystem::remove_all(dir);
}

TEST_CASE("train.early_stop stops after patience evaluations without improvement and says so", "[rl][train][early-stop]") {
  const auto dir = std::filesystem::temp_directory_path() / "schedsim_train_early_stop";
  std::filesystem::remove_all(dir);
  // min_delta 1: no evaluation can beat the first by 100%, so the second evaluation stalls
  // and patience 1 stops there: updates of 2 x 20 steps, evaluations at 40 and 80 of 150.
  const ScenarioConfig s =
      small_training({"train.eval_every=20", "train.rollout_steps=20", "train.early_stop={patience: 1, min_delta: 1.0}", "train.baseline=none"});
  TrainOptions options{dir.string(), false, true, {}};
  options.progress_style = ProgressStyle{false, 1e-9};
  std::FILE* log = std::tmpfile();
  REQUIRE(log);
  options.progress_out = log;
  const TrainOutcome o = train_agent(s, options);
  CHECK(o.steps == 80);
  CHECK(o.early_stop == "stopped early at step 80: held-out mean JCT did not improve by more than 100% for 1 evaluations");
  std::rewind(log);
  std::string text;
  for (int c; (c = std::fgetc(log)) != EOF;) text.push_back(static_cast<char>(c));
  std::fclose(log);
  CHECK(text.find("train: stopped early at step 80: held-out mean JCT did not improve by more than 100% for 1 evaluations\n") != std::string::npos);
  CHECK(text.find("best same-information heuristic") == std::string::npos);  // baseline: none
  const auto rows = csv_rows(dir / "learning_curve.csv");
  REQUIRE(rows.size() == 3u);  // header + 2 updates
  CHECK(rows[2][0] == "80");
  CHECK(std::filesystem::exists(dir / "checkpoint.pt"));
  CHECK(std::filesystem::exists(dir / "best.pt"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("train: early_stop, baseline, entropy_final and reward_norm keys are validated", "[rl][train][config]") {
  auto parse = [](const std::string& yaml) { return TrainConfig::parse(ConfigNode::load_string(yaml, "t.yaml")); };
  const TrainConfig d = parse("{}");
  CHECK(d.early_stop_patience == 0);
  CHECK(d.baseline_heuristics);
  CHECK(d.reward_norm_running_std);
  CHECK(std::isnan(d.entropy_final));
  const TrainConfig e = parse("{early_stop: {patience: 3, min_delta: 0.01}, baseline: none, reward_norm: none}");
  CHECK(e.early_stop_patience == 3);
  CHECK(e.early_stop_min_delta == 0.01);
  CHECK_FALSE(e.baseline_heuristics);
  CHECK_FALSE(e.reward_norm_running_std);
  CHECK_THROWS_WITH(parse("{early_stop: {min_delta: 0.1}}"),
                    "t.yaml:1: early_stop: needs 'patience': the number of evaluations without improvement before training stops (e.g. patience: 3)");
  CHECK_THROWS_WITH(parse("{early_stop: {patience: 0}}"), "t.yaml:1: early_stop.patience: must be a positive integer, got '0'");
  CHECK_THROWS_WITH(parse("{early_stop: {patience: 2, min_delta: 1.5}}"), Catch::Contains("must be in [0, 1], got 1.5"));
  CHECK_THROWS_WITH(parse("{early_stop: {patience: 2, delta: 0.1}}"), Catch::Contains("unknown key 'delta'"));
  CHECK_THROWS_WITH(parse("{baseline: all}"), Catch::Contains("same_information"));
  CHECK_THROWS_WITH(parse("{reward_norm: batch}"), Catch::Contains("running_std"));
  CHECK_THROWS_WITH(parse("{entropy_final: -0.1}"), "t.yaml:1: entropy_final: must be >= 0, got '-0.1'");
}

TEST_CASE("train.entropy_final decays the entropy coefficient linearly; the default keeps it constant", "[rl][train][recipe]") {
  TrainConfig c;
  c.total_steps = 1000;
  c.entropy_coef = 0.02;
  CHECK(c.entropy_coef_at(0) == 0.02);
  CHECK(c.entropy_coef_at(1000) == 0.02);  // no entropy_final: constant
  c.entropy_final = 0.0;
  CHECK(c.entropy_coef_at(0) == 0.02);
  CHECK(c.entropy_coef_at(250) == Approx(0.015).epsilon(1e-12));
  CHECK(c.entropy_coef_at(1000) == 0.0);
  CHECK(c.entropy_coef_at(5000) == 0.0);  // the last update may end past total_steps
}

TEST_CASE("Recipe knobs: the defaults train exactly as before, each knob changes the training", "[rl][train][recipe]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "schedsim_train_recipe";
  fs::remove_all(dir);
  // rl_train.yaml without its recipe's entropy_final, so that the default is what is tested.
  fs::create_directories(dir);
  std::string yaml = slurp(kConfigs + "rl_train.yaml");
  const std::string recipe_line = "  entropy_final: 0.001\n";
  REQUIRE(yaml.find(recipe_line) != std::string::npos);
  yaml.erase(yaml.find(recipe_line), recipe_line.size());
  { std::ofstream(dir / "train.yaml") << yaml; }
  auto curve = [&](const std::string& name, const std::vector<std::string>& extra) {
    std::vector<std::string> o = {"train.baseline=none", "train.rollout_steps=20"};  // 4 updates
    o.insert(o.end(), extra.begin(), extra.end());
    train_agent(small_training(o, (dir / "train.yaml").string()), TrainOptions{(dir / name).string(), false, false, {}});
    return slurp(dir / name / "learning_curve.csv");
  };
  const std::string base = curve("base", {});
  // Spelled-out defaults: byte-identical curves.
  CHECK(curve("explicit", {"train.reward_norm=running_std", "train.entropy_final=0.01", "env.reward={preemption_s: 0}"}) == base);
  // Each knob moves the curve.
  CHECK(curve("raw", {"train.reward_norm=none"}) != base);
  CHECK(curve("decay", {"train.entropy_final=0.5", "train.entropy_coef=0.5"}) == curve("constant", {"train.entropy_coef=0.5"}));
  CHECK(curve("decay0", {"train.entropy_final=0.0", "train.entropy_coef=0.5"}) != curve("constant", {"train.entropy_coef=0.5"}));
  fs::remove_all(dir);
}
